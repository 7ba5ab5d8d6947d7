"""The kernel patches itself (CONFIG_PATCHING_IN_GUEST): the hardware its
patching C needs, and the host's call into it.

A kernel built with the option carries Linux v5.10's own primitive
(``arches/<arch>/patching.c``: x86 ``text_poke_bp_batch()``, ARM
``patch_text()`` under ``stop_machine()``, PowerPC ``patch_instruction()``)
and the cross-CPU calls it makes (``kernel/patching/``, after
kernel/smp.c and kernel/stop_machine.c). :class:`SelfPatching` plays what
the CPUs need around it:

- **The text alias.** The image is mapped a second time, writable, at the
  address the build gave the C (guest.h ``PC_TEXT_ALIAS``), as v5.10's
  text_poke() temporary mm, ARM's FIX_TEXT_POKE0 and PowerPC's
  text_poke_area. A store through it is a text store of the machine
  (:meth:`Machine.text_stored`): no CPU is guaranteed to fetch it before
  it synchronizes.
- **What synchronizes fetch** is read from the encodings of the patching
  code's instructions (:meth:`arches.base.GuestPatching.fetch_sync`), and
  takes effect when a CPU executes one: a serializing instruction (x86
  IRETQ, ARM ``isb`` or an exception return, PowerPC ``isync``/``rfi``)
  makes that CPU fetch every store (:meth:`Machine.serialize`); an
  instruction-cache invalidation by address (ARM ICIMVAU, PowerPC ``icbi``)
  makes the other CPUs miss on the line (:meth:`Machine.invalidate_icache`).
  A data-cache clean (``dcbst``, DCCMVAU) changes nothing here: the kernel
  machine keeps no data cache apart from memory (the patch checker's
  fetch model does, docs/patchcheck.md).
- **Interrupts.** The arch's controller page (x86 local APIC ICR, ARM
  GICD_SGIR, PowerPC MPIC IPI dispatch) is mapped; a store that sends an
  IPI makes it pending on its targets (:class:`Ipis`), which take it at an
  instruction boundary with interrupts enabled through the arch's entry
  into the kernel's vector, and return with the arch's own exception
  return.
- **Costs.** A CPU taking an IPI is charged ``ipi`` (the hardware's entry
  and return); each serializing instruction of the patching code that is
  not an entry's exception return (x86 ``sync_core()``, ARM ``isb``, PowerPC
  ``isync``) is charged ``serialize`` in count mode, as the host patcher
  charges its own (:class:`arches.base.TextSync`); under the timing model it
  is the model's serializing instruction.

The call (:meth:`SelfPatching.__call__`, the machine's ``text_poke``, which
:class:`patcher.text.TextPatcher` runs instead of the arch's Python
protocol) writes the sites into ``pc_sites[]`` and runs ``pc_patch()`` on
the patching CPU: the CPU whose hypercall asked (nested in it), or CPU 0
for the host. While it spins (each call of ``cpu_relax()``), every other
CPU with an IPI pending takes it and runs its handler, a slice at a time,
until it returns; the call ends when every handler has. The other CPUs
run nothing else meanwhile: the kernel machine runs the protocol, the
patch checker explores its interleavings.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import unicorn

from arches import Arch
from arches.base import FetchSync, GuestPatching, OutOfLine
from sim.asm import listing
from sim.elf import Image, SymbolTable
from sim.errors import ConfigError
from sim.machine import PAGE, Cpu, Machine

INSN_MAX = 16                   # guest.h PC_INSN_MAX
MAX_SITES = 16                  # entry.c PC_MAX_SITES
THREAD_SIZE = 8192              # guest.h, kisim/thread_info.h
MAX_CALL_INSNS = 2_000_000      # one call of the primitive that runs longer hangs
SERVE_SLICE = 64                # what another CPU runs of its handler at each spin


class GuestCpuView:
    """A machine CPU as :class:`arches.base.GuestCpu`."""

    def __init__(self, cpu: Cpu, symbols: SymbolTable) -> None:
        self.index, self.uc = cpu.index, cpu.uc
        self._cpu, self._symbols = cpu, symbols

    def reg(self, name: str) -> int:
        return self._cpu.reg(name)

    def set_reg(self, name: str, value: int) -> None:
        self._cpu.set_reg(name, value)

    def read_word(self, addr: int) -> int:
        return self._cpu.machine.read_word(addr)

    def write_word(self, addr: int, value: int) -> None:
        self._cpu.machine.write_word(addr, value)

    def symbol(self, name: str) -> int:
        return self._symbols[name]


def scan(arch: Arch, hooks: GuestPatching, machine: Machine,
         functions: Iterable[tuple[int, int, str]]) -> tuple[dict[int, FetchSync], frozenset[int]]:
    """Every instruction of ``functions`` that touches instruction fetch
    (:meth:`~arches.base.GuestPatching.fetch_sync`), and the atomic
    read-modify-writes' stores (:meth:`~arches.base.GuestPatching.atomic_store`)."""
    events, atomic = {}, set()
    for addr, size, _name in functions:
        for insn in listing(arch, machine.read(addr, size), addr):
            event = hooks.fetch_sync(insn.bytes)
            if event is not None:
                events[insn.address] = event
            if hooks.atomic_store(insn.bytes):
                atomic.add(insn.address)
    return events, frozenset(atomic)


