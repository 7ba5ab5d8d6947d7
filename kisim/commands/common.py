"""Argument helpers shared by subcommands: each option and each check defined once."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable

import patcher.instrument  # noqa: F401  (serves static keys, markers, tracepoints of modules)
import probes.kprobes  # noqa: F401  (serves register_kprobe() & co. called by guest modules)
from arches import NAMES, Arch, get_arch
from kbuild import ConfigChoice, resolve_config
from kbuild.image import reported_warnings
from kbuild.layout import MAX_SEED as MAX_LAYOUT_SEED
from kbuild.modules import ModulePath
from kisim.errors import UsageError
from kisim.progress import progress
from lab.samples import MAX_LAYOUTS, SampleError, layout_seeds
from patcher.instrument import attach
from probes.trace_kprobe import kprobe_events
from sim.guest import DEFAULT_QUANTUM, MAX_INSTRUCTIONS, WORKLOADS
from sim.machine import MAX_CPUS
from sim.workloads import module_workload
from tracing.outdir import OutDir
from tracing.ring import MAX_RING_BYTES, MAX_SUBBUF_SIZE, MAX_SUBBUFS, MODES
from tracing.session import TraceOptions, TraceSession
from workers import JOBS_PER_CPU, max_jobs

#: Stated limits of the run options every guest command shares (checked by
#: argparse, before any build or run).
MAX_QUANTUM = 10 ** 9          # instructions in one CPU turn
MAX_BUDGET = 10 ** 12          # instructions in one run (hours of host time)
MAX_SIZE = 0xFFFF_FFFF         # a workload's size: a u32 in the guest (sim/workloads.py)


def add_arch(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--arch", required=required, metavar="ARCH",
                        help=f"target architecture: {', '.join(NAMES)}")


def add_cpus(parser: argparse.ArgumentParser, default: int = 1) -> None:
    parser.add_argument("--cpus", type=int_in(1, MAX_CPUS), default=default, metavar="N",
                        help=f"number of simulated CPUs, 1..{MAX_CPUS} (default {default})")


def check_arches(names: list[str]) -> None:
    """Every name an arch of the registry, else a one-line UsageError."""
    for name in names:
        if name not in NAMES:
            raise UsageError(f"unknown arch {name!r} (known: {', '.join(NAMES)})")


def path(text: str) -> str:
    """An argparse type for a path to write: an empty one names nothing (it would be
    taken as the current directory)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file or directory")
    return text


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``low..high``, else a one-line usage error
    (exit 2) naming the range, before any work starts."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} out of range {low}..{high}")
        return value
    return parse


def add_layouts(parser: argparse.ArgumentParser) -> None:
    """``--layouts N`` and ``--layout-seed S``: the figures over N randomized text
    layouts of every build (kbuild/layout.py), seeds S..S+N-1."""
    parser.add_argument("--layouts", type=int_in(1, MAX_LAYOUTS), default=None, metavar="N",
                        help="run over N randomized text layouts (function order and "
                             "padding, the modules' load offset) and report each figure's "
                             "median and range, each ordering as holds in k of N; "
                             f"1..{MAX_LAYOUTS}")
    parser.add_argument("--layout-seed", type=int_in(0, MAX_LAYOUT_SEED), default=None, metavar="S",
                        help="seed of the first layout (default 0); layout i has seed S+i, "
                             "and --layouts 1 --layout-seed S+i replays it alone")
    parser.add_argument("--vary-assumptions", action="store_true",
                        help="with --layouts: each sample also draws, from its seed, every "
                             "modelling assumption of the reference core from its declared "
                             "range (docs/timing.md)")


def check_parsed(args: argparse.Namespace) -> None:
    """What every command refuses once its options are parsed: ``--module-werror``
    with no ``--module`` to make strict."""
    only_with("--module", [("--module-werror", getattr(args, "module_werror", False)
                            and not getattr(args, "modules", None))])


def only_with(needed: str, options: Iterable[tuple[str, bool]], why: str = "") -> None:
    """Options given (each a flag and whether it was) that do something only with
    ``needed``: refused in one line rather than ignored."""
    given = [flag for flag, on in options if on]
    if given:
        raise UsageError(f"{', '.join(given)}: only with {needed}{why and '; ' + why}")


