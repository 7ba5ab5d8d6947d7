"""SMP patch-safety checker: patch live text while other CPUs run through it.

Every CPU runs a small loop through two patchable sites: a jump-label-like
site (nop <-> jmp) and a call site (nop <-> call). The host enables both
through :class:`~patcher.text.TextPatcher` with the protocol under test,
lets the CPUs run, then disables them again. One seed names one
interleaving: before every store, flush and every CPU's part of a sync
round, each CPU receives a seeded subset of the text pieces pending for it
(:mod:`sim.fetch`: x86 bytes, ARM/PowerPC aligned words; a sync delivers
what the arch guarantees) and runs a seeded number of instructions.

Where the arch's pieces are smaller than a site (x86), the sites are laid
out across a 16-byte and a 64-byte boundary, so fetches that straddle them
are part of the checked set.

A code hook on the loop's text checks what each CPU executes *from its own
fetch view*. A finding is one of:

- ``torn``: a CPU fetched a site instruction that is neither the old one,
  the new one nor the breakpoint (a mix of their bytes);
- ``wild branch``: a CPU executed at an address that is no instruction
  boundary of the old or new code, or left a site for anywhere but the old
  or new instruction's successor (a call must also leave the right return
  address);
- ``stale``: a CPU executed the old instruction after the operation
  returned (or the new one before it began), or trapped on a breakpoint
  its fetch view still held after memory no longer did;
- ``fault``: an unhandled trap or an emulation fault.

Each finding names its seed; :meth:`PatchChecker.run_seed` with that seed
replays the interleaving bit for bit. A protocol is any
``protocol(port, sites)`` callable (see :mod:`arches.base`, ``TextPort``);
:mod:`patcher.checker_sweep` runs seeds serially, in processes or on Dask.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Sequence

import unicorn

from arches import Arch, get_arch
from arches.base import TextPokeBatch, TextPort
from patcher.text import MachinePort, TextPatcher
from sim.asm import disasm_one, disassemble
from sim.errors import GuestFault
from sim.fetch import FetchViews
from sim.machine import PAGE, Cpu, Machine, Trap

BASE = 0x10000
STACK = 0x1000
MAX_RUN = 12                 # the most instructions a CPU runs at one interleaving point
KINDS = ("torn", "stale", "wild branch", "fault", "wrong checksum")   # the last: kernel mode
STRADDLE = (16, 64)          # the boundaries the two sites cross where pieces allow it


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


def naive_patch(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """A broken patcher for any arch: one plain store per site, then one sync."""
    for addr, insn in sites:
        port.write_text(addr, insn)
    port.sync_all()


def protocol_name(protocol: TextPokeBatch) -> str:
    return getattr(protocol, "__name__", type(protocol).__name__)


class InterleavingPort(MachinePort):
    """The checker's TextPort: CPUs run (and receive pending pieces) around every step."""

    def __init__(self, checker: PatchChecker) -> None:
        super().__init__(checker.machine)
        self.checker = checker

    def write_text(self, addr: int, data: bytes) -> None:
        self.checker.interleave()
        super().write_text(addr, data)          # refuses a store without the text lock
        self.checker.views.store(addr, data)

    def sync_cpu(self, index: int) -> None:
        self.checker.views.sync(index)
        super().sync_cpu(index)

    def sync_all(self) -> None:
        """One sync round: the CPUs serialize one at a time, in a seeded order."""
        order = list(range(len(self.machine.cpus)))
        self.checker.rng.shuffle(order)
        for i in order:
            self.checker.interleave()
            self.sync_cpu(i)
        self.machine.sync_rounds += 1

    def flush_icache(self, begin: int, end: int) -> None:
        self.checker.interleave()
        self.checker.views.flush(begin, end)
        super().flush_icache(begin, end)


def _fill(arch: Arch, size: int) -> bytes:
    """``size`` bytes of the arch's nops, largest first."""
    out = b""
    while len(out) < size:
        out += arch.nop(max(n for n in arch.nops if n <= size - len(out)))
    return out


