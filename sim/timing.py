"""The timing model: an out-of-order core over per-CPU caches, MESI coherence, TLBs.

A machine built with ``timing=True`` runs every CPU under the host C model
of ``sim/native/timing.c``, configured from its arch's
:class:`~arches.base.ReferenceCore` and classifying instructions with its
arch's :class:`~arches.base.Decoder`. Each CPU's Unicorn calls the model for
every instruction it executes (fetch through the ITLB and L1I, its class and
registers, branch resolution) and every data access (DTLB, L1D, the outer
levels, coherence); the core (window, issue resources, latencies) settles
each instruction as the next arrives and charges the CPU's clock the
advance of its retirement, so the modeled clock follows the core;
:meth:`TimingModel.stats` breaks the cycles down by cause, with what the
core overlapped of them.

A count-only machine (``timing=False``, the default of :class:`Machine`)
installs none of this and runs as fast as before: modeled cycles are then
retired instructions plus charged events. Everything is deterministic: the
model sees the same instructions and accesses in the same order on every
clock path (docs/timing.md).
"""
from __future__ import annotations

import ctypes
import functools
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import unicorn
from unicorn.unicorn_py3.unicorn import uclib

from arches import Arch
from arches.base import INSN_CLASSES, CacheLevel, ReferenceCore
from sim.errors import ConfigError
from sim.native import CpuState, hook_add_range
from sim.uccount import Count

if TYPE_CHECKING:
    from sim.machine import Machine

SOURCE = Path(__file__).with_name("native") / "timing.c"
MAX_LEVELS = 4                   # KT_MAX_LEVELS
MAX_RAS = 64                     # KT_MAX_RAS
MAX_RECORD = 1 << 24             # accesses one machine may record for the oracle
MAX_RESOURCES = 8                # KT_MAX_RESOURCES
MAX_UNITS = 4                    # KT_MAX_UNITS
MAX_WINDOW = 256                 # KT_MAX_WINDOW
FETCH, LOAD, STORE = 0, 1, 2     # a recorded access's kind

_u32, _u64, _f64, _i32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_double, ctypes.c_int32
_HOLDS = {"i": 1, "d": 2, "u": 3}


class LevelConfig(ctypes.Structure):
    _fields_ = [("sets", _u32), ("ways", _u32), ("line_shift", _u32), ("holds", _u32),
                ("shared", _u32), ("pad", _u32), ("latency", _f64)]


class ClassConfig(ctypes.Structure):
    _fields_ = [("latency", _f64), ("occupancy", _f64), ("resource", _u32), ("pad", _u32)]


class CoreConfig(ctypes.Structure):
    """``struct kt_core``: the out-of-order window."""

    _fields_ = [("dispatch", _f64), ("retire", _f64), ("insn_cost", _f64),
                ("writeback", _f64), ("rob", _u32),
                ("store_buffer", _u32), ("miss_buffers", _u32), ("resources", _u32),
                ("split_uops", _u32), ("units", _u32 * MAX_RESOURCES),
                ("cls", ClassConfig * len(INSN_CLASSES))]


class WalkStepConfig(ctypes.Structure):
    _fields_ = [("offset", _u64), ("mask", _u64), ("shift", _u32), ("size", _u32)]


class TlbConfig(ctypes.Structure):
    """``struct kt_tlb_config``: the TLBs and the page tables' walk."""

    _fields_ = [("sets", _u32 * 2), ("ways", _u32 * 2), ("small_shift", _u32),
                ("large_shift", _u32), ("small_steps", _u32), ("large_steps", _u32),
                ("base", _u64), ("step", WalkStepConfig * 2)]


