"""The simulated SMP machine: one Unicorn per CPU over one shared memory.

Turns.  CPUs run round-robin in turns of ``quantum`` instructions, each turn
one ``emu_start(count=...)`` slice, which Unicorn stops exactly
(docs/unicorn.md).  A seed draws each turn's length from ``1..quantum`` instead, so one
seed names one interleaving, bit for bit.

Exact counts.  A turn that must end early (a CPU halts or a handler asks to
yield) ends at the trapping instruction, in one of two ways (``turn_end``;
both retire the same instructions, docs/machine.md):

- ``"counter"`` (default): the trap reads Unicorn's own count of the
  instructions this slice has started (:mod:`sim.uccount`) and stops the
  slice there;
- ``"spin"`` (the reference): the CPU is parked in its arch's
  two-instruction counting loop for the rest of the slice; the loop's own
  instructions are known from its counter and subtracted.

A handler that needs the exact position without ending the turn (a clock
read, :mod:`sim.clock`) reads the same counter in place; on the reference
it pauses the slice the same way, and the turn goes on in a new slice. The
trace clock's read does not even enter Python: each CPU's interrupt and
system-call hooks are a host hook in C (:mod:`sim.native`) that serves it
and hands every other trap to the Python hooks below.
Either way retired-instruction counts stay exact without a Python hook per
instruction, and the turns are the same whether anything reads the clock.

Instruction-fetch coherence.  Each Unicorn keeps translated blocks until
told otherwise, like a CPU with a stale instruction stream.  Text written
through :meth:`Machine.write_text` is therefore seen by a CPU only after
:meth:`Machine.sync_cpu` or a :meth:`Machine.sync_all` round, which charge what
the arch's v5.10 primitive costs each CPU (:class:`arches.base.TextSync`).
"""
from __future__ import annotations

import ctypes
import enum
import functools
import random
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, NamedTuple, Sequence

import unicorn
from unicorn.unicorn_py3.unicorn import uclib

from arches import Arch, TrapKind, TrapVector, get_arch
from arches.base import TextPokeBatch
from sim import signals
from sim.asm import disasm_one
from sim.clock import ModeledClock
from sim.elf import Image, read_elf
from sim.event import cycles_to_ns
from sim.inflight import forget_inflight_exception
from sim.errors import REPLAY_LIMIT, ConfigError, GuestFault, UnmappedAccess, check_int
from sim.native import (CountState, CpuState, MemoryMap, add_hook, count_hook, library,
                        new_engine, use_virtual_tlb)
from sim.textlock import TextMutex, text_mutex
from sim.timing import TimingModel, cycles_from
from sim.uccount import Count, instruction_counter

PAGE = 0x1000
SPIN_BASE = 0xFFF0_0000        # the counting loop's page, outside any guest map
MAX_CPUS = 8
#: Guest memory one machine may map in all (host memory is allocated up front).
MAX_MEMORY = 1 << 30
UNTIL_NEVER = -1               # emu_start's `until`; slices end on `count`
LAST_BLOCKS = 16
TURN_ENDS = ("counter", "spin")  # how a turn ends early: Unicorn's counter, or the counting loop
MAX_STEP = 2 ** 63             # most instructions one step may ask for (Unicorn's count is u64)
CALL_GAP = 256                 # bytes a host call leaves below the CPU's stack pointer


_UNICORN = ctypes.CDLL(uclib._name)       # the binding's library, other function objects


def _unprototyped(name: str) -> ctypes._CFuncPtr:
    """Unicorn's C function ``name`` with no ``argtypes``: ctypes passes each argument
    as the object it is (a ``c_void_p`` handle, a ctypes number or array, a ``byref``
    buffer, an int for a C ``int``), without the per-call conversion the binding's
    prototype makes (a third of a register access's time, a quarter of a slice's
    call)."""
    fn = getattr(_UNICORN, name)
    fn.restype = ctypes.c_int
    return fn


_uc_reg_read, _uc_reg_write, _uc_reg_read_batch, _uc_reg_write_batch, _uc_emu_start = (
    _unprototyped(f"uc_{name}") for name in ("reg_read", "reg_write", "reg_read_batch",
                                            "reg_write_batch", "emu_start"))
_NO_TIMEOUT = ctypes.c_uint64(0)


def emu_start(uc: unicorn.Uc, begin: int, until: int, count: int) -> None:
    """``uc.emu_start(begin, until, count=count)`` as binding 2.1.4 makes it (the
    error status raised, then an exception a hook left in ``uc._hook_exception``,
    :mod:`sim.uchook`), each argument passed as the type the C function takes.
    Every slice of every CPU enters Unicorn here (what a benchmark times)."""
    uc._hook_exception = None
    status = _uc_emu_start(uc._uch, ctypes.c_uint64(begin), ctypes.c_uint64(until),
                           _NO_TIMEOUT, ctypes.c_size_t(count))
    if status != unicorn.UC_ERR_OK:
        raise unicorn.UcError(status)
    if uc._hook_exception is not None:
        raise uc._hook_exception


_PERMS = {"r": unicorn.UC_PROT_READ, "w": unicorn.UC_PROT_WRITE, "x": unicorn.UC_PROT_EXEC}


class _Unhandled:
    def __repr__(self) -> str:
        return "UNHANDLED"


UNHANDLED = _Unhandled()
"""Returned by a trap handler that does not own the trap: the run faults."""


class Trap(NamedTuple):
    """One trap, with the address normalized to the trapping instruction.

    A system-call trap carries the arch's argument registers as they were
    at the trap (``args``), read with the PC in one call: every hypercall,
    clock reads included, needs them.
    """

    kind: TrapKind
    address: int
    cpu: int
    intno: int          # Unicorn interrupt number; -1 for invalid-insn and insn hooks
    args: Sequence[int] = ()


TrapHandler = Callable[["Cpu", Trap], "int | None | _Unhandled"]


class Watch(NamedTuple):
    """A :meth:`Machine.watch` hook: its address and each CPU's Unicorn handle."""

    addr: int
    handles: tuple[int, ...]


class TrapPriority(enum.IntEnum):
    """Who sees a trap first, lowest value first.

    As the kernel's do_int3() (arch/x86/kernel/traps.c) asks
    poke_int3_handler() before kprobe_int3_handler() and only then
    delivers the trap: text patching's temporary breakpoints, then kprobes,
    then the guest's own handlers (hypercalls).
    """

    TEXT_POKE = 0
    KPROBES = 1
    GUEST = 2


def _prot(perms: str) -> int:
    """Unicorn's protection bits for ``perms``, a non-empty subset of ``"rwx"``."""
    if not perms or set(perms) - set(_PERMS):
        raise ConfigError(f"permissions {perms!r} are not a subset of 'rwx'")
    prot = 0
    for ch in perms:
        prot |= _PERMS[ch]
    return prot


