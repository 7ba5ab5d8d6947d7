"""The mechanism comparison behind ``kisim compare``: same sites, same workload, every arch.

Method.  For each mechanism the guest is built with only that mechanism
compiled in (Kconfig overrides on top of the defconfig, function tracer
off) and run twice on the same workload: dormant, and armed at the same
two points (the ``kmalloc`` and ``sched_switch`` sites, which exist as
markers and as tracepoints) to the same empty probe,
``__mark_empty_function``. A build with nothing compiled in is the
baseline. Then, exactly:

* dormant cost per pass = (dormant run - baseline run) / passes, where
  passes counts every execution of any compiled-in site of that
  mechanism (code hooks on the sites' enable instructions, which cost the
  guest nothing);
* active cost per hit = (armed run - dormant run) / hits, where hits
  counts the probe's calls;
* per workload: totals and the percentage over the baseline.

Instruction counts are exact. Modeled cycles are recomputed from the
counts with a :class:`CostModel`: retired instructions, charged events
(trap, IPI, icache flush) and, with ``memory_pressure``, one cache-cold
load per pass of a memory-flag marker (Desnoyers' argument for immediate
values). Arming happens before the workload starts; its cost (the text
patching's IPIs and flushes) is reported apart from the workload's.

A mechanism is one :class:`Mechanism` entry in :data:`MECHANISMS`; a
mechanism that does not run in kisim yet (kprobes, optprobes,
kretprobes, the function tracer, ring buffers) has no entry and no row.
"""
from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from arches import Arch, get_arch
from kbuild import build
from patcher.instrument import Instrumentation, attach
from sim.guest import Guest

#: The instrumentation points every mechanism is armed at.
SITES = ("kmalloc", "sched_switch")

#: Every build: the defconfig without the function tracer (mcount has no row yet).
BASE_CONFIG = {"FUNCTION_TRACER": "n"}

#: Modeled cost of a cache-cold load (memory-pressure mode), from Desnoyers.
CACHE_MISS = (559.0, "Desnoyers, Immediate Values patchset, Documentation/immediate.txt: a "
                     "marker's flag load costs +559 cycles when cache-cold vs +7.84 for the "
                     "immediate value (Pentium 4, 3 GHz); the only published figure, used "
                     "for every arch")

#: The cost-table events a cost model may override.
EVENTS = ("insn", "trap", "ipi", "icache_flush", "cache_miss")


class CompareError(ValueError):
    """Bad comparison input: an unreadable or wrong cost model, an unknown mechanism."""


# -- cost model ---------------------------------------------------------------------

@dataclass(frozen=True)
class CostModel:
    """Modeled cycles per event, per arch; defaults from each arch's cost table."""

    overrides: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    source: str = "defaults"

    def cost(self, arch: Arch, event: str) -> float:
        for scope in (arch.name, "default"):
            if event in self.overrides.get(scope, {}):
                return float(self.overrides[scope][event])
        if event == "cache_miss":
            return CACHE_MISS[0]
        return arch.cost(event)

    def source_of(self, arch: Arch, event: str) -> str:
        for scope in (arch.name, "default"):
            if event in self.overrides.get(scope, {}):
                return f"{self.source} [{scope}]"
        if event == "cache_miss":
            return CACHE_MISS[1]
        return arch.costs[event].source

    def table(self, arch: Arch) -> dict[str, dict]:
        return {e: {"cycles": self.cost(arch, e), "source": self.source_of(arch, e)}
                for e in EVENTS if e == "cache_miss" or e in arch.costs}

    def cycles(self, arch: Arch, instructions: int, events: Mapping[str, int]) -> float:
        return (instructions * self.cost(arch, "insn")
                + sum(n * self.cost(arch, e) for e, n in events.items()))