class Config(ctypes.Structure):
    """``struct kt_config``."""

    _fields_ = [("cpus", _u32), ("levels", _u32), ("level", LevelConfig * MAX_LEVELS),
                ("memory", _f64), ("transfer", _f64), ("mispredict", _f64),
                ("serialize", _f64), ("cache_op", _f64), ("counters", _u32),
                ("history_bits", _u32), ("btb_sets", _u32), ("btb_ways", _u32),
                ("ras_depth", _u32), ("pc_shift", _u32), ("icache_coherent", _u32),
                ("mode_reg", _i32), ("regs", _i32 * 32), ("modeled_end", _u64),
                ("address_mask", _u64), ("decoded_accesses", _u32),
                ("pad", _u32), ("core", CoreConfig), ("tlb", TlbConfig),
                ("record_capacity", _u64)]


_LEVEL_COUNTERS = ("hit", "miss", "evict")
_COUNTERS = ("memory", "fetches", "loads", "stores", "transfers", "invalidations",
             "branches", "mispredicts", "serializations", "cache_ops", "instructions", "unmodeled",
             "undescribed", "barriers", "overlapped_misses", "itlb_misses", "dtlb_misses",
             "walk_loads")
#: Stall cycles by cause, in the order of the breakdown line: each cause as it
#: would stall an in-order pipeline alone, then (negative) what the
#: out-of-order core overlapped of them.
STALLS = ("fetch_cycles", "data_cycles", "transfer_cycles", "branch_cycles",
          "serialize_cycles", "cache_op_cycles", "execute_cycles", "barrier_cycles",
          "tlb_cycles", "overlap_cycles")


class Stats(ctypes.Structure):
    """``struct kt_stats``: one CPU's counters and stall cycles."""

    _fields_ = ([(n, _u64 * MAX_LEVELS) for n in _LEVEL_COUNTERS]
                + [(n, _u64) for n in _COUNTERS] + [(n, _f64) for n in STALLS])


class Record(ctypes.Structure):
    """``struct kt_record``: one access, as the oracle replays it."""

    _fields_ = [("pc", _u64), ("addr", _u64), ("size", _u32), ("cpu", ctypes.c_uint16),
                ("op", ctypes.c_uint16)]


class Access(NamedTuple):
    cpu: int
    op: int           # FETCH, LOAD or STORE
    addr: int
    size: int
    pc: int = 0       # the instruction that made it (0: not recorded)


@functools.lru_cache(maxsize=None)
def library(arch: Arch) -> ctypes.CDLL:
    """The timing model with ``arch``'s decoder, built into the cache on first use."""
    from kbuild.host import host_library       # the build feeds the machine
    lib = ctypes.CDLL(str(host_library(SOURCE, extra=(Path(arch.decoder.source),))))
    layout = (_u64 * 4)()
    lib.kisim_timing_layout(layout)
    expected = (ctypes.sizeof(Config), Config.record_capacity.offset, ctypes.sizeof(Stats),
                Stats.overlap_cycles.offset)
    if tuple(layout) != expected:
        raise RuntimeError(f"{SOURCE.name}: structure layout {tuple(layout)} differs from "
                           f"sim/timing's {expected}")
    lib.kisim_timing_new.restype = ctypes.c_void_p
    lib.kisim_timing_new.argtypes = [ctypes.POINTER(Config), ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.kisim_timing_cpu.restype = ctypes.c_void_p
    lib.kisim_timing_cpu.argtypes = [ctypes.c_void_p, _u32, ctypes.c_void_p, ctypes.c_void_p]
    lib.kisim_timing_hook.restype = ctypes.c_void_p
    lib.kisim_timing_hook.argtypes = [ctypes.c_void_p]
    lib.kisim_timing_count.restype = ctypes.c_void_p
    lib.kisim_timing_count.argtypes = [ctypes.c_void_p, _u32]
    lib.kisim_timing_free.argtypes = [ctypes.c_void_p]
    lib.kisim_timing_stats.restype = ctypes.POINTER(Stats)
    lib.kisim_timing_stats.argtypes = [ctypes.c_void_p, _u32]
    lib.kisim_timing_recorded.restype = ctypes.POINTER(Record)
    lib.kisim_timing_recorded.argtypes = [ctypes.c_void_p, ctypes.POINTER(_u64)]
    lib.kisim_timing_holds.argtypes = [ctypes.c_void_p, _u32, _u32, _u64]
    lib.kisim_timing_small_pages.argtypes = [ctypes.c_void_p, _u64, _u64]
    lib.kisim_timing_block.restype = ctypes.c_double
    lib.kisim_timing_block.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _u32, _u32, _u64, _u32]
    for name in ("kisim_timing_text_written", "kisim_timing_inval_i"):
        getattr(lib, name).restype = None
    lib.kisim_timing_text_written.argtypes = [ctypes.c_void_p, _u64, _u64]
    lib.kisim_timing_inval_i.argtypes = [ctypes.c_void_p, _u32, _u64, _u64]
    return lib