def layout_sweep(args: argparse.Namespace) -> range | None:
    """The layout seeds of ``--layouts N --layout-seed S`` (:func:`add_layouts`), or None
    without ``--layouts``, where ``--layout-seed`` and ``--vary-assumptions``, which shape
    its samples, are refused in one line rather than ignored."""
    if args.layouts is None:
        only_with("--layouts N", (("--layout-seed", args.layout_seed is not None),
                                  ("--vary-assumptions", args.vary_assumptions)),
                  "they shape its samples")
        return None
    try:
        return layout_seeds(args.layouts, args.layout_seed or 0)
    except SampleError as err:
        raise UsageError(str(err)) from None


def add_jobs(parser: argparse.ArgumentParser) -> None:
    """``--jobs N`` and ``--scheduler ADDRESS``: where a sweep's samples run
    (:func:`workers.ordered_map`); the results are the serial run's either way."""
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help=f"worker processes (default: the cores available; at most "
                             f"{JOBS_PER_CPU} per core, more is capped with a note); same "
                             "results as a serial run")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on a Dask distributed scheduler (needs kisim[dask])")


def jobs(args: argparse.Namespace) -> int:
    """``--jobs`` (default: the available CPUs), capped at :func:`workers.max_jobs`
    with a note."""
    bound = max_jobs()
    if args.jobs is None:
        return bound // JOBS_PER_CPU
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs} must be at least 1")
    if args.jobs > bound:
        print(f"kisim: --jobs {args.jobs} capped at {bound} ({JOBS_PER_CPU} per available "
              "CPU)", file=sys.stderr)
    return min(args.jobs, bound)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


class _ModuleAction(argparse.Action):
    """``--module``: append a :class:`~kbuild.modules.ModulePath` carrying
    ``--module-werror``, given before or after it."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        werror = getattr(namespace, "module_werror", False)
        namespace.modules = [*getattr(namespace, "modules", []), ModulePath(values, werror)]


class _WerrorAction(argparse.Action):
    """``--module-werror``: every module's warnings are errors (also those given before)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        namespace.module_werror = True
        namespace.modules = [ModulePath(p, True) for p in getattr(namespace, "modules", [])]


def add_modules(parser: argparse.ArgumentParser, expect: bool = True) -> None:
    """``--module FILE.c|DIR|A.c,B.c`` (repeatable, into ``args.modules``),
    ``--module-werror`` and ``--expect HEX`` (not for commands whose workload is
    fixed: ``expect=False``).

    Each module is compiled against the guest kernel's headers and linked
    into the image (kbuild/modules.py; docs/modules.md); ``--workload
    MODULE:FUNC`` runs one of its functions, whose return value is the
    checksum that ``--expect`` checks. Compiler warnings go to stderr;
    ``--module-werror`` makes them errors (``-Werror``, as CONFIG_WERROR).
    """
    parser.add_argument("--module", action=_ModuleAction, default=[], dest="modules",
                        metavar="FILE.c|DIR",
                        help="build this C file, every C file of this directory (-I DIR), "
                             "or these comma-separated C files into the guest as one module "
                             "(repeatable; --workload MODULE:FUNC runs one of its functions)")
    parser.add_argument("--module-werror", action=_WerrorAction, nargs=0, default=False,
                        help="treat the modules' compiler warnings as errors")
    if not expect:
        return
    parser.add_argument("--expect", type=_hex, default=None, metavar="HEX",
                        help="the checksum the workload must return (a MODULE:FUNC "
                             "workload has no reference of its own)")


def _hex(text: str) -> int:
    try:
        value = int(text, 16)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a hexadecimal number") from None
    if not 0 <= value < 1 << 64:     # a module workload returns an unsigned long
        raise argparse.ArgumentTypeError(f"{text!r} is not a checksum (at most 64 bits)")
    return value


def arch_of(args: argparse.Namespace) -> Arch:
    return get_arch(args.arch)


def with_warnings(doc: Any) -> Any:
    """A JSON document (a dict) with the compiler warnings of the modules this command
    built (``"warnings"``, when there are any)."""
    warnings = reported_warnings()
    return {**doc, "warnings": warnings} if warnings and isinstance(doc, dict) else doc


def print_json(obj: Any) -> None:
    """``obj`` as JSON on stdout, :func:`with_warnings`."""
    json.dump(with_warnings(obj), sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


# -- the kernel configuration ------------------------------------------------------------

def add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", default=None,
                        help="the .config to build (default: ./.config if it exists, else "
                             "the arch's defconfig)")
    add_set(parser)


def add_set(parser: argparse.ArgumentParser, example: str = "MARKERS=n") -> None:
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help=f"override one Kconfig option, e.g. --set {example} (repeatable)")