def serializations(events: dict[int, FetchSync], functions: Iterable[tuple[int, int, str]],
                   entries: Iterable[str | None]) -> frozenset[int]:
    """The serializing instructions of ``events`` that a sync costs beyond its IPI:
    all but the exception returns of the interrupt and breakpoint ``entries``,
    which the ``ipi`` and ``trap`` charges already cover (x86 sync_core()'s IRETQ,
    ARM's isb, PowerPC's isync)."""
    spans = [(addr, addr + size) for addr, size, name in functions if name in entries]
    return frozenset(a for a, e in events.items()
                     if e.kind == "serialize" and not any(b <= a < f for b, f in spans))


def write_sites(machine: Machine, at: int, sites: Sequence[tuple[int, bytes]]) -> None:
    """``sites`` into ``struct pc_site[]`` at ``at`` (guest.h: addr, len,
    out_of_line, insn[PC_INSN_MAX])."""
    arch = machine.arch
    entry = arch.word + 8 + INSN_MAX
    if len(sites) > MAX_SITES:
        raise ConfigError(f"the guest takes at most {MAX_SITES} sites in one call")
    for i, site in enumerate(sites):
        addr, insn = site
        if len(insn) > INSN_MAX:
            raise ConfigError(f"a site of {len(insn)} bytes (the guest takes {INSN_MAX})")
        machine.write_word(at + i * entry, addr)
        machine.write(at + i * entry + arch.word,
                      arch.from_int(len(insn), 4)
                      + arch.from_int(int(isinstance(site, OutOfLine)), 4)
                      + insn.ljust(INSN_MAX, b"\0"))


def effective_address(cpu: Cpu, event: FetchSync) -> int:
    """The address a ``clean`` or ``invalidate`` with registers operates on: the sum
    of ``event.regs`` (None: a literal 0) in the arch's address width."""
    ea = sum(cpu.reg(r) for r in event.regs if r is not None)
    return ea & ((1 << cpu.arch.bits) - 1)


class Ipis:
    """The IPIs pending on a machine's CPUs: sent by stores to the arch's
    controller page, taken through the arch's interrupt entry into ``entry``."""

    def __init__(self, machine: Machine, hooks: GuestPatching,
                 views: Sequence[GuestCpuView], entry: int) -> None:
        self.machine, self.hooks, self.views, self.entry = machine, hooks, views, entry
        self.pending = [False] * len(machine.cpus)
        self.taken: Counter[int] = Counter()

    def store(self, offset: int, value: int, sender: int) -> None:
        """CPU ``sender`` stored ``value`` at ``offset`` into the controller's page."""
        page = self.machine.read(self.hooks.IRQ_BASE, PAGE)
        for target in self.hooks.ipi_targets(offset, value & 0xFFFFFFFF, sender,
                                             len(self.pending), page):
            self.pending[target] = True

    def enabled(self, index: int) -> bool:
        """CPU ``index`` takes an interrupt now (its mask is clear)."""
        return self.hooks.irq_enabled(self.views[index])

    def take(self, index: int) -> int:
        """CPU ``index`` takes its pending IPI before its next instruction; return
        that instruction's address, where its handler returns to."""
        self.pending[index] = False
        self.taken[index] += 1
        cpu = self.machine.cpus[index]
        at = cpu.pc
        cpu.pc = self.hooks.irq_enter(self.views[index], self.entry, at)
        cpu.charge("ipi")                   # the hardware's entry and return
        return at