def _log2(value: int, what: str) -> int:
    if value <= 0 or value & (value - 1):
        raise ConfigError(f"{what} {value} is not a power of two")
    return value.bit_length() - 1


def _level(cache: CacheLevel) -> LevelConfig:
    _log2(cache.sets, f"{cache.name}: set count")
    if cache.holds not in _HOLDS:
        raise ConfigError(f"{cache.name}: holds {cache.holds!r} is not one of i, d, u")
    return LevelConfig(sets=cache.sets, ways=cache.ways,
                       line_shift=_log2(cache.line, f"{cache.name}: line size"),
                       holds=_HOLDS[cache.holds], shared=int(cache.shared),
                       latency=float(cache.latency))


def _window(core: ReferenceCore, insn_cost: float) -> CoreConfig:
    """The out-of-order part of ``core``: window, resources, one latency per class."""
    w = core.window
    if w is None:
        raise ConfigError(f"{core.name}: no out-of-order window declared")
    names = [r.name for r in core.resources]
    if not 1 <= len(names) <= MAX_RESOURCES or len(set(names)) != len(names):
        raise ConfigError(f"{core.name}: 1..{MAX_RESOURCES} resources of distinct names")
    if not all(1 <= r.units <= MAX_UNITS for r in core.resources):
        raise ConfigError(f"{core.name}: a resource has 1..{MAX_UNITS} units")
    if not (w.dispatch > 0 and w.retire > 0 and w.writeback >= 0 and 1 <= w.rob <= MAX_WINDOW
            and 1 <= w.store_buffer <= MAX_WINDOW and 0 <= w.miss_buffers <= MAX_WINDOW):
        raise ConfigError(f"{core.name}: window out of range (widths > 0, writeback >= 0, "
                          f"rob and store buffer 1..{MAX_WINDOW}, miss buffers 0..{MAX_WINDOW})")
    table = {lat.cls: lat for lat in core.latencies}
    missing = set(INSN_CLASSES) - {"serialize"} - table.keys()
    if missing or table.keys() - set(INSN_CLASSES):
        raise ConfigError(f"{core.name}: latencies must name each class of "
                          f"{', '.join(INSN_CLASSES[:-1])} once")
    out = CoreConfig(dispatch=w.dispatch, retire=w.retire, insn_cost=insn_cost,
                     writeback=w.writeback, rob=w.rob,
                     store_buffer=w.store_buffer, miss_buffers=w.miss_buffers,
                     resources=len(names), split_uops=w.split_uops)
    for i, r in enumerate(core.resources):
        out.units[i] = r.units
    for i, name in enumerate(INSN_CLASSES):
        lat = table.get(name)
        if lat is None:                 # serialize: the drain's own cost
            out.cls[i] = ClassConfig(core.serialize.cycles, core.serialize.cycles, 0)
            continue
        if lat.resource not in names or lat.latency < 0 or lat.busy < 0:
            raise ConfigError(f"{core.name}: class {name}: unknown resource or negative cycles")
        out.cls[i] = ClassConfig(lat.latency, lat.busy, names.index(lat.resource))
    return out


MAX_TLB = 512                    # KT_MAX_TLB
MAX_SMALL = 64                   # KT_MAX_SMALL
#: Where the modeled page tables are, below the top of the address space (of its low
#: 48 bits on a 64-bit arch, where addresses stay signed 64-bit for the oracle): the
#: walks' loads go through the caches at these addresses, apart from the guest's data.
TABLES_BELOW_TOP = 16 << 20
TABLES_TOP_BITS = 48