def overrides(args: argparse.Namespace) -> dict[str, str]:
    """The --set options as NAME -> value; one NAME set to two values is refused."""
    out: dict[str, str] = {}
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected NAME=VALUE, e.g. MARKERS=n")
        name, value = name.strip(), value.strip()
        same = next((n for n in out if n.removeprefix("CONFIG_") == name.removeprefix("CONFIG_")),
                    None)
        if same is not None and out[same] != value:
            raise UsageError(f"--set {name}: given twice, as {out[same]!r} and {value!r}")
        out[name] = value
    return out


def chosen_config(args: argparse.Namespace) -> ConfigChoice:
    """The --config, ./.config or defconfig; using ./.config is announced on stderr
    (an explicit --config or the defconfig needs no announcement)."""
    choice = resolve_config(args.arch, args.config)
    if choice.source == "./.config":         # stderr: --json output stays clean
        print(choice.describe(), file=sys.stderr)
    return choice


def config_note(args: argparse.Namespace) -> None:
    """Resolve ``args.config`` in place (--config, else ./.config, else the defconfig)."""
    path = chosen_config(args).path
    args.config = None if path is None else str(path)


def note_removed(out: OutDir | None) -> None:
    """Say which files of the directory's earlier kisim output the run removed, as
    the --out policy has it (those it did not write again), on stderr."""
    if out is not None and out.removed:
        print(f"kisim: {out.path}: removed {', '.join(out.removed)} of the kisim output "
              "there before, which this run does not write", file=sys.stderr)


def cpus_text(n: int) -> str:
    """``1 CPU``, ``2 CPUs``."""
    return f"{n} CPU" + ("s" if n != 1 else "")


def checksum_checked(args: argparse.Namespace) -> bool:
    """Whether a run's checksum is checked: a built-in workload's against its
    reference, a module's ``MODULE:FUNC`` only against ``--expect HEX``."""
    return args.expect is not None or not module_workload(args.workload)


def checksum_word(args: argparse.Namespace, ok: bool) -> str:
    """What a run's checksum was found to be, for a summary line."""
    if not ok:
        return "MISMATCH"
    if args.expect is not None:
        return "as expected (--expect)"
    if not checksum_checked(args):
        return "not checked (a module's workload: --expect HEX checks it)"
    return "matches the reference"


def sites_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())


# -- where modeled cycles come from ------------------------------------------------------

CYCLES = ("timing", "count")


def add_cycles(p: argparse.ArgumentParser, default: str) -> None:
    """--cycles timing|count: the reference core's timing model, or counts only."""
    p.add_argument("--cycles", choices=CYCLES, default=default,
                   help="where modeled cycles come from: 'timing', the arch's reference core "
                        "(caches, coherence, branch prediction, pipeline events; "
                        "docs/timing.md), or 'count', retired instructions plus charged "
                        f"events (faster); default {default}")


def timing(args: argparse.Namespace) -> bool:
    """Whether the command runs on the timing model (``--cycles timing``)."""
    return args.cycles == "timing"


# -- a guest run --------------------------------------------------------------------------

def add_workload(p: argparse.ArgumentParser, default: str | None = "hackbench", *,
                 required: bool | None = None) -> None:
    """--workload W and --size N. Without a default --workload is required (e.g. a
    module's MODULE:FUNC), unless ``required`` is False: the command checks it."""
    p.add_argument("--workload", default=default, metavar="W",
                   required=default is None if required is None else required,
                   help=f"workload to run: {', '.join(WORKLOADS)}, or a --module's MODULE:FUNC"
                        + (f" (default {default})" if default else ""))
    p.add_argument("--size", type=int, default=None, metavar="N",
                   help="workload size (hackbench loops, kmalloc/getppid iterations, "
                        f"fib depth; 1..{MAX_SIZE}, a module's function 0..{MAX_SIZE}; "
                        "default: the workload's own)")


def add_turns(p: argparse.ArgumentParser) -> None:
    """--seed S and --quantum Q: how the machine cuts the CPUs' runs into turns."""
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="draw each turn's length from 1..quantum with this seed")
    p.add_argument("--quantum", type=int_in(1, MAX_QUANTUM), default=DEFAULT_QUANTUM,
                   metavar="Q", help=f"instructions per CPU turn, 1..{MAX_QUANTUM} "
                                     f"(default {DEFAULT_QUANTUM})")