def load_cost_model(path: str | Path, arch_names: tuple[str, ...]) -> CostModel:
    """A TOML cost model: ``[default]`` and ``[<arch>]`` tables of ``event = cycles``."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as err:
        raise CompareError(f"{path}: not valid TOML: {err}") from None
    for scope, table in data.items():
        if scope != "default" and scope not in arch_names:
            raise CompareError(f"{path}: [{scope}] is neither [default] nor an arch "
                               f"({', '.join(arch_names)})")
        if not isinstance(table, dict):
            raise CompareError(f"{path}: {scope} must be a table of event = cycles")
        for event, value in table.items():
            if event not in EVENTS:
                raise CompareError(f"{path}: [{scope}] {event}: unknown event "
                                   f"(known: {', '.join(EVENTS)})")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise CompareError(f"{path}: [{scope}] {event} = {value!r}: "
                                   "expected a number of cycles >= 0")
    return CostModel(data, source=str(path))


# -- mechanisms -----------------------------------------------------------------------

def _marker_sites(inst: Instrumentation) -> list[int]:
    return [a for m in inst.tables.markers for a in m.sites]


def _tracepoint_sites(inst: Instrumentation) -> list[int]:
    return [a for tp in inst.tables.tracepoints for a in tp.sites]


def _arm_markers(inst: Instrumentation, empty: int) -> None:
    for name in SITES:
        fmt = inst.tables.markers_named(name)[0].format
        inst.markers.marker_probe_register(name, fmt, empty)
        inst.markers.marker_arm(name)


def _arm_tracepoints(inst: Instrumentation, empty: int) -> None:
    for name in SITES:
        inst.tracepoints.register_trace(name, empty)


@dataclass(frozen=True)
class Mechanism:
    """One row of the comparison: how to build it, count its passes, arm it."""

    key: str
    label: str
    config: Mapping[str, str]
    #: Enable-check addresses of every compiled-in site (empty: counted elsewhere).
    sites: Callable[[Instrumentation], list[int]]
    #: Connect the empty probe at :data:`SITES` and enable them.
    arm: Callable[[Instrumentation, int], None]
    #: Passes are counted on this mechanism's build (same sites, same passes on one CPU).
    passes_from: str | None = None
    #: The dormant check loads a flag from memory (charged a miss under memory pressure).
    flag_load: bool = False
    published: str = ""


NONE = {"MARKERS": "n", "TRACEPOINTS": "n"}
MARKER_ONLY = {"MARKERS": "y", "KMEMTRACE": "y", "TRACEPOINTS": "n", "JUMP_LABEL": "n"}

MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism("marker_flag", "marker, memory flag", {**MARKER_ONLY, "IMMEDIATE": "n"},
              _marker_sites, _arm_markers, passes_from="marker_imv", flag_load=True,
              published="L1-hit flag load +12.14 cycles, cache-cold +559 (immediate.txt)"),
    Mechanism("marker_imv", "marker, immediate value", {**MARKER_ONLY, "IMMEDIATE": "y"},
              _marker_sites, _arm_markers,
              published="+7.84 cycles per site (immediate.txt); enabled with an empty "
                        "probe 48.11 cycles (LTTng microbenchmark, P4 3 GHz)"),
    Mechanism("tracepoint_jump_label", "tracepoint, jump label",
              {"MARKERS": "n", "TRACEPOINTS": "y", "JUMP_LABEL": "y", "IMMEDIATE": "n"},
              _tracepoint_sites, _arm_tracepoints,
              published="static key vs flag test: cycles -2.8 % (static-keys.txt)"),
)


def mechanism(key: str) -> Mechanism:
    for m in MECHANISMS:
        if m.key == key:
            return m
    raise CompareError(f"unknown mechanism {key!r} (known: {', '.join(m.key for m in MECHANISMS)})")


# -- runs -------------------------------------------------------------------------------

@dataclass
class Run:
    """One workload run: exact counts, split into arming and workload."""

    instructions: int
    events: Counter[str]
    arm_events: Counter[str]
    passes: int | None
    hits: int
    checksum_ok: bool


def _counter(addresses: list[int], guest: Guest) -> Callable[[], int]:
    count = [0]

    def bump(_cpu) -> None:
        count[0] += 1
    for addr in sorted(set(addresses)):
        guest.machine.watch(addr, bump)
    return lambda: count[0]


def run_once(arch: Arch, config: Mapping[str, str], *, workload: str, cpus: int,
             size: int | None, mech: Mechanism | None = None, armed: bool = False,
             count_passes: bool = False) -> Run:
    """Build with ``config``, optionally arm ``mech``, run the workload, return the counts."""
    image = build(arch.name, overrides={**BASE_CONFIG, **config})
    guest = Guest(image, cpus=cpus, workload=workload, size=size)
    passes: Callable[[], int | None] = lambda: None
    hits: Callable[[], int] = lambda: 0
    if mech is not None:
        inst = attach(guest)
        empty = inst.tables.image.symbols["__mark_empty_function"]
        if count_passes:
            passes = _counter(mech.sites(inst), guest)
        if armed:
            mech.arm(inst, empty)
            hits = _counter([empty], guest)
    arm_events = Counter({e: n for c in guest.machine.cpus for e, n in c.events.items()})
    arm_instructions = guest.machine.total_instructions
    result = guest.run()
    events: Counter[str] = Counter()
    for c in guest.machine.cpus:
        events.update(c.events)
    events.subtract(arm_events)
    return Run(result.instructions - arm_instructions, +events, arm_events, passes(), hits(),
               result.ok)


@dataclass
class Row:
    """One mechanism on one arch."""

    key: str
    label: str
    passes: int
    hits: int
    dormant: dict
    active: dict
    arming_cycles: float
    published: str

    def to_json(self) -> dict:
        return {"mechanism": self.key, "label": self.label, "passes": self.passes,
                "hits": self.hits, "dormant": self.dormant, "active": self.active,
                "arming_modeled_cycles": self.arming_cycles, "published": self.published}


def _cycles(model: CostModel, arch: Arch, run: Run, passes: int, flag_load: bool,
            memory_pressure: bool) -> float:
    events = Counter(run.events)
    if memory_pressure and flag_load:
        events["cache_miss"] += passes
    return model.cycles(arch, run.instructions, events)


def compare_arch(arch_name: str, *, workload: str = "kmalloc", cpus: int = 1,
                 size: int | None = None, model: CostModel | None = None,
                 memory_pressure: bool = False,
                 advance: Callable[..., None] = lambda *a, **k: None) -> dict:
    """Every mechanism of :data:`MECHANISMS` on one arch: the table as a JSON-ready dict."""
    arch = get_arch(arch_name)
    model = model or CostModel()
    kw = dict(workload=workload, cpus=cpus, size=size)
    base = run_once(arch, NONE, **kw)
    advance(description=f"{arch.name}: baseline")
    base_cycles = model.cycles(arch, base.instructions, base.events)
    dormant_runs: dict[str, Run] = {}
    for m in MECHANISMS:            # counted runs first: flag markers reuse imv's passes
        if m.passes_from is None:
            dormant_runs[m.key] = run_once(arch, m.config, mech=m, count_passes=True, **kw)
            advance(description=f"{arch.name}: {m.label}, dormant")
    rows = []
    checks = [base.checksum_ok]
    for m in MECHANISMS:
        if m.key not in dormant_runs:
            dormant_runs[m.key] = run_once(arch, m.config, mech=m, **kw)
            advance(description=f"{arch.name}: {m.label}, dormant")
        dormant = dormant_runs[m.key]
        passes = dormant_runs[m.passes_from or m.key].passes or 0
        active = run_once(arch, m.config, mech=m, armed=True, **kw)
        advance(description=f"{arch.name}: {m.label}, armed")
        checks += [dormant.checksum_ok, active.checksum_ok]
        d_cyc = _cycles(model, arch, dormant, passes, m.flag_load, memory_pressure)
        a_cyc = _cycles(model, arch, active, passes, m.flag_load, memory_pressure)
        rows.append(Row(
            m.key, m.label, passes, active.hits,
            dormant={"instructions": dormant.instructions, "modeled_cycles": d_cyc,
                     "per_pass_instructions": _div(dormant.instructions - base.instructions,
                                                   passes),
                     "per_pass_modeled_cycles": _div(d_cyc - base_cycles, passes),
                     "percent_over_uninstrumented": _pct(d_cyc, base_cycles)},
            active={"instructions": active.instructions, "modeled_cycles": a_cyc,
                    "per_hit_instructions": _div(active.instructions - dormant.instructions,
                                                 active.hits),
                    "per_hit_modeled_cycles": _div(a_cyc - d_cyc, active.hits),
                    "percent_over_uninstrumented": _pct(a_cyc, base_cycles)},
            arming_cycles=model.cycles(arch, 0, active.arm_events),
            published=m.published))
    doc = {"arch": arch.name, "workload": workload, "cpus": cpus, "sites": list(SITES),
           "exact": cpus == 1,      # with more CPUs, runs also differ in interleaving
           "memory_pressure": memory_pressure, "checksums_ok": all(checks),
           "uninstrumented": {"instructions": base.instructions, "modeled_cycles": base_cycles},
           "rows": [r.to_json() for r in rows], "cost_model": model.table(arch)}
    doc["orderings"] = orderings(doc)
    return doc


def _div(a: float, b: int) -> float | None:
    return a / b if b else None


def _pct(x: float, base: float) -> float:
    return 100.0 * (x - base) / base if base else 0.0


# -- published orderings, checked against the modeled numbers ---------------------------

def _row(doc: dict, key: str) -> dict | None:
    return next((r for r in doc["rows"] if r["mechanism"] == key), None)


def _verdict(a: float | None, b: float | None, a_name: str, b_name: str, what: str) -> str:
    if a is None or b is None:
        return "not measured"
    if abs(a - b) < 1e-9:
        return f"does not hold: {a_name} and {b_name} cost the same {a:.2f} modeled {what}"
    verb = "holds" if a < b else "does not hold"
    return f"{verb}: {a_name} {a:.2f} vs {b_name} {b:.2f} modeled {what}"


def orderings(doc: dict) -> list[dict]:
    """Each published ordering (RESEARCH §1.5 sources), and whether the modeled numbers obey it."""
    flag, imv, tp = (_row(doc, k) for k in ("marker_flag", "marker_imv",
                                            "tracepoint_jump_label"))
    out = []
    if flag and imv:
        a = imv["dormant"]["per_pass_modeled_cycles"]
        b = flag["dormant"]["per_pass_modeled_cycles"]
        out.append({"claim": "a dormant immediate-value marker is cheaper than a memory-flag "
                             "marker (Documentation/immediate.txt: +7.84 vs +12.14 L1 / +559 "
                             "cold, cycles)",
                    "holds": a is not None and b is not None and a < b,
                    "text": _verdict(a, b, "immediate", "memory flag", "cycles per pass")})
    if tp and flag:
        a = tp["dormant"]["per_pass_modeled_cycles"]
        b = flag["dormant"]["per_pass_modeled_cycles"]
        out.append({"claim": "a dormant jump-label site is cheaper than a flag test "
                             "(Documentation/static-keys.txt: cycles -2.8 %)",
                    "holds": a is not None and b is not None and a < b,
                    "text": _verdict(a, b, "jump label", "flag test", "cycles per pass")})
    for r in (imv, flag, tp):
        if r is None:
            continue
        d, act = r["dormant"]["per_pass_modeled_cycles"], r["active"]["per_hit_modeled_cycles"]
        armed = d + act if d is not None and act is not None else None
        out.append({"claim": f"{r['label']}: a site armed to an empty probe costs more than "
                             "the same site dormant (LTTng: 48.11 cycles enabled vs "
                             "1.17-2.50 disabled, P4 3 GHz)",
                    "holds": armed is not None and armed > d,
                    "text": _verdict(d, armed, "dormant", "armed (dormant + call)",
                                     "cycles per pass")
                    + (f", x{armed / d:.1f}" if armed and d and d > 0 else "")})
    out.append({"claim": "kprobe > boosted > optprobe, and kretprobe 50-75 % over kprobe "
                         "(Documentation/kprobes.txt)",
                "holds": None,
                "text": "not computed: kprobes, optprobes and kretprobes do not run in kisim "
                        "yet (issue 10)"})
    return out


__all__ = ["CACHE_MISS", "CompareError", "CostModel", "MECHANISMS", "Mechanism", "SITES",
           "compare_arch", "load_cost_model", "mechanism", "orderings", "run_once"]
