"""SMP patch-safety checker: patch live text while other CPUs run through it.

Every CPU runs a small loop that passes a jump-label-like site (nop <-> jmp
over one instruction) and a call site (nop <-> call f). The host enables
both sites through :class:`~patcher.text.TextPatcher`, lets the CPUs run,
then disables them again. One seed names one interleaving: before every
store of the protocol and before every CPU's part of a sync round, each
CPU runs a seeded number of instructions (often 0 or 1, up to a few loop
iterations). Two hazards are modeled:

- **Store tearing** (x86): a multi-byte text store becomes single-byte
  stores in a seeded order, with CPUs running in between. Aligned 32-bit
  stores on ARM and PowerPC are single-copy atomic and stay whole.
- **Stale instruction fetch** (every arch, from :mod:`sim.machine`): a CPU
  keeps executing the text it translated until its sync.

A code hook on the loop's own text (and nowhere else) checks what each CPU
executes. A finding is a CPU that:

- ``boundary``: executed at an address that is no instruction boundary of
  the old or the new code;
- ``torn``: decoded a site instruction whose length is neither the old
  one's, the new one's nor the protocol int3's;
- ``diverted``: left a site for anywhere but the old or the new
  instruction's successor (a call must also push the right return address);
- ``stale``: executed the old instruction after the operation returned
  (or the new one before it began);
- ``trap`` / ``fault``: hit a trap nobody handled, or faulted.

Each finding names its seed; :meth:`PatchChecker.run_seed` with that seed
replays the interleaving bit for bit. One :class:`PatchChecker` reuses its
machine for every interleaving (memory, registers and translated blocks
are reset), which keeps 10,000 interleavings well under a minute.
"""
from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Sequence

import unicorn

from arches import Arch, TrapKind, get_arch
from arches.base import TextPokeBatch, TextPort
from patcher.text import MachinePort, TextPatcher, text_mutex
from sim.asm import assemble, disasm_one, disassemble
from sim.errors import GuestFault
from sim.machine import PAGE, Cpu, Machine, Trap

BASE = 0x10000
STACK = 0x1000
MAX_RUN = 12                 # the most instructions a CPU runs at one interleaving point

# The loop's fixed instructions: count iterations, the instruction the jump
# label skips, and the body of the called function.
LOOP_ASM = {
    "x86_64": ("inc r12", "inc r13", "inc r14; ret"),
    "arm": ("add r4, r4, #1", "add r5, r5, #1", "add r6, r6, #1; bx lr"),
    "ppc32": ("addi 4, 4, 1", "addi 5, 5, 1", "addi 6, 6, 1; blr"),
}


@dataclass(frozen=True)
class Finding:
    """One CPU that executed something neither the old nor the new code allows."""

    seed: int
    cpu: int
    pc: int
    insn: str
    kind: str
    detail: str
    phase: str

    def line(self) -> str:
        return (f"seed {self.seed}: CPU {self.cpu} at {self.pc:#x}: {self.insn} -- "
                f"{self.kind}: {self.detail} ({self.phase})")

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Site:
    addr: int
    length: int
    off: bytes                 # the nop
    on: bytes                  # the jmp or call
    on_kind: str               # "jmp" or "call"
    target: int