def _page_round(base: int, size: int) -> tuple[int, int]:
    start = base & ~(PAGE - 1)
    end = (base + size + PAGE - 1) & ~(PAGE - 1)
    return start, end - start


@dataclass
class Region:
    base: int
    size: int
    perms: int
    buf: ctypes.Array
    host: int = field(init=False, repr=False)     # the host address of ``base``
    bytes: memoryview = field(init=False, repr=False)   # ``buf`` as bytes (the fast copies)

    def __post_init__(self) -> None:
        self.host = ctypes.addressof(self.buf)
        self.bytes = memoryview(self.buf).cast("B")

    def contains(self, addr: int, size: int) -> bool:
        return self.base <= addr and addr + size <= self.base + self.size


class Memory:
    """Host-side physical memory, shared by every CPU's Unicorn."""

    def __init__(self) -> None:
        self.regions: list[Region] = []
        self._last: Region | None = None         # the region of the last access
        self.table = MemoryMap()                 # the same regions, as the host hook reads them

    def add(self, base: int, size: int, perms: int) -> Region:
        if base % PAGE or size % PAGE or size <= 0:
            raise ConfigError(f"mapping {base:#x}+{size:#x} is not page aligned")
        mapped = sum(r.size for r in self.regions)
        if mapped + size > MAX_MEMORY:
            raise ConfigError(f"mapping {base:#x}+{size:#x} would map {mapped + size:#x} bytes "
                              f"of guest memory; the limit is {MAX_MEMORY >> 20} MiB")
        r = self.overlapping(base, size)
        if r is not None:
            raise ConfigError(f"mapping {base:#x}+{size:#x} overlaps {r.base:#x}+{r.size:#x}")
        region = Region(base, size, perms, (ctypes.c_ubyte * size)())
        self.regions.append(region)
        self.table.add(base, size, region.host)
        return region

    def overlapping(self, base: int, size: int) -> Region | None:
        """A region sharing a byte with ``[base, base+size)``, or None."""
        return next((r for r in self.regions if base < r.base + r.size and r.base < base + size),
                    None)

    def find(self, addr: int, size: int) -> Region | None:
        last = self._last
        if last is not None and last.contains(addr, size):
            return last
        self._last = next((r for r in self.regions if r.contains(addr, size)), None)
        return self._last

    def _region(self, addr: int, size: int) -> Region:
        if type(addr) is not int or type(size) is not int:     # (the usual case: one test)
            check_int("address", addr)
            check_int("size", size)
        if addr < 0 or size < 0:
            raise ValueError(f"host access {addr:#x}+{size:#x}: address and size "
                             "must not be negative")
        region = self.find(addr, size)
        if region is None:
            raise UnmappedAccess(f"host access to unmapped memory {addr:#x}+{size:#x}")
        return region

    def read(self, addr: int, size: int) -> bytes:
        region = self._region(addr, size)
        off = addr - region.base
        return region.bytes[off:off + size].tobytes()

    def write(self, addr: int, data: bytes) -> None:
        region = self._region(addr, len(data))
        off = addr - region.base
        region.bytes[off:off + len(data)] = data


class _RegisterFile:
    """The arch's named registers through Unicorn's C calls, one reused buffer each.

    The same ``uc_reg_read``/``uc_reg_write`` the binding makes, with the
    binding's default 8-byte buffer (Unicorn writes the register's own
    width into it), minus the per-call type selection and allocation: the
    registers of a trap are read on every hypercall, clock reads included.
    """

    def __init__(self, uc: unicorn.Uc, arch: Arch) -> None:
        self._handle = uc._uch
        self._mask = (1 << arch.bits) - 1
        self._refs: dict[str, tuple] = {}      # name -> (Unicorn's id, buffer by reference, buffer)
        for name, const in arch.uc_regs.items():
            buf = ctypes.c_uint64()
            self._refs[name] = (const, ctypes.byref(buf), buf)
        self._batches: dict[tuple[str, ...], tuple] = {}

    def read(self, name: str) -> int:
        const, ref, buf = self._refs[name]
        if _uc_reg_read(self._handle, const, ref) != unicorn.UC_ERR_OK:
            raise unicorn.UcError(unicorn.UC_ERR_ARG, const)
        return buf.value & self._mask

    def _batch(self, names: tuple[str, ...]) -> tuple:
        """The ids, buffer pointers and buffers of a batch of ``names`` (made once)."""
        batch = self._batches.get(names)
        if batch is None:
            bufs = [ctypes.c_uint64() for _ in names]
            batch = self._batches[names] = (
                (ctypes.c_int * len(names))(*(self._refs[n][0] for n in names)),
                (ctypes.c_void_p * len(names))(*(ctypes.addressof(b) for b in bufs)), bufs)
        return batch

    def read_many(self, names: tuple[str, ...]) -> list[int]:
        """Several registers in one ``uc_reg_read_batch`` call."""
        ids, ptrs, bufs = self._batch(names)
        if _uc_reg_read_batch(self._handle, ids, ptrs, len(names)) != unicorn.UC_ERR_OK:
            raise unicorn.UcError(unicorn.UC_ERR_ARG)
        mask = self._mask
        return [b.value & mask for b in bufs]

    def write_many(self, names: tuple[str, ...], values: Sequence[int]) -> None:
        """Several registers in one ``uc_reg_write_batch`` call, in the order named."""
        ids, ptrs, bufs = self._batch(names)
        mask = self._mask
        for buf, value in zip(bufs, values, strict=True):
            buf.value = value & mask
        if _uc_reg_write_batch(self._handle, ids, ptrs, len(names)) != unicorn.UC_ERR_OK:
            raise unicorn.UcError(unicorn.UC_ERR_ARG)

    def write(self, name: str, value: int) -> None:
        const, ref, buf = self._refs[name]
        buf.value = value & self._mask
        if _uc_reg_write(self._handle, const, ref) != unicorn.UC_ERR_OK:
            raise unicorn.UcError(unicorn.UC_ERR_ARG, const)


