"""The machine's state of record in C structures, and the host hooks over them.

A CPU's charged cycles (:class:`CpuState`; its retired instructions are
copied in at the start of each slice the hook serves), the clock's
synchronization (:class:`ClockState`) and the guest memory map
(:class:`MemoryMap`) live in ctypes structures that the Python machine
reads and writes as its own fields. ``hooks.c``, compiled for the
host by the pinned zig (:func:`kbuild.host.host_library`), is installed as
each CPU's interrupt and system-call hook: it serves a trace clock read
(``HC_CLOCK``) over the same structures with the same arithmetic as the
Python path, and hands every other trap to the Python hook unchanged
(docs/machine.md, "Clock reads in the host hook"). :func:`new_engine`
creates each engine so that its regions have RAM offsets of their own
(docs/unicorn.md, "RAM offsets"). The library's TLB fill gives
every engine identity-mapped entries that keep guest stores on QEMU's fast
path (:func:`use_virtual_tlb`, docs/unicorn.md). Its counting hook
(:func:`count_hook`) counts executions of a set of addresses.
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path
from typing import Callable

import unicorn
from unicorn.unicorn_py3.unicorn import uclib

MAX_CPUS = 8                 # KISIM_MAX_CPUS
MAX_REGIONS = 64             # KISIM_MAX_REGIONS
SOURCE = Path(__file__).with_name("hooks.c")
FIRST_PAGE = 0x1000          # a page on every arch (Unicorn's target pages are 1 or 4 KiB)

_u64, _f64, _i32, _u32, _i64 = (ctypes.c_uint64, ctypes.c_double, ctypes.c_int32,
                                ctypes.c_uint32, ctypes.c_int64)
IntrHook = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)
InsnHook = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class Region(ctypes.Structure):
    _fields_ = [("base", _u64), ("size", _u64), ("host", ctypes.c_void_p)]


class MemoryMap(ctypes.Structure):
    """``struct kisim_memory``: guest ranges backed by host buffers."""

    _fields_ = [("count", _u64), ("region", Region * MAX_REGIONS)]

    def add(self, base: int, size: int, host: int) -> None:
        """Map guest ``[base, base + size)`` to ``host``; past the table's end the
        hook finds no region and leaves the read to Python."""
        if self.count < MAX_REGIONS:
            self.region[self.count] = Region(base, size, host)
            self.count += 1


class ClockState(ctypes.Structure):
    """``struct kisim_clock``: :class:`sim.clock.ModeledClock`'s synchronization."""

    _fields_ = [("last_ns", _u64), ("offset", _u64 * MAX_CPUS), ("hypercall", _u64)]


class CpuState(ctypes.Structure):
    """``struct kisim_cpu``: one CPU's accounting, and what the hook needs to serve it."""

    _fields_ = [("instructions", _u64), ("event_cycles", _f64), ("served", _u64),
                ("armed", _u64), ("counter", ctypes.c_void_p),
                ("clock", ctypes.POINTER(ClockState)), ("memory", ctypes.POINTER(MemoryMap)),
                ("reg_read", ctypes.c_void_p), ("reg_write", ctypes.c_void_p),
                ("forward_intr", ctypes.c_void_p), ("forward_insn", ctypes.c_void_p),
                ("insn_cost", _f64), ("trap_cost", _f64), ("clock_read_cost", _f64),
                ("clock_hz", _f64), ("mask", _u64), ("syscall_intno", _i64),
                ("arg0", _i32), ("arg1", _i32), ("ret", _i32), ("index", _u32),
                ("big_endian", _u32), ("pc", _i32), ("isa_reg", _i32), ("isa_mask", _u64),
                ("isa_bits", _u64), ("pad", _u32)]


class CountState(ctypes.Structure):
    """``struct kisim_count``: executions of a sorted set of instruction addresses."""

    _fields_ = [("n", _u64), ("addr", ctypes.c_void_p), ("count", _u64)]


@functools.lru_cache(maxsize=None)
def library() -> ctypes.CDLL:
    """The compiled hook (built into the cache on first use), its structures
    checked against the declarations above."""
    from kbuild.host import host_library       # the build feeds the machine
    lib = ctypes.CDLL(str(host_library(SOURCE)))
    layout = (ctypes.c_uint64 * 8)()
    lib.kisim_layout(layout)
    expected = (ctypes.sizeof(MemoryMap), MemoryMap.region.offset, ctypes.sizeof(ClockState),
                ClockState.hypercall.offset, ctypes.sizeof(CpuState), CpuState.pad.offset,
                ctypes.sizeof(CountState), CountState.count.offset)
    if tuple(layout) != expected:
        raise RuntimeError(f"{SOURCE.name}: structure layout {tuple(layout)} differs from "
                           f"sim/native's {expected}")
    lib.kisim_resume_pc.restype = _u64
    lib.kisim_resume_pc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


