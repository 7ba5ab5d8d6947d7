"""SMP patch-safety checker: patch live text while other CPUs run through it.

Every CPU runs a small loop through patchable sites, one per site kind
(:mod:`patchcheck.sites`; by default a jump-label site, nop <-> jmp,
and a call site, nop <-> call; also dynamic-ftrace, kprobe and optprobe
sites). The host enables them all through
:class:`~patcher.text.TextPatcher` with the protocol under test, lets the
CPUs run, then disables them again. One seed names one
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
  the new one nor the breakpoint (a mix of their bytes), or, once the
  protocol has stored outside the sites, fetched any other instruction of
  the loop (a callee, a detour, a site's neighbour) with bytes the
  program does not have there;
- ``wild branch``: a CPU executed at an address that is no instruction
  boundary of the old or new code, left a site for anywhere but where its
  old or new form goes (a call must also leave the right return address),
  or came round the loop with its stack pointer moved;
- ``stale``: a CPU executed the old instruction after the operation
  returned (or the new one before it began), or trapped on a breakpoint
  its fetch view still held after memory no longer did;
- ``fault``: an unhandled trap or an emulation fault.

A CPU that traps on a kprobe site's own breakpoint is a kprobe hit, not a
fault: it resumes where the site kind says (the instruction slot, or the
optprobe's detour), and where it went is judged like any other form.

Each finding names its seed; :meth:`PatchChecker.run_seed` with that seed
replays the interleaving bit for bit. A protocol is any
``protocol(port, sites)`` callable (see :mod:`arches.base`, ``TextPort``);
:mod:`patchcheck.sweep` runs seeds serially, in processes or on Dask.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import unicorn

from arches import Arch, get_arch
from arches.base import OutOfLine, TextPokeBatch, TextPort
from patchcheck.sites import (BASE, DEFAULT_SITES, LAYOUTS, STRADDLE, CheckerError, Form,
                              Layout, Site, arch_label, lay_out, parse_sites)
from patchcheck.guest import PATCHER, GuestSide, PatcherFailed
from patcher.text import MachinePort, TextPatcher
from sim.asm import disasm_one
from sim.errors import GuestFault
from sim.fetch import FetchViews
from sim.machine import PAGE, Cpu, Machine, Trap
from sim.uchook import hook_add

STACK = 0x1000
MAX_RUN = 12                 # the most instructions a CPU runs at one interleaving point
GUEST_RUN = 64               # ... in the guest's own code (--guest: a handler, a spin wait)
EVENTS = ("store", "ipi", "trap")   # where a long turn may fall (--guest)
LONG_CHANCES = (1 / 16, 1 / 4)   # the chance, chosen per seed, of a long turn after one
DELAY_CHANCE = 1 / 2             # the chance a seed lets the patching CPU be delayed (--guest)
DELAY_CHANCES = (1 / 32, 1 / 8)  # ... and then, chosen per seed, at one of its steps
KINDS = ("torn", "stale", "wild branch", "unpredictable", "fault", "hang",
         "wrong checksum")                  # the last: kernel mode
__all__ = ["BASE", "STRADDLE", "CheckerError", "Finding", "PatchChecker", "Site", "naive_patch",
           "unpredictable"]


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


def naive_patch(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """A broken patcher for any arch: one plain store per site, then one sync."""
    for addr, insn in sites:
        port.write_text(addr, insn)
    port.sync_all()


def unpredictable(arch: Arch, views: FetchViews, cpu: int, addr: int, size: int) -> str | None:
    """Why CPU ``cpu`` executing ``[addr, addr + size)`` now is UNPREDICTABLE: it runs an
    instruction another CPU is changing, and the arch does not promise old-or-new for
    that pair (:attr:`arches.base.Arch.cmodx_safe`); None when it may.

    The pair is the whole instruction, before and now, even where fetch pieces are
    smaller (Thumb-2: halfwords; a 32-bit instruction is two of them)."""
    if arch.cmodx_safe is None:
        return None
    changing = {p: old for p, old, _ in views.changing(cpu, addr, size)}
    if not changing:
        return None
    piece, first = views.piece, addr - addr % views.piece
    before = b"".join(changing.get(p) or views.machine.read(p, piece)
                      for p in range(first, addr + size, piece))
    old, new = before[addr - first:addr - first + size], views.machine.read(addr, size)
    if arch.cmodx_safe(old, new):
        return None
    what = "word" if not arch.code_isa else f"{8 * size}-bit instruction"
    return (f"executed the {what} at {addr:#x} while another CPU changed it from "
            f"{old.hex(' ')} to {new.hex(' ')}; the architecture promises old-or-new "
            f"only between a few instructions ({arch.cmodx_rule}), so the change needs "
            "stop_machine()")


def protocol_name(protocol: TextPokeBatch) -> str:
    return getattr(protocol, "__name__", type(protocol).__name__)


class InterleavingPort(MachinePort):
    """The checker's TextPort: CPUs run (and receive pending pieces) around every step,
    except inside :meth:`stop_machine`."""

    def __init__(self, checker: PatchChecker) -> None:
        super().__init__(checker.machine)
        self.checker = checker
        self.stopped = False

    def _interleave(self) -> None:
        if not self.stopped:
            self.checker.interleave()

    def write_text(self, addr: int, data: bytes) -> None:
        """One store, with the CPUs running before it and after it: nothing the protocol
        does between this store and its next port call is atomic with it."""
        self._interleave()
        self.machine.text_mutex.assert_held(f"text write of {len(data)} bytes at {addr:#x}")
        self.checker.views.store(addr, data)    # reads what the store replaces
        super().write_text(addr, data)
        self.checker.stored(addr, len(data))
        self._interleave()

    def sync_cpu(self, index: int) -> None:
        self.checker.views.sync(index)
        super().sync_cpu(index)

    def sync_all(self) -> None:
        """One sync round: the CPUs serialize one at a time, in a seeded order."""
        order = list(range(len(self.machine.cpus)))
        self.checker.rng.shuffle(order)
        for i in order:
            self._interleave()
            self.sync_cpu(i)
        self.machine.sync_rounds += 1

    def flush_icache(self, begin: int, end: int) -> None:
        self._interleave()
        self.checker.views.flush(begin, end)
        super().flush_icache(begin, end)

    def stop_machine(self, fn: Callable[[], None]) -> None:
        """``fn`` with no other CPU running; each CPU serializes before it runs again
        (kernel/stop_machine.c: the stopper threads return through an exception return)."""
        self._interleave()
        self.stopped = True
        try:
            fn()
        finally:
            self.stopped = False
        for i in range(len(self.machine.cpus)):
            self.sync_cpu(i)
            self.checker.views.quiesce(i)
        self.machine.sync_rounds += 1


class PatchChecker:
    """Run seeded interleavings of one protocol against CPUs running through its sites.

    ``arch`` is a name or an :class:`~arches.base.Arch`, such as a variant
    (:func:`patchcheck.sweep.arch_for`: the Thumb-2 build, whose loop is Thumb
    code the CPUs start in Thumb state). ``protocol`` defaults to the arch's own
    ``text_poke_batch``;
    ``naive=True`` checks :func:`naive_patch` instead. ``sites`` names the
    site kinds in the loop (:data:`patchcheck.sites.SITE_KINDS`);
    :class:`CheckerError` if the arch lacks what one needs.
    """

    def __init__(self, arch: str | Arch, cpus: int = 2, *, naive: bool = False,
                 protocol: TextPokeBatch | None = None,
                 sites: str | tuple[str, ...] = DEFAULT_SITES, guest: bool = False,
                 guest_ablation: str | None = None, guest_sources: Sequence[str] = (),
                 guest_protocol: str | None = None, guest_werror: bool = False,
                 guest_patching: str | None = None) -> None:
        self.arch = get_arch(arch) if isinstance(arch, str) else arch
        self.naive = naive
        self.kinds = parse_sites(sites)
        self.machine = Machine(self.arch, cpus, trail=False)   # a finding replays by its seed
        self._build()
        self.views = FetchViews(self.machine, BASE, PAGE)
        self.guest = GuestSide(self, guest_ablation, guest_sources, guest_protocol,
                               guest_werror, guest_patching) if guest else None
        chosen = self.guest or protocol or (naive_patch if naive else None)
        self.patcher = TextPatcher(self.machine, port=InterleavingPort(self), protocol=chosen)
        self.protocol_name = protocol_name(self.patcher.protocol)
        self.rng = random.Random(0)
        self.seed = 0
        self.findings: list[Finding] = []          # of the current seed only
        self.executed: Counter[str] = Counter()   # site executions by stage and behaviour
        self._executed_keys: dict[tuple[str, str], str] = {}
        self.phase = "before"
        self._allowed: dict[int, frozenset[str]] = {}
        self._pending: list[tuple[Site, frozenset[str], str, bool] | None] = [None] * cpus
        self._dead = [False] * cpus
        self._foreign = False        # this seed's protocol stored outside the sites
        # --guest: a turn may run as long as the longest trap path (trap_path_bound), after
        # the events of this seed's choosing (EVENTS) that last happened to the CPU
        self.longest = self.guest.longest if self.guest is not None else 0
        self._event: list[str | None] = [None] * cpus
        self._to_loop = [False] * cpus
        self._long_after: frozenset[str] = frozenset()
        self._long_chance = 0.0
        # --guest: the patching CPU delayed between two steps (an interrupt, preemption);
        # drawn apart from the schedule, so a seed that has none runs as it did before
        self._delay_rng = random.Random(0)
        self.delay_chance = 0.0
        for cpu in self.machine.cpus:
            hook_add(cpu.uc, unicorn.UC_HOOK_CODE, self._on_code, cpu.index, BASE,
                     self.code_end - 1)
        self.machine.on_trap = self._on_trap
        self._sp0 = [cpu.reg(self.arch.sp) for cpu in self.machine.cpus]
        self._contexts = [cpu.uc.context_save() for cpu in self.machine.cpus]

    # -- the guest loop -----------------------------------------------------
    def _build(self) -> None:
        """Lay out the loop in every layout (:func:`patchcheck.sites.lay_out`) and load
        the first; each seed then runs one of them (:meth:`_reset`).

        Sparse, with the default kinds: nops, site A, ``jmp C``, f: ``jmp back``,
        nops, site C, back: ``jmp BASE``. Site A (nop <-> ``jmp C``) skips
        nothing but is told apart by where the CPU goes next; site C is nop
        <-> ``call f``, and f jumps back to C's successor, so the checker
        pops a pushed return address itself.
        """
        arch = self.arch
        size = len(arch.encode_jump(BASE, BASE + 64))
        self.breakpoint = arch.kprobe_breakpoint(arch.nop(size))
        trap = arch.kprobe_breakpoint(arch.nop(arch.insn_align))
        self.layouts: list[tuple[str, Layout, bytes]] = []
        self._written: list[bytes] = []         # each text with out-of-line code written
        for name in LAYOUTS:
            layout = lay_out(arch, self.kinds, self.breakpoint, name)
            if len(layout.code) > PAGE:
                raise CheckerError(f"{arch_label(arch)}: the {name} loop for "
                                   f"{','.join(self.kinds)} does not fit one page")
            fill = trap * ((PAGE - len(layout.code)) // len(trap))
            self.layouts.append((name, layout, layout.unwritten(trap) + fill))
            self._written.append(layout.code + fill)
        self.code_end = BASE + max(len(layout.code) for _, layout, _ in self.layouts)
        self._use(0)
        self.machine.load_code(self.text, BASE, stack_size=STACK)
        if arch.code_isa:           # the loop is kernel code: Thumb state on a Thumb-2 kernel
            for cpu in self.machine.cpus:
                cpu.pc = BASE | arch.code_isa
        self.stack = (self.machine.cpus[0].reg(arch.sp) + 64 - STACK) & ~(PAGE - 1)

    def _use(self, index: int) -> None:
        """Make layout ``index`` the loop's: its text (as loaded, and with the sites'
        out-of-line code written), sites and instruction starts (a site may hold
        either form or the breakpoint)."""
        self.layout, layout, self.text = self.layouts[index]
        self.written = self._written[index]
        self.sites = layout.sites
        self.site_at = {s.addr: s for s in self.sites}
        self._site_bytes = frozenset(a for s in self.sites for a in range(s.addr, s.addr + s.length))
        self._traps = {s.addr: frozenset({self.breakpoint, *(f.insn for f in (s.dormant, s.live)
                                                              if f.trap)}) for s in self.sites}
        self.sizes = layout.sizes
        self.loop_len = len(self.sizes)           # at least one trip round the loop

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
        if self._to_loop[cpu]:              # a long turn in a handler ends at its return
            self._to_loop[cpu] = False
            self.machine.cpus[cpu].stop_before()
            return
        pending = self._pending[cpu]
        if pending is not None:
            self._pending[cpu] = None
            self._landed(uc, cpu, addr, *pending)
        guest = self.guest
        if guest is not None and guest.ipis.pending[cpu] and guest.interrupt(cpu):
            return                  # taken before this instruction (--guest)
        # only an instruction some piece of which is changing can be unpredictable
        if self.views.flux[cpu] and self._unpredictable(cpu, addr, size):
            uc.emu_stop()
            return
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
            fetched = self.views.read(cpu, addr, size)
            if fetched not in (site.dormant.insn, site.live.insn, self.breakpoint):
                self._report(cpu, addr, self._disasm(cpu, addr, size), "torn",
                             "fetched a mix of the old and the new instruction")
                uc.emu_stop()
                return
            self._pending[cpu] = (site, self._allowed[addr], self.phase,
                                  fetched in self._traps[addr])
            return
        elif self._foreign and self.views.read(cpu, addr, size) not in \
                (self.text[addr - BASE:addr - BASE + size],
                 self.written[addr - BASE:addr - BASE + size]):
            self._report(cpu, addr, self._disasm(cpu, addr, size), "torn",
                         "fetched bytes that neither the old nor the new program has at "
                         "this instruction outside the sites")
        elif addr != BASE or (sp := self.machine.cpus[cpu].reg(self.arch.sp)) == \
                self._sp0[cpu]:
            return
        else:
            self._report(cpu, addr, self._disasm(cpu, addr), "wild branch",
                         f"came round the loop with {self.arch.sp} {sp:#x}, not "
                         f"{self._sp0[cpu]:#x}: a site left the stack unbalanced")
        uc.emu_stop()

    def stored(self, addr: int, size: int) -> None:
        """The protocol stored ``[addr, addr + size)``: past the sites' patches, every
        instruction a CPU executes is checked byte for byte from then on."""
        if self.longest:
            self._event = ["store"] * len(self._event)
        if not self._site_bytes.issuperset(range(addr, addr + size)):
            self._foreign = True

    def may_fetch(self, cpu: int, code: bytes) -> bool:
        """Whether CPU ``cpu`` could fetch ``code`` (a breakpoint) at a site in its next
        turn: in its view or in a piece still to arrive. Anywhere, once this seed's
        protocol stored outside the sites."""
        if self._foreign:
            return True
        pending = self.views.pending[cpu]
        return any(self.views.read(cpu, s.addr, len(code)) == code or
                   pending.get(s.addr, (b"",))[0].startswith(code) for s in self.sites)

    def _unpredictable(self, cpu: int, addr: int, size: int) -> bool:
        why = unpredictable(self.arch, self.views, cpu, addr, size)
        if why is not None:
            self._report(cpu, addr, self._disasm(cpu, addr, size), "unpredictable", why)
        return why is not None

    def _landed(self, uc: unicorn.Uc, cpu: int, addr: int, site: Site,
                allowed: frozenset[str], phase: str, trapped: bool) -> None:
        """Classify what the site instruction did by where the CPU went next. Where it
        trapped (``trapped``), the handler decided that when it sent the CPU on: a
        guest's handler runs as code, over turns, and may do it in a later phase, whose
        forms are allowed too (v5.10 poke_int3_handler() emulates the new
        instruction for a CPU that trapped on a kprobe's int3 before the batch
        published bp_desc, once it has)."""
        form = site.dormant if site.dormant.lands == addr else \
            site.live if site.live.lands == addr else None
        if form is None:
            self._report(cpu, site.addr, self._disasm(cpu, site.addr), "wild branch",
                         f"the site instruction went to {addr:#x}, neither "
                         f"{site.dormant.lands:#x} nor {site.live.lands:#x}")
            uc.emu_stop()
            return
        if form.ret is not None and not self._returned(uc, cpu, site, form):
            return
        key = self._executed_keys.get((phase, form.name))
        if key is None:         # "during nop", ...: made once per phase and form
            key = self._executed_keys[phase, form.name] = f"{phase.split(': ')[1]} {form.name}"
        self.executed[key] += 1
        if form.name not in allowed and not (trapped and form.name in self._allowed[site.addr]):
            after = phase.endswith("after")
            self._report(cpu, site.addr, disasm_one(self.arch, form.insn, site.addr), "stale",
                         f"executed the {'old' if after else 'new'} instruction "
                         f"{'after the patch returned' if after else 'before the patch'}")
            uc.emu_stop()

    def _returned(self, uc: unicorn.Uc, cpu: int, site: Site, form: Form) -> bool:
        """Check a call's return address; pop it where the call pushed it and
        the callee does not return by itself."""
        arch, want, regs = self.arch, form.ret, self.machine.cpus[cpu]
        if arch.ra is not None:
            got = regs.reg(arch.ra)
        else:
            sp = regs.reg(arch.sp)
            got = arch.to_int(bytes(uc.mem_read(sp, arch.word)))
            if not form.callee_returns:
                regs.set_reg(arch.sp, sp + arch.word)
        if got == want:
            return True
        self._report(cpu, site.addr, self._disasm(cpu, site.addr), "wild branch",
                     f"entered {form.lands:#x} with return address {got:#x}, not {want:#x}")
        uc.emu_stop()
        return False

    def _on_trap(self, cpu: Cpu, trap: Trap) -> object:
        """A kprobe site's own breakpoint is a kprobe hit; any other trap a finding."""
        site = self.site_at.get(trap.address)
        for form in (site.dormant, site.live) if site is not None else ():
            if form.trap and self.views.read(cpu.index, trap.address,
                                             len(form.insn)) == form.insn:
                return form.lands             # _landed judges whether it was allowed
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
        return None

    # -- running ----------------------------------------------------------------
    def event(self, index: int, kind: str) -> None:
        """Something a long turn may follow happened to CPU ``index`` (:data:`EVENTS`)."""
        self._event[index] = kind

    def _long_turn(self, index: int) -> int:
        """A long turn, if CPU ``index``'s last event is one this seed lengthens and the
        seed's chance says so, else 0. After a text store: long enough to go round the
        loop twice (to any site). In a handler (after an IPI or a trap): up to the
        longest trap path, so the handler can run to its return, where the turn ends
        (the CPU's next loop instruction, :meth:`_on_code`)."""
        kind, self._event[index] = self._event[index], None
        if kind not in self._long_after or self.rng.random() >= self._long_chance:
            return 0
        if kind == "store":
            return self.rng.randint(MAX_RUN + 1, max(MAX_RUN + 1, 2 * self.loop_len))
        if not self.guest.in_guest(index):
            return 0
        self._to_loop[index] = True
        return self.rng.randint(MAX_RUN + 1, max(MAX_RUN + 1, self.longest))

    def ipi_latency(self) -> int:
        """A seeded delivery latency for an IPI, in instructions its target retires:
        none a quarter of the time, else up to a turn, and one time in 16 a
        long tail up to the longest trap path (log-uniform: short delays are
        likelier). An assumption: the architectures bound it by no instruction
        count (an IPI travels through the interrupt controller)."""
        r = self.rng.random()
        if r < 0.25:
            return 0
        if r < 15 / 16:
            return self.rng.randint(1, MAX_RUN)
        return int(MAX_RUN * (max(MAX_RUN, self.longest) / MAX_RUN) ** self.rng.random())

    def _draw(self, index: int, spin: bool = False, waited: bool = False) -> int:
        if self._event[index] is not None:
            count = self._long_turn(index)
            if count:
                return count
        if spin and self.guest.in_guest(index):
            return self.rng.randint(1, GUEST_RUN)
        if waited and self.guest.in_guest(index):
            return self._run_on(index)
        if spin and self.guest.latency(index):
            # the patching CPU only waits: the CPU runs on until it can take its IPI
            return self.guest.latency(index) + 1
        r = self.rng.random()
        if r < 0.25:
            return 0
        if r < 0.5:
            return 1
        return self.rng.randint(2, MAX_RUN)

    def _run_on(self, index: int) -> int:
        """The turn of CPU ``index``, in a handler, when the patching CPU's spin has
        just ended: a seeded count up to the longest trap path, ending at the
        handler's return. The spinning CPU sees the store that ends its wait a
        cache-line transfer after it is made, and v5.10 then runs a long way
        before its next step the others can see (x86: on_each_cpu() returns,
        and text_poke() switches to its temporary mm and back, flushing the
        TLB, where the guest stores through its alias); the CPU that made the
        store runs on all that while. A count of 1 is a CPU stalled as long."""
        self._to_loop[index] = True
        return self.rng.randint(1, max(GUEST_RUN, self.longest))

    def _run(self, index: int, count: int) -> None:
        if count <= 0 or self._dead[index]:
            return
        guest = self.guest
        if guest is not None and guest.ipis.pending[index]:
            guest.deliver(index)
        self._step(index, count)
        if self._event[index] is not None and not self._dead[index]:
            self._step(index, self._long_turn(index))   # a trap or IPI within the turn

    def _step(self, index: int, count: int) -> None:
        if count <= 0:
            return
        try:
            self.machine.cpus[index].run_turn(count)
        except GuestFault as fault:
            self._report(index, fault.pc, self._disasm(index, fault.pc), "fault", fault.reason)
        self._to_loop[index] = False

    def interleave(self, skip: int | None = None, spin: bool = False,
                   waited: bool = False, interruptible: bool = False) -> None:
        """Each live CPU, in a seeded order, receives pending pieces and runs a while
        (but ``skip``: the guest's patching CPU, busy patching). ``spin``: the
        patching CPU only waits for the others (it did nothing they can see since it
        last let them run), so those in the guest's own code may run longer.
        ``waited``: its wait is over, and those in a handler run on (:meth:`_run_on`).
        ``interruptible``: the patching CPU has interrupts enabled here, so it may
        be delayed (:meth:`_delay`)."""
        order = list(range(len(self.machine.cpus)))
        self.rng.shuffle(order)
        delay = interruptible and self._delay_rng.random() < self.delay_chance
        guest = self.guest
        for i in order:
            if i == skip:
                continue
            self.views.drift(i, self.rng)
            if guest is not None and guest.ipis.pending[i]:
                guest.deliver(i)                # before the draw: a handler runs longer
            self._run(i, self._delay() if delay else self._draw(i, spin, waited))

    def _delay(self) -> int:
        """A turn of the others while the patching CPU is delayed where its interrupts
        are enabled (v5.10 text_poke_bp_batch() runs preemptible, interrupts on,
        between its steps): long enough to go round the loop twice and through the
        longest trap path, ending wherever its count does (mid-handler too)."""
        return self._delay_rng.randint(MAX_RUN + 1, 2 * self.loop_len + self.longest)

    def trap_declined(self, cpu: int) -> None:
        """CPU ``cpu`` returns to the breakpoint it trapped on (a handler declined it,
        :mod:`patchcheck.guest`): the site it was executing is not done; it runs again."""
        self._pending[cpu] = None

    def patcher_failed(self, pc: int, detail: str, kind: str = "fault",
                       cpu: int = PATCHER) -> None:
        """The guest's patching CPU (or ``cpu``) crashed (``fault``) or did not return
        (``hang``, :mod:`patchcheck.guest`)."""
        self._report(cpu, pc, self._disasm(cpu, pc), kind, detail)

    def _reset(self, seed: int) -> None:
        m = self.machine
        self.seed, self.rng = seed, random.Random(seed)
        self._use(self.rng.randrange(len(self.layouts)))
        m.write(BASE, self.text)
        m.write(self.stack, bytes(STACK * len(m.cpus)))
        self.views.reset()
        for cpu, context in zip(m.cpus, self._contexts):
            m.sync_cpu(cpu.index)               # forget stale ranges of the last run
            cpu.uc.context_restore(context)
            cpu.halted = False
        self._pending = [None] * len(m.cpus)
        self._dead = [False] * len(m.cpus)
        self._foreign = False
        self.findings = []
        self._event = [None] * len(m.cpus)
        self._to_loop = [False] * len(m.cpus)
        if self.guest is not None:
            self._long_after = frozenset(e for e in EVENTS if self.rng.random() < 0.5)
            self._long_chance = self.rng.choice(LONG_CHANCES)
            self._delay_rng = random.Random(f"delay {seed}")
            self.delay_chance = self._delay_rng.choice(DELAY_CHANCES) \
                if self._delay_rng.random() < DELAY_CHANCE else 0.0
            self.guest.reset()

    def _set_phase(self, op: str, stage: str) -> None:
        self.phase = f"{op}: {stage}"
        for s in self.sites:
            old, new = (s.dormant.name, s.live.name) if op == "enable" else \
                (s.live.name, s.dormant.name)
            self._allowed[s.addr] = frozenset({"before": {old}, "during": {old, new},
                                               "after": {new}}[stage])

    def _operation(self, op: str) -> None:
        """Enable or disable every site: in one batch or one protocol run per site.

        Enabling hands each site's out-of-line code (an optprobe's detour) to the
        protocol in the same run, ahead of the site (:class:`~arches.base.OutOfLine`).

        A site with a ``disable_head`` is disabled as arch_unoptimize_kprobe
        does: its head through the protocol, then the rest with a plain store
        (text_poke_early) and one sync round for all such sites.
        """
        self._set_phase(op, "during")
        changes, tails = [], []
        for s in self.sites:
            if op == "enable":
                changes += [(s, addr, self.text[addr - BASE:addr - BASE + len(code)], code)
                            for addr, code in s.outline]
                changes.append((s, s.addr, s.off, s.on))
                continue
            head = s.disable_head or s.length
            changes.append((s, s.addr, s.on[:head], s.off[:head]))
            if head < s.length:
                tails.append((s, s.addr + head, s.on[head:], s.off[head:]))
        if self.rng.random() < 0.5:
            self._batch(changes)
            self._tails(tails)
        else:
            for s in self.sites:
                self._batch([c for c in changes if c[0] is s])
                self._tails([t for t in tails if t[0] is s])
        self._set_phase(op, "after")
        for i in range(len(self.machine.cpus)):
            self._run(i, 3 * self.loop_len)

    def _batch(self, changes: list[tuple[Site, int, bytes, bytes]]) -> None:
        """One protocol run over ``changes``; a site's out-of-line code goes as
        :class:`~arches.base.OutOfLine` entries."""
        with self.patcher.batch() as b:
            for s, addr, old, new in changes:
                b.queue(addr, old, new, s.owner, out_of_line=addr != s.addr)

    def _tails(self, tails: list[tuple[Site, int, bytes, bytes]]) -> None:
        for s, addr, old, new in tails:
            self.patcher.text_poke_early(addr, old, new, s.owner)
        if tails:
            self.patcher.text_poke_sync()

    def batch_entries(self) -> list[tuple[int, bytes]]:
        """What enabling hands the protocol: out-of-line code, then each site going live."""
        return [OutOfLine(a, c) for s in self.sites for a, c in s.outline] + \
            [(s.addr, s.on) for s in self.sites]

    def run_seed(self, seed: int) -> list[Finding]:
        """One interleaving: warm up, enable both sites, settle, disable, settle."""
        self._reset(seed)
        self._set_phase("enable", "before")
        for i in range(len(self.machine.cpus)):
            self._run(i, self.rng.randint(0, 2 * self.loop_len))
        try:
            self._operation("enable")
            self._operation("disable")
        except PatcherFailed:
            pass                        # reported; the text is left half patched
        return list(self.findings)