class Cpu:
    """One simulated CPU: a Unicorn instance plus its accounting."""

    def __init__(self, machine: Machine, index: int) -> None:
        self.machine = machine
        self.arch: Arch = machine.arch
        self.index = index
        self.uc = new_engine(self.arch.uc_mode)   # each region its own RAM offsets
        use_virtual_tlb(self.uc)                 # stores on QEMU's fast path
        self._regs = _RegisterFile(self.uc, self.arch)
        self._emulating = signals.emulating(self.uc)
        self._syscall_regs = (self.arch.pc, *self.arch.args)
        self._costs = {name: cost.cycles for name, cost in self.arch.costs.items()}
        self._state = self._new_state(machine)   # event_cycles and the host hook's view
        # Where each slice starts, in one call for the PC and the instruction set
        self._resume_pc = functools.partial(library().kisim_resume_pc, self.uc._uch.value,
                                            ctypes.addressof(self._state))
        self.instructions = 0                    # retired, up to the running slice
        self.events: Counter[str] = Counter()
        self.halted = False
        self._stop = False                       # end this slice at the trap
        self._yield = False                      # ... and the turn with it
        self._running = False                    # inside emu_start
        self._parked: object | None = None       # context saved while parked
        self._retired: int | None = None         # instructions of a turn ended at a trap
        self._counter = instruction_counter(self.uc, self.arch)
        self._counter_owner: object | None = None  # who counts, if not Unicorn (count_with)
        self._error: BaseException | None = None
        self._stale: list[tuple[int, int]] = []  # text written since last sync
        self._turn_start: object | None = None
        self._turn_budget = 0
        self._host_clock = self._install_trap_hooks()
        self._armed = False                      # the host hook serves clock reads this slice

    def _new_state(self, machine: Machine) -> CpuState:
        arch, costs, isa = self.arch, self._costs, self.arch.isa_state
        return CpuState(
            clock=ctypes.pointer(machine.clock.state), memory=ctypes.pointer(machine.memory.table),
            insn_cost=costs["insn"], trap_cost=costs["trap"],
            clock_read_cost=costs["clock_read"], clock_hz=arch.clock_hz,
            mask=(1 << arch.bits) - 1, arg0=arch.uc_regs[arch.args[0]],
            arg1=arch.uc_regs[arch.args[1]], ret=arch.uc_regs[arch.ret], index=self.index,
            big_endian=arch.endian == "big", pc=arch.uc_regs[arch.pc],
            isa_reg=-1 if isa is None else arch.uc_regs[isa.reg],
            isa_mask=0 if isa is None else isa.mask, isa_bits=0 if isa is None else isa.bits,
            reg_read=ctypes.cast(uclib.uc_reg_read, ctypes.c_void_p).value)

    def _install_trap_hooks(self) -> bool:
        """Hook the traps; return whether the host hook may serve clock reads.

        Interrupts and system-call instructions enter the host hook
        (:mod:`sim.native`), which serves a trace clock read in place and
        hands everything else to :meth:`_on_intr` / the vector's Python hook.
        It may serve reads when it can tell the position (Unicorn's
        counter) and the guest goes on where Unicorn leaves the PC.
        """
        state, traps = self._state, self.arch.traps
        state.syscall_intno = next((n for n, v in traps.items() if v.kind is TrapKind.SYSCALL), -1)
        served = [traps[state.syscall_intno]] if state.syscall_intno in traps else []
        self._hooked = add_hook(self.uc, state, self._guarded(
            lambda intno: self._on_intr(self.uc, intno, None)))
        self.uc.hook_add(unicorn.UC_HOOK_INSN_INVALID, self._on_invalid)
        for insn, vector in self.arch.insn_traps.items():
            hook = self._insn_hook(vector)
            if vector.kind is TrapKind.SYSCALL:
                served.append(vector)
                self._hooked += add_hook(self.uc, state,
                                         self._guarded(lambda h=hook: h(self.uc, None)), insn)
            else:
                self.uc.hook_add(unicorn.UC_HOOK_INSN, hook, None, 1, 0, insn)
        self._served = served
        if self._counter is not None:
            state.counter = ctypes.addressof(self._counter)
        return self._serves_clock()

    def _serves_clock(self) -> bool:
        """Whether the host hook may serve clock reads (:meth:`_install_trap_hooks`)."""
        return self._counter is not None and all(
            v.length - v.pc_offset - v.resume_bias == 0 for v in self._served)

    def count_with(self, counter: Count, owner: object) -> None:
        """Count this CPU's slices in ``counter``, which a code hook of ``owner`` (the
        timing model, kept alive here) keeps on every instruction as Unicorn's own
        count does: counted before it runs, the slice stopped at the first
        instruction past ``budget``. Slices then start Unicorn without its count,
        whose hook would be a second one on every instruction."""
        if self._counter_owner is not None:
            raise ConfigError(f"CPU {self.index} is counted already")
        self._counter, self._counter_owner = counter, owner
        self._state.counter = ctypes.addressof(counter)
        self._host_clock = self._serves_clock()

    def _guarded(self, hook: Callable[..., None]) -> Callable[..., None]:
        """``hook`` as the host hook calls it: an exception stops the slice and is
        raised by :meth:`run_turn`, as the binding does for its own hooks."""
        def call(*args: int) -> None:
            try:
                hook(*args)
            except BaseException as exc:
                if self._error is None:
                    self._error = exc
                self.uc.emu_stop()
        return call

    # -- the accounting shared with the host hook ------------------------
    def take_host_served(self) -> int:
        """Clock reads the host hook served since the last call (:meth:`ModeledClock.fold`)."""
        served, self._state.served = self._state.served, 0
        return served

    @property
    def event_cycles(self) -> float:
        """Modeled cycles charged to events (traps, IPIs, clock reads, ...)."""
        return self._state.event_cycles

    @event_cycles.setter
    def event_cycles(self, value: float) -> None:
        self._state.event_cycles = value

    # -- registers -------------------------------------------------------
    def reg(self, name: str) -> int:
        return self._regs.read(name)

    def set_reg(self, name: str, value: int) -> None:
        """Write a register: TypeError for a value that is no int, ConfigError for an
        unknown register or a value wider than it (signed or unsigned)."""
        check_int("register value", value)
        bits = self.arch.bits
        if not -(1 << (bits - 1)) <= value < 1 << bits:
            raise ConfigError(f"register value {value:#x} does not fit in {bits} bits")
        if name not in self.arch.uc_regs:
            raise ConfigError(f"{self.arch.name} has no register {name!r}")
        self._regs.write(name, value)

    def regs(self, names: tuple[str, ...]) -> list[int]:
        """The registers ``names``, read in one call."""
        return self._regs.read_many(names)

    def set_regs(self, names: tuple[str, ...], values: Sequence[int]) -> None:
        """Write the registers ``names`` in that order, in one call; each value is an
        int that fits a register (unchecked: a trap frame's words, as :meth:`regs`
        read them)."""
        self._regs.write_many(names, values)

    @property
    def pc(self) -> int:
        return self._regs.read(self.arch.pc)

    @pc.setter
    def pc(self, value: int) -> None:
        self.set_reg(self.arch.pc, value)

    def resume_address(self, pc: int) -> int:
        """Where Unicorn goes on at ``pc`` in this CPU's current instruction set
        (:attr:`Arch.resume_address`: ARM Thumb state is bit 0)."""
        return pc if self.arch.isa_state is None else self.arch.resume_address(pc, self._regs.read)

    def arg(self, n: int) -> int:
        return self.reg(self.arch.args[n])

    def args(self, count: int) -> list[int]:
        """Argument registers 0..count-1, read in one call."""
        return self._regs.read_many(self.arch.args[:count])

    def registers(self) -> dict[str, int]:
        return {name: self.uc.reg_read(const) for name, const in self.arch.uc_regs.items()}

    # -- accounting ------------------------------------------------------
    @property
    def modeled_cycles(self) -> float:
        """Retired instructions at the arch's per-instruction cost, plus charged events."""
        return self.modeled_cycles_at(self.instructions)

    def modeled_cycles_at(self, instructions: int) -> float:
        """:attr:`modeled_cycles` once ``instructions`` have retired (charges as of now)."""
        return instructions * self._costs["insn"] + self.event_cycles

    @property
    def clock_ns(self) -> int:
        """This CPU's modeled clock: its modeled cycles at the arch's frequency, in ns."""
        return self.clock_ns_at(self.instructions)

    def clock_ns_at(self, instructions: int) -> int:
        """The modeled clock once ``instructions`` have retired, with the cycles charged so far."""
        return cycles_to_ns(self.modeled_cycles_at(instructions), self.arch.clock_hz)

    def position(self) -> int | None:
        """Instructions retired so far, a trapping one included, without ending the slice.

        Between slices that is :attr:`instructions`. Inside one it needs
        Unicorn's counter (:mod:`sim.uccount`) and ``turn_end="counter"``;
        otherwise None: only the slice's end can tell (:meth:`pause_slice`).
        """
        if not self._running:
            return self.instructions
        if self._counter is None or self.machine.turn_end != "counter":
            return None
        return self.instructions + self._counter.value

    def charge(self, event: str, times: int = 1) -> None:
        """Charge ``times`` occurrences of a cost-table event to this CPU (a negative
        ``times`` takes back charges made, never more); ConfigError otherwise."""
        cost = self._costs.get(event)
        if cost is None:
            raise ConfigError(f"unknown event {event!r} (events: {', '.join(self._costs)})")
        check_int("times", times)
        if self.events[event] + times < 0:
            raise ConfigError(f"charge of {times} {event} events takes back more than "
                              f"the {self.events[event]} charged")
        self.event_cycles += cost * times
        self.events[event] += times

    # -- control from trap handlers --------------------------------------
    def halt(self) -> None:
        """Stop this CPU for good once the current trap handler returns."""
        self.halted = True
        self._stop = True

    def yield_turn(self) -> None:
        """End this CPU's turn once the current trap handler returns."""
        self._stop = self._yield = True

    def pause_slice(self) -> None:
        """End the slice at the current trap; the turn goes on (:meth:`position` is known then)."""
        self._stop = True

    def stop_before(self) -> None:
        """From a code hook: end the turn before the hooked instruction, which does
        not retire; the CPU starts there next turn (Unicorn's counter has counted it,
        :mod:`sim.uccount`)."""
        if self._counter is None:
            raise ConfigError("stopping before an instruction needs Unicorn's instruction "
                              "counter, which this Unicorn build does not expose")
        self._retired = self._counter.value - 1
        self._yield = True
        self.uc.emu_stop()

    def exception_delivered(self) -> None:
        """The fault now entering a guest handler counts as delivered (:mod:`sim.inflight`)."""
        forget_inflight_exception(self.uc, self.arch)

    # -- hooks -----------------------------------------------------------
    def _on_intr(self, uc: unicorn.Uc, intno: int, _data: object) -> None:
        vector = self.arch.traps.get(intno)
        if vector is None:
            reason = self.arch.exception_names.get(intno, f"unexpected interrupt {intno}")
            self._error = self.machine.fault(self, reason)
            uc.emu_stop()
            return
        self._dispatch(vector, intno)

    def _on_invalid(self, uc: unicorn.Uc, _data: object) -> bool:
        return self._dispatch(self.arch.undefined, -1)

    def _insn_hook(self, vector: TrapVector) -> Callable[[unicorn.Uc, object], None]:
        def hook(uc: unicorn.Uc, _data: object) -> None:
            self._dispatch(vector, -1)
        return hook

    def _dispatch(self, vector: TrapVector, intno: int) -> bool:
        """Hand a trap to the machine's dispatcher and set where to resume."""
        if self._state.served:
            self.machine.clock.fold(self)
        if vector.kind is TrapKind.SYSCALL:
            at, *args = self._regs.read_many(self._syscall_regs)
            trap = Trap(vector.kind, at - vector.pc_offset, self.index, intno, args)
        else:
            at = self.pc
            trap = Trap(vector.kind, at - vector.pc_offset, self.index, intno)
        address = trap.address
        self.charge("trap")
        try:
            resume = self.machine.dispatch_trap(self, trap)
        except BaseException as exc:  # re-raised by run_turn, outside Unicorn
            self._error = exc
            self.uc.emu_stop()
            return True
        if resume is UNHANDLED:
            self.charge("trap", -1)
            return self._unhandled(trap)
        onward = resume is None             # go on after the trapping instruction
        resume = self.resume_address(address + vector.length if onward else resume)
        if self._stop:
            resume, onward = self._end_slice_at_trap(resume), False
        resume -= vector.resume_bias
        # Unicorn goes on after a system call by itself; a PC write would
        # also make it leave the block and look the next one up again.
        if not (onward and resume == at):
            self.pc = resume
        return True

    def _end_slice_at_trap(self, resume: int) -> int:
        """End the slice at the trapping instruction; return where it goes on.

        With Unicorn's counter, the slice stops here and the trapping
        instruction is the last one retired. Otherwise (the reference) the
        slice runs out in the counting loop, whose instructions
        :meth:`run_turn` subtracts.
        """
        if self.machine.turn_end == "counter" and self._counter is not None:
            self._retired = self._counter.value
            self.uc.emu_stop()
            return resume
        self.pc = resume
        self._parked = self.uc.context_save()
        self.set_reg(self.arch.spin.counter, 0)
        return SPIN_BASE | self.arch.code_isa

    def _unhandled(self, trap: Trap) -> bool:
        reason = self.arch.exception_names.get(trap.intno) or (
            "invalid instruction" if trap.kind is TrapKind.UNDEFINED
            else f"unhandled {trap.kind.value} trap")
        self._error = self.machine.fault(self, reason, pc=trap.address)
        self.uc.emu_stop()
        return True

    # -- running ---------------------------------------------------------
    def run_turn(self, budget: int) -> int:
        """Run up to ``budget`` instructions; return how many retired.

        The turn is one slice unless a handler pauses it (:meth:`pause_slice`):
        then the clock readings it asked for are handed out and the turn
        goes on in a new slice, for the rest of ``budget``.
        """
        self._yield = False
        self._turn_budget = budget
        if not self.machine.trail:
            self._turn_start = None
        elif self._turn_start is None:
            self._turn_start = self.uc.context_save()
        else:
            self.uc.context_update(self._turn_start)
        retired = 0
        while True:
            retired += self._run_slice(budget - retired)
            self.machine.clock.deliver()
            if self._yield or self.halted or retired >= budget:
                return retired

    def run_to(self, stop: int, budget: int) -> bool:
        """Run until the PC is at ``stop`` (which does not run) or ``budget``
        instructions retire, outside the turns; return whether it got to ``stop``.
        For the host's calls into the guest (:meth:`call`) and the interrupt
        handlers it runs meanwhile (:mod:`sim.self_patching`)."""
        if self._counter is None:
            raise ConfigError("running a CPU to an address needs Unicorn's instruction "
                              "counter, which this Unicorn build does not expose")
        self.uc.ctl_remove_cache(stop, stop + 1)    # a block translated earlier runs past it
        self._run_slice(budget, until=stop)
        return self.pc == stop

    def prepare_call(self, entry: int, args: Sequence[int], ret: int,
                     stack: int | None = None) -> object:
        """Set this CPU up to call the guest function at ``entry`` with ``args``,
        returning to ``ret``, on ``stack`` or below its own (the kernel has no red
        zone: x86 -mno-red-zone; the ARM and PowerPC 32-bit ABIs have none); return
        the context to restore afterwards (``uc.context_restore``)."""
        arch = self.arch
        saved = self.uc.context_save()
        sp = (self.reg(arch.sp) - CALL_GAP if stack is None else stack) & ~15
        if arch.ra is None:
            sp -= arch.word
            self.machine.write_word(sp, ret)
        else:
            self.set_reg(arch.ra, ret | arch.code_isa)
        self.set_reg(arch.sp, sp)
        for reg, value in zip(arch.args, args):
            self.set_reg(reg, value)
        self.pc = entry | arch.code_isa
        return saved

    def call(self, entry: int, args: Sequence[int], ret: int, budget: int, *,
             stack: int | None = None) -> bool:
        """Call the guest function at ``entry`` with ``args`` on this CPU, now
        (:meth:`prepare_call`), and take the CPU back when it returns to ``ret`` (an
        address nothing else runs); whether it returned within ``budget``
        instructions. The CPU's registers are as before afterwards, and the
        instructions it ran are its own.

        From a handler of this CPU's own trap (a hypercall that patches), the call
        runs nested in the running slice, whose count is kept."""
        nested = self._running
        outer = (self._stop, self._yield, self._retired, self._parked, self._turn_start,
                 self._counter.value, self._counter.budget) if nested else None
        saved = self.prepare_call(entry, args, ret, stack)
        try:
            returned = self.run_to(ret, budget)
        finally:
            self.uc.context_restore(saved)
            if outer is not None:
                (self._stop, self._yield, self._retired, self._parked, self._turn_start,
                 self._counter.value, self._counter.budget) = outer
                self._running = True
                if self._armed:             # the host hook's base: the call's instructions in
                    self._state.instructions = self.instructions
        return returned

    def _run_slice(self, budget: int, until: int = UNTIL_NEVER) -> int:
        """One ``emu_start`` of up to ``budget`` instructions (stopping at ``until``);
        return how many retired."""
        self._stop = False
        self._running = True
        machine, state = self.machine, self._state
        if machine._unwatched:
            machine._drop_unwatched()
        clock = machine.clock
        armed = self._host_clock and clock.serving and clock.in_host \
            and machine.turn_end == "counter"
        if armed:
            state.instructions = self.instructions       # the hook's base for this slice
        if armed != self._armed:
            state.armed = self._armed = armed
        with self._emulating:                # a signal is raised here, after the slice
            try:
                if self._counter_owner is None:
                    emu_start(self.uc, self._resume_pc(), until, budget)
                else:
                    self._counter.value, self._counter.budget = 0, budget
                    emu_start(self.uc, self._resume_pc(), until, 0)
            except unicorn.UcError as err:
                if self._error is None:
                    self._error = machine.fault(self, _uc_reason(err))
            finally:
                self._running = False
                if armed and state.served:
                    machine.clock.fold(self)
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        executed = budget
        if self._retired is not None:
            executed, self._retired = self._retired, None
        elif until != UNTIL_NEVER and self._counter.value <= budget and self.pc == until:
            executed = self._counter.value      # stopped at `until`, which did not run
        elif self._parked is not None:
            spin = self.arch.spin
            spun = 2 * self.reg(spin.counter) - (self.pc != SPIN_BASE)
            self.uc.context_restore(self._parked)
            self._parked = None
            executed -= spun
        self.instructions += executed
        return executed

    def replay_last_blocks(self) -> list[int] | None:
        """Block addresses of the current turn, replayed on a scratch Unicorn.

        The replay starts from this turn's saved registers over a copy of
        memory as it is now, with traps stepped over, so it is a faithful
        trail whenever the turn's own stores did not change its path. A turn
        over :data:`REPLAY_LIMIT` is not replayed (None); a signal stops the replay.
        """
        if self._turn_start is None:
            return []
        if self._turn_budget > REPLAY_LIMIT:
            return None                     # a trail the report can do without
        scratch = new_engine(self.arch.uc_mode)
        for region in self.machine.memory.regions:
            scratch.mem_map(region.base, region.size, region.perms)
            scratch.mem_write(region.base, bytes(region.buf))
        blocks: deque[int] = deque(maxlen=LAST_BLOCKS)
        scratch.hook_add(unicorn.UC_HOOK_BLOCK, lambda uc, addr, size, _d: blocks.append(addr))

        def step_over(vector: TrapVector) -> None:
            scratch.reg_write(self.arch.uc_regs[self.arch.pc],
                              scratch.reg_read(self.arch.uc_regs[self.arch.pc])
                              - vector.pc_offset + vector.length - vector.resume_bias)

        scratch.hook_add(unicorn.UC_HOOK_INTR, lambda uc, intno, _d: step_over(
            self.arch.traps.get(intno, self.arch.undefined)))
        for insn, vector in self.arch.insn_traps.items():
            scratch.hook_add(unicorn.UC_HOOK_INSN, lambda uc, _d, v=vector: step_over(v),
                             None, 1, 0, insn)
        # Copy registers one by one: restoring another instance's context
        # corrupts the heap on PPC in Unicorn 2.1.4.
        for const in self.arch.uc_regs.values():
            scratch.reg_write(const, self._turn_start.reg_read(const))
        saved = self._turn_start
        start = self.arch.resume_address(saved.reg_read(self.arch.uc_regs[self.arch.pc]),
                                         lambda name: saved.reg_read(self.arch.uc_regs[name]))
        try:
            with signals.emulating(scratch):    # a signal stops it, and is raised after
                scratch.emu_start(start, UNTIL_NEVER, count=self._turn_budget)
        except unicorn.UcError:
            pass
        return list(blocks)


