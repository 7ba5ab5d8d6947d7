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


#: Loops where the P4's three dispatch slots bind once a load-op add is two
#: micro-operations and a store two (248966 ch. 1's ports), not one entry each: the
#: body's instructions, its micro-operations (the loop's own two added to each), and
#: no chain or port slower than the slots (one load and one store address per cycle).
SPLIT_LOOPS = (
    ("".join(f"add {r}, qword ptr [rsp - {64 - 8 * i}]; add r8, 1; add r9, 1;"
             for i, r in enumerate(("rsi", "rdi", "r10", "r11"))), 12, 16),
    ("".join(f"mov qword ptr [rsp - {64 - 8 * i}], rsi; add {r}, 1;"
             for i, r in enumerate(("rdi", "r10", "r11", "r13"))), 8, 12),
)


@pytest.mark.parametrize("body, insns, uops", SPLIT_LOOPS, ids=("load-op", "store"))
def test_the_p4_dispatches_micro_operations(body: str, insns: int, uops: int) -> None:
    """On the P4 a loop runs at its micro-operations over the dispatch width, not at
    its instructions over it. Negative control: the same core counting one entry per
    instruction runs the loop at the instructions' rate, or at its store port's."""
    arch = ARCHES["x86_64"]
    width = arch.core.window.dispatch
    assert arch.core.window.split_uops
    whole = dataclasses.replace(arch.core, window=dataclasses.replace(arch.core.window,
                                                                     split_uops=False))
    assert loop_cycles(arch, body)[0] == pytest.approx((uops + 2) / width)
    assert loop_cycles(arch, body, whole)[0] == pytest.approx(max((insns + 2) / width, 4))


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


#: A divide whose operands are set afresh: divides independent of each other.
FRESH_DIV = {"x86_64": "xor edx, edx; mov rax, 100; div rbx;",
             "arm": "mov r0, #100; .word 0xe730f110;", "ppc32": "li 3, 100; divwu 3, 3, 4;"}


@pytest.mark.parametrize("name", NAMES)
def test_a_divider_busy_for_long_is_booked_however_far_ahead(name: str) -> None:
    """Independent divides on a divider that is not pipelined (held for its 64-cycle
    latency) run at one per 64 cycles: the window runs hundreds of cycles ahead of
    the oldest instruction, and every booking that far ahead is kept (a calendar of
    256 cycles lost them, and gave about 40 cycles per divide). The table's divide
    is the control: it costs less."""
    arch = ARCHES[name]
    empty, _ = loop_cycles(arch, "")
    slow, _ = loop_cycles(arch, FRESH_DIV[name] * 4, with_latency(arch.core, "div", 64))
    assert slow - empty >= 4 * 64 * 0.99
    fast, _ = loop_cycles(arch, FRESH_DIV[name] * 4)
    assert fast < slow


#: Eight loads, each through the base the one before wrote back (x86 pop, ARM
#: post-indexed LDR, PowerPC lwzu), then the base put back.
WRITTEN_BACK = {"x86_64": "pop rsi;" * 8 + "sub rsp, 64;",
                "arm": "ldr r2, [sp], #4;" * 8 + "sub sp, sp, #32;",
                "ppc32": "lwzu 5, 4(1);" * 8 + "addi 1, 1, -32;"}


@pytest.mark.parametrize("name", NAMES)
def test_a_base_written_back_is_ready_before_the_load_completes(name: str) -> None:
    """A chain of loads through a written-back base runs at one load per cycle (the load
    port's rate; on the P4 InstLatX86's POP r32, T 1.00), not at the load's latency: the
    base comes from the address generation, `writeback` after its sources, and the loop
    costs 8 cycles, 9 where the rewind waits for the chain. Negative control: a core
    whose base is ready only after 4 cycles runs the chain at 4 per load."""
    arch = ARCHES[name]
    assert arch.core.window.writeback < next(c for c in arch.core.caches
                                             if c.name == "L1D").latency
    chain, _ = loop_cycles(arch, WRITTEN_BACK[name])
    assert 8 - 1e-9 <= chain <= 9 + 1e-9     # the port's 8 cycles, the rewind's one at most
    late = dataclasses.replace(arch.core, window=dataclasses.replace(arch.core.window,
                                                                    writeback=4))
    assert loop_cycles(arch, WRITTEN_BACK[name], late)[0] >= 32