def add_run_args(p: argparse.ArgumentParser) -> None:
    """--arch, --cpus, the workload, the kernel config and the machine's turn options."""
    add_arch(p)
    add_cpus(p)
    add_workload(p)
    add_config(p)
    add_modules(p)
    add_turns(p)
    p.add_argument("--max-instructions", type=int_in(1, MAX_BUDGET), default=MAX_INSTRUCTIONS,
                   metavar="N", help=f"instruction budget of the whole run, 1..{MAX_BUDGET} "
                                     f"(default {MAX_INSTRUCTIONS})")


# -- ring buffers (trace, ftrace) ---------------------------------------------------------

def add_buffer_args(p: argparse.ArgumentParser) -> None:
    """--mode, --subbuf-size, --subbufs, --drain-every: the ring buffers and their consumer."""
    p.add_argument("--mode", choices=tuple(MODES), default="discard",
                   help="when the buffer is full: drop new events, or overwrite the oldest "
                        "sub-buffer (default discard)")
    p.add_argument("--subbuf-size", type=int_in(1, MAX_SUBBUF_SIZE), default=None, metavar="S",
                   help=f"bytes per sub-buffer, at most {MAX_SUBBUF_SIZE} (default "
                        "CONFIG_RING_BUFFER_SUBBUF_SIZE)")
    p.add_argument("--subbufs", type=int_in(2, MAX_SUBBUFS), default=None, metavar="K",
                   help=f"sub-buffers per CPU, 2..{MAX_SUBBUFS} (default "
                        f"CONFIG_RING_BUFFER_SUBBUFS); all buffers of all CPUs together "
                        f"at most {MAX_RING_BYTES} bytes")
    p.add_argument("--drain-every", type=int, default=1, metavar="T",
                   help="the consumer drains every T turn boundaries (default 1; "
                        "larger values put the buffers under pressure)")


def run_traced(session: Any, sink: Any, verb: str, args: argparse.Namespace) -> Any:
    """Run ``session`` into ``sink`` with a progress line ("tracing", "recording");
    the sink is abandoned (nothing written) if the run does not finish."""
    try:
        with progress(f"{verb} {args.workload} on {args.arch}", enabled=not args.json) as adv:
            return session.run(sink, on_progress=lambda n: adv(
                0, description=f"{verb}: {n:,} instructions"))
    except BaseException:
        sink.abort()
        raise


def close_sink(sink: Any) -> list[Path]:
    """The sink's files, written; if writing them fails (the disk full), the sink is
    abandoned as an unfinished run's is (run_traced): its directory as it was."""
    try:
        return sink.close()
    except BaseException:
        sink.abort()
        raise


def check_drain(args: argparse.Namespace) -> None:
    """--drain-every at least 1 (checked before a possibly long build)."""
    if args.drain_every < 1:
        raise UsageError(f"--drain-every must be at least 1, not {args.drain_every}")


def trace_options(args: argparse.Namespace, config: dict[str, str], probes: tuple[str, ...],
                  max_instructions: int | None) -> TraceOptions:
    """The session's options: --subbuf-size/--subbufs, else the Kconfig values."""
    check_drain(args)
    return TraceOptions.from_config(probes, config, subbuf_size=args.subbuf_size,
                                    subbufs=args.subbufs, mode=args.mode,
                                    drain_every=args.drain_every,
                                    max_instructions=max_instructions)


#: Bytes of a --kprobe-events file (tracefs takes 4095-byte lines, WRITE_BUFSIZE).
KPROBE_EVENTS_LIMIT = 1 << 20


def add_kprobe_args(p: argparse.ArgumentParser) -> None:
    """--kprobe-event DEF (repeatable) and --kprobe-events FILE (trace, record)."""
    p.add_argument("--kprobe-event", action="append", default=[], metavar="DEF",
                   help="a kprobe_events definition, as tracefs takes it (v5.10): "
                        "'p[:[GRP/]EVENT] SYM[+OFFS]|ADDR [FETCHARGS]' or "
                        "'r[MAXACTIVE][:[GRP/]EVENT] SYM[+0] [FETCHARGS]'; repeatable; its "
                        "hits are recorded (docs/kprobe_events.md)")
    p.add_argument("--kprobe-events", metavar="FILE",
                   help="kprobe_events definitions, one a line, '#' comments")


