"""The SMP patch checker on an mcount site: ftrace_make_call / ftrace_make_nop live.

:class:`FtracePatchChecker` runs :class:`patcher.checker.PatchChecker`'s
seeded interleavings over a loop whose one site has the shape ``-pg``
gives it: the arch's prefix (ARM ``push {lr}``), then the site holding
the ftrace nop (``ftrace_nop_replace``) or ``ftrace_call_replace`` to an
mcount-compatible stub (ARM's pops the pushed ``lr``). Enabling and
disabling go through the arch's protocol exactly as :class:`patcher.ftrace.Ftrace`
does, so any torn, stale or diverted execution of an ftrace site is found
as for the checker's own sites.
"""
from __future__ import annotations

from typing import Iterable

from patcher.checker import BASE, LOOP_ASM, STACK, CheckResult, PatchChecker, Site
from patcher.ftrace import arch_ftrace
from sim.asm import assemble, disassemble
from sim.machine import PAGE


class FtracePatchChecker(PatchChecker):
    """The patch checker with one dynamic-ftrace site instead of its own two."""

    def _build(self) -> None:
        arch, ops = self.arch, arch_ftrace(self.arch)
        head = assemble(arch, LOOP_ASM[arch.name][0], BASE)
        if ops.MCOUNT_SITE_PREFIX_ASM:
            head += assemble(arch, ops.MCOUNT_SITE_PREFIX_ASM, BASE + len(head))
        site = BASE + len(head)
        nop = ops.ftrace_nop_replace()
        back = site + len(nop)
        stub = back + len(arch.encode_jump(back, BASE))
        code = (head + nop + arch.encode_jump(back, BASE)
                + assemble(arch, ops.MCOUNT_STUB_ASM, stub))
        self.sites = (Site(site, len(nop), nop, ops.ftrace_call_replace(site, stub), "call",
                           stub),)
        self.site_at = {s.addr: s for s in self.sites}
        self.code_end = BASE + len(code)
        bp = {len(arch.kprobe_breakpoint(nop))} if len(nop) > arch.insn_align else set()
        insns = disassemble(arch, code, BASE)
        assert sum(len(i.bytes) for i in insns) == len(code)
        self.sizes = {i.address: frozenset({len(i.bytes)}
                                           | (bp if i.address == site and not self.naive
                                              else set()))
                      for i in insns}
        trap = arch.kprobe_breakpoint(arch.nop(arch.insn_align))
        self.text = code + trap * ((PAGE - len(code)) // len(trap))
        self.loop_len = len(self.sizes) + 2
        self.machine.load_code(self.text, BASE, stack_size=STACK)
        self.stack = (self.machine.cpus[0].reg(arch.sp) + 64 - STACK) & ~(PAGE - 1)


def check_ftrace(arch: str, seeds: Iterable[int], cpus: int = 2, *,
                 naive: bool = False) -> CheckResult:
    """Run the interleavings ``seeds`` on an ftrace site of ``arch``."""
    return FtracePatchChecker(arch, cpus, naive=naive).run(seeds)


__all__ = ["FtracePatchChecker", "check_ftrace"]
