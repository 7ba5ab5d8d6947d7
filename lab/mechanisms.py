"""The mechanism table: every instrumentation mechanism of the guest, built and armed alike.

Each :class:`Mechanism` is one row of ``kisim compare``: the Kconfig it
is built with (only that mechanism compiled in, on top of the defconfig,
function tracer off unless the row is ftrace's), the addresses whose
executions are its passes while dormant, and how to arm it at the same two
points, the ``kmalloc`` and ``sched_switch`` sites (markers and
tracepoints, to the empty probe ``__mark_empty_function`` or to the
ring-buffer recorder) or the functions holding them, ``kmalloc()`` and
``schedule()`` (the function tracer; kprobe, boosted kprobe, optprobe and
kretprobe with empty guest handlers; a line-number probe on a line of
each). :func:`run_once` runs one build, dormant or armed, and returns its
exact tally; :mod:`lab.compare` differences the runs through
:func:`lab.measure.measure`. A mechanism the arch does not have
(optprobes on 32-bit PowerPC) raises :class:`Unavailable` with the
kernel's refusal.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from arches import Arch
from arches.base import ReferenceCore
from kbuild import build
from kbuild.image import KERNEL
from lab.kprobe import keep_breakpoints
from lab.measure import CompareError, Tally
from lab.published import EVENT, IMMEDIATE, LTTNG, STATIC_KEYS, mcount_text, static_key_change
from patcher.errors import PatchError
from patcher.instrument import Instrumentation, attach
from patcher.tables import load_tables
from probes.dwarf import DebugInfo
from probes.function_tracer import FunctionTracer
from probes.kprobes import Kprobe, Kprobes, Kretprobe
from probes.lineprobe import LineProbe
from sim.guest import Guest
from tracing.session import TraceOptions, TraceSession

#: The instrumentation points every mechanism is armed at by default.
SITES = ("kmalloc", "sched_switch")
#: Functions holding the kmalloc and sched_switch sites: the kprobe family and the
#: function tracer instrument their entries (one pass each per site pass on one CPU).
KPROBE_POINTS = ("kmalloc", "schedule")
#: Ring-buffer events of the same two tracepoints (tracing/events.py).
RECORDED = ("kmem_kmalloc", "sched_switch")
#: Line probes: a line next to each site (file, its function's header, the line's text),
#: and the variables each hit fetches.
LINES = (("kernel/slab.c", "void *kmalloc(", "if (size > KMALLOC_MAX_SIZE)", ("size", "flags")),
         ("kernel/sched.c", "void schedule(void)", "prev_task[cpu] = prev;", ("prev", "next")))


@dataclass(frozen=True)
class Points:
    """Where the mechanisms are armed: the markers and tracepoints named ``sites``,
    the ``functions`` holding them (the kprobe family, the function tracer), the
    ``recorded`` ring-buffer events of the same tracepoints, and the ``lines`` of the
    line probes (:data:`LINES`' form). None: the row has no counterpart there (a
    module's own site has no event class or source line of kisim's)."""

    sites: tuple[str, ...]
    functions: tuple[str, ...]
    recorded: tuple[str, ...] | None = None
    lines: tuple[tuple[str, str, str, tuple[str, ...]], ...] | None = None


#: The kernel's two sites, kmalloc and sched_switch, and everything around them.
KERNEL_POINTS = Points(SITES, KPROBE_POINTS, RECORDED, LINES)


def site_points(arch: Arch, sites: Sequence[str], modules: Sequence = ()) -> Points:
    """The points of the markers and tracepoints named ``sites`` (a module's own, say):
    the functions holding their enable sites, read off the defconfig build's tables
    with ``modules``; no ring-buffer event or source line of kisim's."""
    kernel = build(arch.name, modules=modules)
    tables = load_tables(kernel.elf, kernel.spec)
    functions: dict[str, None] = {}
    for name in sites:
        found = [*tables.markers_named(name),
                 *(tp for tp in tables.tracepoints if tp.name == name)]
        if not found:
            known = {*tables.marker_names(), *(tp.name for tp in tables.tracepoints)}
            raise CompareError(f"--site {name}: no marker or tracepoint of that name "
                               f"(known: {', '.join(sorted(known))})")
        for point in found:
            for addr in point.sites:
                where = tables.image.symbol_at(addr)
                if where is not None:
                    functions[where[0]] = None
    return Points(tuple(sites), tuple(functions))


#: Every build: the defconfig without the function tracer (only the mcount row has it).
BASE_CONFIG = {"FUNCTION_TRACER": "n"}

class Target:
    """One guest being set up for one run; each subsystem is attached on first use."""

    def __init__(self, guest: Guest, points: Points = KERNEL_POINTS) -> None:
        self.guest = guest
        self.points = points
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
        return self.guest.image.symbols.pointer("__mark_empty_function")

    def counter(self, addresses: list[int]) -> Callable[[], int]:
        """Executions of ``addresses`` (a host code hook: it costs the guest nothing)."""
        return self.guest.machine.count_executions(addresses)


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
    named = [(name, found[0]) for name in t.points.sites
             if (found := t.inst.tables.markers_named(name))]
    if not named:
        raise Unavailable(f"no marker named {' or '.join(t.points.sites)}")
    for name, marker in named:
        t.inst.markers.marker_probe_register(name, marker.format, t.empty)
        t.inst.markers.marker_arm(name)
    return Armed(t.counter([t.empty]))


def _arm_tracepoints(t: Target) -> Armed:
    known = {tp.name for tp in t.inst.tables.tracepoints}
    named = [name for name in t.points.sites if name in known]
    if not named:
        raise Unavailable(f"no tracepoint named {' or '.join(t.points.sites)}")
    for name in named:
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
    recorded = t.points.recorded
    if recorded is None:
        raise Unavailable("the recorder writes kisim's event classes (tracing/events.py), "
                          f"which {' and '.join(t.points.sites)} has none of")
    return _recording(TraceSession(t.guest, TraceOptions(probes=recorded)),
                      f"events {', '.join(recorded)} into the per-CPU ring buffers")


def _mcount_sites(t: Target) -> list[int]:
    return [site.address for site in t.inst.tables.mcount]


def _ftrace_boot(t: Target) -> None:
    t.tracer = FunctionTracer(t.guest, t.inst.tables)     # the Guest boot made every site a nop


def _trace_functions(t: Target, which: str) -> Armed:
    """The function tracer started, recording into the ring buffers; ``which`` says
    what it traces."""
    session = TraceSession(t.guest, TraceOptions(probes=t.tracer.event_names), inst=t.inst)
    t.tracer.start()
    return _recording(session, f"function tracer into the ring buffers, {which}")


def _arm_function_tracer(t: Target) -> Armed:
    t.tracer.ftrace.write_filter(" ".join(t.points.functions))
    return _trace_functions(t, f"set_ftrace_filter {' '.join(t.points.functions)}")


def _mcount_calls(t: Target) -> list[int]:
    """The first instruction of what -pg calls: one pass per live mcount call."""
    symbols = t.guest.image.symbols
    return [symbols[name] for name in t.guest.arch.mcount_symbols if name in symbols]


def _arm_every_function(t: Target) -> Armed:
    return _trace_functions(t, "every function")


def _missed(count: int, what: str) -> str:
    """A note of the hits a probe missed, none when it missed none: no loss goes unsaid."""
    return f"; {count:,} {what}" if count else ""


def _breakpoint_path(t: Target) -> str:
    """The row's probes keep their breakpoints (:func:`keep_breakpoints`). The note
    for the row's outcome; none where the kernel has no such sysctl."""
    return "; debug.kprobes-optimization=0" if keep_breakpoints(t.kprobes) else ""


def _kprobe_points(t: Target) -> list[int]:
    return [t.guest.image.symbols[name] for name in t.points.functions]


def _kprobe_armer(post: bool = False, optimize: bool = False) -> Callable[[Target], Armed]:
    def arm(t: Target) -> Armed:
        sysctl = "" if optimize else _breakpoint_path(t)
        kps = [t.kprobes.register_kprobe(Kprobe(
            symbol_name=name, pre_handler="kprobe_empty_pre_handler",
            post_handler="kprobe_empty_post_handler" if post else None))
            for name in t.points.functions]
        if optimize:
            try:
                for kp in kps:
                    t.kprobes.optimize_now(kp)
            except PatchError as err:
                raise Unavailable(err.message) from None
        return Armed(lambda: sum(kp.hits for kp in kps),
                     outcome=lambda: ", ".join(sorted({"optprobe (detour)"
                                                       if kp.top.optimized
                                                       else t.kprobes.kind(kp)
                                                       for kp in kps}))
                     + _missed(sum(kp.nmissed for kp in kps), "hits nmissed (another kprobe "
                               "running on the CPU: handlers skipped)") + sysctl)
    return arm


def _arm_kretprobes(t: Target) -> Armed:
    sysctl = _breakpoint_path(t)
    rps = [t.kprobes.register_kretprobe(Kretprobe(symbol_name=name,
                                                  handler="kretprobe_empty_handler"))
           for name in t.points.functions]

    def outcome() -> str:
        """The entry probes' path, and the entries whose return went unprobed."""
        return ("entry probe " + ", ".join(sorted({t.kprobes.kind(rp.kp) for rp in rps}))
                + _missed(sum(rp.nmissed for rp in rps),
                          f"of {sum(rp.kp.hits for rp in rps):,} entries found no free "
                          "instance (kretprobe nmissed), their returns not probed")
                + sysctl)
    return Armed(lambda: sum(rp.kp.hits for rp in rps), outcome=outcome)


def _line_numbers(lines: Sequence[tuple[str, str, str, tuple[str, ...]]]
                  ) -> list[tuple[str, int, tuple[str, ...]]]:
    """Each of ``lines`` (:data:`LINES`' form) as (file, line number, variables), from
    the kernel source."""
    out = []
    for file, function, text, fetch in lines:
        lines = (KERNEL.parent / file).read_text().splitlines()
        start = next(n for n, line in enumerate(lines) if function in line)
        out.append((file, next(n + 1 for n in range(start, len(lines)) if text in lines[n]),
                    fetch))
    return out


#: The DWARF of the last kernel whose lines were probed, by (path, size, mtime): the
#: uninstrumented run counts the line probe's passes, and the line-probe run arms it,
#: on the same kernel.
_last_debug: dict[tuple[str, int, int], DebugInfo] = {}


def _debug_info(elf: Path, arch: Arch) -> DebugInfo:
    st = os.stat(elf)
    key = (os.path.realpath(elf), st.st_size, st.st_mtime_ns)
    if key not in _last_debug:
        for old in _last_debug.values():
            old.close()
        _last_debug.clear()
        _last_debug[key] = DebugInfo(elf, arch)
    return _last_debug[key]


def _line_probes(t: Target) -> list[LineProbe]:
    debug = _debug_info(t.guest.elf, t.guest.arch)
    return [LineProbe(t.kprobes, debug, file, line, fetch)
            for file, line, fetch in _line_numbers(t.points.lines or ())]


def _line_sites(t: Target) -> list[int]:
    return [la.address for p in _line_probes(t) for la in p.addresses]


def _arm_line_probes(t: Target) -> Armed:
    if t.points.lines is None:
        raise Unavailable(f"no source line of kisim's beside {' and '.join(t.points.sites)}: "
                          "kisim probe FILE:LINE puts one on a line of yours")
    sysctl = _breakpoint_path(t)
    probes = _line_probes(t)
    for p in probes:
        p.arm()
    where = ", ".join(f"{p.file}:{p.line}" for p in probes)

    def fetched() -> str:
        got = sum(len(h.values) for p in probes for h in p.hits)
        gone = sum(len(h.unavailable) for p in probes for h in p.hits)
        return (f"{got} values fetched, {gone} optimized out"
                + _missed(sum(p.nmissed for p in probes), "hits nmissed (another kprobe "
                          "running on the CPU: nothing fetched)") + sysctl)
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
    #: What it is set beside: a published figure and its source.
    published: str = ""
    #: A kprobe row: how it probes its points, a key of lab.kprobe.path_letters(); its
    #: published figures are kprobes.rst's hits of that path on its arch (lab.compare).
    kprobe_way: str | None = None


NONE = {"MARKERS": "n", "TRACEPOINTS": "n"}
MARKER_ONLY = {"MARKERS": "y", "KMEMTRACE": "y", "TRACEPOINTS": "n", "JUMP_LABEL": "n"}
TRACEPOINT_ONLY = {"MARKERS": "n", "TRACEPOINTS": "y", "JUMP_LABEL": "y", "IMMEDIATE": "n"}

MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism("marker_flag", "marker, memory flag", {**MARKER_ONLY, "IMMEDIATE": "n"},
              _marker_sites, _arm_markers, passes_from="marker_imv",
              published=f"L1-hit flag load {EVENT['L1-hit flag load per site']:+.2f} cycles, "
                        f"cache-cold {EVENT['cache-cold load per site']:+.2f} per site "
                        f"({IMMEDIATE})"),
    Mechanism("marker_imv", "marker, immediate value", {**MARKER_ONLY, "IMMEDIATE": "y"},
              _marker_sites, _arm_markers,
              published=f"{EVENT['immediate value per site']:+.2f} cycles per site "
                        f"({IMMEDIATE}); enabled with an empty probe "
                        f"{EVENT['enabled marker, empty probe']:.2f} cycles ({LTTNG})"),
    Mechanism("tracepoint_flag", "tracepoint, flag (JUMP_LABEL=n)",
              {**TRACEPOINT_ONLY, "JUMP_LABEL": "n"}, _tracepoint_sites, _arm_tracepoints,
              passes_from="tracepoint_jump_label",
              published=f"the flag test a static key replaces ({STATIC_KEYS})"),
    Mechanism("tracepoint_jump_label", "tracepoint, jump label", TRACEPOINT_ONLY,
              _tracepoint_sites, _arm_tracepoints,
              published=f"static key vs flag test: cycles {static_key_change():+.1%} "
                        f"({STATIC_KEYS}, perf stat of pipe-test)"),
    Mechanism("ring_buffer", "tracepoint -> ring buffer", TRACEPOINT_ONLY,
              _tracepoint_sites, _arm_recorder, dormant_from="tracepoint_jump_label",
              passes_from="tracepoint_jump_label",
              published=f"enabled marker with an empty probe "
                        f"{EVENT['enabled marker, empty probe']:.2f} cycles ({LTTNG}); "
                        "recording adds the event write (no per-event figure published)"),
    Mechanism("mcount", "mcount nop / function tracer",
              {**NONE, "FUNCTION_TRACER": "y", "DYNAMIC_FTRACE": "y"},
              _mcount_sites, _arm_function_tracer, boot=_ftrace_boot,
              published=mcount_text()),
    Mechanism("kprobe", "kprobe (pre+post)", NONE, _kprobe_points,
              _kprobe_armer(post=True), compiled_in=False, kprobe_way="post"),
    Mechanism("kprobe_boosted", "kprobe, boosted (pre only)", NONE, _kprobe_points,
              _kprobe_armer(), compiled_in=False, passes_from="kprobe", kprobe_way="plain"),
    Mechanism("optprobe", "optprobe", NONE, _kprobe_points,
              _kprobe_armer(optimize=True), compiled_in=False, passes_from="kprobe",
              kprobe_way="optimize"),
    Mechanism("kretprobe", "kretprobe", NONE, _kprobe_points, _arm_kretprobes,
              compiled_in=False, passes_from="kprobe", kprobe_way="ret"),
    Mechanism("line_probe", "line-number probe", NONE, _line_sites, _arm_line_probes,
              compiled_in=False,
              published="dprobe seed: nothing compiled in; a hit is a kprobe's (LKML 2008)"),
)


