"""The kernel's own patching C under the patch checker (``kisim patchcheck --guest``).

:class:`GuestSide` loads the guest image (:mod:`patchcheck.guest_image`:
v5.10 ``text_poke_bp_batch()``, ``patch_text()`` or ``patch_instruction()``
with the cross-CPU calls they use) into a :class:`~patchcheck.checker.PatchChecker`'s
machine and plays the hardware around it:

- **The patching CPU.** CPU 0 runs the loop like the others; to patch, it
  calls the guest's ``pc_patch()`` with the sites (the protocol the
  :class:`~patcher.text.TextPatcher` runs is this object), and goes back to
  the loop when it returns. It patches in one run; the other CPUs run
  nested in its hooks (:meth:`PatchChecker.interleave`), before each of
  its stores to shared memory (the text alias, the guest's data, the
  interrupt controller; not the store of an atomic read-modify-write),
  before each instruction that touches instruction fetch
  (:class:`arches.base.FetchSync`), at each call of ``cpu_relax()`` and
  before it returns.
- **Stores to text.** The guest writes text through a second mapping of the
  loop's page (``PC_TEXT_ALIAS``, as v5.10's text_poke() temporary mm,
  ARM's FIX_TEXT_POKE0 and PowerPC's text_poke_area); each store becomes a
  pending store of the fetch model (:meth:`sim.fetch.FetchViews.store`):
  x86 bytes, ARM and PowerPC aligned words, arriving at seeded times.
- **What a CPU fetches** comes from what it executes: ``serialize`` (an x86
  serializing instruction, ARM ``isb`` or exception return, PowerPC
  ``isync`` or ``rfi``) delivers the pieces the arch guarantees
  (:meth:`~sim.fetch.FetchViews.sync`); ``clean`` (ARM DCCMVAU, PowerPC
  ``dcbst``) and ``invalidate`` (ARM ICIMVAU, PowerPC ``icbi``, broadcast
  to every CPU) move a piece on to syncable once the issuing CPU's next
  barrier (ARM ``dsb``, PowerPC ``sync``) completes them, and an
  invalidation then delivers the line's syncable pieces at once to the
  *other* CPUs, whose next fetch misses; the issuing CPU still needs its own context synchronization
  (docs/patchcheck.md: the sources, and where this is weaker than the
  architecture).
- **Interrupts.** A store to the controller's page that sends an IPI
  (:meth:`~arches.base.GuestPatching.ipi_targets`) makes it pending on its
  targets; it is taken after a seeded latency
  (:meth:`~patchcheck.checker.PatchChecker.ipi_latency`), at the first
  instruction boundary where the CPU has interrupts enabled (the CPU stops
  there, :meth:`interrupt`, or is about to run, :meth:`deliver`), through the arch's entry
  (:meth:`~arches.base.GuestPatching.irq_enter`) into the guest's vector,
  which returns with the arch's own exception return. On x86 a CPU that
  hits text_poke_bp()'s ``int3`` enters the guest's ``do_int3()`` the same
  way, where poke_int3_handler() emulates the new instruction.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

import capstone
import unicorn

from arches import Arch, TrapKind
from arches.base import FetchSync, GuestPatching
from kbuild.errors import ModuleError
from kbuild.image import REPO
from patchcheck.guest_image import build_guest
from patchcheck.sites import BASE, CheckerError, arch_hooks, arch_label
from sim.errors import ConfigError, GuestFault
from sim.machine import PAGE, UNHANDLED, Cpu, Machine, Trap, TrapPriority
from sim.uchook import hook_add
from sim.self_patching import (THREAD_SIZE, GuestCpuView, Ipis, effective_address, scan,
                                write_sites)

C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
PATCHER = 0                     # the CPU that calls the primitive
TEXT_ALIAS = 0x80000            # guest.h PC_TEXT_ALIAS
NR_CPUS = 4                     # guest.h PC_NR_CPUS
MAX_PATCH_INSNS = 2_000_000     # one primitive call that runs longer hangs
POISON_FREE = 0x6B               # include/linux/poison.h
MAX_SPINS = 10_000
"""Calls of cpu_relax() in a row, with nothing the other CPUs can see between them,
after which the patching CPU hangs (the references spin at most 37 in a row over
200 seeds on 2 CPUs; each spin lets the other CPUs run)."""
ENTRY_POINTS = ("cpu_relax",)
"""What every arch's patching file defines for the checker (guest.h), beside the
arch's entries (``IRQ_ENTRY``, ``BREAKPOINT_ENTRY``) and what its ``cpu_setup`` reads."""


