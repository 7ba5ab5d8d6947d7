"""The timing model: pycachesim as an oracle, known-miss microbenchmarks, determinism, text patching.

1. Oracle. A real guest workload runs on one CPU with the model recording
   every access it looks up (``TimingModel(record=N)``); the stream is
   replayed into pycachesim (RRZE-HPC, test-only: AGPL) built with the same
   geometry, LRU, write-back and write-allocate, and each level's hits,
   misses and dirty evictions must be equal, exactly. Negative controls:
   a wrong associativity on either side makes them differ.
2. Known-miss microbenchmarks (``tests/timing/known_miss.c`` and assembled
   snippets): a stride walk over twice the L1D, a flush followed by a load,
   and two CPUs taking turns at storing to one line. Each expected counter
   is derived from the construction, in the test.
3. Determinism: same seed and configuration, bit-identical cycles and
   breakdowns, whichever clock path serves the trace clock.
4. Text patching: an instruction line stays in a non-coherent L1I until the
   CPU is synced, as the fetch model lets the CPU run the old text.
5. Where the data accesses come from: the arch decoder's (the default) are
   Unicorn's memory hooks', access for access, on traced workloads of two
   CPUs, except the accesses the hooks miss (``Decoder.unhooked``); and a
   comparison of every mechanism gives the same figures both ways.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
from pathlib import Path
from typing import Callable, Iterable

import capstone
import pytest

from arches import ARCHES, NAMES, Arch
from arches.base import CacheLevel, ReferenceCore
from kbuild import Build, build
from lab.compare import compare_arch
from lab.microbench import windows
from sim.asm import assemble
from sim.clock import CLOCK_PATHS
from sim.elf import read_elf
from sim.guest import Guest
from sim.snippet import SnippetRun, load_snippet
from sim.timing import FETCH, LOAD, STORE, Access, Breakdown, TimingModel
from tracing.events import parse_probes
from tracing.session import EventList, TraceOptions, TraceSession

try:                    # AGPL: the oracle, in the ``test`` extra only; kisim never imports it
    import cachesim
except ImportError:
    cachesim = None
needs_pycachesim = pytest.mark.skipif(cachesim is None, reason="pycachesim is a test extra "
                                      "(pip install -e '.[test]')")

KNOWN_MISS = Path(__file__).with_name("timing") / "known_miss.c"
#: The arch whose oracle runs in ``make check``; the others are slow.
FAST_ARCH = NAMES[0]
#: kmalloc iterations of the oracle's workload: 210k-260k recorded accesses per arch.
ORACLE_SIZE = 400
MIN_STREAM = 200_000
RECORD = 1 << 21
LEVEL_COUNTERS = ("hit", "miss", "evict")


def _fast_first(names: Iterable[str]) -> list:
    """``names`` as parameters, all but :data:`FAST_ARCH` marked slow."""
    return [pytest.param(n, id=n, marks=() if n == FAST_ARCH else pytest.mark.slow)
            for n in names]


# -- the oracle -------------------------------------------------------------------

def level_counts(counts: dict[str, int], caches: tuple[CacheLevel, ...]) -> dict[str, int]:
    """The per-level hit, miss and evict counters of a breakdown's ``counts``."""
    return {f"{c.name}_{n}": counts[f"{c.name}_{n}"] for c in caches for n in LEVEL_COUNTERS}