class SelfPatching:
    """A kernel built with CONFIG_PATCHING_IN_GUEST, on its machine: the text
    alias, the interrupt controller, the instructions that synchronize fetch,
    and the kernel's ``text_poke_batch`` (an :data:`arches.base.TextPokeBatch`)."""

    def __init__(self, machine: Machine, image: Image) -> None:
        arch = machine.arch
        if "guest_patching" not in arch.capabilities:
            raise ConfigError(f"{arch.name}: the kernel's patching code is not ported to "
                              "this arch variant (no guest_patching capability)")
        self.machine, self.hooks = machine, arch.ops
        self.symbols = sym = image.symbols
        hooks: GuestPatching = self.hooks
        base = machine.read_word(sym["pc_text_base"])           # guest.h PC_TEXT_BASE
        alias = machine.map_alias(machine.read_word(sym["pc_text_alias"]), base)
        self._image = region = machine.memory.find(base, 1)
        self._to_text = region.base - alias
        machine.map(hooks.IRQ_BASE, PAGE, "rw")
        self.views = [GuestCpuView(cpu, sym) for cpu in machine.cpus]
        self.ipis = Ipis(machine, hooks, self.views, sym[hooks.IRQ_ENTRY])
        start, end = sym["__patching_text_start"], sym["__patching_text_end"]
        functions = [f for f in image.functions if start <= f[0] < end]
        self.events, _ = scan(arch, hooks, machine, functions)
        self.charged = serializations(self.events, functions,
                                      (hooks.IRQ_ENTRY, hooks.BREAKPOINT_ENTRY))
        self._relax = sym["cpu_relax"]
        for cpu, view in zip(machine.cpus, self.views):
            cpu.uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, self._on_text_store, cpu.index,
                            alias, alias + region.size - 1)
            cpu.uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, self._on_irq_store, cpu.index,
                            hooks.IRQ_BASE, hooks.IRQ_BASE + PAGE - 1)
            for addr in (*self.events, self._relax):
                cpu.uc.hook_add(unicorn.UC_HOOK_CODE, self._on_code, cpu.index, addr, addr)
            hooks.cpu_setup(view)
        machine.write_word(sym["pc_nr_cpus"], len(machine.cpus), 4)
        self.patcher: int | None = None         # the CPU in a call
        self.returns: dict[int, int] = {}       # CPU in its handler -> where it returns
        self.calls = 0
        self.host_instructions = 0              # what CPU 0 ran for the host's calls

    def stats(self) -> dict:
        """The primitive's calls, what CPU 0 ran of them for the host, and the IPIs
        each CPU took."""
        return {"calls": self.calls, "host_instructions": self.host_instructions,
                "ipis_taken": [self.ipis.taken[i] for i in range(len(self.machine.cpus))]}

    # -- hooks ----------------------------------------------------------------
    def _on_text_store(self, uc: unicorn.Uc, _access: int, addr: int, size: int, _value: int,
                       _cpu: int) -> None:
        self.machine.text_stored(addr + self._to_text, size)

    def _on_irq_store(self, uc: unicorn.Uc, _access: int, addr: int, _size: int, value: int,
                      cpu: int) -> None:
        self.ipis.store(addr - self.hooks.IRQ_BASE, value, cpu)

    def _on_code(self, uc: unicorn.Uc, addr: int, _size: int, cpu: int) -> None:
        if addr == self._relax:
            if cpu == self.patcher:
                self._serve_others()
            return
        event = self.events.get(addr)
        if event is None:
            return
        if event.kind == "serialize":
            self.machine.serialize(cpu)
            if addr in self.charged and self.machine.timing is None:
                self.machine.cpus[cpu].charge("serialize")
        elif event.kind == "invalidate":
            self._invalidate(cpu, event)

    def _invalidate(self, cpu: int, event: FetchSync) -> None:
        """The line the registers address (an alias address is its text's: the
        caches are physically tagged), or all the text for ``regs=()``."""
        m = self.machine
        if event.regs:
            ea = effective_address(m.cpus[cpu], event)
            if self._image.contains(ea + self._to_text, 1):
                ea += self._to_text                 # the alias's line is the text's
            line = m.arch.icache_line
            begin = ea & ~(line - 1)
            m.invalidate_icache(begin, begin + line, cpu)
            return
        m.invalidate_icache(self._image.base, self._image.base + self._image.size, cpu)

    # -- the other CPUs -----------------------------------------------------------
    def _serve(self, index: int) -> None:
        """CPU ``index`` takes its pending IPI if it can and runs a slice of its handler."""
        cpu = self.machine.cpus[index]
        if index not in self.returns:
            if not self.ipis.pending[index]:
                return
            if not self.ipis.enabled(index):
                raise self.machine.fault(cpu, "an IPI is pending on a CPU with interrupts "
                                              "masked outside an interrupt handler")
            self.returns[index] = self.ipis.take(index)
        if cpu.run_to(self.returns[index], SERVE_SLICE):
            del self.returns[index]

    def _serve_others(self) -> None:
        for cpu in self.machine.cpus:
            if cpu.index != self.patcher:
                self._serve(cpu.index)

    def _drain(self, cpu: Cpu) -> None:
        """After the call: every handler returns, every IPI sent is taken."""
        for _ in range(MAX_CALL_INSNS // SERVE_SLICE):
            if not self.returns and not any(self.ipis.pending):
                return
            self._serve_others()
        raise self.machine.fault(cpu, "the other CPUs' interrupt handlers did not return "
                                      f"within {MAX_CALL_INSNS:,} instructions")

    # -- the call -------------------------------------------------------------------
    def __call__(self, port: object, sites: Sequence[tuple[int, bytes]]) -> None:
        """text_poke_batch: ``pc_patch()`` on the patching CPU for each run of at
        most :data:`MAX_SITES` sites, as v5.10's jump-label queue flushes a full
        vector. The patching CPU is ``port.cpu``, whose instructions these are; or,
        for the host (``port.cpu`` None), CPU 0, which is not charged for them
        (:attr:`host_instructions`), as the host patcher's stores cost no CPU. The
        other CPUs' handlers are theirs either way, as a host sync round is."""
        index = getattr(port, "cpu", None)
        for first in range(0, len(sites), MAX_SITES):
            self._patch(index, sites[first:first + MAX_SITES])

    def _patch(self, index: int | None, sites: Sequence[tuple[int, bytes]]) -> None:
        m, sym = self.machine, self.symbols
        write_sites(m, sym["pc_sites"], sites)
        cpu = m.cpus[index or 0]
        # A CPU that has not booted has no stack yet: its boot stack (kernel/init.c).
        sp = cpu.reg(m.arch.sp)
        stack = None if m.memory.find(sp - THREAD_SIZE // 2, THREAD_SIZE // 2) \
            else sym["init_stacks"] + (cpu.index + 1) * THREAD_SIZE
        charged = cpu.instructions, cpu.event_cycles, cpu.events.copy()
        self.patcher = cpu.index
        self.calls += 1
        try:
            if not cpu.call(sym["pc_patch"], (len(sites),), sym["pc_done"], MAX_CALL_INSNS,
                            stack=stack):
                raise m.fault(cpu, "the kernel's patching code did not return within "
                                   f"{MAX_CALL_INSNS:,} instructions")
            self._drain(cpu)
        finally:
            self.patcher = None
            self.returns.clear()
            if index is None:
                self.host_instructions += cpu.instructions - charged[0]
                cpu.instructions, cpu.event_cycles, cpu.events = charged
