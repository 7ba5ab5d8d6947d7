"""The out-of-order core of the timing model (sim/native/timing.c, docs/timing.md "The core").

Each test runs an assembled loop under the timing model of the arch's
reference core and reads the modeled cycles per iteration; each has a
negative control that removes the mechanism (a window of width 1, a fence
taken out) and shows the figure change.
"""
from __future__ import annotations

import dataclasses

import pytest

from arches import ARCHES, Arch
from arches.base import Latency, ReferenceCore, Window
from sim.snippet import load_snippet
from sim.timing import Breakdown, TimingModel

NAMES = ("x86_64", "arm", "ppc32")
ITERATIONS = 400

#: A counted loop around {body}: the counter's own instructions are in every variant.
LOOP = {
    "x86_64": "mov rbx, 3; mov rax, 100; xor edx, edx; mov ecx, {n}; loop: {body} dec ecx; "
              "jnz loop",
    "arm": "mov r1, #3; mov r0, #100; mov r12, #{n}; loop: {body} subs r12, r12, #1; bne loop",
    "ppc32": "li 4, 3; li 3, 100; li 12, {n}; mtctr 12; loop: {body} bdnz loop",
}
#: Eight adds into one register (a chain) or into eight (independent).
CHAIN = {"x86_64": "add rax, 1;", "arm": "add r0, r0, #1;", "ppc32": "addi 3, 3, 1;"}
SPREAD = {
    "x86_64": "add {r}, 1;",
    "arm": "add {r}, {r}, #1;",
    "ppc32": "addi {r}, {r}, 1;",
}
REGS = {
    "x86_64": ("rax", "rsi", "rdi", "r8", "r9", "r10", "r11", "r13"),
    "arm": ("r0", "r2", "r3", "r4", "r5", "r6", "r7", "r8"),
    "ppc32": ("3", "5", "6", "7", "8", "9", "10", "11"),
}
#: A divide whose result feeds the next (x86: rdx:rax / rbx; ARM: udiv r0, r0, r1,
#: encoded as Keystone lacks the divide extension; PowerPC divwu 3, 3, 4).
DIV = {"x86_64": "xor edx, edx; div rbx;", "arm": ".word 0xe730f110;", "ppc32": "divwu 3, 3, 4;"}
#: The full barrier of each arch, and a store before it for it to drain.
FENCE = {"x86_64": "mfence;", "arm": ".word 0xf57ff05f;", "ppc32": "sync;"}    # dmb sy
LOCKED = "lock add dword ptr [rsp - 64], 1;"


def _run(arch: Arch, body: str, core: ReferenceCore | None, n: int) -> tuple[float, Breakdown]:
    run = load_snippet(arch, LOOP[arch.name].format(n=n, body=body), 1)
    run.machine.timing = TimingModel(run.machine, core=core)
    run.machine.run(max_instructions=10_000_000)
    row = run.per_cpu()[0]
    assert row["halted"]
    return row["modeled_cycles"], run.machine.timing.stats(0)


def loop_cycles(arch: Arch, body: str,
                core: ReferenceCore | None = None) -> tuple[float, Breakdown]:
    """Modeled cycles per iteration of ``body`` in the counted loop once warm (the
    difference of 2N and N iterations: cold misses and setup cancel), and the
    breakdown of those N iterations."""
    once, first = _run(arch, body, core, ITERATIONS)
    twice, both = _run(arch, body, core, 2 * ITERATIONS)
    return (twice - once) / ITERATIONS, both - first


def in_order(arch: Arch) -> ReferenceCore:
    """The reference core with a window of width 1: one instruction at a time."""
    window = dataclasses.replace(arch.core.window, dispatch=1, retire=1, rob=1)
    return dataclasses.replace(arch.core, window=window)


def with_latency(core: ReferenceCore, cls: str, cycles: float) -> ReferenceCore:
    """``core`` with class ``cls`` at ``cycles`` latency and occupancy."""
    table = tuple(dataclasses.replace(lat, latency=cycles, occupancy=cycles)
                  if lat.cls == cls else lat for lat in core.latencies)
    return dataclasses.replace(core, latencies=table)


def table(arch: Arch, cls: str) -> Latency:
    return next(lat for lat in arch.core.latencies if lat.cls == cls)