def _uc_reason(err: unicorn.UcError) -> str:
    return {
        unicorn.UC_ERR_READ_UNMAPPED: "unmapped memory read",
        unicorn.UC_ERR_WRITE_UNMAPPED: "unmapped memory write",
        unicorn.UC_ERR_FETCH_UNMAPPED: "instruction fetch from unmapped memory",
        unicorn.UC_ERR_READ_PROT: "read from protected memory",
        unicorn.UC_ERR_WRITE_PROT: "write to protected memory",
        unicorn.UC_ERR_FETCH_PROT: "instruction fetch from non-executable memory",
        unicorn.UC_ERR_INSN_INVALID: "invalid instruction",
        unicorn.UC_ERR_EXCEPTION: "unhandled CPU exception",
    }.get(err.errno, f"emulation error: {err}")


class Machine:
    """An SMP machine of 1..8 CPUs of one arch sharing one memory."""

    def __init__(self, arch: str | Arch, cpus: int = 1, *, quantum: int = 10_000,
                 seed: int | None = None, turn_end: str = "counter",
                 timing: bool = False, trail: bool = True) -> None:
        if not isinstance(arch, (str, Arch)):
            raise TypeError(f"arch must be an arch name or an Arch, not {type(arch).__name__}")
        check_int("cpus", cpus)
        check_int("quantum", quantum)
        if seed is not None:
            check_int("seed", seed)
        self.arch = get_arch(arch) if isinstance(arch, str) else arch
        if not 1 <= cpus <= MAX_CPUS:
            raise ConfigError(f"CPU count {cpus} out of range 1..{MAX_CPUS}")
        if quantum < 1:
            raise ConfigError(f"quantum must be at least 1 instruction, not {quantum}")
        if turn_end not in TURN_ENDS:
            raise ConfigError(f"turn_end {turn_end!r} is not one of {', '.join(TURN_ENDS)}")
        self.turn_end = turn_end    # "counter" (fast) or "spin" (reference); settable between turns
        #: Keep each turn's starting registers, so that a fault names the blocks
        #: that led to it (:meth:`Cpu.replay_last_blocks`); off for a caller that
        #: replays a failure by its seed (the patch checker), as a turn pays for it.
        self.trail = trail
        self.quantum = quantum
        self.seed = seed
        self._rng = random.Random(seed) if seed is not None else None
        self.memory = Memory()
        self.clock = ModeledClock(self)          # the guest-visible clock
        self.cpus = [Cpu(self, i) for i in range(cpus)]
        self.on_trap: TrapHandler | None = None
        self.trap_handlers: list[tuple[TrapPriority, TrapHandler]] = []
        self.text_mutex: TextMutex = text_mutex
        #: The kernel's own text_poke_batch when it patches itself (CONFIG_PATCHING_IN_GUEST,
        #: :mod:`sim.self_patching`): what :class:`patcher.text.TextPatcher` runs.
        self.text_poke: TextPokeBatch | None = None
        self.sync_rounds = 0
        self.image: Image | None = None
        self._unwatched: list[Watch] = []       # removed before the next slice
        self._counts: list[tuple[ctypes.Array, CountState]] = []   # count_executions' state
        self.spin_base = SPIN_BASE
        self.map(SPIN_BASE, PAGE, "rx")
        self.memory.write(SPIN_BASE, self.arch.spin.code)
        for name, flag in (("timing", timing), ("trail", trail)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be a bool, not {type(flag).__name__}")
        #: The timing model (:mod:`sim.timing`), or None on a count-only machine.
        self.timing: TimingModel | None = TimingModel(self) if timing else None

    # -- memory ----------------------------------------------------------
    def map(self, base: int, size: int, perms: str = "rwx") -> None:
        """Map ``[base, base+size)`` (page-rounded) into every CPU."""
        check_int("base", base)
        check_int("size", size)
        if base < 0 or size <= 0 or base + size > 1 << self.arch.bits:
            raise ConfigError(f"mapping {base:#x}+{size:#x} is outside the "
                              f"{self.arch.bits}-bit address space or empty")
        prot = _prot(perms)
        base, size = _page_round(base, size)
        region = self.memory.add(base, size, prot)
        for cpu in self.cpus:
            cpu.uc.mem_map_ptr(base, size, prot, region.host)

    def map_alias(self, alias: int, base: int, perms: str = "rw") -> int:
        """Map the region holding ``base`` a second time, from ``alias`` on, over the
        same memory (v5.10 text_poke()'s temporary mm, ARM's FIX_TEXT_POKE0, PowerPC's
        text_poke_area); return the alias of the region's first byte. The host reads
        and writes through the region's own addresses."""
        region = self.memory.find(base, 1)
        if region is None:
            raise ConfigError(f"alias of {base:#x}: not mapped")
        start = alias - (base - region.base)
        if start % PAGE or start < 0 or start + region.size > 1 << self.arch.bits \
                or self.memory.overlapping(start, region.size) is not None:
            raise ConfigError(f"alias {start:#x}+{region.size:#x} of {region.base:#x}: not "
                              "page-aligned, outside the address space or over a mapping")
        prot = _prot(perms)
        for cpu in self.cpus:
            cpu.uc.mem_map_ptr(start, region.size, prot, region.host)
        return start

    def read(self, addr: int, size: int) -> bytes:
        return self.memory.read(addr, size)

    def write(self, addr: int, data: bytes) -> None:
        """Write data memory from the host (not text: see :meth:`write_text`)."""
        if not isinstance(data, bytes):
            raise TypeError(f"data must be bytes, not {type(data).__name__} "
                            "(assemble text with sim.asm.assemble)")
        self.memory.write(addr, data)

    def read_word(self, addr: int, size: int | None = None) -> int:
        size = self._word_size(size)
        return self.arch.to_int(self.memory.read(addr, size))

    def read_words(self, addr: int, count: int, size: int | None = None) -> list[int]:
        """``count`` consecutive ``size``-byte words (default: a pointer) at ``addr``."""
        size = self._word_size(size)
        data = self.memory.read(addr, count * size) if count else b""
        return [self.arch.to_int(data[i:i + size]) for i in range(0, len(data), size)]

    def write_word(self, addr: int, value: int, size: int | None = None) -> None:
        size = self._word_size(size)
        check_int("value", value)
        if not -(1 << (8 * size - 1)) <= value < 1 << (8 * size):
            raise ValueError(f"value {value:#x} does not fit in {size} bytes")
        self.memory.write(addr, self.arch.from_int(value & ((1 << (8 * size)) - 1), size))

    def _word_size(self, size: int | None) -> int:
        """A word access's size: 1, 2, 4 or 8 bytes (None: a pointer's)."""
        if size is None:
            return self.arch.word
        check_int("word size", size)
        if size not in (1, 2, 4, 8):
            raise ConfigError(f"word size {size}: must be 1, 2, 4 or 8 bytes")
        return size

    # -- loading ---------------------------------------------------------
    def load_elf(self, path: str) -> Image:
        """Map and fill every PT_LOAD segment of a static ELF."""
        image = read_elf(path)
        if image.machine != self.arch.name:
            raise ConfigError(f"{path}: ELF is for {image.machine}, machine is {self.arch.name}")
        spans: list[list[int]] = []
        for seg in sorted(image.segments, key=lambda s: s.vaddr):
            start, size = _page_round(seg.vaddr, seg.memsz)
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], start + size)
            else:
                spans.append([start, start + size])
        for start, end in spans:
            self.map(start, end - start, "rwx")
        for seg in image.segments:
            self.memory.write(seg.vaddr, seg.data)
        self.image = image
        return image

    def load_code(self, code: bytes, base: int, stack_size: int = 0x10000) -> int:
        """Map ``code`` at ``base`` with a stack per CPU; point every CPU at it."""
        if not isinstance(code, bytes):
            raise TypeError(f"code must be bytes, not {type(code).__name__} "
                            "(assemble text with sim.asm.assemble)")
        self.map(base, len(code) or 1, "rwx")
        self.memory.write(base, code)
        stack_base = _page_round(base + len(code), 0)[0] + PAGE * 16
        self.map(stack_base, stack_size * len(self.cpus), "rw")
        for cpu in self.cpus:
            cpu.pc = base
            cpu.set_reg(self.arch.sp, stack_base + stack_size * (cpu.index + 1) - 64)
        return base + len(code)

    # -- text and instruction-fetch coherence -----------------------------
    def write_text(self, addr: int, data: bytes) -> None:
        """Store to text. No CPU is guaranteed to fetch it before it is synced.

        Refuses (:class:`~sim.textlock.LockNotHeld`) unless the caller holds
        :attr:`text_mutex`, as text_poke()'s lockdep_assert_held(&text_mutex).
        """
        self.text_mutex.assert_held(f"text write of {len(data)} bytes at {addr:#x}")
        self.memory.write(addr, data)
        self.text_stored(addr, len(data))

    def text_stored(self, addr: int, size: int) -> None:
        """``size`` bytes of text at ``addr`` were stored (by the host, or by a guest
        CPU through an alias): no CPU is guaranteed to fetch them before it serializes."""
        for cpu in self.cpus:
            cpu._stale.append((addr, addr + size))
        if self.timing is not None:
            self.timing.text_written(addr, addr + size)

    def serialize(self, index: int) -> None:
        """CPU ``index`` synchronizes its instruction fetch (x86 sync_core(), ARM
        ``isb``, PowerPC ``isync``): it fetches every text store from now on."""
        cpu = self.cpu(index)
        for begin, end in cpu._stale:
            self._refetch(cpu, begin, end)
        cpu._stale.clear()

    def invalidate_icache(self, begin: int, end: int, issuer: int) -> None:
        """An instruction-cache invalidation by address, broadcast (ARM ICIMVAU in the
        inner shareable domain, PowerPC ``icbi``): every other CPU misses on
        ``[begin, end)`` and fetches what memory holds; the issuer still needs its
        own context synchronization (:meth:`serialize`)."""
        for cpu in self.cpus:
            if cpu.index != issuer:
                self._refetch(cpu, begin, end)

    def _refetch(self, cpu: Cpu, begin: int, end: int) -> None:
        cpu.uc.ctl_remove_cache(begin, end)
        if self.timing is not None and not self.arch.icache_coherent:
            self.timing.icache_invalidate(cpu.index, begin, end)    # as the fetch model: now

    def sync_cpu(self, index: int) -> None:
        """CPU ``index`` synchronizes itself, as the patching CPU of a sync round does
        (x86 sync_core()), charged the arch's :attr:`~arches.base.TextSync.round_local`."""
        self.serialize(index)
        self._charge(index, self.arch.text_sync.round_local)

    def _charge(self, index: int, events: tuple[str, ...]) -> None:
        for event in events:
            self.cpus[index].charge(event)

    def cpu(self, index: int) -> Cpu:
        """CPU ``index``; :class:`ConfigError` if there is no such CPU."""
        check_int("CPU index", index)
        if not 0 <= index < len(self.cpus):
            raise ConfigError(f"CPU {index} out of range 0..{len(self.cpus) - 1}")
        return self.cpus[index]

    def sync_all(self, patcher: int | None = None) -> None:
        """One cross-CPU sync round from CPU ``patcher`` (None: the host): every CPU
        serializes; the patcher is charged the arch's ``round_local``, every other CPU
        its ``round_remote`` (:class:`arches.base.TextSync`: x86 text_poke_sync()'s IPI
        and sync_core(); nothing on ARM and PowerPC, whose maintenance is broadcast)."""
        sync = self.arch.text_sync
        for cpu in self.cpus:
            self.serialize(cpu.index)
            self._charge(cpu.index, sync.round_local if cpu.index == patcher
                         else sync.round_remote)
        self.sync_rounds += 1

    def stop_machine_exit(self, patcher: int | None = None) -> None:
        """The end of a stop_machine() from CPU ``patcher`` (None: the host): every CPU
        serializes on its way out of its stopper (an exception return), and every
        other CPU was woken into its stopper by one IPI (kernel/stop_machine.c
        cpu_stop_queue_work(), a remote wakeup: kernel/sched/core.c ttwu_queue(),
        resched_curr()). Counted as a sync round."""
        for cpu in self.cpus:
            self.serialize(cpu.index)
            if cpu.index != patcher:
                cpu.charge("ipi")
        self.sync_rounds += 1

    def flush_icache(self, begin: int, end: int, cpu: int | None = None) -> None:
        """flush_icache_range on ``cpu`` (None: the host pays nothing): its lines, and
        the arch's :attr:`~arches.base.TextSync.flush` (the isb or isync it ends with)."""
        check_int("begin", begin)
        check_int("end", end)
        if not 0 <= begin <= end <= 1 << self.arch.bits:
            raise ConfigError(f"flush_icache {begin:#x}..{end:#x}: not a range of the "
                              f"{self.arch.bits}-bit address space")
        if cpu is not None:
            self.cpu(cpu)
            line = self.arch.icache_line
            lines = (end - begin + line - 1) // line
            self.cpus[cpu].charge("icache_flush", max(lines, 1))
            self._charge(cpu, self.arch.text_sync.flush)

    def stale(self, index: int) -> list[tuple[int, int]]:
        """Text ranges CPU ``index`` may still execute stale copies of."""
        return list(self.cpu(index)._stale)

    def watch(self, addr: int, callback: Callable[[Cpu], None]) -> Watch:
        """Call ``callback(cpu)`` each time any CPU executes the instruction at ``addr``.

        A Unicorn code hook over that one instruction. Cached blocks holding
        ``addr`` are dropped so that the hook fires on them too. While it
        exists, every block translated calls Unicorn's generic per-instruction
        hook dispatcher, not only ``addr``'s: code everywhere runs slower
        (docs/unicorn.md), so watch no longer than needed (:meth:`unwatch`).
        """
        check_int("address", addr)
        if not 0 <= addr < 1 << self.arch.bits:
            raise ConfigError(f"watch at {addr:#x}: outside the {self.arch.bits}-bit "
                              "address space")
        handles = []
        for cpu in self.cpus:
            handles.append(cpu.uc.hook_add(unicorn.UC_HOOK_CODE,
                                           lambda _uc, _a, _s, _d, c=cpu: callback(c),
                                           None, addr, addr))
            cpu.uc.ctl_remove_cache(addr, addr + 1)
        return Watch(addr, tuple(handles))

    def count_executions(self, addresses: Iterable[int]) -> Callable[[], int]:
        """How many times, so far, any CPU executed an instruction at one of
        ``addresses`` (what :meth:`watch` with a counting callback on each gives).

        One host code hook per CPU over the addresses' span
        (``kisim_count_hook``, :func:`sim.native.count_hook`): no Python call
        per execution and no hook per address for Unicorn to walk at every
        instruction. It lasts as long as the machine.
        """
        addrs = sorted(set(addresses))
        for addr in addrs:
            check_int("address", addr)
            if not 0 <= addr < 1 << self.arch.bits:
                raise ConfigError(f"count at {addr:#x}: outside the {self.arch.bits}-bit "
                                  "address space")
        if not addrs:
            return lambda: 0
        table = (ctypes.c_uint64 * len(addrs))(*addrs)
        state = CountState(len(addrs), ctypes.addressof(table), 0)
        self._counts.append((table, state))         # alive with the machine's engines
        for cpu in self.cpus:
            count_hook(cpu.uc, state)
            cpu.uc.ctl_remove_cache(addrs[0], addrs[-1] + 1)
        return lambda: state.count

    def unwatch(self, watch: Watch) -> None:
        """Remove ``watch``, before the next slice of any CPU starts.

        Deferred, because a watch's own callback may ask (its hook may not
        be freed under it); blocks translated while it existed are dropped
        then, so that they are translated again without the dispatcher.
        """
        if watch not in self._unwatched:
            self._unwatched.append(watch)

    def _drop_unwatched(self) -> None:
        for watch in self._unwatched:
            for cpu, handle in zip(self.cpus, watch.handles):
                cpu.uc.hook_del(handle)
        for cpu in self.cpus:
            cpu.uc.ctl_flush_tb()
        self._unwatched.clear()

    # -- traps -----------------------------------------------------------
    def add_trap_handler(self, handler: TrapHandler, priority: TrapPriority) -> None:
        """Offer every trap to ``handler`` in :class:`TrapPriority` order.

        Handlers of one priority are asked in the order they were added;
        ``on_trap`` (the program's own catch-all) is asked last.
        """
        if not isinstance(priority, TrapPriority):
            raise TypeError(f"priority must be a TrapPriority, not {type(priority).__name__}")
        self.trap_handlers.append((priority, handler))
        self.trap_handlers.sort(key=lambda entry: entry[0])

    def remove_trap_handler(self, handler: TrapHandler) -> None:
        self.trap_handlers = [e for e in self.trap_handlers if e[1] is not handler]

    def dispatch_trap(self, cpu: Cpu, trap: Trap) -> int | None | _Unhandled:
        """Offer a trap to each handler by priority, ``on_trap`` last."""
        for _priority, handler in self.trap_handlers:
            resume = handler(cpu, trap)
            if resume is not UNHANDLED:
                return resume
        if self.on_trap is None:
            return UNHANDLED
        return self.on_trap(cpu, trap)

    # -- running ---------------------------------------------------------
    @property
    def total_instructions(self) -> int:
        return sum(cpu.instructions for cpu in self.cpus)

    def next_quantum(self) -> int:
        return self._rng.randint(1, self.quantum) if self._rng else self.quantum

    def run(self, max_instructions: int | None = None,
            on_turn: Callable[[Machine], None] | None = None) -> None:
        """Run turns round-robin until every CPU has halted.

        ``max_instructions`` bounds the whole run; exhausting it is a
        :class:`GuestFault`. ``on_turn`` is called after every turn.
        """
        while True:
            live = [cpu for cpu in self.cpus if not cpu.halted]
            if not live:
                return
            for cpu in live:
                budget = self.next_quantum()
                if max_instructions is not None:
                    left = max_instructions - self.total_instructions
                    if left <= 0:
                        raise self.fault(cpu, f"instruction budget of {max_instructions} "
                                              "exhausted")
                    budget = min(budget, left)
                cpu.run_turn(budget)
                if on_turn is not None:
                    on_turn(self)

    def step(self, cpu: int, count: int) -> int:
        """Run one CPU for ``count`` instructions (fewer if it halts), 1..2**63."""
        check_int("instruction count", count)
        if not 1 <= count <= MAX_STEP:
            raise ConfigError(f"instruction count {count} out of range 1..{MAX_STEP}")
        return self.cpu(cpu).run_turn(count)

    # -- faults ----------------------------------------------------------
    def fault(self, cpu: Cpu, reason: str, pc: int | None = None) -> GuestFault:
        pc = cpu.pc if pc is None else pc
        try:
            code = self.memory.read(pc, self.arch.max_insn_len)
        except ConfigError:
            code = b""
            for n in range(self.arch.max_insn_len - 1, 0, -1):
                if self.memory.find(pc, n):
                    code = self.memory.read(pc, n)
                    break
        isa = cpu.resume_address(pc) & self.arch.isa_bits       # the state the CPU is in
        insn = disasm_one(self.arch, code, pc, isa) if code else "(unmapped)"
        if self.image is not None and code:
            insn = f"<{self.image.describe(pc)}> {insn}"
        return GuestFault(reason=reason, arch=self.arch.name, cpu=cpu.index, pc=pc,
                          insn=insn, registers=cpu.registers(),
                          last_blocks=cpu.replay_last_blocks(),
                          instructions=cpu.instructions)

    def summary(self) -> dict:
        return {
            "arch": self.arch.name,
            "cpus": len(self.cpus),
            "quantum": self.quantum,
            "seed": self.seed,
            "sync_rounds": self.sync_rounds,
            "cycles": self.cycles_from,
            "per_cpu": [{"instructions": c.instructions,
                         "modeled_cycles": c.modeled_cycles,
                         "pc": c.pc,
                         "events": dict(c.events),
                         "halted": c.halted,
                         **({"timing": self.timing.stats(c.index).to_json()}
                            if self.timing is not None else {})} for c in self.cpus],
        }

    @property
    def cycles_from(self) -> str:
        """Where this machine's modeled cycles come from, in one phrase."""
        return cycles_from(self.arch, self.timing is not None)
