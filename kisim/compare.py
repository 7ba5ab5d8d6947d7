"""The mechanism comparison behind ``kisim compare``: same points, same workload, every arch.

Method.  For each mechanism the guest is built with only that mechanism
compiled in (Kconfig overrides on top of the defconfig, function tracer
off unless the row is ftrace's) and run twice on the same workload:
dormant, and armed at the same two points, the ``kmalloc`` and
``sched_switch`` sites (markers and tracepoints, to the empty probe
``__mark_empty_function`` or to the ring-buffer recorder) or the
functions holding them, ``kmalloc()`` and ``schedule()`` (the function
tracer; kprobe, boosted kprobe, optprobe and kretprobe with empty guest
handlers; a line-number probe on a line of each). A build with nothing
compiled in is the baseline, and the dormant run of every mechanism that
compiles nothing in (kprobes, line probes). Then, exactly:

* dormant cost per pass = (dormant run - baseline run) / passes, where
  passes counts every execution of the mechanism's sites (code hooks on
  the enable instructions, mcount sites or probed addresses, which cost
  the guest nothing);
* active cost per hit = (armed run - dormant run) / hits, where hits
  counts the probe's calls (or recorded events, traced calls, kprobe hits);
* per workload: totals and the percentage over the baseline.

Instruction counts are exact. Modeled cycles are recomputed from the
counts with a :class:`CostModel`: retired instructions, charged events
(trap, IPI, icache flush, clock read) and, with ``memory_pressure``, one
cache-cold load per pass of a memory-flag marker (Desnoyers' argument for
immediate values). Arming happens before the workload starts; its cost
(the text patching's IPIs and flushes) is reported apart from the
workload's. A mechanism the arch does not have (optprobes on 32-bit
PowerPC) keeps its row, with the kernel's refusal instead of figures.
"""
from __future__ import annotations

import tomllib
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from arches import Arch, get_arch
from kbuild import build
from kbuild.image import KERNEL
from patcher.errors import PatchError
from patcher.instrument import Instrumentation, attach
from probes.dwarf import DebugInfo
from probes.function_tracer import FunctionTracer
from probes.kprobes import Kprobe, Kprobes, Kretprobe
from probes.lineprobe import LineProbe
from sim.guest import Guest
from tracing.session import TraceOptions, TraceSession

#: The instrumentation points every mechanism is armed at.
SITES = ("kmalloc", "sched_switch")

#: Every build: the defconfig without the function tracer (only the mcount row has it).
BASE_CONFIG = {"FUNCTION_TRACER": "n"}

#: Modeled cost of a cache-cold load (memory-pressure mode), from Desnoyers.
CACHE_MISS = (559.0, "Desnoyers, Immediate Values patchset, Documentation/immediate.txt: a "
                     "marker's flag load costs +559 cycles when cache-cold vs +7.84 for the "
                     "immediate value (Pentium 4, 3 GHz); the only published figure, used "
                     "for every arch")

#: The cost-table events a cost model may override.
EVENTS = ("insn", "trap", "ipi", "icache_flush", "clock_read", "cache_miss")


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

class Target:
    """One guest being set up for one run; each subsystem is attached on first use."""

    def __init__(self, guest: Guest) -> None:
        self.guest = guest
        self.closing = ExitStack()
        self._inst: Instrumentation | None = None
        self._kprobes: Kprobes | None = None
        self.tracer: FunctionTracer | None = None

    @property
    def inst(self) -> Instrumentation:
        if self._inst is None:
            self._inst = attach(self.guest)
        return self._inst

    @property
    def kprobes(self) -> Kprobes:
        if self._kprobes is None:
            self._kprobes = Kprobes(self.guest, text=self.inst.text, tables=self.inst.tables)
        return self._kprobes

    @property
    def empty(self) -> int:
        """The empty probe every marker and tracepoint row is armed to."""
        return self.guest.image.symbols["__mark_empty_function"]

    def counter(self, addresses: list[int]) -> Callable[[], int]:
        """Executions of ``addresses`` (code hooks: they cost the guest nothing)."""
        count = [0]

        def bump(_cpu) -> None:
            count[0] += 1
        for addr in sorted(set(addresses)):
            self.guest.machine.watch(addr, bump)
        return lambda: count[0]