def _address(fn: object) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


def _hook_add(uc: unicorn.Uc, kind: int, hook: object, user_data: object, *extra: object) -> None:
    hook_add_range(uc, kind, _address(hook), user_data, 1, 0, *extra)


def hook_add_range(uc: unicorn.Uc, kind: int, hook: int, user_data: object, begin: int,
                   end: int, *extra: object) -> int:
    """Install the C function at address ``hook`` as a ``kind`` hook of ``uc`` over
    ``[begin, end]`` (``begin > end``: everywhere); the handle ``uc.hook_del`` takes."""
    handle = ctypes.c_size_t()
    status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), kind, hook, user_data,
                               ctypes.c_uint64(begin), ctypes.c_uint64(end), *extra)
    if status != unicorn.UC_ERR_OK:
        raise unicorn.UcError(status)
    return handle.value


def new_engine(mode: tuple[int, int]) -> unicorn.Uc:
    """A Unicorn engine of ``mode`` (:attr:`arches.Arch.uc_mode`) that gives every
    region mapped into it RAM offsets of its own (docs/unicorn.md, "RAM offsets").

    Until a region has been unmapped, Unicorn 2.1.4 places each new RAM block
    after the block it last appended (``exec.c``, ``find_ram_offset_last``), not
    after the highest one, so a region larger than its predecessors shares its
    offsets with the next region mapped. QEMU keys translated code and its
    self-modifying-code checks by those offsets: a store to one region then
    invalidates code of the other, and on x86 restarts the storing instruction,
    which counts twice. One page mapped and unmapped first (nothing else is
    mapped yet, so any page) makes every later mapping take QEMU's search for a
    free range (``find_ram_offset``).
    """
    uc = unicorn.Uc(*mode)
    uc.mem_map(0, FIRST_PAGE)
    uc.mem_unmap(0, FIRST_PAGE)
    return uc


def use_virtual_tlb(uc: unicorn.Uc) -> None:
    """Identity-mapped TLB entries from the host hook (``kisim_tlb_fill``): guest
    stores take QEMU's fast path (docs/unicorn.md, "Stores and the TLB")."""
    uc.ctl_set_tlb_mode(unicorn.UC_TLB_VIRTUAL)
    _hook_add(uc, unicorn.UC_HOOK_TLB_FILL, library().kisim_tlb_fill, None)


def add_hook(uc: unicorn.Uc, state: CpuState, forward: Callable[..., None],
             insn: int | None = None) -> list[object]:
    """Install the host hook on ``uc``'s system-call trap, ``forward`` taking the rest.

    ``insn`` None: the hook is ``uc``'s interrupt hook (``forward(intno)``
    gets every interrupt it does not serve); else it is the hook of that
    instruction (``forward()``). Returns what must stay alive with ``uc``.
    """
    lib = library()
    if insn is None:
        trampoline = IntrHook(lambda _uc, intno, _data: forward(intno))
        hook, extra = lib.kisim_intr_hook, ()
        kind = unicorn.UC_HOOK_INTR
        state.forward_intr = _address(trampoline)
    else:
        trampoline = InsnHook(lambda _uc, _data: forward())
        hook, extra = lib.kisim_syscall_hook, (ctypes.c_int(insn),)
        kind = unicorn.UC_HOOK_INSN
        state.forward_insn = _address(trampoline)
    state.reg_read, state.reg_write = _address(uclib.uc_reg_read), _address(uclib.uc_reg_write)
    _hook_add(uc, kind, hook, ctypes.cast(ctypes.pointer(state), ctypes.c_void_p), *extra)
    return [trampoline, state]


def count_hook(uc: unicorn.Uc, state: CountState) -> None:
    """Count in ``state`` every execution by ``uc`` of one of its addresses: the host
    code hook ``kisim_count_hook`` over their span (``state`` must outlive ``uc``)."""
    first = ctypes.cast(state.addr, ctypes.POINTER(_u64))
    hook_add_range(uc, unicorn.UC_HOOK_CODE, _address(library().kisim_count_hook),
                   ctypes.cast(ctypes.pointer(state), ctypes.c_void_p), first[0],
                   first[state.n - 1])


__all__ = ["ClockState", "CountState", "CpuState", "MemoryMap", "add_hook", "count_hook",
           "hook_add_range", "library", "new_engine", "use_virtual_tlb"]