def naive_x86(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """A broken x86 patcher: plain multi-byte stores, one sync at the end."""
    for addr, insn in sites:
        port.write_text(addr, insn)
    port.sync_all()


def naive_word(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """A broken ARM/PowerPC patcher: the word store, no icache flush, no sync."""
    for addr, insn in sites:
        port.write_text(addr, insn)


NAIVE = {"x86_64": naive_x86, "arm": naive_word, "ppc32": naive_word}


class InterleavingPort(MachinePort):
    """A port that lets the CPUs run before every store and every CPU's sync."""

    def __init__(self, checker: PatchChecker) -> None:
        super().__init__(checker.machine)
        self.checker = checker
        self.tear = checker.arch.name == "x86_64"

    def write_text(self, addr: int, data: bytes) -> None:
        text_mutex.assert_held(f"text write of {len(data)} bytes at {addr:#x}")
        chk = self.checker
        if self.tear and len(data) > 1:
            order = list(range(len(data)))
            chk.rng.shuffle(order)
            for k in order:
                chk.interleave()
                self.machine.write_text(addr + k, data[k:k + 1])
        else:
            chk.interleave()
            self.machine.write_text(addr, data)

    def sync_all(self) -> None:
        order = list(range(len(self.machine.cpus)))
        self.checker.rng.shuffle(order)
        for i in order:
            self.checker.interleave()
            self.machine.sync_cpu(i)
        self.machine.sync_rounds += 1

    def flush_icache(self, begin: int, end: int) -> None:
        self.checker.interleave()
        super().flush_icache(begin, end)


class PatchChecker:
    """Run seeded interleavings of one arch's patch protocol against running CPUs.

    ``naive`` checks the deliberately broken patcher of :data:`NAIVE`;
    ``protocol`` checks any other ``text_poke_batch``-shaped function.
    """

    def __init__(self, arch: str | Arch, cpus: int = 2, *, naive: bool = False,
                 protocol: TextPokeBatch | None = None) -> None:
        self.arch = get_arch(arch) if isinstance(arch, str) else arch
        self.naive = naive
        self.machine = Machine(self.arch, cpus)
        self._build()
        protocol = protocol or (NAIVE[self.arch.name] if naive else None)
        self.patcher = TextPatcher(self.machine, port=InterleavingPort(self), protocol=protocol)
        self.protocol_name = (protocol or self.patcher.protocol).__name__
        self.rng = random.Random(0)
        self.seed = 0
        self.findings: list[Finding] = []
        self.executed: Counter[str] = Counter()   # site executions by stage and behaviour
        self.phase = "before"
        self._allowed: dict[int, frozenset[str]] = {}
        self._pending: list[tuple[Site, frozenset[str], str] | None] = [None] * cpus
        self._dead = [False] * cpus
        for cpu in self.machine.cpus:
            cpu.uc.hook_add(unicorn.UC_HOOK_CODE, self._on_code, cpu.index,
                            BASE, self.code_end - 1)
        self.machine.on_trap = self._on_trap
        self._contexts = [cpu.uc.context_save() for cpu in self.machine.cpus]

    # -- the guest loop -----------------------------------------------------
    def _build(self) -> None:
        arch = self.arch
        head_asm, skip_asm, f_asm = LOOP_ASM[arch.name]
        size = len(arch.encode_jump(BASE, BASE + 64))
        nop = arch.nop(size)
        head = assemble(arch, head_asm, BASE)
        a = BASE + len(head)
        skip = assemble(arch, skip_asm, a + size)
        c = a + size + len(skip)
        back = c + size
        f = back + len(arch.encode_jump(back, BASE))
        code = (head + nop + skip + nop + arch.encode_jump(back, BASE)
                + assemble(arch, f_asm, f))
        self.sites = (Site(a, size, nop, arch.encode_jump(a, c), "jmp", c),
                      Site(c, size, nop, arch.encode_call(c, f), "call", f))
        self.site_at = {s.addr: s for s in self.sites}
        self.code_end = BASE + len(code)
        # Valid instruction starts and their lengths (old and new code agree,
        # as each site keeps its length); a site may also decode as the int3.
        int3 = {1} if arch.name == "x86_64" and not self.naive else set()
        self.sizes = {i.address: frozenset({len(i.bytes)} | (int3 if i.address in self.site_at
                                                              else set()))
                      for i in disassemble(arch, code, BASE)}
        assert sum(len(i.bytes) for i in disassemble(arch, code, BASE)) == len(code)
        trap = arch.kprobe_breakpoint(arch.nop(arch.insn_align))
        fill = trap * ((PAGE - len(code)) // len(trap))
        self.text = code + fill
        self.loop_len = len(self.sizes) + 2       # the longest path round the loop
        self.machine.load_code(self.text, BASE, stack_size=STACK)
        self.stack = (self.machine.cpus[0].reg(arch.sp) + 64 - STACK) & ~(PAGE - 1)

    # -- checks ---------------------------------------------------------------
    def _report(self, cpu: int, pc: int, insn: str, kind: str, detail: str) -> None:
        if self._dead[cpu]:
            return
        self._dead[cpu] = True
        self.findings.append(Finding(self.seed, cpu, pc, insn, kind, detail, self.phase))

    def _disasm(self, pc: int, size: int | None = None) -> str:
        try:
            code = self.machine.read(pc, size or self.arch.max_insn_len)
        except Exception:
            return "(unmapped)"
        return disasm_one(self.arch, code, pc)

    def _on_code(self, uc: unicorn.Uc, addr: int, size: int, cpu: int) -> None:
        pending = self._pending[cpu]
        if pending is not None:
            self._pending[cpu] = None
            self._landed(uc, cpu, addr, *pending)
        sizes = self.sizes.get(addr)
        if sizes is None:
            self._report(cpu, addr, self._disasm(addr), "boundary",
                         "executed at an address that is no instruction boundary of the "
                         "old or the new code")
        elif size not in sizes:
            self._report(cpu, addr, self._disasm(addr, size), "torn",
                         f"decoded a {size}-byte instruction at a "
                         f"{'/'.join(map(str, sorted(sizes)))}-byte site "
                         "(bytes shown as in memory now)")
        elif addr in self.site_at:
            self._pending[cpu] = (self.site_at[addr], self._allowed[addr], self.phase)
            return
        else:
            return
        uc.emu_stop()

    def _landed(self, uc: unicorn.Uc, cpu: int, addr: int, site: Site,
                allowed: frozenset[str], phase: str) -> None:
        """Classify what the site instruction did by where the CPU went next."""
        if addr == site.addr + site.length:
            did = "nop"
        elif addr == site.target:
            did = site.on_kind
            if did == "call" and self._return_address(uc) != site.addr + site.length:
                self._report(cpu, site.addr, self._disasm(site.addr), "diverted",
                             f"entered {addr:#x} with return address "
                             f"{self._return_address(uc):#x}, not {site.addr + site.length:#x}")
                uc.emu_stop()
                return
        else:
            self._report(cpu, site.addr, self._disasm(site.addr), "diverted",
                         f"the site instruction went to {addr:#x}, neither "
                         f"{site.addr + site.length:#x} nor {site.target:#x}")
            uc.emu_stop()
            return
        self.executed[f"{phase.split(': ')[1]} {did}"] += 1
        if did not in allowed:
            executed = site.off if did == "nop" else site.on
            when = "after the patch returned" if phase.endswith("after") else "before the patch"
            self._report(cpu, site.addr, disasm_one(self.arch, executed, site.addr), "stale",
                         f"executed the {'old' if phase.endswith('after') else 'new'} "
                         f"instruction {when}")
            uc.emu_stop()

    def _return_address(self, uc: unicorn.Uc) -> int:
        arch = self.arch
        if arch.ra is not None:
            return uc.reg_read(arch.uc_regs[arch.ra])
        sp = uc.reg_read(arch.uc_regs[arch.sp])
        return arch.to_int(bytes(uc.mem_read(sp, arch.word)))

    def _on_trap(self, cpu: Cpu, trap: Trap) -> None:
        insn, detail = self._disasm(trap.address), f"unhandled {trap.kind.value} trap"
        bp = self.arch.kprobe_breakpoint(self.arch.nop(self.arch.insn_align))
        if trap.kind is TrapKind.BREAKPOINT and self.arch.name != "arm" \
                and self.machine.read(trap.address, len(bp)) != bp:
            # A breakpoint no longer in memory: the CPU ran a stale copy of it.
            insn, detail = (disasm_one(self.arch, bp, trap.address),
                            f"{detail} from a stale copy (memory now holds {insn})")
        self._report(cpu.index, trap.address, insn, "trap", detail)
        cpu.halt()

    # -- running ----------------------------------------------------------------
    def _draw(self) -> int:
        r = self.rng.random()
        if r < 0.25:
            return 0
        if r < 0.5:
            return 1
        return self.rng.randint(2, MAX_RUN)

    def _run(self, index: int, count: int) -> None:
        if count <= 0 or self._dead[index]:
            return
        try:
            self.machine.step(index, count)
        except GuestFault as fault:
            self._report(index, fault.pc, fault.insn, "fault", fault.reason)

    def interleave(self) -> None:
        """Each live CPU, in a seeded order, runs a seeded number of instructions."""
        order = list(range(len(self.machine.cpus)))
        self.rng.shuffle(order)
        for i in order:
            self._run(i, self._draw())

    def _reset(self, seed: int) -> None:
        m = self.machine
        self.seed, self.rng = seed, random.Random(seed)
        m.write(BASE, self.text)
        m.write(self.stack, bytes(STACK * len(m.cpus)))
        for cpu, context in zip(m.cpus, self._contexts):
            m.sync_cpu(cpu.index)               # forget stale ranges of the last run
            cpu.uc.ctl_remove_cache(BASE, BASE + PAGE)
            cpu.uc.context_restore(context)
            cpu.halted = False
        self._pending = [None] * len(m.cpus)
        self._dead = [False] * len(m.cpus)

    def _set_phase(self, op: str, stage: str) -> None:
        self.phase = f"{op}: {stage}"
        for s in self.sites:
            old, new = ("nop", s.on_kind) if op == "enable" else (s.on_kind, "nop")
            self._allowed[s.addr] = frozenset({"before": {old}, "during": {old, new},
                                               "after": {new}}[stage])

    def _operation(self, op: str) -> None:
        self._set_phase(op, "during")
        changes = [(s.addr, s.off, s.on) if op == "enable" else (s.addr, s.on, s.off)
                   for s in self.sites]
        if self.rng.random() < 0.5:
            with self.patcher.batch() as b:
                for addr, old, new in changes:
                    b.queue(addr, old, new, "jump_label")
        else:
            for addr, old, new in changes:
                self.patcher.text_poke(addr, old, new, "jump_label")
        self._set_phase(op, "after")
        for i in range(len(self.machine.cpus)):
            self._run(i, 3 * self.loop_len)

    def run_seed(self, seed: int) -> list[Finding]:
        """One interleaving: warm up, enable both sites, settle, disable, settle."""
        start = len(self.findings)
        self._reset(seed)
        self._set_phase("enable", "before")
        for i in range(len(self.machine.cpus)):
            self._run(i, self.rng.randint(0, 2 * self.loop_len))
        self._operation("enable")
        self._operation("disable")
        return self.findings[start:]

    def run(self, seeds: Iterable[int],
            progress: Callable[[int, int], None] | None = None) -> CheckResult:
        """Run every seed; ``progress(done, findings)`` is called now and then."""
        begin = time.perf_counter()
        done, last = 0, begin
        for seed in seeds:
            self.run_seed(seed)
            done += 1
            if progress is not None and time.perf_counter() - last > 0.5:
                last = time.perf_counter()
                progress(done, len(self.findings))
        return CheckResult(self.arch.name, self.protocol_name, self.naive,
                           len(self.machine.cpus), done, time.perf_counter() - begin,
                           list(self.findings))


@dataclass
class CheckResult:
    arch: str
    protocol: str
    naive: bool
    cpus: int
    interleavings: int
    seconds: float
    findings: list[Finding]

    @property
    def seeds_with_findings(self) -> list[int]:
        return sorted({f.seed for f in self.findings})

    def to_json(self) -> dict:
        return {"arch": self.arch, "protocol": self.protocol, "naive": self.naive,
                "cpus": self.cpus, "interleavings": self.interleavings,
                "seconds": round(self.seconds, 3),
                "seeds_with_findings": len(self.seeds_with_findings),
                "findings": [f.to_json() for f in self.findings]}


def check(arch: str | Arch, seeds: Iterable[int], cpus: int = 2, *, naive: bool = False,
          progress: Callable[[int, int], None] | None = None) -> CheckResult:
    """Run the interleavings ``seeds`` of ``arch``'s protocol (or the naive one)."""
    return PatchChecker(arch, cpus, naive=naive).run(seeds, progress)