@dataclass
class Armed:
    """An armed mechanism: how many times its probe ran, and how the workload runs."""

    hits: Callable[[], int]
    #: Runs the workload to the end; True when the checksum is right.
    run: Callable[[], bool] | None = None
    detail: str = ""
    #: What the probe saw, said after the run (e.g. the line probe's fetches).
    outcome: Callable[[], str] | None = None


class Unavailable(Exception):
    """The mechanism exists in Linux but not on this arch (the kernel's own refusal)."""


def _marker_sites(t: Target) -> list[int]:
    return [a for m in t.inst.tables.markers for a in m.sites]


def _tracepoint_sites(t: Target) -> list[int]:
    return [a for tp in t.inst.tables.tracepoints for a in tp.sites]


def _arm_markers(t: Target) -> Armed:
    for name in SITES:
        fmt = t.inst.tables.markers_named(name)[0].format
        t.inst.markers.marker_probe_register(name, fmt, t.empty)
        t.inst.markers.marker_arm(name)
    return Armed(t.counter([t.empty]))


def _arm_tracepoints(t: Target) -> Armed:
    for name in SITES:
        t.inst.tracepoints.register_trace(name, t.empty)
    return Armed(t.counter([t.empty]))


class _NullSink:
    """A trace consumer that keeps nothing: the cost measured is the guest's recording."""

    def write_packet(self, packet, events) -> int:
        return sum(1 for _ in events)


def _recording(session: TraceSession, detail: str) -> Armed:
    """A run through ``session``, its hits the events recorded (none may be lost)."""
    def run() -> bool:
        result = session.run(_NullSink())
        if result.total.discarded or result.total.overwritten:
            raise CompareError("the recording lost events: the per-hit figure would be wrong")
        return result.checksum_ok
    return Armed(lambda: session.ring.totals().recorded, run, detail=detail)


def _arm_recorder(t: Target) -> Armed:
    return _recording(TraceSession(t.guest, TraceOptions(probes=RECORDED)),
                      f"events {', '.join(RECORDED)} into the per-CPU ring buffers")


def _mcount_sites(t: Target) -> list[int]:
    return [site.address for site in t.inst.tables.mcount]


def _ftrace_boot(t: Target) -> None:
    t.tracer = FunctionTracer(t.guest, t.inst.tables)     # the Guest boot made every site a nop


def _arm_function_tracer(t: Target) -> Armed:
    t.tracer.ftrace.write_filter(" ".join(KPROBE_POINTS))
    session = TraceSession(t.guest, TraceOptions(probes=t.tracer.event_names), inst=t.inst)
    t.tracer.start()
    return _recording(session, f"function tracer into the ring buffers, set_ftrace_filter "
                               f"{' '.join(KPROBE_POINTS)}")


def _kprobe_points(t: Target) -> list[int]:
    return [t.guest.image.symbols[name] for name in KPROBE_POINTS]


def _kprobe_armer(post: bool = False, optimize: bool = False) -> Callable[[Target], Armed]:
    def arm(t: Target) -> Armed:
        kps = [t.kprobes.register_kprobe(Kprobe(
            symbol_name=name, pre_handler="kprobe_empty_pre_handler",
            post_handler="kprobe_empty_post_handler" if post else None))
            for name in KPROBE_POINTS]
        if optimize:
            try:
                for kp in kps:
                    t.kprobes.optimize_kprobe(kp)
            except PatchError as err:
                raise Unavailable(err.message) from None
        return Armed(lambda: sum(kp.hits for kp in kps),
                     outcome=lambda: ", ".join(sorted({"optprobe (detour)" if kp.optimized
                                                       else t.kprobes.kind(kp)
                                                       for kp in kps})))
    return arm