def kprobe_session(guest: Any, options: TraceOptions,
                   filters: Callable[[Any], tuple[tuple[str, str], ...]] | None = None
                   ) -> tuple[TraceSession, Any]:
    """The session recording ``options``, with the kprobe events its
    ``kprobe_events`` lines define registered on the guest (None: no lines);
    ``filters(events)``: more (event, expr) filters, once the events are known.
    What its filters left in error_log is printed as warnings."""
    inst = attach(guest)
    events = kprobe_events(guest, inst, options.kprobe_events)
    warn_kprobe_events(events)
    if filters is not None:
        options = replace(options, filters=options.filters + filters(events))
    session = TraceSession(guest, options, inst, events)
    for entry in session.error_log:
        print(f"kisim: warning: {entry}", file=sys.stderr)
    return session, events


def warn_kprobe_events(events: Any) -> None:
    """What registering the kprobe events warned of (the kernel's pr_warn), on stderr."""
    for line in events.warnings if events else ():
        print(f"kisim: warning: trace_kprobe: {line}", file=sys.stderr)


def kprobe_counts(events: Any) -> list[dict[str, Any]]:
    """Each kprobe event's hits, those missed while another kprobe ran (and a return
    event's entries with no free instance), those its filter kept out and those lost
    for a record larger than the ring buffer takes (for --json)."""
    return [{"event": f"{group}/{name}", "id": tk.id, "hits": tk.hits, "nmissed": tk.nmissed,
             "kretprobe_nmissed": tk.kretprobe_nmissed, "filtered": tk.filtered,
             "lost": tk.lost}
            for (group, name), tk in (events.events.items() if events else ())]


def print_kprobe_counts(events: Any) -> None:
    for c in kprobe_counts(events):
        lost = (f", {c['lost']:,} lost: a record over the ring buffer's largest "
                f"({events.largest:,} bytes)" if c["lost"] else "")
        entries = (f", {c['kretprobe_nmissed']:,} entries with no free kretprobe instance "
                   "(returns not recorded)" if c["kretprobe_nmissed"] else "")
        print(f"kprobe event {c['event']}: {c['hits']:,} hits, {c['nmissed']:,} nmissed"
              f"{entries}, {c['filtered']:,} kept out by its filter{lost}")


def kprobe_lines(args: argparse.Namespace) -> tuple[str, ...]:
    """--kprobe-events FILE's text, then each --kprobe-event, in the order given."""
    from fsio import read_text
    text = (read_text(args.kprobe_events, limit=KPROBE_EVENTS_LIMIT, what="kprobe_events file")
            if args.kprobe_events else None)
    return ((text,) if text else ()) + tuple(args.kprobe_event)


def filter_args(specs: list[str]) -> tuple[tuple[str, str], ...]:
    """--filter '[GRP/]EVENT:EXPR' values as (event, expression) pairs."""
    pairs = []
    for spec in specs:
        event, sep, expr = spec.partition(":")
        if not sep or not event.strip():
            raise UsageError(f"--filter {spec!r}: give it as [GRP/]EVENT:EXPR")
        pairs.append((event.strip(), expr))
    return tuple(pairs)


# -- the function tracers (ftrace, record) -------------------------------------------------

def check_function_tracer(b: Any, tracer: str, filtered: bool) -> None:
    """The kernel ``b`` can run ``tracer`` (with set_ftrace_filter words if ``filtered``)."""
    if not b.is_set("FUNCTION_TRACER"):
        raise UsageError("the kernel is built with CONFIG_FUNCTION_TRACER=n: nothing to trace")
    if tracer == "function_graph" and not b.is_set("FUNCTION_GRAPH_TRACER"):
        raise UsageError("the function_graph tracer needs CONFIG_FUNCTION_GRAPH_TRACER=y")
    if filtered and not b.is_set("DYNAMIC_FTRACE"):
        raise UsageError("function filters need CONFIG_DYNAMIC_FTRACE=y")


def function_tracer(guest: Any, tables: Any, tracer: str, filters: list[str],
                    notrace: list[str], glob: str = "2.6.28", graph: list[str] = ()) -> Any:
    """``tracer`` on ``guest``'s ftrace, with the set_ftrace_filter and
    set_ftrace_notrace words written (the first of each replaces, the others
    append) and the set_graph_function words ``graph``."""
    from probes.function_tracer import FunctionTracer
    ft = FunctionTracer(guest, tables, tracer=tracer)
    ft.ftrace.glob = glob
    for i, word in enumerate(filters):
        ft.ftrace.write_filter(word, append=i > 0)
    for i, word in enumerate(notrace):
        ft.ftrace.write_filter(word, append=i > 0, notrace=True)
    if graph:
        ft.ftrace.write_graph_function(graph)
    return ft