#: A multiply chain through rax, each product added to a word of the stack: a load-op
#: whose load needs only rsp, ready long before the product.
LOAD_OP = "imul rax, rbx; add rax, [rsp];" * 4


@pytest.mark.parametrize("name", [n for n in NAMES if ARCHES[n].core.window.split_uops])
def test_a_load_ops_load_waits_for_its_address_alone(name: str) -> None:
    """On a core that splits instructions into micro-operations (NetBurst: a load-op is
    a load on port 2 and the operation on an ALU, IA-32 optimization manual 248966
    ch. 1), the load of `add rax, [rsp]` issues once rsp is ready and completes while
    the multiply runs: the chain costs the multiply and the add, not the load's
    latency too. Negative control: the same core taking whole instructions waits for
    rax before the load, and pays the L1's latency four more times."""
    arch = ARCHES[name]
    mul, alu = table(arch, "mul").latency, table(arch, "alu").latency
    l1 = next(c for c in arch.core.caches if c.name == "L1D").latency
    split, _ = loop_cycles(arch, LOAD_OP)
    assert split <= 4 * (mul + alu) + 1
    whole = dataclasses.replace(arch.core, window=dataclasses.replace(arch.core.window,
                                                                     split_uops=False))
    assert loop_cycles(arch, LOAD_OP, whole)[0] >= 4 * (mul + alu + l1) - 1e-9


#: A multiply of the accumulator, then a write of part of it (x86 al, ARM movt's top
#: half, PowerPC rlwimi's low half) or of all of it (eax zero-extends, movw zeroes the
#: top half, li): the partial write keeps the product's other bits, so the next
#: multiply waits for both; the whole write ends the chain.
PARTIAL = {"x86_64": ("imul rax, rbx; mov al, 1;", "imul rax, rbx; mov eax, 1;"),
           "arm": ("mul r0, r0, r1; movt r0, #1;", "mul r0, r0, r1; movw r0, #1;"),
           "ppc32": ("mullw 3, 3, 4; rlwimi 3, 4, 0, 16, 31;", "mullw 3, 3, 4; li 3, 1;")}


@pytest.mark.parametrize("name", NAMES)
def test_a_write_to_part_of_a_register_waits_for_its_last_writer(name: str) -> None:
    """Four multiplies each followed by a partial write form one chain, at least the
    multiply's latency each; followed by a whole write (the control), they are
    independent and cost much less."""
    arch = ARCHES[name]
    partial, whole = PARTIAL[name]
    mul = table(arch, "mul").latency
    chained, _ = loop_cycles(arch, partial * 4)
    free, _ = loop_cycles(arch, whole * 4)
    assert chained >= 4 * mul
    assert free < 0.75 * chained


def test_a_conditional_move_and_an_add_with_carry_cost_their_table_latency() -> None:
    """x86: a chain of cmov through rax costs the select class's latency per link, a
    chain of adc its carry class's (the P4's measured 6 and 7 cycles); the same chains
    of mov and add (the control) cost the simple ALU's."""
    arch = ARCHES["x86_64"]
    select, carry = table(arch, "select").latency, table(arch, "carry").latency
    cmov, _ = loop_cycles(arch, "cmovne rax, rcx;" * 8)
    adc, _ = loop_cycles(arch, "adc rax, rcx;" * 8)
    add, _ = loop_cycles(arch, "add rax, rcx;" * 8)
    assert cmov >= 8 * select and adc >= 8 * carry
    assert add < 0.25 * min(cmov, adc)


def test_a_zeroing_idiom_ends_the_chain() -> None:
    """x86: `xor eax, eax` after a multiply into rax does not wait for the product (the
    P4's "Clearing Registers" support, IA-32 optimization manual 248966 ch. 2), so four
    multiplies each followed by it are independent; followed by `and eax, eax`, which
    reads eax (the control), they form one chain."""
    arch = ARCHES["x86_64"]
    mul = table(arch, "mul").latency
    chained, _ = loop_cycles(arch, "imul rax, rbx; and eax, eax;" * 4)
    free, _ = loop_cycles(arch, "imul rax, rbx; xor eax, eax;" * 4)
    assert chained >= 4 * mul
    assert free < 0.75 * chained


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