class PatchChecker:
    """Run seeded interleavings of one protocol against CPUs running through its sites.

    ``protocol`` defaults to the arch's own ``text_poke_batch``;
    ``naive=True`` checks :func:`naive_patch` instead.
    """

    def __init__(self, arch: str | Arch, cpus: int = 2, *, naive: bool = False,
                 protocol: TextPokeBatch | None = None) -> None:
        self.arch = get_arch(arch) if isinstance(arch, str) else arch
        self.naive = naive
        self.machine = Machine(self.arch, cpus)
        self._build()
        self.views = FetchViews(self.machine, BASE, PAGE)
        chosen = protocol or (naive_patch if naive else None)
        self.patcher = TextPatcher(self.machine, port=InterleavingPort(self), protocol=chosen)
        self.protocol_name = protocol_name(self.patcher.protocol)
        self.rng = random.Random(0)
        self.seed = 0
        self.findings: list[Finding] = []          # of the current seed only
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
        """Lay out: nops, site A, ``jmp C``, f: ``jmp back``, nops, site C, back: ``jmp BASE``.

        Site A (nop <-> ``jmp C``) skips nothing but is told apart by where
        the CPU goes next; site C is nop <-> ``call f``, and f jumps back to
        C's successor, so the checker pops a pushed return address itself.
        """
        arch = self.arch
        size = len(arch.encode_jump(BASE, BASE + 64))
        straddle = size // 2 // arch.insn_align * arch.insn_align

        def place(pos: int, boundary: int) -> int:
            if not straddle:
                return pos
            return -(-(pos + straddle) // boundary) * boundary - straddle

        a = place(BASE, STRADDLE[0])
        skip = a + size
        f = skip + size
        c = place(f + size, STRADDLE[1])
        back = c + size
        code = (_fill(arch, a - BASE) + arch.nop(size) + arch.encode_jump(skip, c)
                + arch.encode_jump(f, back) + _fill(arch, c - f - size) + arch.nop(size)
                + arch.encode_jump(back, BASE))
        self.sites = (Site(a, size, arch.nop(size), arch.encode_jump(a, c), "jmp", c),
                      Site(c, size, arch.nop(size), arch.encode_call(c, f), "call", f))
        self.site_at = {s.addr: s for s in self.sites}
        self.code_end = BASE + len(code)
        # Valid instruction starts and their lengths (old and new code agree,
        # as each site keeps its length); a site may also hold the breakpoint.
        self.breakpoint = arch.kprobe_breakpoint(arch.nop(size))
        bp = len(self.breakpoint)
        insns = disassemble(arch, code, BASE)
        assert sum(len(i.bytes) for i in insns) == len(code)
        self.sizes = {i.address: frozenset({len(i.bytes)} | ({bp} if i.address in self.site_at
                                                             else set()))
                      for i in insns}
        trap = arch.kprobe_breakpoint(arch.nop(arch.insn_align))
        self.text = code + trap * ((PAGE - len(code)) // len(trap))
        self.loop_len = len(self.sizes)           # at least one trip round the loop
        self.machine.load_code(self.text, BASE, stack_size=STACK)
        self.stack = (self.machine.cpus[0].reg(arch.sp) + 64 - STACK) & ~(PAGE - 1)

    # -- checks ---------------------------------------------------------------
    def _report(self, cpu: int, pc: int, insn: str, kind: str, detail: str) -> None:
        if self._dead[cpu]:
            return
        self._dead[cpu] = True
        self.findings.append(Finding(self.seed, cpu, pc, insn, kind, detail, self.phase))

    def _disasm(self, cpu: int, pc: int, size: int | None = None) -> str:
        """The instruction CPU ``cpu`` fetches at ``pc`` (its own view)."""
        try:
            code = self.views.read(cpu, pc, size or self.arch.max_insn_len)
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
            self._report(cpu, addr, self._disasm(cpu, addr), "wild branch",
                         "executed at an address that is no instruction boundary of the "
                         "old or the new code")
        elif size not in sizes:
            self._report(cpu, addr, self._disasm(cpu, addr, size), "torn",
                         f"fetched a {size}-byte instruction at a "
                         f"{'/'.join(map(str, sorted(sizes)))}-byte site")
        elif addr in self.site_at:
            site = self.site_at[addr]
            if self.views.read(cpu, addr, size) not in (site.off, site.on, self.breakpoint):
                self._report(cpu, addr, self._disasm(cpu, addr, size), "torn",
                             "fetched a mix of the old and the new instruction")
                uc.emu_stop()
                return
            self._pending[cpu] = (site, self._allowed[addr], self.phase)
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
            if did == "call" and not self._returned(uc, cpu, site):
                return
        else:
            self._report(cpu, site.addr, self._disasm(cpu, site.addr), "wild branch",
                         f"the site instruction went to {addr:#x}, neither "
                         f"{site.addr + site.length:#x} nor {site.target:#x}")
            uc.emu_stop()
            return
        self.executed[f"{phase.split(': ')[1]} {did}"] += 1
        if did not in allowed:
            executed = site.off if did == "nop" else site.on
            after = phase.endswith("after")
            self._report(cpu, site.addr, disasm_one(self.arch, executed, site.addr), "stale",
                         f"executed the {'old' if after else 'new'} instruction "
                         f"{'after the patch returned' if after else 'before the patch'}")
            uc.emu_stop()

    def _returned(self, uc: unicorn.Uc, cpu: int, site: Site) -> bool:
        """Check a call's return address; pop it where the call pushed it."""
        arch, want = self.arch, site.addr + site.length
        if arch.ra is not None:
            got = uc.reg_read(arch.uc_regs[arch.ra])
        else:
            sp = uc.reg_read(arch.uc_regs[arch.sp])
            got = arch.to_int(bytes(uc.mem_read(sp, arch.word)))
            uc.reg_write(arch.uc_regs[arch.sp], sp + arch.word)
        if got == want:
            return True
        self._report(cpu, site.addr, self._disasm(cpu, site.addr), "wild branch",
                     f"entered {site.target:#x} with return address {got:#x}, not {want:#x}")
        uc.emu_stop()
        return False

    def _on_trap(self, cpu: Cpu, trap: Trap) -> None:
        size = len(self.arch.kprobe_breakpoint(self.arch.nop(self.arch.insn_align)))
        fetched = self.views.read(cpu.index, trap.address, size)
        now = self.machine.read(trap.address, size)
        insn = disasm_one(self.arch, fetched, trap.address)
        if fetched != now:
            self._report(cpu.index, trap.address, insn, "stale",
                         f"{trap.kind.value} trap on a stale fetch: memory now holds "
                         f"{now.hex(' ')}")
        else:
            self._report(cpu.index, trap.address, insn, "fault",
                         f"unhandled {trap.kind.value} trap")
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
            self._report(index, fault.pc, self._disasm(index, fault.pc), "fault", fault.reason)

    def interleave(self) -> None:
        """Each live CPU, in a seeded order, receives pending pieces and runs a while."""
        order = list(range(len(self.machine.cpus)))
        self.rng.shuffle(order)
        for i in order:
            self.views.drift(i, self.rng)
            self._run(i, self._draw())

    def _reset(self, seed: int) -> None:
        m = self.machine
        self.seed, self.rng = seed, random.Random(seed)
        m.write(BASE, self.text)
        m.write(self.stack, bytes(STACK * len(m.cpus)))
        self.views.reset()
        for cpu, context in zip(m.cpus, self._contexts):
            m.sync_cpu(cpu.index)               # forget stale ranges of the last run
            cpu.uc.context_restore(context)
            cpu.halted = False
        self._pending = [None] * len(m.cpus)
        self._dead = [False] * len(m.cpus)
        self.findings = []

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
        self._reset(seed)
        self._set_phase("enable", "before")
        for i in range(len(self.machine.cpus)):
            self._run(i, self.rng.randint(0, 2 * self.loop_len))
        self._operation("enable")
        self._operation("disable")
        return list(self.findings)