#: Seed 002's build (the "mcount tracing utility", Jan 2008): the -pg calls stay live
#: (DYNAMIC_FTRACE=n) and reach the mcount stub; armed, the function tracer records every
#: function. Not a compare row: lab/microbench.py runs it on hackbench.
MCOUNT_LIVE = Mechanism("mcount_live", "mcount, live calls (DYNAMIC_FTRACE=n)",
                        {"FUNCTION_TRACER": "y", "DYNAMIC_FTRACE": "n"}, _mcount_calls,
                        _arm_every_function, boot=_ftrace_boot,
                        published=mcount_text())


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
    """Workload runs :func:`lab.compare.compare_arch` makes per arch (for progress)."""
    return 1 + sum(1 + (m.compiled_in and m.dormant_from is None) for m in mechs)


# -- runs -------------------------------------------------------------------------------

@dataclass
class Run:
    """One workload run: exact counts, split into arming and workload."""

    #: The workload's tally (after arming).
    tally: Tally
    arm_events: Counter[str]
    passes: dict[str, int]
    hits: int
    checksum_ok: bool
    detail: str = ""


def run_once(arch: Arch, config: Mapping[str, str], *, workload: str, cpus: int,
             size: int | None, mech: Mechanism | None = None, armed: bool = False,
             count: tuple[Mechanism, ...] = (), modules: Sequence = (),
             expect: int | None = None, timing: bool = False,
             workload_config: Mapping[str, str] = {}, layout: int | None = None,
             core: ReferenceCore | None = None, points: Points = KERNEL_POINTS) -> Run:
    """Build with ``config`` and ``workload_config`` (and the guest ``modules``; in the
    randomized text layout of seed ``layout``, :mod:`kbuild.layout`), set up ``mech``
    (armed or not) at ``points``, run the workload (on the timing model with
    ``timing``, of ``core`` if given, else of the arch's reference core).

    The passes of each mechanism in ``count`` are counted on the way.
    """
    image = build(arch.name, overrides={**BASE_CONFIG, **config, **workload_config},
                  modules=modules, layout=layout)
    guest = Guest(image, cpus=cpus, workload=workload, size=size, expect=expect, timing=timing,
                  core=core)
    target = Target(guest, points)
    if mech is not None and mech.boot is not None:
        mech.boot(target)
    passes = {m.key: target.counter(m.sites(target)) for m in count}
    armed_ = mech.arm(target) if mech is not None and armed else Armed(lambda: 0)
    arming = Tally.of_machine(guest.machine)
    ok = armed_.run() if armed_.run is not None else guest.run().ok
    detail = "; ".join(x for x in (armed_.detail, armed_.outcome and armed_.outcome()) if x)
    return Run(Tally.of_machine(guest.machine) - arming, arming.events,
               {k: f() for k, f in passes.items()}, armed_.hits(), ok, detail)