def pycachesim_counts(stream: list[Access], caches: tuple[CacheLevel, ...]) -> dict[str, int]:
    """Replay ``stream`` into a pycachesim hierarchy of ``caches``; its per-level counters.

    Each level loads from and stores to the next level of its side (I: levels
    holding ``i`` or ``u``; D: ``d`` or ``u``), the last one main memory. A
    FETCH or LOAD is a load; a STORE a load then a store (pycachesim does not
    refresh LRU on a store hit, the model does: a store looks the line up as
    a load). Addresses go through ``loadstore``/``iterload``, which read them
    as C longs (``Cache.load`` parses a 32-bit int into a long, its upper half
    uninitialized); runs of one side and size go in one call.
    """
    below: dict[str, str] = {}
    for side in "id":
        path = [c.name for c in caches if c.holds in (side, "u")]
        below.update(zip(path, path[1:]))
    made: dict[str, object] = {}
    for c in reversed(caches):                      # outer levels first: each needs the next
        nxt = made.get(below.get(c.name, ""))
        made[c.name] = cachesim.Cache(c.name, c.sets, c.ways, c.line, replacement_policy="LRU",
                                write_back=True, write_allocate=True,
                                load_from=nxt, store_to=nxt)
    last = made[next(c.name for c in caches if c.name not in below)]
    cachesim.MainMemory(last_level_load=last, last_level_store=last)
    l1i = made[next(c.name for c in caches if c.holds == "i")]
    l1d = made[next(c.name for c in caches if c.holds == "d")]
    for (fetch, size), run in itertools.groupby(stream, lambda a: (a.op == FETCH, a.size)):
        if fetch:
            l1i.iterload([a.addr for a in run], length=size)
        else:
            l1d.loadstore([((a.addr,), (a.addr,) if a.op == STORE else None) for a in run],
                          length=size)
    return {f"{c.name}_{n}": getattr(made[c.name].backend, f"{n.upper()}_count")
            for c in caches for n in LEVEL_COUNTERS}


@functools.lru_cache(maxsize=None)
def recorded_run(arch: str, caches: tuple[CacheLevel, ...] | None = None
                 ) -> tuple[list[Access], dict[str, int]]:
    """A kmalloc run on one CPU under a model of ``caches`` (None: the core's):
    the access stream it recorded and its counters."""
    guest = Guest(build(arch), cpus=1, workload="kmalloc", size=ORACLE_SIZE)
    guest.machine.timing = model = TimingModel(guest.machine, record=RECORD, caches=caches)
    assert guest.run().ok
    stream, dropped = model.recorded()
    assert dropped == 0, f"record more than {RECORD} accesses"
    assert len(stream) >= MIN_STREAM
    return stream, model.stats(0).counts