def _tlbs(core: ReferenceCore, bits: int) -> TlbConfig:
    """The TLBs and page-table walk of ``core`` (none declared: no TLB)."""
    out = TlbConfig()
    pt = core.page_tables
    if pt is None or not core.tlbs:
        return out
    for tlb in core.tlbs:
        side = {"i": 0, "d": 1}.get(tlb.holds)
        if side is None or tlb.entries % tlb.ways or not 1 <= tlb.entries <= MAX_TLB:
            raise ConfigError(f"{core.name}: {tlb.name}: holds i or d, 1..{MAX_TLB} entries "
                              "in whole sets")
        _log2(tlb.entries // tlb.ways, f"{tlb.name}: set count")
        out.sets[side], out.ways[side] = tlb.entries // tlb.ways, tlb.ways
    if not 0 <= pt.large_steps <= pt.small_steps <= min(2, len(pt.steps)):
        raise ConfigError(f"{core.name}: walk steps out of range")
    out.small_shift = _log2(pt.small, "small page")
    out.large_shift = _log2(pt.large, "large page")
    out.small_steps, out.large_steps = pt.small_steps, pt.large_steps
    out.base = (1 << min(bits, TABLES_TOP_BITS)) - TABLES_BELOW_TOP
    for i, step in enumerate(pt.steps[:2]):
        out.step[i] = WalkStepConfig(offset=step.offset, shift=step.shift, size=step.size,
                                     mask=(1 << _log2(step.entries, "walk entries")) - 1)
    return out


def config(arch: Arch, cpus: int, *, caches: tuple[CacheLevel, ...] | None = None,
           record: int = 0, decoded_accesses: bool = True, core: ReferenceCore | None = None,
           insn_cost: float = 1.0, modeled_end: int = (1 << 64) - 1) -> Config:
    """``arch``'s reference core as the C model reads it; ``caches`` replaces its
    cache levels (the oracle's negative control runs a wrong associativity),
    ``core`` the whole core (a width-1 window, the out-of-order tests'
    negative control). Data accesses come from the decoder where it describes
    them (:attr:`Decoder.accesses`) unless ``decoded_accesses`` is false.
    ``insn_cost`` is what the machine's clock already charges per instruction;
    instructions at ``modeled_end`` and above are counted and not modeled."""
    core, decoder = core or arch.core, arch.decoder
    caches = core.caches if caches is None else caches
    if not 2 <= len(caches) <= MAX_LEVELS:
        raise ConfigError(f"{arch.name}: {len(caches)} cache levels, the model takes "
                          f"2..{MAX_LEVELS}")
    p = core.predictor
    if not 1 <= p.return_stack <= MAX_RAS:
        raise ConfigError(f"{arch.name}: return stack of {p.return_stack} entries, "
                          f"the model takes 1..{MAX_RAS}")
    regs = [arch.uc_regs[name] for name in decoder.regs]
    cfg = Config(cpus=cpus, levels=len(caches), memory=core.memory.cycles,
                 transfer=core.transfer.cycles, mispredict=p.mispredict,
                 serialize=core.serialize.cycles, cache_op=core.cache_op.cycles,
                 counters=p.counters, history_bits=p.history_bits,
                 btb_sets=p.btb_entries // p.btb_ways, btb_ways=p.btb_ways,
                 ras_depth=p.return_stack, pc_shift=_log2(arch.insn_align, "alignment"),
                 icache_coherent=int(arch.icache_coherent),
                 mode_reg=arch.uc_regs[decoder.mode_reg] if decoder.mode_reg else -1,
                 regs=(_i32 * 32)(*regs), modeled_end=modeled_end,
                 address_mask=(1 << arch.bits) - 1,
                 decoded_accesses=int(decoder.accesses and decoded_accesses),
                 core=_window(core, insn_cost), tlb=_tlbs(core, arch.bits),
                 record_capacity=record)
    for i, cache in enumerate(caches):
        cfg.level[i] = _level(cache)
    return cfg


@dataclass(frozen=True)
class Breakdown:
    """Where one CPU's (or a run's) modeled stall cycles came from: counts and cycles."""

    counts: dict[str, int]
    cycles: dict[str, float]

    @property
    def stall_cycles(self) -> float:
        return sum(self.cycles.values())

    def _combine(self, other: Breakdown, sign: int) -> Breakdown:
        """Key by key, ``self + sign * other`` (keys sorted: the same sum order every run)."""
        def merge(a: dict, b: dict, zero: float) -> dict:
            return {k: a.get(k, zero) + sign * b.get(k, zero) for k in sorted(a.keys() | b.keys())}
        return Breakdown(merge(self.counts, other.counts, 0), merge(self.cycles, other.cycles, 0.0))

    def __add__(self, other: Breakdown) -> Breakdown:
        return self._combine(other, 1)

    def __sub__(self, other: Breakdown) -> Breakdown:
        return self._combine(other, -1)

    def to_json(self) -> dict:
        return {"counts": dict(sorted(self.counts.items())),
                "stall_cycles": dict(sorted(self.cycles.items()))}


EMPTY = Breakdown({}, {})


class TimingModel:
    """One machine's timing model: hooks on every CPU, state in C."""

    def __init__(self, machine: Machine, *, record: int = 0,
                 caches: tuple[CacheLevel, ...] | None = None,
                 decoded_accesses: bool = True, core: ReferenceCore | None = None) -> None:
        arch = machine.arch
        if arch.core is None or arch.decoder is None:
            raise ConfigError(f"{arch.name}: no reference core declared: count-only machines")
        if not isinstance(record, int) or not 0 <= record <= MAX_RECORD:
            raise ConfigError(f"record must be 0..{MAX_RECORD} accesses, not {record!r}")
        self.arch = arch
        self.core = core or arch.core
        self.caches = arch.core.caches if caches is None else caches
        self._lib = lib = library(arch)
        cfg = config(arch, len(machine.cpus), caches=caches, record=record,
                     decoded_accesses=decoded_accesses, core=core,
                     insn_cost=arch.costs["insn"].cycles, modeled_end=machine.spin_base)
        condition = getattr(lib, "kisim_condition", None)     # where accesses can be conditional
        handle = lib.kisim_timing_new(ctypes.byref(cfg), ctypes.addressof(machine.memory.table),
                                      ctypes.cast(uclib.uc_reg_read, ctypes.c_void_p),
                                      ctypes.cast(lib.kisim_decode, ctypes.c_void_p),
                                      ctypes.cast(condition, ctypes.c_void_p) if condition
                                      else None,
                                      ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p))
        if not handle:
            raise ConfigError(f"{arch.name}: the timing model refused its configuration "
                              "(geometry not a power of two, or out of memory)")
        self._handle = handle
        self._finalizer = weakref.finalize(self, lib.kisim_timing_free, handle)
        self._memory = machine.memory.table            # kept alive with the model
        insn = lib.kisim_timing_hook(handle)
        mem = ctypes.cast(lib.kisim_timing_mem, ctypes.c_void_p).value
        self._cpus = len(machine.cpus)
        for cpu in machine.cpus:
            arg = lib.kisim_timing_cpu(handle, cpu.index, cpu.uc._uch,
                                       ctypes.addressof(cpu._state) + CpuState.event_cycles.offset)
            hook_add_range(cpu.uc, unicorn.UC_HOOK_CODE, insn, arg, 1, 0)
            cpu.count_with(Count.from_address(lib.kisim_timing_count(handle, cpu.index)), self)
            if not cfg.decoded_accesses:
                hook_add_range(cpu.uc, unicorn.UC_HOOK_MEM_READ | unicorn.UC_HOOK_MEM_WRITE,
                               mem, arg, 1, 0)

    # -- what the machine tells it ----------------------------------------
    def text_written(self, begin: int, end: int) -> None:
        """The host stored text at ``[begin, end)`` (:meth:`Machine.write_text`)."""
        self._lib.kisim_timing_text_written(self._handle, begin, end)

    def small_pages(self, ranges: list[tuple[int, int]]) -> None:
        """Linux maps these ``[begin, end)`` ranges (a module's memory) with the core's
        small pages; the rest of the guest is the kernel image and its linear map.
        Each range is widened to whole pages; overlapping ones are merged."""
        pt = self.core.page_tables
        if pt is None:
            return
        merged: list[list[int]] = []
        for begin, end in sorted((b - b % pt.small, -(-e // pt.small) * pt.small)
                                 for b, e in ranges if e > b):
            if merged and begin <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([begin, end])
        if len(merged) > MAX_SMALL:
            raise ConfigError(f"{len(merged)} small-page ranges, the model takes {MAX_SMALL}")
        for begin, end in merged:
            self._lib.kisim_timing_small_pages(self._handle, begin, end)

    def block_cycles(self, code: bytes, insn_size: int, address: int = 0,
                     iterations: int = 200) -> float:
        """The core alone (no caches, predictor or TLB: loads hit L1) over the
        straight-line block ``code`` of fixed-size instructions: its cycles per
        iteration, warm (the oracle's question to llvm-mca)."""
        if insn_size <= 0 or not code or len(code) % insn_size:
            raise ConfigError("a block is whole instructions of one size")
        out = self._lib.kisim_timing_block(self._handle, code, len(code) // insn_size,
                                           insn_size, address, iterations)
        if out < 0:
            raise ConfigError("the timing model refused the block")
        return out

    def icache_invalidate(self, cpu: int, begin: int, end: int) -> None:
        """CPU ``cpu`` drops its instruction lines over ``[begin, end)``."""
        self._lib.kisim_timing_inval_i(self._handle, cpu, begin, end)

    # -- what it tells ----------------------------------------------------
    def holds(self, level: str, cpu: int, addr: int) -> int:
        """0 if ``cpu``'s ``level`` (by name) lacks ``addr``'s line, 1 clean, 2 dirty."""
        names = [c.name for c in self.caches]
        if level not in names:
            raise ConfigError(f"no cache level {level!r} (levels: {', '.join(names)})")
        return self._lib.kisim_timing_holds(self._handle, names.index(level), cpu, addr)

    def stats(self, cpu: int) -> Breakdown:
        """CPU ``cpu``'s counters and stall cycles so far."""
        s = self._lib.kisim_timing_stats(self._handle, cpu).contents    # the overlap, updated
        counts = {n: getattr(s, n) for n in _COUNTERS}
        for i, cache in enumerate(self.caches):
            for n in _LEVEL_COUNTERS:
                counts[f"{cache.name}_{n}"] = getattr(s, n)[i]
        return Breakdown(counts, {n.removesuffix("_cycles"): getattr(s, n) for n in STALLS})

    def total(self) -> Breakdown:
        """Every CPU's :meth:`stats`, summed."""
        return functools.reduce(Breakdown.__add__, map(self.stats, range(self._cpus)),
                                EMPTY)

    def recorded(self) -> tuple[list[Access], int]:
        """The accesses recorded (``record=N`` at construction) and how many did not fit."""
        out = (_u64 * 2)()
        rows = self._lib.kisim_timing_recorded(self._handle, out)
        return [Access(r.cpu, r.op, r.addr, r.size, r.pc) for r in rows[:out[0]]], out[1]


def cycles_from(arch: Arch, timing: bool) -> str:
    """Where a machine's modeled cycles come from, in one phrase (every figure prints it)."""
    if timing:
        return f"timing model of the {arch.core.name}"
    return "count-only: retired instructions and charged events"


__all__ = ["Access", "Breakdown", "EMPTY", "FETCH", "LOAD", "STALLS", "STORE", "TimingModel",
           "config", "cycles_from", "library"]