def _arm_kretprobes(t: Target) -> Armed:
    rps = [t.kprobes.register_kretprobe(Kretprobe(symbol_name=name,
                                                  handler="kretprobe_empty_handler"))
           for name in KPROBE_POINTS]
    return Armed(lambda: sum(rp.kp.hits for rp in rps),
                 outcome=lambda: "entry probe " + ", ".join(sorted({t.kprobes.kind(rp.kp)
                                                                    for rp in rps})))


def _line_numbers() -> list[tuple[str, int, tuple[str, ...]]]:
    """Each of :data:`LINES` as (file, line number, variables), from the kernel source."""
    out = []
    for file, function, text, fetch in LINES:
        lines = (KERNEL.parent / file).read_text().splitlines()
        start = next(n for n, line in enumerate(lines) if function in line)
        out.append((file, next(n + 1 for n in range(start, len(lines)) if text in lines[n]),
                    fetch))
    return out


def _line_probes(t: Target) -> list[LineProbe]:
    debug = t.closing.enter_context(DebugInfo(t.guest.elf, t.guest.arch))
    return [LineProbe(t.kprobes, debug, file, line, fetch)
            for file, line, fetch in _line_numbers()]


def _line_sites(t: Target) -> list[int]:
    return [la.address for p in _line_probes(t) for la in p.addresses]


def _arm_line_probes(t: Target) -> Armed:
    probes = _line_probes(t)
    for p in probes:
        p.arm()
    where = ", ".join(f"{p.addresses[0].file}:{p.addresses[0].line}" for p in probes)

    def fetched() -> str:
        got = sum(len(h.values) for p in probes for h in p.hits)
        gone = sum(len(h.unavailable) for p in probes for h in p.hits)
        return f"{got} values fetched, {gone} optimized out"
    return Armed(lambda: sum(p.kprobe_hits for p in probes), detail=f"kprobes at {where}",
                 outcome=fetched)


@dataclass(frozen=True)
class Mechanism:
    """One row of the comparison: how to build it, count its passes, arm it."""

    key: str
    label: str
    config: Mapping[str, str]
    #: Addresses whose executions are the passes of a dormant site.
    sites: Callable[[Target], list[int]]
    #: Connect the probe at the instrumentation points and enable it.
    arm: Callable[[Target], Armed]
    #: Passes are counted on this mechanism's dormant run (same sites, same passes on one CPU).
    passes_from: str | None = None
    #: The dormant run is this mechanism's (same build, nothing more compiled in).
    dormant_from: str | None = None
    #: False: nothing is compiled in, the dormant run is the uninstrumented one.
    compiled_in: bool = True
    #: Set-up both runs need before the workload (e.g. ftrace's boot conversion).
    boot: Callable[[Target], None] | None = None
    #: The dormant check loads a flag from memory (charged a miss under memory pressure).
    flag_load: bool = False
    published: str = ""


NONE = {"MARKERS": "n", "TRACEPOINTS": "n"}
MARKER_ONLY = {"MARKERS": "y", "KMEMTRACE": "y", "TRACEPOINTS": "n", "JUMP_LABEL": "n"}
TRACEPOINT_ONLY = {"MARKERS": "n", "TRACEPOINTS": "y", "JUMP_LABEL": "y", "IMMEDIATE": "n"}

#: Functions holding the kmalloc and sched_switch sites: the kprobe family and the
#: function tracer instrument their entries (one pass each per site pass on one CPU).
KPROBE_POINTS = ("kmalloc", "schedule")
#: Ring-buffer events of the same two tracepoints (tracing/events.py).
RECORDED = ("kmem_kmalloc", "sched_switch")
#: Line probes: a line next to each site (file, its function's header, the line's text),
#: and the variables each hit fetches.
LINES = (("kernel/slab.c", "void *kmalloc(", "if (size > KMALLOC_MAX_SIZE)", ("size", "flags")),
         ("kernel/sched.c", "void schedule(void)", "prev_task[cpu] = prev;", ("prev", "next")))