def trap_path_bound(arch: Arch, machine: Machine, functions: Iterable[tuple[int, int, str]],
                    entries: Iterable[int]) -> int:
    """An upper bound of the longest path from any of ``entries`` (a trap or interrupt
    entry) to its return that runs each instruction at most once: the instructions
    of the entries' functions and of every function they reach by a call or a branch
    out of the function. An indirect call or branch may reach any function."""
    cs = capstone.Cs(*arch.cs_mode)
    cs.detail = True
    funcs = {addr: size for addr, size, _ in functions}
    insns: dict[int, int] = {}
    reach: dict[int, set[int] | None] = {}          # None: any function
    for addr, size in funcs.items():
        code = machine.read(addr, size)
        count, out = 0, set()
        for insn in cs.disasm(code, addr):
            count += 1
            if not set(insn.groups) & _BRANCHES:
                continue
            targets = [op.imm for op in insn.operands if op.type == capstone.CS_OP_IMM]
            if not targets and not set(insn.groups) & _RETURNS:
                out = None                          # through a register or memory
            elif out is not None:
                out.update(t for t in targets if not addr <= t < addr + size)
        insns[addr], reach[addr] = count, out
    seen, todo = set(), [e for e in entries if e in funcs]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo += list(funcs) if reach[f] is None else [t for t in reach[f] if t in funcs]
    return sum(insns[f] for f in seen)


_BRANCHES = {capstone.CS_GRP_JUMP, capstone.CS_GRP_CALL, capstone.CS_GRP_RET,
             capstone.CS_GRP_IRET, capstone.CS_GRP_BRANCH_RELATIVE}
_RETURNS = {capstone.CS_GRP_RET, capstone.CS_GRP_IRET}


class PatcherFailed(Exception):
    """The patching CPU crashed or hung: the finding is reported, the seed is over."""


def guest_hooks(arch: Arch) -> GuestPatching:
    """The arch's guest_patching capability, or :class:`CheckerError`."""
    hooks = arch_hooks(arch, "guest_patching")
    if hooks is None:
        raise CheckerError(f"{arch_label(arch)}: no guest patching code (no guest_patching "
                           "capability)")
    return hooks       # type: ignore[return-value]


def guest_ablations(arch: Arch, kinds: Sequence[str] | None = None) -> dict[str, str]:
    """Each step the arch's guest C can compile out -> its macro; with ``kinds``, only
    the steps that matter on a loop of those site kinds (``GUEST_ABLATION_SITES``)."""
    hooks = guest_hooks(arch)
    needs = hooks.GUEST_ABLATION_SITES
    return {step: macro for step, macro in hooks.GUEST_ABLATIONS.items()
            if kinds is None or step not in needs or set(needs[step]) & set(kinds)}


