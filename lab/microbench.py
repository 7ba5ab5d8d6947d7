"""The timing model against the published microbenchmarks it is validated on.

Four experiments, each printed beside its published figures (docs/timing.md,
``kisim validate``); the first three run as their authors ran them:

* **immediate.txt** (Desnoyers, Immediate Values patch set, 2007-2008,
  3 GHz Pentium 4): a loop picking a pointer by a pseudo-random modulo (a
  divide), then a branch on an immediate value, on an L1-hot memory flag, or on a
  cache-cold line. The guest module ``lab/modules/immediate.c`` runs each
  variant between two calls of ``imb_mark()``; :func:`windows` differences
  the timing model's counters at those calls.
* **LTTng's marker microbenchmark** (Desnoyers, "performance measurements of
  the Linux Kernel Markers", 2006, 3 GHz Pentium 4): an empty loop, the same
  loop around one marker, dormant (immediate value or memory flag) and armed
  to an empty probe; each figure is a loop's cycles per iteration less the
  loop without what it adds (``lab/modules/markers_microbench.c``). Then its
  empty kprobe on a loop, per hit (``lab/modules/kprobe_loop.c``).
* **Seed 002** (Rostedt, "mcount tracing utility", LKML Jan 2008): hackbench
  with the -pg calls live (DYNAMIC_FTRACE=n) and nothing traced, then with
  every function traced, against the build without -pg. The guest's call
  density (mcount calls per 1,000 instructions) decides how far that
  experiment can be reproduced, so it is reported with the one published
  density found, and the overhead the model predicts at that density.
* **Documentation/trace/kprobes.rst** ("Probe Overhead", "Optimized Probe
  Overhead": hits per path in microseconds on real machines): each path the
  document times on a machine of the arch's ISA family (the arch's
  ``PUBLISHED`` hits), run as ``kisim kprobe`` runs it on kmalloc's entry,
  since the document names no probe point; and its "50-75% longer"
  kretprobe hit.

Every figure is modeled cycles of the arch's reference core; the published
ones are the P4's or the authors' machine's, so a ratio compares a model
with a measurement on a different core wherever the arch is not x86-64.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from arches import Arch, get_arch
from arches.base import KPROBE_PATHS, ReferenceCore
from kbuild import build
from kbuild.modules import load_module
from lab.kprobe import KprobeCost, ProbeRuns, path_letters
from lab.measure import Tally
from lab.verdict import FAILS, HOLDS, spread, verdict
from lab.mechanisms import MCOUNT_LIVE, run_once
from lab.published import (IMMEDIATE_PUBLISHED, KRETPROBE_OVER_KPROBE, MARKERS_KPROBE_ADDED,
                           MARKERS_PUBLISHED, PUBLISHED_CALLS_PER_KCYCLE, SEED_002)
from patcher.errors import PatchError
from probes.kprobes import arch_kprobes
from sim.guest import Guest
from sim.workloads import DEFAULT_SIZES

IMMEDIATE_C = Path(__file__).resolve().parent / "modules" / "immediate.c"
MARKERS_C = Path(__file__).resolve().parent / "modules" / "markers_microbench.c"
KPROBE_LOOP_C = Path(__file__).resolve().parent / "modules" / "kprobe_loop.c"

#: Iterations per variant of the immediate.txt loop: the published run was 100 x 100,000;
#: 2,000 make each figure stable to a cycle and the six loops run in about a second.
IMMEDIATE_ITERATIONS = 2000

#: The loops of lab/modules/immediate.c, in the order it runs them.
IMMEDIATE_VARIANTS = ("base", "imv", "l1", "memory", "flush_base", "flush")

#: Iterations of each loop of the marker microbenchmark (published: 10,000,000 dormant,
#: 100,000 armed); the loops are periodic, so 2,000 give each figure to a hundredth.
MARKERS_ITERATIONS = 2000

#: The builds of the marker microbenchmark: the enable check each compiles to
#: (linux/marker.h) -- "optimized", an immediate value, and "generic", a load of the
#: marker's state.
MARKERS_BUILDS = {"optimized": {"MARKERS": "y", "IMMEDIATE": "y"},
                  "generic": {"MARKERS": "y", "IMMEDIATE": "n", "JUMP_LABEL": "n"}}


class MicrobenchError(RuntimeError):
    """A microbenchmark run that cannot give its figures (wrong checksum, missing marks)."""


def windows(guest: Guest, mark: str) -> list[Tally]:
    """Run ``guest`` on its timing model; what it retired between consecutive entries of
    the function ``mark`` (instructions the model saw, events charged, stalls)."""
    machine, timing = guest.machine, guest.machine.timing
    if timing is None:
        raise MicrobenchError("windows are measured on the timing model (timing=True)")
    found = [start for start, _, name in guest.image.functions if name == mark]
    if not found:
        raise MicrobenchError(f"{guest.elf}: no function {mark!r} to mark windows with")
    marks: list[Tally] = []

    def snapshot(cpu) -> None:
        stats = timing.stats(cpu.index)
        marks.append(Tally(stats.counts["instructions"], Counter(cpu.events), stats))
    machine.watch(found[0], snapshot)
    if not guest.run().ok:
        raise MicrobenchError(f"{guest.workload}: the run did not complete")
    return [after - before for before, after in zip(marks, marks[1:])]


@dataclass(frozen=True)
class Figure:
    """One modeled figure beside the published one it is compared with.

    A figure that is a total over a baseline (``overhead``: instrumented /
    not, a ratio) is judged on its overhead, (model - 1) against
    (published - 1): a model with no overhead at all would otherwise pass as
    a ratio of totals near 1. An ``extrapolated`` figure (the model's cost
    carried to a published call density the guest does not have) is shown,
    never judged."""

    name: str
    published: float
    model: float
    unit: str
    source: str
    detail: str = ""
    overhead: bool = False
    extrapolated: bool = False

    @property
    def ratio(self) -> float:
        """What is judged: the overheads' ratio for an overhead figure, else the values'."""
        model, published = (self.model - 1, self.published - 1) if self.overhead \
            else (self.model, self.published)
        return model / published if published else float("inf")

    @property
    def within_2x(self) -> bool | None:
        """Within a factor of two of the published figure; None for an extrapolation."""
        return None if self.extrapolated else 0.5 <= self.ratio <= 2.0

    def to_json(self) -> dict:
        return {"figure": self.name, "published": self.published, "model": self.model,
                "unit": self.unit, "ratio": self.ratio, "within_2x": self.within_2x,
                "judged": JUDGED[self.overhead] if not self.extrapolated else
                "not judged: an extrapolation to the published call density",
                "overhead": self.overhead, "extrapolated": self.extrapolated,
                "source": self.source, "detail": self.detail}


#: What a figure's ratio compares, by whether it is an overhead.
JUDGED = {True: "the overhead: (model - 1) / (published - 1)", False: "model / published"}


def breakdown_line(delta: dict) -> str:
    """One line of a delta's breakdown: instructions, stall cycles by cause (overlap
    among them, negative), memory accesses, TLB misses and walk loads."""
    counts, stalls = delta["breakdown"], delta["stall_cycles"]
    causes = ", ".join(f"{k} {v:z.1f}" for k, v in stalls.items() if round(v, 1))
    tlb = counts.get("dtlb_misses", 0) + counts.get("itlb_misses", 0)
    return (f"{delta['instructions']:.2f} instructions; stall cycles: {causes or 'none'}; "
            f"{counts.get('memory', 0):z.2f} memory accesses, {tlb:z.2f} TLB misses, "
            f"{counts.get('walk_loads', 0):z.2f} walk loads")


def loop_delta(arch: Arch, loop: Tally, base: Tally, iterations: int) -> dict:
    """What ``loop`` retired and cost per iteration beyond ``base`` (each a window of
    ``iterations`` iterations): instructions, modeled cycles, counts and stall cycles."""
    d = loop - base
    return {"instructions": d.instructions / iterations,
            "modeled_cycles": (loop.cycles(arch) - base.cycles(arch)) / iterations,
            "breakdown": {k: n / iterations for k, n in sorted(d.stalls.counts.items()) if n},
            "stall_cycles": {k: c / iterations for k, c in sorted(d.stalls.cycles.items()) if c}}


def immediate_txt(arch_name: str, iterations: int = IMMEDIATE_ITERATIONS,
                  layout: int | None = None, core: ReferenceCore | None = None) -> dict:
    """Documentation/immediate.txt's loop on ``arch``'s reference core: cycles per
    iteration of each variant and the published deltas over the baseline (the image
    in the randomized text layout of seed ``layout``, :mod:`kbuild.layout`; on ``core``
    if given, the reference core with other values of its assumptions)."""
    arch = get_arch(arch_name)
    image = build(arch.name, overrides={"MARKERS": "y", "IMMEDIATE": "y"},
                  modules=[load_module(IMMEDIATE_C)], layout=layout)
    guest = Guest(image, cpus=1, workload="immediate:imb_run", size=iterations, timing=True,
                  core=core)
    loops = windows(guest, "imb_mark")
    if len(loops) != len(IMMEDIATE_VARIANTS):
        raise MicrobenchError(f"immediate: {len(loops)} loops measured, "
                              f"{len(IMMEDIATE_VARIANTS)} expected")
    per = {v: t for v, t in zip(IMMEDIATE_VARIANTS, loops)}
    cycles = {v: t.cycles(arch) / iterations for v, t in per.items()}

    def delta(v: str, base: str = "base") -> dict:
        return loop_delta(arch, per[v], per[base], iterations)
    src = "Documentation/immediate.txt (3 GHz Pentium 4)"
    pub = IMMEDIATE_PUBLISHED
    deltas = {"imv": delta("imv"), "l1": delta("l1"), "memory": delta("memory"),
              "flush": delta("flush", "flush_base")}
    base = per["base"]
    figures = [
        Figure("base loop, cycles per iteration", pub["base"], cycles["base"], "cycles", src,
               f"{base.instructions / iterations:.2f} instructions per iteration, one "
               "divide (the modulo by a run-time element count); the published loop's "
               "generator and array size are not known"),
        Figure("immediate value, added to the base loop", pub["imv"] - pub["base"],
               deltas["imv"]["modeled_cycles"], "cycles", src, breakdown_line(deltas["imv"])),
        Figure("L1-hot memory flag, added", pub["l1"] - pub["base"],
               deltas["l1"]["modeled_cycles"], "cycles", src, breakdown_line(deltas["l1"])),
        Figure("cache-cold load (random line of 8 MiB), added", pub["memory"] - pub["base"],
               deltas["memory"]["modeled_cycles"], "cycles", src,
               breakdown_line(deltas["memory"])),
        Figure("cache-cold flag (flushed line), added over flush alone",
               pub["memory"] - pub["base"], deltas["flush"]["modeled_cycles"], "cycles", src,
               "the published cold case is a random access; the flush is kisim's second "
               "way to a cold line; " + breakdown_line(deltas["flush"])),
    ]
    return {"experiment": "immediate.txt", "arch": arch.name, "layout": layout,
            "core": arch.core.name,
            "iterations": iterations, "cycles_per_iteration": cycles,
            "published_cycles_per_iteration": pub, "deltas": deltas,
            "figures": [f.to_json() for f in figures]}


def markers_microbench(arch_name: str, iterations: int = MARKERS_ITERATIONS,
                       layout: int | None = None, core: ReferenceCore | None = None) -> dict:
    """LTTng's marker microbenchmark on ``arch``'s reference core: the empty loop, the
    loop around one dormant marker in each build (immediate value, memory flag), and the
    immediate-value marker armed to an empty probe; each published figure beside the
    model's, computed as the authors computed theirs (a loop less the loop without what
    it adds). Then the write-up's empty kprobe on a loop, per hit, on each path a
    kprobe takes on ``arch`` (single-stepped, k, and boosted, b, where it is)."""
    arch = get_arch(arch_name)
    loops: dict[str, list[Tally]] = {}
    for name, config in MARKERS_BUILDS.items():
        image = build(arch.name, overrides=config, modules=[load_module(MARKERS_C)],
                      layout=layout)
        guest = Guest(image, cpus=1, workload="markers_microbench:mmb_run", size=iterations,
                      timing=True, core=core)
        found = windows(guest, "mmb_mark")
        if len(found) != 4:
            raise MicrobenchError(f"markers microbenchmark: {len(found)} windows measured, 4 "
                                  "expected (did the probe register and arm?)")
        loops[name] = [found[0], found[1], found[3]]       # empty, dormant, armed
    opt_empty, opt_dormant, opt_armed = loops["optimized"]
    gen_empty, gen_dormant, _ = loops["generic"]
    cycles = {"empty": opt_empty.cycles(arch) / iterations,
              "optimized": opt_dormant.cycles(arch) / iterations,
              "generic": gen_dormant.cycles(arch) / iterations,
              "armed": opt_armed.cycles(arch) / iterations}
    deltas = {"optimized": loop_delta(arch, opt_dormant, opt_empty, iterations),
              "generic": loop_delta(arch, gen_dormant, gen_empty, iterations),
              "armed": loop_delta(arch, opt_armed, opt_dormant, iterations)}
    pub = MARKERS_PUBLISHED
    src = "markers-microbench-0.2.txt (LTTng, 3 GHz Pentium 4)"
    figures = [
        Figure("empty loop, cycles per iteration", pub["empty"], cycles["empty"], "cycles",
               src, f"{opt_empty.instructions / iterations:.2f} instructions per iteration"),
        Figure("dormant marker, immediate value (optimized), added", pub["optimized"] -
               pub["empty"], deltas["optimized"]["modeled_cycles"], "cycles", src,
               breakdown_line(deltas["optimized"])),
        Figure("dormant marker, memory flag (generic), added", pub["generic"] - pub["empty"],
               deltas["generic"]["modeled_cycles"], "cycles", src,
               breakdown_line(deltas["generic"])),
        Figure("armed marker, empty probe, added over dormant", pub["armed"] -
               pub["optimized"], deltas["armed"]["modeled_cycles"], "cycles", src,
               breakdown_line(deltas["armed"])),
    ]
    probe = _probe_paths(arch, set(), layout, core, at="kprobe_loop:kpl_site",
                         workload="kprobe_loop:kpl_run", size=iterations,
                         modules=[load_module(KPROBE_LOOP_C)])
    figures += [Figure(f"empty {KPROBE_PATHS[path]} on a loop ({path}), added per hit",
                       MARKERS_KPROBE_ADDED, cost.modeled_cycles_per_hit, "cycles",
                       src + "; the write-up does not say whether its probe was boosted",
                       _hit_detail(arch, cost)) for path, cost in probe.items()]
    return {"experiment": "markers microbenchmark", "arch": arch.name, "layout": layout,
            "core": arch.core.name, "iterations": iterations,
            "cycles_per_iteration": cycles, "published_cycles_per_iteration": pub,
            "deltas": deltas, "kprobe_paths": _paths_json(probe),
            "figures": [f.to_json() for f in figures]}


def mcount_seed(arch_name: str, size: int | None = None, layout: int | None = None,
                core: ReferenceCore | None = None) -> dict:
    """Seed 002 on ``arch``: hackbench without -pg, with live mcount calls, and with every
    function traced; the guest's call density and the overhead it predicts (each build
    in the randomized text layout of seed ``layout``; on ``core`` if given)."""
    arch: Arch = get_arch(arch_name)
    size = DEFAULT_SIZES["hackbench"] if size is None else size
    kw = dict(workload="hackbench", cpus=1, size=size, timing=True, layout=layout, core=core)
    base = run_once(arch, {}, **kw)
    live = run_once(arch, MCOUNT_LIVE.config, mech=MCOUNT_LIVE, count=(MCOUNT_LIVE,), **kw)
    traced = run_once(arch, MCOUNT_LIVE.config, mech=MCOUNT_LIVE, armed=True, **kw)
    if not all(r.checksum_ok for r in (base, live, traced)):
        raise MicrobenchError("hackbench: a checksum is wrong")
    calls = live.passes[MCOUNT_LIVE.key]
    c_base, c_live, c_traced = (r.tally.cycles(arch) for r in (base, live, traced))
    per_call = (c_live - c_base) / calls
    per_traced = (c_traced - c_base) / traced.hits
    density = 1000 * calls / c_base                  # calls per 1,000 modeled cycles
    published_density, density_source = PUBLISHED_CALLS_PER_KCYCLE
    src = "seed 002: Rostedt, \"mcount tracing utility\", LKML Jan 2008 (hackbench 50)"
    figures = [
        Figure("hackbench, mcount compiled in / not", SEED_002["live"] / SEED_002["base"],
               c_live / c_base, "ratio", src, overhead=True),
        Figure("hackbench, every function traced / not compiled in",
               SEED_002["traced"] / SEED_002["base"], c_traced / c_base, "ratio", src,
               f"{traced.hits:,} functions recorded", overhead=True),
        Figure("calls per 1,000 cycles", published_density, density, "calls", density_source,
               "the guest's mcount calls over the build without -pg"),
        Figure("mcount overhead at the published density",
               SEED_002["live"] / SEED_002["base"],
               1 + per_call * published_density / 1000, "ratio", src,
               f"{per_call:.2f} modeled cycles per live mcount call x {published_density:.1f} "
               "calls per 1,000 cycles", overhead=True, extrapolated=True),
        Figure("every function traced, at the published density",
               SEED_002["traced"] / SEED_002["base"],
               1 + per_traced * published_density / 1000, "ratio", src,
               f"{per_traced:.2f} modeled cycles per traced call x {published_density:.1f} "
               "calls per 1,000 cycles", overhead=True, extrapolated=True),
    ]
    footprint = base.tally.stalls.counts.get("memory", 0)
    line = min(c.line for c in arch.core.caches)
    return {"experiment": "seed 002", "arch": arch.name, "layout": layout,
            "core": arch.core.name,
            "workload": "hackbench", "size": size,
            "modeled_cycles": {"base": c_base, "live": c_live, "traced": c_traced},
            "instructions": {"base": base.tally.instructions, "live": live.tally.instructions,
                             "traced": traced.tally.instructions},
            "mcount_calls": calls, "functions_recorded": traced.hits,
            "calls_per_1000_instructions": 1000 * calls / base.tally.instructions,
            "cycles_per_mcount_call": per_call, "cycles_per_traced_call": per_traced,
            "memory_accesses": footprint,
            "working_set_bytes_at_least": footprint * line,
            "figures": [f.to_json() for f in figures]}


def figures_over_samples(docs: list[dict]) -> dict:
    """One experiment on one arch over samples (layouts): the first sample's document
    with each figure's model as its median and range, the ratio judged on the median,
    in how many samples it was within 2x and the verdict on that count, as an
    ordering's (:func:`lab.verdict.verdict`: "within 2x" holds, does not hold, or
    is undecided by the model); the samples under ``per_sample``."""
    if not docs or any((d["experiment"], d["arch"]) != (docs[0]["experiment"], docs[0]["arch"])
                       for d in docs):
        raise ValueError("samples of one experiment on one arch")
    figures = []
    for i, first in enumerate(docs[0]["figures"]):
        values = [d["figures"][i]["model"] for d in docs]
        middle = Figure(first["figure"], first["published"], statistics.median(values),
                        first["unit"], first["source"], first["detail"], first["overhead"],
                        first["extrapolated"])
        within = None if middle.extrapolated else sum(d["figures"][i]["within_2x"] for d in docs)
        figures.append({**middle.to_json(), "model_spread": spread(values),
                        "within_2x_samples": within, "n": len(docs),
                        "verdict": None if within is None else verdict(within, len(docs))})
    return {**{k: v for k, v in docs[0].items()
               if k not in ("figures", "layout", "assumptions")},
            "layouts": [d["layout"] for d in docs],
            "assumptions": [d.get("assumptions") for d in docs], "n": len(docs),
            "figures": figures,
            "per_sample": docs}


#: Where the kprobes experiment probes: a function entry every workload pass calls, as
#: ``kisim kprobe`` does by default.
KPROBES_AT, KPROBES_WORKLOAD = "kmalloc", "kmalloc"

#: Why a published path is not compared, by its letter (arches.base.KPROBE_PATHS).
_BOOSTED_ENTRY = ("a kretprobe's entry takes the path of a plain kprobe, which is boosted here "
                  "(v5.10 boosts a probe without a post_handler): kisim's kretprobe is rb")
_NOT_RUN = {
    "r": _BOOSTED_ENTRY,
    "kr": _BOOSTED_ENTRY + ", and a kprobe beside it keeps it boosted",
    "b": "no kprobe is boosted here",
    "o": "no optimized kprobe at this site here",
    "ro": "an optimized kretprobe entry: not run by this experiment",
}


def _probe_paths(arch: Arch, wanted: set[str], layout: int | None, core: ReferenceCore | None,
                 at: str = KPROBES_AT, workload: str = KPROBES_WORKLOAD,
                 **measure) -> dict[str, KprobeCost]:
    """The kprobes.rst paths of ``wanted`` (and k, b) kisim runs at ``at`` under
    ``workload`` on ``arch`` (``measure``: more of :class:`ProbeRuns`' options), by
    letter (:func:`lab.kprobe.path_letters`), each against one run without a probe.

    Where the kretprobe is r, a kprobe beside it on the same entry is kr; o is
    the optimizer's detour where it takes the probe and no trap. The kretprobe,
    kr and o run only where ``wanted`` asks. All but o run with the
    debug.kprobes-optimization sysctl at 0 where the kernel has it: kprobes.rst
    measures k, b and r unoptimized."""
    runs = ProbeRuns(arch.name, at, workload=workload, layout=layout, core=core, **measure)

    def run(**kw) -> KprobeCost:
        cost = runs.measure(breakpoints=not kw.get("optimize"), **kw)
        if not cost.hits or not cost.checksum_ok:
            raise MicrobenchError(f"kprobes: the probe at {at} ({kw or 'plain'}) was hit "
                                  f"{cost.hits} times, checksum ok: {cost.checksum_ok}")
        if cost.nmissed or cost.kretprobe_nmissed:      # a hit without the whole path
            raise MicrobenchError(f"kprobes: the probe at {at} ({kw or 'plain'}) missed "
                                  f"{cost.nmissed} hits and {cost.kretprobe_nmissed or 0} "
                                  "returns: its per-hit cost would average them in")
        return cost
    single, plain = run(post=True), run()
    letter = path_letters(single.traps_per_hit, plain.traps_per_hit)
    paths = {letter["post"]: single}
    paths[letter["plain"]] = plain      # k itself where it is not boosted
    if wanted & {"r", "rb", "kr"}:
        paths[letter["ret"]] = run(ret=True)
    if letter["ret"] == "r" and "kr" in wanted:
        paths["kr"] = run(ret=True, with_kprobe=True)
    if "o" in wanted:
        try:
            opt = run(optimize=True)
        except PatchError:              # the optimizer refused the site
            opt = None
        if opt is not None and opt.kind == "optprobe (detour)" and opt.traps_per_hit == 0:
            paths[letter["optimize"]] = opt
    return paths


def _paths_json(paths: dict[str, KprobeCost]) -> dict:
    return {k: {"kind": c.kind, "hits": c.hits, "traps_per_hit": c.traps_per_hit,
                "instructions_per_hit": c.instructions_per_hit,
                "modeled_cycles_per_hit": c.modeled_cycles_per_hit,
                "per_hit_breakdown": c.breakdown} for k, c in paths.items()}


def _traps(cost: KprobeCost) -> str:
    return f"{cost.traps_per_hit:g} trap" + ("" if cost.traps_per_hit == 1 else "s")


def _hit_detail(arch: Arch, cost: KprobeCost) -> str:
    b = cost.breakdown
    return (f"{cost.modeled_cycles_per_hit:,.1f} modeled cycles = "
            f"{cost.modeled_cycles_per_hit / arch.clock_hz * 1e6:.3f} us at "
            f"{arch.clock_hz / 1e9:g} GHz, {_traps(cost)} per hit, path "
            f"{cost.kind!r} ({cost.hits:,} hits); "
            + breakdown_line({"instructions": cost.instructions_per_hit,
                              "breakdown": b.get("counts", {}),
                              "stall_cycles": b.get("stall_cycles", {})}))


def kprobes_rst(arch_name: str, layout: int | None = None,
                core: ReferenceCore | None = None) -> dict:
    """Documentation/trace/kprobes.rst's probe hits on ``arch``'s reference core: each
    path the document times on a machine of the arch's ISA family (the arch's
    ``PUBLISHED`` hits), run as kisim's kprobe at :data:`KPROBES_AT` with empty
    handlers, and the document's "50-75% longer" of a kretprobe hit."""
    arch = get_arch(arch_name)
    published = arch_kprobes(arch).PUBLISHED
    # the kretprobe ("r" asks for it, whichever path its entry takes) for the ratio below
    paths = _probe_paths(arch, {p.path for p in published} | {"r"}, layout, core)
    figures, not_compared = [], []
    for p in published:
        cost = paths.get(p.path)
        if cost is None:
            not_compared.append({"published": str(p), "why": _NOT_RUN.get(
                p.path, "not run by this experiment")})
            continue
        figures.append(Figure(f"{KPROBE_PATHS[p.path]} ({p.path}), {p.machine}",
                              p.microseconds,
                              cost.modeled_cycles_per_hit / arch.clock_hz * 1e6, "us",
                              p.source, _hit_detail(arch, cost)))
    ret, entry = (paths["rb"], paths["b"]) if "rb" in paths else (paths["r"], paths["k"])
    low, high = KRETPROBE_OVER_KPROBE
    figures.append(Figure(
        "kretprobe hit / kprobe hit", (low + high) / 2,
        ret.modeled_cycles_per_hit / entry.modeled_cycles_per_hit, "ratio",
        "Documentation/trace/kprobes.rst, 'Probe Overhead'",
        f"published {low - 1:.0%}-{high - 1:.0%} longer, judged on the middle; "
        f"kisim's kretprobe ({ret.modeled_cycles_per_hit:,.1f} cycles, {_traps(ret)}) "
        f"over a kprobe of its entry's path ({entry.modeled_cycles_per_hit:,.1f} cycles, "
        f"{_traps(entry)})", overhead=True))
    return {"experiment": "kprobes.rst", "arch": arch.name, "layout": layout,
            "core": arch.core.name, "workload": KPROBES_WORKLOAD, "at": KPROBES_AT,
            "paths": _paths_json(paths),
            "figures": [f.to_json() for f in figures], "not_compared": not_compared}