_KPROBES_TXT = "Documentation/kprobes.txt"
MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism("marker_flag", "marker, memory flag", {**MARKER_ONLY, "IMMEDIATE": "n"},
              _marker_sites, _arm_markers, passes_from="marker_imv", flag_load=True,
              published="L1-hit flag load +12.14 cycles, cache-cold +559 (immediate.txt)"),
    Mechanism("marker_imv", "marker, immediate value", {**MARKER_ONLY, "IMMEDIATE": "y"},
              _marker_sites, _arm_markers,
              published="+7.84 cycles per site (immediate.txt); enabled with an empty "
                        "probe 48.11 cycles (LTTng microbenchmark, P4 3 GHz)"),
    Mechanism("tracepoint_jump_label", "tracepoint, jump label", TRACEPOINT_ONLY,
              _tracepoint_sites, _arm_tracepoints,
              published="static key vs flag test: cycles -2.8 % (static-keys.txt)"),
    Mechanism("ring_buffer", "tracepoint -> ring buffer", TRACEPOINT_ONLY,
              _tracepoint_sites, _arm_recorder, dormant_from="tracepoint_jump_label",
              passes_from="tracepoint_jump_label",
              published="LTTng: enabled marker with an empty probe 48.11 cycles; recording "
                        "adds the event write (no per-event figure published)"),
    Mechanism("mcount", "mcount nop / function tracer",
              {**NONE, "FUNCTION_TRACER": "y", "DYNAMIC_FTRACE": "y"},
              _mcount_sites, _arm_function_tracer, boot=_ftrace_boot,
              published="mcount RFC, hackbench 50: +14 % with live mcount calls, "
                        "x51 tracing every function (real seconds)"),
    Mechanism("kprobe", "kprobe (pre+post)", NONE, _kprobe_points,
              _kprobe_armer(post=True), compiled_in=False,
              published=f"0.49 us, Opteron 2 GHz ({_KPROBES_TXT})"),
    Mechanism("kprobe_boosted", "kprobe, boosted (pre only)", NONE, _kprobe_points,
              _kprobe_armer(), compiled_in=False, passes_from="kprobe",
              published=f"b 0.43 us vs k 0.99 us, Xeon E5410 2.33 GHz ({_KPROBES_TXT})"),
    Mechanism("optprobe", "optprobe", NONE, _kprobe_points,
              _kprobe_armer(optimize=True), compiled_in=False, passes_from="kprobe",
              published=f"0.06 us, Xeon E5410 2.33 GHz ({_KPROBES_TXT})"),
    Mechanism("kretprobe", "kretprobe", NONE, _kprobe_points, _arm_kretprobes,
              compiled_in=False, passes_from="kprobe",
              published=f"r 0.80 vs k 0.49 us, Opteron 2 GHz: 50-75 % slower ({_KPROBES_TXT})"),
    Mechanism("line_probe", "line-number probe", NONE, _line_sites, _arm_line_probes,
              compiled_in=False,
              published="dprobe seed: nothing compiled in; a hit is a kprobe's (LKML 2008)"),
)


def mechanism(key: str) -> Mechanism:
    for m in MECHANISMS:
        if m.key == key:
            return m
    raise CompareError(f"unknown mechanism {key!r} (known: {', '.join(m.key for m in MECHANISMS)})")


def select(keys: Sequence[str] | None = None) -> tuple[Mechanism, ...]:
    """The mechanisms named (all by default) and those their figures come from, in order."""
    if keys is None:
        return MECHANISMS
    want: set[str] = set()
    stack = [mechanism(k).key for k in keys]
    while stack:
        m = mechanism(stack.pop())
        if m.key not in want:
            want.add(m.key)
            stack += [k for k in (m.passes_from, m.dormant_from) if k]
    return tuple(m for m in MECHANISMS if m.key in want)