#: Loads one word per 4 KiB page over {pages} pages from DATA, round and round.
PAGE_WALK = {
    "x86_64": "mov rsi, {data}; mov ecx, {n}; xor edx, edx; loop: mov rax, [rsi + rdx]; "
              "add rdx, 4096; and rdx, {mask}; dec ecx; jnz loop",
    "arm": "mov r6, #{data}; mov r12, #{n}; mov r2, #0; mov r7, #{mask} + 1; sub r7, r7, #1; loop: "
           "ldr r3, [r6, r2]; add r2, r2, #4096; and r2, r2, r7; subs r12, r12, #1; bne loop",
    "ppc32": "lis 6, {data_hi}; li 12, {n}; mtctr 12; li 2, 0; lis 7, {mask_hi}; ori 7, 7, {mask_lo}; "
             "loop: lwzx 3, 6, 2; addi 2, 2, 4096; and 2, 2, 7; bdnz loop",
}
DATA = 0x400000


def page_walk(arch: Arch, pages: int, small: bool, core: ReferenceCore | None = None,
              n: int = 1000) -> tuple[float, Breakdown]:
    """``n`` loads, one per page over ``pages`` pages, on small pages (a module's) or not."""
    mask = pages * 4096 - 1
    text = PAGE_WALK[arch.name].format(data=DATA, data_hi=DATA >> 16, n=n, mask=mask,
                                       mask_hi=mask >> 16, mask_lo=mask & 0xffff)
    run = load_snippet(arch, text, 1)
    run.machine.map(DATA, pages * 4096)
    run.machine.timing = TimingModel(run.machine, core=core)
    if small:
        run.machine.timing.small_pages([(DATA, DATA + pages * 4096)])
    run.machine.run(max_instructions=10_000_000)
    row = run.per_cpu()[0]
    assert row["halted"]
    return row["modeled_cycles"], run.machine.timing.stats(0)