def within_2x_by_arch(docs: list[dict]) -> dict[str, dict[str, int]]:
    """How many judged figures of ``docs`` (experiments, each on one sample or over
    samples) are within 2x on each arch: yes, no, undecided by the model (over
    samples only); an extrapolation is not judged, so not counted."""
    out: dict[str, dict[str, int]] = {}
    for doc in docs:
        row = out.setdefault(doc["arch"], {"judged": 0, "yes": 0, "no": 0, "undecided": 0})
        for f in doc["figures"]:
            if f["within_2x"] is None:
                continue
            said = f["within_2x"] if "verdict" not in f else \
                {HOLDS: True, FAILS: False}.get(f["verdict"])
            row["judged"] += 1
            row["yes" if said else "no" if said is False else "undecided"] += 1
    return out


#: What ``kisim validate`` runs, by name.
EXPERIMENTS: dict[str, Callable[[str], dict]] = {"immediate": immediate_txt,
                                                  "markers": markers_microbench,
                                                  "mcount": mcount_seed,
                                                  "kprobes": kprobes_rst}


__all__ = ["EXPERIMENTS", "Figure", "IMMEDIATE_C", "JUDGED", "KPROBES_AT", "KPROBES_WORKLOAD",
           "KPROBE_LOOP_C", "MARKERS_C", "MicrobenchError", "breakdown_line",
           "figures_over_samples", "immediate_txt", "kprobes_rst", "loop_delta",
           "markers_microbench", "mcount_seed", "windows", "within_2x_by_arch"]