def runs_per_arch(mechs: tuple[Mechanism, ...] = MECHANISMS) -> int:
    """Workload runs :func:`compare_arch` makes per arch (for progress)."""
    return 1 + sum(1 + (m.compiled_in and m.dormant_from is None) for m in mechs)


# -- runs -------------------------------------------------------------------------------

@dataclass
class Run:
    """One workload run: exact counts, split into arming and workload."""

    instructions: int
    events: Counter[str]
    arm_events: Counter[str]
    passes: dict[str, int]
    hits: int
    checksum_ok: bool
    detail: str = ""


def run_once(arch: Arch, config: Mapping[str, str], *, workload: str, cpus: int,
             size: int | None, mech: Mechanism | None = None, armed: bool = False,
             count: tuple[Mechanism, ...] = (), modules: Sequence = (),
             expect: int | None = None) -> Run:
    """Build with ``config`` (and the guest ``modules``), set up ``mech`` (armed
    or not), run the workload.

    The passes of each mechanism in ``count`` are counted on the way.
    """
    image = build(arch.name, overrides={**BASE_CONFIG, **config}, modules=modules)
    guest = Guest(image, cpus=cpus, workload=workload, size=size, expect=expect)
    target = Target(guest)
    with target.closing:
        if mech is not None and mech.boot is not None:
            mech.boot(target)
        passes = {m.key: target.counter(m.sites(target)) for m in count}
        armed_ = mech.arm(target) if mech is not None and armed else Armed(lambda: 0)
        arm_events = Counter({e: n for c in guest.machine.cpus for e, n in c.events.items()})
        arm_instructions = guest.machine.total_instructions
        ok = armed_.run() if armed_.run is not None else guest.run().ok
        events: Counter[str] = Counter()
        for c in guest.machine.cpus:
            events.update(c.events)
        events.subtract(arm_events)
        detail = "; ".join(x for x in (armed_.detail, armed_.outcome and armed_.outcome())
                           if x)
        return Run(guest.machine.total_instructions - arm_instructions, +events, arm_events,
                   {k: f() for k, f in passes.items()}, armed_.hits(), ok, detail)


@dataclass
class Row:
    """One mechanism on one arch."""

    key: str
    label: str
    passes: int
    hits: int
    dormant: dict
    active: dict | None
    arming_cycles: float | None
    published: str
    detail: str = ""
    unavailable: str | None = None

    def to_json(self) -> dict:
        return {"mechanism": self.key, "label": self.label, "passes": self.passes,
                "hits": self.hits, "dormant": self.dormant, "active": self.active,
                "arming_modeled_cycles": self.arming_cycles, "published": self.published,
                "detail": self.detail, "unavailable": self.unavailable}


def _cycles(model: CostModel, arch: Arch, run: Run, passes: int, flag_load: bool,
            memory_pressure: bool) -> float:
    events = Counter(run.events)
    if memory_pressure and flag_load:
        events["cache_miss"] += passes
    return model.cycles(arch, run.instructions, events)