@pytest.mark.parametrize("name", NAMES)
def test_a_module_walking_more_pages_than_the_tlb_misses_at_every_load(name: str) -> None:
    """Small pages over twice the DTLB's reach miss it at every load (LRU, round robin),
    each walk loading its entries through the caches; a walk of pages the DTLB holds
    misses only once per page. Negative controls: the same loop on the linear map's
    large pages, and on a core without TLBs, miss no more than once and cost less."""
    arch = ARCHES[name]
    dtlb = next(t for t in arch.core.tlbs if t.holds == "d")
    n = 1000
    cycles, stats = page_walk(arch, 2 * dtlb.entries, small=True, n=n)
    c = stats.counts
    assert n <= c["dtlb_misses"] <= n + 2
    steps = arch.core.page_tables.small_steps
    assert steps * n <= c["walk_loads"] <= steps * (c["dtlb_misses"] + c["itlb_misses"])
    assert stats.cycles["tlb"] > 0
    fits, fit_stats = page_walk(arch, dtlb.entries // 4, small=True, n=n)
    assert fit_stats.counts["dtlb_misses"] <= dtlb.entries // 4 + 2
    large, large_stats = page_walk(arch, 2 * dtlb.entries, small=False, n=n)
    assert large_stats.counts["dtlb_misses"] <= 2
    bare, bare_stats = page_walk(arch, 2 * dtlb.entries, small=True,
                                 core=dataclasses.replace(arch.core, tlbs=()), n=n)
    assert bare_stats.counts["dtlb_misses"] == 0 == bare_stats.counts["walk_loads"]
    assert cycles > max(large, bare)


#: One load per iteration from a new line 256 bytes on; {dep} makes the next address
#: depend on the loaded value (a pointer chase) or not.
MISSES = {
    "arm": "mov r6, #{data}; mov r12, #{n}; loop: ldr r3, [r6]; {dep} add r6, r6, #256; "
           "subs r12, r12, #1; bne loop",
    "x86_64": "mov rsi, {data}; mov ecx, {n}; loop: mov rax, [rsi]; {dep} add rsi, 256; "
              "dec ecx; jnz loop",
    "ppc32": "lis 6, {data_hi}; li 12, {n}; mtctr 12; loop: lwz 3, 0(6); {dep} addi 6, 6, 256; "
             "bdnz loop",
}
CHASE = {"arm": "add r6, r6, r3;", "x86_64": "add rsi, rax;", "ppc32": "add 6, 6, 3;"}


def cycles_per_miss(arch: Arch, dep: str, core: ReferenceCore | None = None) -> float:
    """Modeled cycles per load of a cold line (the difference of 400 and 200 loads)."""
    out = []
    for n in (200, 400):
        run = load_snippet(arch, MISSES[arch.name].format(data=DATA, data_hi=DATA >> 16, n=n,
                                                          dep=dep), 1)
        run.machine.map(DATA, 0x20000)
        run.machine.timing = TimingModel(run.machine, core=core)
        run.machine.run(max_instructions=10_000_000)
        out.append(run.per_cpu()[0]["modeled_cycles"])
    return (out[1] - out[0]) / 200


@pytest.mark.parametrize("name", NAMES)
def test_independent_misses_overlap_and_a_pointer_chase_does_not(name: str) -> None:
    """Cold loads whose addresses do not depend on each other overlap up to the miss
    buffers (memory-level parallelism); a chase through the loaded values pays the whole
    memory latency each time. Negative control: one miss buffer serializes them too."""
    arch = ARCHES[name]
    memory = arch.core.memory.cycles
    buffers = arch.core.window.miss_buffers
    independent = cycles_per_miss(arch, "")
    assert independent <= 1.5 * memory / buffers
    assert cycles_per_miss(arch, CHASE[name]) >= memory - 1e-6
    single = dataclasses.replace(arch.core, window=dataclasses.replace(arch.core.window,
                                                                       miss_buffers=1))
    assert cycles_per_miss(arch, "", single) >= memory - 1e-6


#: The core's own parts whose modelling assumptions declare ranges (the caches', the
#: predictor's and the system costs' are drawn too: tests/test_verdict.py).
CORE_PARTS = ("window.", "latencies.", "tlbs.")
#: An instruction of each arch whose own cost is a drawn assumption, and its class: a
#: barrier, or on x86, whose barriers are all measured, rdtsc (costed, as the system
#: class's other unmeasured members are, as popf's measured 52: a drawn assumption).
DRAWN_COST = {"x86_64": ("rdtsc;", "system"), "arm": (FENCE["arm"], "fence"),
              "ppc32": ("eieio;", "sfence")}


def configured(cfg, key: str) -> float:
    """The value the C model was configured with for assumption ``key`` of :data:`CORE_PARTS`."""
    from arches.base import INSN_CLASSES
    part, *name, field = key.split(".")
    if part == "window":
        return getattr(cfg.core, field)
    if part == "latencies":
        return getattr(cfg.core.cls[INSN_CLASSES.index(name[0])], field)
    side = {"ITLB": 0, "DTLB": 1}[name[0]]
    ways = cfg.tlb.ways[side]
    return ways if field == "ways" else cfg.tlb.sets[side] * ways


@pytest.mark.parametrize("name", NAMES)
def test_drawn_samples_vary_each_core_assumption_within_its_range(name: str) -> None:
    """Each window, latency and TLB assumption is drawn within its range, the same for the
    same seed and differently over seeds, and the C model is configured with the drawn
    value; a class that is not pipelined keeps its unit busy for its drawn latency."""
    from lab.samples import draw_assumptions
    from sim.timing import config
    arch = ARCHES[name]
    declared = {k: r for k, (r, _) in arch.core.assumptions().items() if k.startswith(CORE_PARTS)}
    assert {k.split(".")[0] + "." for k in declared} >= {"window.", "latencies."}
    draws = [draw_assumptions(name, seed)[1] for seed in range(16)]
    assert draws[3] == draw_assumptions(name, 3)[1]
    for key, r in declared.items():
        seen = {d[key] for d in draws}
        assert all(v in r for v in seen) and len(seen) > 1, key
    core, values = draw_assumptions(name, 5)
    cfg, reference = config(arch, 1, core=core), config(arch, 1)
    for key in declared:
        assert configured(cfg, key) == values[key], key
    moved = [k for k in declared if configured(cfg, k) != configured(reference, k)]
    assert moved
    for lat in core.latencies:
        if lat.occupancy is None:
            assert lat.busy == lat.latency


@pytest.mark.parametrize("name", NAMES)
def test_a_drawn_instruction_cost_is_the_one_the_core_runs(name: str) -> None:
    """A loop of such instructions runs at one per drawn latency on the drawn core and at
    the table's on the reference core (the negative control): the drawn core runs."""
    from lab.samples import draw_assumptions
    arch = ARCHES[name]
    body, cls = DRAWN_COST[name]
    reference = table(arch, cls).latency
    key = f"latencies.{cls}.latency"
    core, values = next(d for d in (draw_assumptions(name, s) for s in range(64))
                        if abs(d[1][key] - reference) >= 5)
    assert loop_cycles(arch, body)[0] == pytest.approx(reference)
    assert loop_cycles(arch, body, core)[0] == pytest.approx(values[key])