def adds(name: str) -> tuple[str, str]:
    """Eight chained adds, eight independent adds."""
    return CHAIN[name] * 8, "".join(SPREAD[name].format(r=r) for r in REGS[name])


def per_iteration(arch: Arch) -> int:
    """Instructions per iteration of an eight-add loop: the adds and the loop's own."""
    return 8 + (1 if arch.name == "ppc32" else 2)


def independent_rate(arch: Arch, core: ReferenceCore | None = None) -> tuple[float, float]:
    """Instructions per cycle of the independent adds' loop, and of the chain's."""
    chain, spread = adds(arch.name)
    return tuple(per_iteration(arch) / loop_cycles(arch, body, core)[0]
                 for body in (spread, chain))


@pytest.mark.parametrize("name", NAMES)
def test_independent_adds_run_at_the_core_width(name: str) -> None:
    """Independent adds retire at (nearly) the dispatch width; a chain of the same adds
    runs at one per add latency, below it."""
    arch = ARCHES[name]
    width = arch.core.window.dispatch
    spread, chain = independent_rate(arch)
    assert 0.85 * width <= spread <= width + 1e-9
    alu = table(arch, "alu").latency
    assert chain < 0.85 * width
    assert chain <= per_iteration(arch) / (8 * alu) + 1e-9    # one add per add latency


@pytest.mark.parametrize("name", NAMES)
def test_a_width_one_core_fails_the_independent_adds_test(name: str) -> None:
    """Negative control: the same core with a window of one runs the independent adds
    no faster than one per cycle, far below the reference width."""
    arch = ARCHES[name]
    spread, _ = independent_rate(arch, in_order(arch))
    assert spread <= 1.0 + 1e-9
    assert spread < 0.85 * arch.core.window.dispatch


@pytest.mark.parametrize("name", NAMES)
def test_a_divide_costs_its_table_latency(name: str) -> None:
    """Four chained divides cost four times the table latency over the empty loop; a core
    with another latency in its table gives that other figure."""
    arch = ARCHES[name]
    div = table(arch, "div").latency
    empty, _ = loop_cycles(arch, "")
    four, stats = loop_cycles(arch, DIV[name] * 4)
    assert four - empty == pytest.approx(4 * div, rel=0.05)
    assert stats.cycles["execute"] == pytest.approx(4 * (div - 1) * ITERATIONS, rel=0.01)
    other, _ = loop_cycles(arch, DIV[name] * 4, with_latency(arch.core, "div", 2 * div))
    assert other - empty == pytest.approx(8 * div, rel=0.05)


@pytest.mark.parametrize("name", NAMES)
def test_a_full_barrier_costs_its_table_latency_and_a_drain(name: str) -> None:
    """A fence after a store costs at least its table latency per iteration; without the
    fence (the negative control) the same loop costs a few cycles."""
    arch = ARCHES[name]
    store = {"x86_64": "mov [rsp - 64], rax;", "arm": "str r0, [sp, #-64];",
             "ppc32": "stw 3, -64(1);"}[name]
    fence = table(arch, "fence").latency
    plain, _ = loop_cycles(arch, store)
    fenced, stats = loop_cycles(arch, store + FENCE[name])
    assert plain < 10
    assert fence <= fenced <= fence + plain + 10
    assert stats.counts["barriers"] == ITERATIONS
    assert stats.cycles["barrier"] == pytest.approx(fence * ITERATIONS)


def test_a_locked_add_costs_its_table_latency() -> None:
    """x86: lock add to the stack costs the atomic class's latency; the same add
    without lock (the control) does not."""
    arch = ARCHES["x86_64"]
    atomic = table(arch, "atomic").latency
    plain, _ = loop_cycles(arch, LOCKED.removeprefix("lock "))
    locked, stats = loop_cycles(arch, LOCKED)
    assert plain < 10
    assert atomic <= locked <= atomic + plain + 10
    assert stats.counts["barriers"] == ITERATIONS


def test_the_window_is_declared_on_every_reference_core() -> None:
    """Each reference core names its window and a latency for every class, with sources."""
    for arch in (ARCHES[n] for n in NAMES):
        core = arch.core
        assert isinstance(core.window, Window) and core.window.source
        assert {lat.cls for lat in core.latencies} >= {"alu", "div", "load", "fence"}
        assert all(lat.source for lat in core.latencies)
        assert all(r.source for r in core.resources)