def compare_arch(arch_name: str, *, workload: str = "kmalloc", cpus: int = 1,
                 size: int | None = None, model: CostModel | None = None,
                 memory_pressure: bool = False, mechanisms: Sequence[str] | None = None,
                 advance: Callable[..., None] = lambda *a, **k: None,
                 modules: Sequence = (), expect: int | None = None) -> dict:
    """The mechanisms of :data:`MECHANISMS` (or those :func:`select` picks) on one arch:
    the table as a JSON-ready dict."""
    arch = get_arch(arch_name)
    mechs = select(mechanisms)
    model = model or CostModel()
    kw = dict(workload=workload, cpus=cpus, size=size, modules=modules, expect=expect)
    counted_here = lambda m: m.passes_from is None      # noqa: E731
    # Nothing compiled in: the uninstrumented run counts their points' passes.
    base = run_once(arch, NONE, count=tuple(m for m in mechs
                                            if not m.compiled_in and counted_here(m)), **kw)
    advance(description=f"{arch.name}: uninstrumented")
    base_cycles = model.cycles(arch, base.instructions, base.events)
    dormant_runs: dict[str, Run] = {m.key: base for m in mechs if not m.compiled_in}
    passes = dict(base.passes)
    for m in mechs:
        if m.key not in dormant_runs and m.dormant_from is None:
            dormant_runs[m.key] = run_once(arch, m.config, mech=m,
                                           count=(m,) if counted_here(m) else (), **kw)
            passes.update(dormant_runs[m.key].passes)
            advance(description=f"{arch.name}: {m.label}, dormant")
    rows = []
    checks = [base.checksum_ok]
    for m in mechs:
        dormant = dormant_runs.get(m.key) or dormant_runs[m.dormant_from]
        n = passes[m.passes_from or m.key]
        d_cyc = _cycles(model, arch, dormant, n, m.flag_load, memory_pressure)
        dormant_doc = {"instructions": dormant.instructions, "modeled_cycles": d_cyc,
                       "per_pass_instructions": _div(dormant.instructions - base.instructions,
                                                     n),
                       "per_pass_modeled_cycles": _div(d_cyc - base_cycles, n),
                       "percent_over_uninstrumented": _pct(d_cyc, base_cycles)}
        checks.append(dormant.checksum_ok)
        try:
            active = run_once(arch, m.config, mech=m, armed=True, **kw)
        except Unavailable as why:
            advance(description=f"{arch.name}: {m.label}: not on this arch")
            rows.append(Row(m.key, m.label, n, 0, dormant_doc, None, None, m.published,
                            unavailable=str(why)))
            continue
        advance(description=f"{arch.name}: {m.label}, armed")
        checks.append(active.checksum_ok)
        a_cyc = _cycles(model, arch, active, n, m.flag_load, memory_pressure)
        rows.append(Row(
            m.key, m.label, n, active.hits, dormant_doc,
            active={"instructions": active.instructions, "modeled_cycles": a_cyc,
                    "per_hit_instructions": _div(active.instructions - dormant.instructions,
                                                 active.hits),
                    "per_hit_modeled_cycles": _div(a_cyc - d_cyc, active.hits),
                    "per_hit_events": {e: _div(active.events[e] - dormant.events[e],
                                               active.hits)
                                       for e in sorted(set(active.events) | set(dormant.events))
                                       if active.events[e] != dormant.events[e]},
                    "percent_over_uninstrumented": _pct(a_cyc, base_cycles)},
            arming_cycles=model.cycles(arch, 0, active.arm_events),
            published=m.published, detail=active.detail))
    doc = {"arch": arch.name, "workload": workload, "cpus": cpus, "sites": list(SITES),
           "kprobe_points": list(KPROBE_POINTS),
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


def _per_hit(row: dict | None) -> float | None:
    return row["active"]["per_hit_modeled_cycles"] if row and row["active"] else None


def _ratio_claim(claim: str, a: float | None, b: float | None, a_name: str, b_name: str,
                 test: Callable[[float], bool], unavailable: str = "") -> dict:
    """A claim on the ratio a / b of two modeled per-hit costs."""
    if a is None or b is None or b <= 0:
        return {"claim": claim, "holds": None,
                "text": f"not measured{': ' + unavailable if unavailable else ''}"}
    ratio = a / b
    verb = "holds" if test(ratio) else "does not hold"
    return {"claim": claim, "holds": test(ratio),
            "text": f"{verb}: {a_name} {a:.2f} vs {b_name} {b:.2f} modeled cycles per hit, "
                    f"x{ratio:.2f}"}


def orderings(doc: dict) -> list[dict]:
    """Each published ordering (sources in the claim), and whether the modeled numbers obey it."""
    row = {r["mechanism"]: r for r in doc["rows"]}
    flag, imv, tp = (row.get(k) for k in ("marker_flag", "marker_imv",
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
        if r is None or r["active"] is None:
            continue
        d, act = r["dormant"]["per_pass_modeled_cycles"], _per_hit(r)
        armed = d + act if d is not None and act is not None else None
        out.append({"claim": f"{r['label']}: a site armed to an empty probe costs more than "
                             "the same site dormant (LTTng: 48.11 cycles enabled vs "
                             "1.17-2.50 disabled, P4 3 GHz)",
                    "holds": armed is not None and armed > d,
                    "text": _verdict(d, armed, "dormant", "armed (dormant + call)",
                                     "cycles per pass")
                    + (f", x{armed / d:.1f}" if armed and d and d > 0 else "")})
    kp, boosted, opt, ret = (row.get(k) for k in ("kprobe", "kprobe_boosted", "optprobe",
                                                  "kretprobe"))
    marker = _per_hit(imv)
    opt_why = opt["unavailable"] if opt and opt["unavailable"] else ""
    out.append(_ratio_claim("a kprobe hit costs at least 10x a marker hit armed to an empty "
                            "probe (kprobes.txt 0.49 us = ~980 cycles at 2 GHz vs LTTng "
                            "48.11 cycles)", _per_hit(kp), marker, "kprobe", "marker",
                            lambda x: x >= 10))
    out.append(_ratio_claim("an optprobe hit costs within 2x a marker hit (kprobes.txt "
                            "0.06 us = ~140 cycles at 2.33 GHz vs 48.11)", _per_hit(opt),
                            marker, "optprobe", "marker", lambda x: x <= 2, opt_why))
    k, b, o = _per_hit(kp), _per_hit(boosted), _per_hit(opt)
    claim = "kprobe > boosted kprobe > optprobe per hit (kprobes.txt, Xeon E5410: k 0.99, " \
            "b 0.43, o 0.06 us)"
    if k is None or b is None:
        out.append({"claim": claim, "holds": None, "text": "not measured"})
    else:
        chain = [("kprobe", k), ("boosted", b)] + ([("optprobe", o)] if o is not None else [])
        holds = all(x > y for (_, x), (_, y) in zip(chain, chain[1:]))
        text = " > ".join(f"{n} {v:.2f}" for n, v in chain) + " modeled cycles per hit"
        if o is None:
            text += f" (optprobe not measured: {opt_why or 'no row'})"
        out.append({"claim": claim, "holds": holds,
                    "text": f"{'holds' if holds else 'does not hold'}: {text}"})
    out.append(_ratio_claim("a kretprobe hit is 50-75 % slower than a kprobe hit, both without "
                            "post_handler (kprobes.txt: r 0.80 vs k 0.49 us; rb 0.68 vs b 0.43)",
                            _per_hit(ret), b, "kretprobe", "boosted kprobe",
                            lambda x: 1.5 <= x <= 1.75))
    line = row.get("line_probe")
    if line is not None:
        d = line["dormant"]["per_pass_modeled_cycles"]
        out.append({"claim": "a line-number probe costs nothing while unused: nothing is "
                             "compiled in (dprobe seed, LKML July 2008)",
                    "holds": d == 0 if d is not None else None,
                    "text": "not measured" if d is None else
                            f"{'holds' if d == 0 else 'does not hold'}: {d:.2f} modeled cycles "
                            f"per pass dormant; armed, a hit costs "
                            f"{_per_hit(line) or 0:.2f} (a kprobe's)"})
    return out


__all__ = ["CACHE_MISS", "CompareError", "CostModel", "KPROBE_POINTS", "MECHANISMS",
           "Mechanism", "SITES", "compare_arch", "load_cost_model", "mechanism", "orderings",
           "run_once", "runs_per_arch", "select"]