class GuestSide:
    """The guest image in ``checker``'s machine, and the hardware it needs.

    ``ablation`` names one of the arch's ``GUEST_ABLATIONS``: the image is
    then compiled without that step. ``sources`` are a user's C files built in,
    and ``protocol`` the function of theirs checked instead of the arch's
    ``arch_patch_batch()``, with its signature; ``werror``: their warnings are
    errors (``--module-werror``). ``patching`` is a user's version of the arch's
    whole patching file, built in its place: it must define the same entry
    points (:data:`ENTRY_POINTS` and the arch's entries). The object is the
    checker's protocol.
    """

    def __init__(self, checker, ablation: str | None = None, sources: Sequence[Path] = (),
                 protocol: str | None = None, werror: bool = False,
                 patching: Path | None = None) -> None:
        self.checker = checker
        self.arch, self.machine = checker.arch, checker.machine
        self.hooks = guest_hooks(self.arch)
        if len(self.machine.cpus) > NR_CPUS:
            raise CheckerError(f"--guest runs at most {NR_CPUS} CPUs (the guest's "
                               f"PC_NR_CPUS), not {len(self.machine.cpus)}")
        macros: tuple[str, ...] = ()
        if ablation is not None:
            if ablation not in self.hooks.GUEST_ABLATIONS:
                raise CheckerError(f"{arch_label(self.arch)}: no guest ablation {ablation!r} "
                                   f"(there are: {', '.join(self.hooks.GUEST_ABLATIONS)})")
            macros = (self.hooks.GUEST_ABLATIONS[ablation],)
        if protocol is not None:
            if not C_NAME.fullmatch(protocol):
                raise CheckerError(f"--guest-protocol {protocol!r}: not a C function name")
            macros += (f"PC_PROTOCOL={protocol}",)
        own = patching is None
        patching = REPO / self.hooks.PATCHING_C if own else Path(patching)
        self.__name__ = (protocol or (self.hooks.PATCHING_C if own else patching.name)) + \
            (f" without {ablation}" if ablation else "")
        try:
            elf = build_guest(self.arch, (patching, *map(Path, sources)), macros,
                              werror=werror, first_user=int(own))
        except ModuleError as err:      # the harness's call of it is what did not link
            if protocol is not None and f"undefined symbol: {protocol} " in str(err):
                raise CheckerError(f"--guest-protocol {protocol}: no function {protocol} in "
                                   f"{', '.join(map(str, sources))}") from None
            raise
        self.image = self.machine.load_elf(str(elf))
        self.symbols = self.image.symbols
        if protocol is not None and not any(name == protocol
                                            for _, _, name in self.image.functions):
            raise CheckerError(f"--guest-protocol {protocol}: not a function of the module")
        entries = (*ENTRY_POINTS, self.hooks.IRQ_ENTRY,
                   *filter(None, (self.hooks.BREAKPOINT_ENTRY,)))
        missing = [name for name in entries if name not in self.symbols]
        if missing:
            raise CheckerError(f"{patching}: defines no {', '.join(missing)} (a version of "
                               f"{self.hooks.PATCHING_C} keeps its entry points)")
        self._done_at = self.symbols["pc_done"]
        self._relax_at = self.symbols["cpu_relax"]
        self._release_at = self.symbols["pc_release"]
        self.released: list[tuple[int, int]] = []      # this seed's released ranges
        self._watching = False          # the other CPUs' reads of the patcher's stack
        # only the instructions that touch instruction fetch are hooked; the other CPUs
        # may not run before the store of an atomic read-modify-write
        self.events, self.atomic = scan(self.arch, self.hooks, self.machine,
                                        self.image.functions)
        text = self.image.sections[".text"]
        self.text = (text.addr, text.addr + text.size)
        self._map_hardware()
        self.patching = self._done = self._failed = False
        self.cpus = [GuestCpuView(cpu, self.symbols) for cpu in self.machine.cpus]
        self.ipis = Ipis(self.machine, self.hooks, self.cpus,
                         self.symbols[self.hooks.IRQ_ENTRY])
        entries = [self.symbols[e] for e in (self.hooks.IRQ_ENTRY, self.hooks.BREAKPOINT_ENTRY)
                   if e is not None]
        self.longest = trap_path_bound(self.arch, self.machine, self.image.functions, entries)
        self.due = [0] * len(self.machine.cpus)     # when a pending IPI may be taken
        # per CPU: its cache maintenance not yet completed by a barrier (_complete)
        self.outstanding: list[list[tuple]] = [[] for _ in self.machine.cpus]
        self._setup_cpus()

    # -- the machine ----------------------------------------------------------
    def _map_hardware(self) -> None:
        m, hooks = self.machine, self.hooks
        alias = m.map_alias(TEXT_ALIAS, BASE)
        size = m.memory.find(BASE, 1).size
        m.map(hooks.IRQ_BASE, PAGE, "rw")
        data = self.symbols["_sdata"]
        stacks = self.symbols["pc_stacks"]
        for cpu in m.cpus:
            hook_add(cpu.uc, unicorn.UC_HOOK_MEM_WRITE, self._on_text_store, cpu.index,
                     alias, alias + size - 1)
            hook_add(cpu.uc, unicorn.UC_HOOK_MEM_WRITE, self._on_irq_store, cpu.index,
                     hooks.IRQ_BASE, hooks.IRQ_BASE + PAGE - 1)
            hook_add(cpu.uc, unicorn.UC_HOOK_MEM_WRITE, self._on_read_only_text, cpu.index,
                     BASE, BASE + size - 1)
            mine = [self._done_at, self._relax_at, self._release_at] \
                if cpu.index == PATCHER else []
            for addr in (*self.events, *mine):
                hook_add(cpu.uc, unicorn.UC_HOOK_CODE, self._on_code, cpu.index, addr, addr)
        # only the patching CPU's stores to the guest's data let the others run first
        hook_add(m.cpus[PATCHER].uc, unicorn.UC_HOOK_MEM_WRITE, self._on_data_store, PATCHER,
                 data, stacks - 1)
        if self.hooks.BREAKPOINT_ENTRY is not None:
            m.add_trap_handler(self._on_breakpoint, TrapPriority.TEXT_POKE)
            declined = self.symbols["pc_breakpoint_declined"]
            for cpu in m.cpus:
                hook_add(cpu.uc, unicorn.UC_HOOK_MEM_WRITE, self._on_declined, cpu.index,
                         declined, declined + len(m.cpus) * self.arch.word - 1)

    def _setup_cpus(self) -> None:
        m = self.machine
        stacks = self.symbols["pc_stacks"]
        m.write_word(self.symbols["pc_nr_cpus"], len(m.cpus), 4)
        m.write_word(self.symbols["pc_online"], (1 << len(m.cpus)) - 1)   # every CPU is up
        for cpu, view in zip(m.cpus, self.cpus):
            base = stacks + cpu.index * THREAD_SIZE
            m.write_word(base, cpu.index, 4)                  # thread_info.cpu
            cpu.set_reg(self.arch.sp, base + THREAD_SIZE - 64)
            try:
                self.hooks.cpu_setup(view)
            except KeyError as err:             # a user's patching file lacks it
                raise CheckerError(f"the guest's patching file defines no {err.args[0]} "
                                   f"(as {self.hooks.PATCHING_C} does)") from None
        data = self.symbols["_sdata"]
        self._data = (data, m.read(data, self.symbols["_edata"] - data))

    def reset(self) -> None:
        """The guest's data as loaded, no interrupt pending (each seed)."""
        self.machine.write(*self._data)
        self.ipis.pending[:] = [False] * len(self.machine.cpus)
        self.due[:] = [0] * len(self.machine.cpus)
        for ops in self.outstanding:
            ops.clear()
        self.patching = self._done = self._failed = False

    # -- hooks ------------------------------------------------------------------
    def _value(self, value: int, size: int) -> bytes:
        return (value & ((1 << 8 * size) - 1)).to_bytes(size, self.arch.endian)

    def _step(self, cpu: int, relax: bool = False) -> None:
        """The patching CPU is about to do something the others can see, or spins:
        they run first (nested: each CPU is its own Unicorn). A finding ends the call."""
        if cpu != PATCHER or not self.patching or self._failed:
            return
        spin = relax and self._spinning
        # a delay while it only waits would add nothing the wait does not allow
        # (whether it may be delayed is read only where this seed allows delays)
        self.checker.interleave(skip=PATCHER, spin=spin, waited=self._spinning and not relax,
                                interruptible=not relax and self.checker.delay_chance > 0
                                and self.ipis.enabled(PATCHER))
        self._spinning = relax
        self._spins = self._spins + 1 if spin else 0
        if self._spins > MAX_SPINS:
            self.checker.patcher_failed(self.machine.cpus[PATCHER].pc, "the patching CPU "
                                        f"spun {MAX_SPINS:,} times in a row without "
                                        "returning", "hang")
        if self.checker.findings:
            self._failed = True             # a CPU that fell over will never answer an IPI
            self.machine.cpus[PATCHER].uc.emu_stop()

    def _on_text_store(self, uc: unicorn.Uc, _access: int, addr: int, size: int, value: int,
                       cpu: int) -> None:
        """A store through the alias: into memory now, pending for every CPU's fetch."""
        self._step(cpu)
        text = BASE + addr - TEXT_ALIAS
        self.checker.views.store(text, self._value(value, size))
        self.checker.stored(text, size)

    def _on_read_only_text(self, uc: unicorn.Uc, _access: int, addr: int, size: int,
                           value: int, cpu: int) -> None:
        """A store to the text itself, not through the alias: v5.10 maps kernel text
        read-only (CONFIG_STRICT_KERNEL_RWX), so the store faults. A finding; the
        CPU stops there."""
        self.checker.patcher_failed(
            self.machine.cpus[cpu].pc, f"stored {size} bytes to read-only kernel text at "
            f"{addr:#x} (v5.10 maps text read-only: write through the alias, text_alias())",
            "fault", cpu)
        self._failed = True
        uc.emu_stop()

    def _watch_patcher_stack(self) -> None:
        """From the first release on: what the other CPUs read of the patching CPU's
        stack (its loop's too) is a descriptor, and once released a use after
        release (:meth:`_on_patcher_stack_read`). Until a protocol releases anything
        there is nothing to find, so the read hooks, which every load of those CPUs
        would pay for, come only then; their blocks are translated again with them."""
        mine = self.symbols["pc_stacks"] + PATCHER * THREAD_SIZE
        for cpu in self.machine.cpus:
            if cpu.index != PATCHER:
                hook_add(cpu.uc, unicorn.UC_HOOK_MEM_READ, self._on_patcher_stack_read,
                         cpu.index, mine, mine + THREAD_SIZE - 1)
                cpu.uc.ctl_flush_tb()
        self._watching = True

    def _release(self) -> None:
        """pc_release(p, size) (guest.h): the range is poisoned (include/linux/poison.h
        POISON_FREE) until the next call of the protocol."""
        if not self._watching:
            self._watch_patcher_stack()
        cpu = self.machine.cpus[PATCHER]
        begin, size = (cpu.reg(r) for r in self.arch.args[:2])
        size = min(size, PAGE)
        self.released.append((begin, begin + size))
        self.machine.write(begin, bytes([POISON_FREE]) * size)

    def _on_patcher_stack_read(self, uc: unicorn.Uc, _access: int, addr: int, size: int,
                               _value: int, cpu: int) -> None:
        """Another CPU reads the patching CPU's stack: a use after release if the range
        was released (a handler still holding the protocol's descriptor)."""
        if any(b <= addr < e for b, e in self.released):
            self.checker.patcher_failed(
                self.machine.cpus[cpu].pc, f"read {size} bytes at {addr:#x} of a descriptor "
                "the protocol had released (a handler still held it)", "fault", cpu)
            uc.emu_stop()

    def _on_irq_store(self, uc: unicorn.Uc, _access: int, addr: int, size: int, value: int,
                      cpu: int) -> None:
        self._step(cpu)
        was = list(self.ipis.pending)
        self.ipis.store(addr - self.hooks.IRQ_BASE, value, cpu)
        for target, (before, now) in enumerate(zip(was, self.ipis.pending)):
            if now and not before:
                self.due[target] = self.machine.cpus[target].instructions + \
                    self.checker.ipi_latency()


    def _on_data_store(self, uc: unicorn.Uc, _access: int, addr: int, size: int, value: int,
                       cpu: int) -> None:
        """A store to the guest's shared data: the others run first, unless it is the
        store of an atomic read-modify-write (Unicorn reports it between the read
        and the write, so they would run inside the atomic), or none of them can
        read it before the patching CPU's next step (:meth:`_unseen`)."""
        if self.patching and self.machine.cpus[cpu].pc not in self.atomic and \
                not self._unseen():
            self._step(cpu)                 # (installed on the patching CPU only)

    def _unseen(self) -> bool:
        """No other CPU can read the guest's data before the patching CPU's next step:
        each is in the loop, which reads nothing but its own stack, with no IPI
        pending and no breakpoint to fetch whose handler is the guest's (x86
        do_int3(), where poke_int3_handler() reads bp_desc). Whatever they would
        run before the store they may as well run at that next step, which is
        itself a store, an IPI, a barrier or a wait: the store adds no order the
        next step's turn does not give."""
        trap = self.arch.poke_breakpoint if self.hooks.BREAKPOINT_ENTRY else None
        views = self.checker.views
        return all(i == PATCHER or (not self.ipis.pending[i] and views.covers(cpu.pc) and
                                    not (trap and self.checker.may_fetch(i, trap)))
                   for i, cpu in enumerate(self.machine.cpus))

    def _on_code(self, uc: unicorn.Uc, addr: int, size: int, cpu: int) -> None:
        if cpu == PATCHER and self.patching and addr == self._release_at:
            self._release()
            return
        if cpu == PATCHER and self.patching and addr in (self._done_at, self._relax_at):
            self._step(cpu, relax=addr == self._relax_at)
            if addr == self._done_at:
                self._done = True
                self.machine.cpus[cpu].stop_before()
            return
        event = self.events.get(addr)
        if event is None:
            return
        # only a barrier is a visible step: the others run first (_step)
        if event.kind == "serialize":       # refetches: this CPU's own view
            self.checker.views.sync(cpu)
        elif event.kind in ("clean", "invalidate"):     # issued: seen at the barrier
            self._cache_op(cpu, event)
        elif event.kind == "barrier":
            self._step(cpu)
            self._complete(cpu)

    def _cache_op(self, cpu: int, event: FetchSync) -> None:
        """Issue a ``clean`` or ``invalidate`` of the line the registers address (all:
        none); a line of the text alias is the text's own (the caches are physically
        tagged). It takes effect at the CPU's next barrier (:meth:`_complete`); an
        invalidation covers only the pieces a clean completed before it was issued:
        without a barrier between them, the instruction cache may refill the line
        before the clean reaches the point of unification."""
        views = self.checker.views
        if event.regs:
            begin = effective_address(self.machine.cpus[cpu], event)
            if TEXT_ALIAS <= begin < TEXT_ALIAS + PAGE:
                begin += BASE - TEXT_ALIAS      # the same physical line
            end = begin + 1
        else:
            begin, end = views.base, views.base + views.size
        covers = views.cleaned(begin, end) if event.kind == "invalidate" else None
        self.outstanding[cpu].append((event.kind, begin, end, covers))

    def _complete(self, cpu: int) -> None:
        """A barrier (ARM ``dsb``, PowerPC ``sync``): the CPU's cache maintenance since
        its last barrier takes effect, in order. An invalidation's flushed pieces
        reach the *other* CPUs' fetch at once (their next fetch of the line misses)."""
        views = self.checker.views
        for kind, begin, end, covers in self.outstanding[cpu]:
            if kind == "clean":
                views.clean(begin, end)
                continue
            views.invalidate(begin, end, covers)
            for other in range(len(self.machine.cpus)):
                if other != cpu:
                    views.deliver(other, begin, end)
        self.outstanding[cpu].clear()

    def _on_declined(self, uc: unicorn.Uc, _access: int, addr: int, size: int, value: int,
                     cpu: int) -> None:
        """The guest's breakpoint entry declines: the CPU goes back to the breakpoint,
        so the site it trapped on has not been executed yet."""
        if value:
            self.checker.trap_declined(cpu)

    def _on_breakpoint(self, cpu: Cpu, trap: Trap) -> object:
        """A CPU that hits a breakpoint in the text enters the guest's breakpoint
        entry (x86 do_int3(), where poke_int3_handler() runs); one the guest
        declined (guest.h ``pc_breakpoint_declined``) goes on to the checker's
        kprobes, as do_int3() asks kprobe_int3_handler() next."""
        if trap.kind is not TrapKind.BREAKPOINT or not self.checker.views.covers(trap.address):
            return UNHANDLED
        declined = self.symbols["pc_breakpoint_declined"] + cpu.index * self.arch.word
        if self.machine.read_word(declined) == trap.address:
            self.machine.write_word(declined, 0)
            return UNHANDLED
        after = trap.address + len(self.arch.poke_breakpoint)
        self.checker.event(cpu.index, "trap")
        return self.hooks.irq_enter(self.cpus[cpu.index],
                                    self.symbols[self.hooks.BREAKPOINT_ENTRY], after)

    def in_guest(self, index: int) -> bool:
        """CPU ``index`` is in the guest's own code (an interrupt handler, a spin)."""
        return self.text[0] <= self.machine.cpus[index].pc < self.text[1]

    # -- interrupts ---------------------------------------------------------------
    def _takes_ipi(self, index: int) -> bool:
        """CPU ``index`` has an IPI pending and interrupts enabled (and is not patching)."""
        return (self.ipis.pending[index] and not (self.patching and index == PATCHER)
                and self.ipis.enabled(index))

    def latency(self, index: int, hooked: bool = False) -> int:
        """Instructions CPU ``index`` runs before its pending IPI can be taken (0: now);
        ``hooked``: from a code hook, whose instruction has not retired (Unicorn's
        counter has counted it, :meth:`sim.machine.Cpu.stop_before`)."""
        if not self.ipis.pending[index]:
            return 0
        return max(0, self.due[index] - self.machine.cpus[index].position() + hooked)

    def interrupt(self, index: int) -> bool:
        """From the loop's code hook: a pending IPI is taken at this instruction
        boundary if its seeded latency has run out (every instruction the CPU
        retires counts, masked or not) and the CPU has interrupts enabled (never
        while they are masked). The CPU stops here and enters the vector before
        it runs again (:meth:`deliver`): registers that switch modes are not
        written under a running Unicorn."""
        if not self.ipis.pending[index] or self.latency(index, hooked=True) or \
                not self._takes_ipi(index):
            return False
        self.machine.cpus[index].stop_before()
        return True

    def deliver(self, index: int) -> None:
        """Before CPU ``index`` runs: take a pending IPI if interrupts are enabled and
        its latency is over, at the boundary the seeded run lengths brought it to."""
        if self._takes_ipi(index) and not self.latency(index):
            self.ipis.take(index)
            self.checker.event(index, "ipi")

    # -- the protocol -------------------------------------------------------------
    def __call__(self, port: object, sites: Sequence[tuple[int, bytes]]) -> None:
        """pc_patch(nr) on CPU 0 for ``sites``, the other CPUs running around it."""
        try:
            write_sites(self.machine, self.symbols["pc_sites"], sites)
        except ConfigError as err:
            raise CheckerError(str(err)) from None
        m = self.machine
        cpu = m.cpus[PATCHER]
        saved = cpu.prepare_call(self.symbols["pc_patch"], (len(sites),), self._done_at)
        self.patching, self._done, self._failed, self._spinning = True, False, False, False
        self.released.clear()
        self._spins = 0
        try:
            try:
                m.step(PATCHER, MAX_PATCH_INSNS)
            except GuestFault as fault:
                if not self._failed:
                    self.checker.patcher_failed(fault.pc, fault.reason)
                raise PatcherFailed from None
            if self._failed:
                raise PatcherFailed
            if not self._done:
                self.checker.patcher_failed(cpu.pc, "the patching CPU did not return within "
                                            f"{MAX_PATCH_INSNS:,} instructions", "hang")
                raise PatcherFailed
        finally:
            self.patching = False
        cpu.uc.context_restore(saved)