def scaled(caches: tuple[CacheLevel, ...]) -> tuple[CacheLevel, ...]:
    """``caches`` shrunk (L1s / 16, outer levels / 64; ways and lines kept) so that every
    level of the D side writes dirty lines back under a kmalloc run."""
    return tuple(dataclasses.replace(c, size=c.size // (16 if i < 2 else 64))
                 for i, c in enumerate(caches))


def wrong_ways(caches: tuple[CacheLevel, ...]) -> tuple[CacheLevel, ...]:
    """``caches`` with the L1D's ways halved: same size, twice the sets."""
    return tuple(dataclasses.replace(c, ways=c.ways // 2) if c.holds == "d" else c
                 for c in caches)


@needs_pycachesim
def test_pycachesim_hierarchy_counts_a_known_stream() -> None:
    """The oracle itself: a hand-counted stream through a 1-set, 2-way L1D and an L2."""
    l1d = CacheLevel("L1D", 64, 32, 2, 1, "d", False, "test")
    caches = (CacheLevel("L1I", 64, 32, 2, 1, "i", False, "test"), l1d,
              CacheLevel("L2", 256, 32, 8, 1, "u", False, "test"))
    a, b, c = 0x1000, 0x2000, 0x3000
    stream = [Access(0, STORE, a, 4),     # miss, dirty            (L2: miss)
              Access(0, LOAD, b, 4),      # miss                   (L2: miss)
              Access(0, LOAD, a, 4),      # hit: a is MRU
              Access(0, LOAD, c, 4),      # miss, b evicted clean  (L2: miss)
              Access(0, LOAD, b, 4),      # miss, a evicted dirty  (L2: hit; a written back
                                          #   into L2's copy: no lookup counted)
              Access(0, FETCH, a, 32)]    # L1I miss               (L2: hit)
    assert pycachesim_counts(stream, caches) == {
        "L1I_hit": 0, "L1I_miss": 1, "L1I_evict": 0,
        "L1D_hit": 1, "L1D_miss": 4, "L1D_evict": 1,
        "L2_hit": 2, "L2_miss": 3, "L2_evict": 0}


@needs_pycachesim
@pytest.mark.parametrize("name", _fast_first(NAMES))
def test_model_agrees_with_pycachesim(name: str) -> None:
    """Every level's hits, misses and evictions equal pycachesim's on a real kmalloc stream."""
    caches = ARCHES[name].core.caches
    stream, counts = recorded_run(name)
    model = level_counts(counts, caches)
    assert model == pycachesim_counts(stream, caches)
    assert all(model[f"{c.name}_miss"] for c in caches), model
    assert model["L1D_evict"] > 0
    # An instruction cache is never written: it has nothing to write back.
    assert model["L1I_evict"] == 0
    assert counts["memory"] == model[f"{caches[-1].name}_miss"]


@needs_pycachesim
@pytest.mark.parametrize("name", _fast_first(NAMES))
def test_model_agrees_with_pycachesim_on_scaled_caches(name: str) -> None:
    """With caches small enough that every level evicts, the counts still agree exactly."""
    caches = scaled(ARCHES[name].core.caches)
    stream, counts = recorded_run(name, caches)
    model = level_counts(counts, caches)
    assert model == pycachesim_counts(stream, caches)
    for c in caches:
        assert model[f"{c.name}_miss"] > c.size // c.line, f"{c.name}: no capacity misses"
        if c.holds != "i":          # the L1I holds no dirty line: replacements, not evictions
            assert model[f"{c.name}_evict"] > 0, f"{c.name}: no dirty line written back"


@needs_pycachesim
@pytest.mark.parametrize("name", _fast_first(NAMES))
def test_oracle_with_wrong_associativity_disagrees(name: str) -> None:
    """Negative control: the same stream into a pycachesim whose L1D has half the ways differs."""
    caches = ARCHES[name].core.caches
    stream, counts = recorded_run(name)
    model = level_counts(counts, caches)
    wrong = pycachesim_counts(stream, wrong_ways(caches))
    assert {k: v for k, v in wrong.items() if k.startswith("L1D")} != \
        {k: v for k, v in model.items() if k.startswith("L1D")}
    # The instruction side does not depend on the L1D: there they still agree.
    assert {k: v for k, v in wrong.items() if k.startswith("L1I")} == \
        {k: v for k, v in model.items() if k.startswith("L1I")}


@needs_pycachesim
@pytest.mark.parametrize("name", _fast_first(NAMES))
def test_model_with_wrong_associativity_disagrees(name: str) -> None:
    """Negative control: a model run with half the L1D ways differs from pycachesim's true core."""
    caches = ARCHES[name].core.caches
    stream, counts = recorded_run(name, wrong_ways(caches))
    assert level_counts(counts, caches) != pycachesim_counts(stream, caches)


# -- known-miss microbenchmarks ---------------------------------------------------

def l1d_of(arch: Arch) -> CacheLevel:
    return next(c for c in arch.core.caches if c.holds == "d")


def without_tlbs(arch: Arch) -> ReferenceCore:
    """The reference core without its TLBs: the counts of these tests are the caches'
    and the coherence's, which the walks' own loads would add to (tests/test_ooo.py
    tests the TLBs)."""
    return dataclasses.replace(arch.core, tlbs=())


def snippet_with_timing(arch: Arch, text: str, cpus: int, **kw: int) -> SnippetRun:
    """An assembled snippet on a machine with the timing model, not yet run."""
    run = load_snippet(arch, text, cpus, **kw)
    run.machine.timing = TimingModel(run.machine, core=without_tlbs(arch))
    return run


@functools.lru_cache(maxsize=None)
def known_miss_build(arch: str) -> Build:
    return build(arch, modules=[KNOWN_MISS])


def known_miss(arch: Arch, func: str, size: int) -> list[Breakdown]:
    """Run ``known_miss:func`` with ``size`` under the model; the counters between
    consecutive ``km_mark()`` calls (the walk covers 2 x the L1D, a line apart)."""
    guest = Guest(known_miss_build(arch.name), cpus=1, workload=f"known_miss:{func}",
                  size=size)
    guest.machine.timing = TimingModel(guest.machine, core=without_tlbs(arch))
    m, symbols = guest.machine, guest.image.symbols
    m.write_word(symbols["km_bytes"], 2 * l1d_of(arch).size)
    m.write_word(symbols["km_line"], l1d_of(arch).line)
    return [window.stalls for window in windows(guest, "km_mark")]


#: Misses a measured window may add beyond its loop: the stack lines of the km_mark()
#: calls that close it (x86's return address, PowerPC's saved LR for the -pg prologue),
#: at most two lines, each missing once after the walk evicted every set.
STACK_SLACK = 2


@pytest.mark.slow
def test_stride_walk_over_twice_the_l1d_misses_every_access(arch: Arch) -> None:
    """A line-stride walk over 2 x L1D misses the L1D at every access, every pass (LRU thrash)."""
    reps = 4
    l1d = l1d_of(arch)
    lines = 2 * l1d.size // l1d.line
    # Each set sees 2 x ways distinct lines in cyclic order: under LRU the line wanted is
    # always the one evicted longest ago, so even the passes after the first all miss.
    (walk,) = known_miss(arch, "km_stride", reps)
    c = walk.counts
    assert reps * lines <= c["L1D_miss"] <= reps * lines + STACK_SLACK
    # The array fits the L2: only the first (cold) pass reaches memory, one miss per L2 line.
    l2 = next(c2 for c2 in arch.core.caches[2:] if c2.holds == "u")
    l2_lines = 2 * l1d.size // l2.line
    assert l2_lines <= c[f"{l2.name}_miss"] <= l2_lines + c["L1I_miss"] + STACK_SLACK


def test_flush_then_load_misses_every_level_each_iteration(arch: Arch) -> None:
    """Each flush (clflush, DCCIMVAC, dcbf) + load of one line is one L1D miss served by
    memory; the same loads without the flush never miss."""
    iters = 100
    flushed, control = known_miss(arch, "km_flush", iters)
    f = flushed.counts
    assert f["cache_ops"] == iters
    assert f["L1D_miss"] == iters
    # The flush drops the line from every level: each load is served by memory. The only
    # other accesses reaching memory are the window's first fetches of its code lines.
    assert f["memory"] == iters + f["L1I_miss"]
    outer = [c.name for c in arch.core.caches[2:]]
    assert all(f[f"{name}_miss"] >= iters for name in outer)
    c = control.counts
    assert c["cache_ops"] == 0 and c["L1D_miss"] == 0
    assert c["L1D_hit"] >= iters


SHARED = 0x80000                #: the data page of the snippets

#: Store to a line, then clean and invalidate it with the arch's instruction.
STORE_FLUSH = {
    "x86_64": "mov dword ptr [{addr}], 1; clflush [{addr}]",
    "arm": "mov r2, #{addr}; str r1, [r2]; mcr p15, 0, r2, c7, c14, 1",      # DCCIMVAC
    "ppc32": "lis 5, {addr_hi}; stw 4, 0(5); dcbf 0, 5",
}


# Unicorn reports PowerPC's dcbf (and dcbst, icbi) as a data read of the line (QEMU's
# gen_dcbf probes the MMU with a ld8u): the model applies a cache-maintenance
# instruction once it has executed and takes no access from it meanwhile.
@pytest.mark.parametrize("name", NAMES)
def test_flush_leaves_the_line_in_no_level(name: str) -> None:
    """After a store and a flush of its line, no level holds it and nothing was loaded."""
    arch = ARCHES[name]
    run = snippet_with_timing(arch, STORE_FLUSH[name].format(addr=SHARED,
                                                             addr_hi=SHARED >> 16), 1)
    run.machine.map(SHARED, 0x1000)
    run.machine.run(max_instructions=100)
    timing = run.machine.timing
    s = timing.stats(0).counts
    assert (s["stores"], s["cache_ops"], s["loads"]) == (1, 1, 0)
    assert s["L1D_evict"] == 1                          # the dirty line written back
    assert {c.name: timing.holds(c.name, 0, SHARED)
            for c in arch.core.caches if c.holds != "i"} == \
        {c.name: 0 for c in arch.core.caches if c.holds != "i"}


#: A loop of stores to one word: (text, setup instructions, loop body instructions).
#: The store is the first instruction of the body; nothing else touches memory.
STORE_LOOP = {
    "x86_64": ("mov rcx, {n}; l: mov dword ptr [{addr}], ecx; dec rcx; jnz l", 1, 3),
    "arm": ("mov r1, #{n}; mov r2, #{addr}; l: str r1, [r2]; subs r1, r1, #1; bne l", 2, 3),
    "ppc32": ("li 4, {n}; lis 5, {addr_hi}; l: stw 4, 0(5); addi 4, 4, -1; cmpwi 4, 0; bne l",
              2, 4),
}


def turns_with_a_store(n: int, setup: int, body: int, quantum: int) -> int:
    """How many ``quantum``-instruction turns of the store loop contain a store."""
    stores = {setup + i * body for i in range(n)}
    total = setup + n * body + 1                    # and the harness's terminator
    return sum(any(i in stores for i in range(t, min(t + quantum, total)))
               for t in range(0, total, quantum))


@pytest.mark.parametrize("quantum", [5, 13])
def test_two_cpus_storing_to_one_line_in_turn(arch: Arch, quantum: int) -> None:
    """Each handoff of a line between two storing CPUs is one transfer and invalidates
    the other CPU's private copies."""
    n = 40
    text, setup, body = STORE_LOOP[arch.name]
    run = snippet_with_timing(arch, text.format(n=n, addr=SHARED, addr_hi=SHARED >> 16), 2,
                              quantum=quantum)
    run.machine.map(SHARED, 0x1000)
    run.machine.run(max_instructions=100_000)
    # Both CPUs run the same program, so turns go 0, 1, 0, 1, ... and the k-th turns of
    # both hold a store or neither does. Every turn with a store but the very first finds
    # the line Modified in the other CPU: it misses, takes the line over (a transfer) and
    # its store invalidates the other CPU's copy in each of its private D-side levels.
    store_turns = turns_with_a_store(n, setup, body, quantum)
    handoffs = 2 * store_turns - 1
    private = sum(1 for c in arch.core.caches if c.holds != "i" and not c.shared)
    total = run.machine.timing.total().counts
    assert total["transfers"] == handoffs
    assert total["invalidations"] == handoffs * private
    for cpu in range(2):
        s = run.machine.timing.stats(cpu).counts
        assert s["stores"] == n
        assert s["L1D_miss"] == store_turns       # the first store of each of its turns
        assert s["L1D_hit"] == n - store_turns


# -- determinism and the clock paths ----------------------------------------------

def traced_timing_run(arch: str, path: str) -> tuple:
    """A traced 2-CPU kmalloc run under the model, served on clock ``path``: everything
    timing-dependent it produced (events with their timestamps, cycles, breakdowns)."""
    guest = Guest(build(arch), cpus=2, workload="kmalloc", size=40, seed=5, quantum=3000,
                  timing=True)
    guest.machine.clock.use(path)
    sink = EventList()
    r = TraceSession(guest, TraceOptions(parse_probes("kmem,sched"))).run(sink)
    assert r.checksum_ok and sink.events
    timing = guest.machine.timing
    return ([(e.name, e.cpu, e.timestamp, e.values) for e in sink.events], r.end_ns,
            [(c.instructions, c.modeled_cycles, c.event_cycles, timing.stats(c.index))
             for c in guest.machine.cpus])


@pytest.mark.parametrize("name", _fast_first(NAMES))
def test_same_seed_same_timing_on_every_clock_path(name: str) -> None:
    """Bit-identical cycles, breakdowns and trace timestamps twice over and on each clock path."""
    reference = traced_timing_run(name, "host")
    assert reference[2][0][3].stall_cycles > 0
    assert traced_timing_run(name, "host") == reference
    for path in CLOCK_PATHS:
        assert traced_timing_run(name, path) == reference, path


# -- text patching ------------------------------------------------------------------

#: One instruction, and a same-length replacement.
SET = {"x86_64": "mov eax, {v}", "arm": "mov r0, #{v}", "ppc32": "li 3, {v}"}


def test_text_patch_reaches_the_l1i_when_the_fetch_model_does(arch: Arch) -> None:
    """A patched line leaves a non-coherent L1I only at the CPU's sync; x86's at once."""
    run = snippet_with_timing(arch, SET[arch.name].format(v=1), 2)
    m, base = run.machine, run.base
    m.run(max_instructions=100)

    def holds(cpu: int) -> int:
        return m.timing.holds("L1I", cpu, base)

    assert [holds(0), holds(1)] == [1, 1]
    with m.text_mutex:
        m.write_text(base, assemble(arch, SET[arch.name].format(v=2), base))
    if arch.icache_coherent:
        assert [holds(0), holds(1)] == [0, 0]
        return
    assert [holds(0), holds(1)] == [1, 1], "stale until the CPU is synced"
    m.sync_cpu(0)
    assert [holds(0), holds(1)] == [0, 1]
    m.sync_cpu(1)
    assert [holds(0), holds(1)] == [0, 0]


# -- where the data accesses come from ------------------------------------------------

def traced_stream(arch: str, workload: str, decoded: bool) -> tuple[list[Access], list[int]]:
    """A traced ``workload`` on two CPUs: the accesses it recorded and each CPU's count
    of instructions whose accesses the decoder does not describe."""
    guest = Guest(build(arch), cpus=2, workload=workload, size=20)
    guest.machine.timing = model = TimingModel(guest.machine, record=RECORD,
                                               decoded_accesses=decoded)
    r = TraceSession(guest, TraceOptions(parse_probes("kmem,sched"))).run(EventList())
    assert r.checksum_ok
    stream, dropped = model.recorded()
    assert dropped == 0
    return stream, [model.stats(cpu).counts["unmodeled"] for cpu in range(2)]


def mnemonic_of(arch: Arch, image: bytes, base: int) -> Callable[[int], str]:
    """Capstone's mnemonic of the instruction at an address of the kernel's text."""
    cs = capstone.Cs(*arch.cs_mode)

    @functools.lru_cache(maxsize=None)
    def mnemonic(pc: int) -> str:
        insn = next(cs.disasm(image[pc - base:pc - base + 16], pc), None)
        return insn.mnemonic if insn else "?"
    return mnemonic


@pytest.mark.parametrize("workload", ["kmalloc", pytest.param("hackbench", marks=pytest.mark.slow),
                                      "getppid"])
@pytest.mark.parametrize("name", _fast_first(n for n in NAMES if ARCHES[n].decoder.accesses))
def test_decoded_accesses_are_unicorns(name: str, workload: str) -> None:
    arch = ARCHES[name]
    decoded, unmodeled = traced_stream(name, workload, True)
    hooked, _ = traced_stream(name, workload, False)
    assert unmodeled == [0, 0]
    text = read_elf(build(name).elf).sections[".text"]
    mnemonic = mnemonic_of(arch, text.data, text.addr)
    missed = {a for a in decoded if a.op != FETCH and mnemonic(a.pc) in arch.decoder.unhooked}
    assert [a for a in decoded if a not in missed] == hooked
    assert len(decoded) > 10_000 and (missed or not arch.decoder.unhooked)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in NAMES if ARCHES[n].decoder.accesses
                                  and not ARCHES[n].decoder.unhooked])
def test_every_mechanism_compares_alike_from_decoded_and_hooked_accesses(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded = compare_arch(name, size=40)
    original = TimingModel.__init__
    monkeypatch.setattr(TimingModel, "__init__", lambda self, machine, **kw: original(
        self, machine, **kw, decoded_accesses=False))
    assert compare_arch(name, size=40) == decoded
