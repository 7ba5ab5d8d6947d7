"""``kisim ftrace``: boot a guest with the function tracer on and print its trace.

With ``CONFIG_DYNAMIC_FTRACE=y`` (the defconfig) the boot converted every
mcount site to the arch's nop before the CPUs started; only the sites the
filters select are patched to ``call ftrace_caller``, in one batch. With
``--set DYNAMIC_FTRACE=n`` the calls stay live, as in the mcount RFC.

The guest tracer records into the per-CPU ring buffers, drained by the
host consumer with exact loss accounting (``kisim trace``'s buffers and
options) into a sink of ``tracing.sinks``. Text formats go to stdout;
``ctf`` writes a CTF 1.8 directory and ``chrome`` ``DIR/trace.json``
(``--out DIR``).

``--list`` runs nothing: it prints the functions the filters leave the
tracer, in address order, as reading ``available_filter_functions`` lists
them (all of them with no ``--filter`` and no ``--notrace``).
"""
from __future__ import annotations

import argparse
from typing import Any

from kbuild import build
from kisim.commands.common import (add_arch, add_buffer_args, add_config, add_cpus, add_cycles,
                                   add_json, add_modules, add_turns, add_workload, check_drain,
                                   check_function_tracer, checksum_checked, checksum_word,
                                   close_sink,
                                   config_note, function_tracer, note_removed, overrides, path,
                                   print_json, timing, trace_options)
from kisim.errors import UsageError
from patcher.tables import load_tables
from sim.guest import MAX_INSTRUCTIONS, Guest, check_workload
from tracing.outdir import POLICY
from tracing.session import EventList, TraceSession
from tracing.sinks import (SinkContext, TextSink, format_names, get_format, help_text,
                           open_sink, run_info)

FORMATS = format_names(needs=(None, "function", "funcgraph"), aliases=True)
#: The event family each tracer records.
FAMILY = {"function": "function", "function_graph": "funcgraph"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("ftrace", help="trace every guest function call (mcount / ftrace)")
    add_arch(p)
    add_cpus(p)
    add_workload(p)
    p.add_argument("--tracer", choices=("function", "function_graph"), default="function")
    p.add_argument("--filter", action="append", default=[], metavar="GLOB",
                   help="set_ftrace_filter word (repeatable; the first replaces, "
                        "the others append); GLOB:mod:MODULE takes a --module's functions "
                        "that match, ':mod:MODULE' all of them")
    p.add_argument("--notrace", action="append", default=[], metavar="GLOB",
                   help="set_ftrace_notrace word (repeatable); notrace wins")
    p.add_argument("--glob", choices=("2.6.28", "full"), default="2.6.28",
                   help="--filter and --notrace syntax: 2.6.28's x*, *x, *x* (default) or "
                        "full glob(7)")
    p.add_argument("--list", action="store_true",
                   help="print, without a run, the functions the filters leave the tracer "
                        "(with no --filter and no --notrace, available_filter_functions)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help=f"{help_text(FORMATS, text_to_stdout=True)} (ftrace: text). Default: seed for function, "
                        "graph for function_graph; text formats print to stdout, ctf, "
                        "chrome and trace-cmd go into --out DIR")
    p.add_argument("--out", default=None, metavar="DIR", type=path,
                   help=f"trace directory for --format ctf|chrome|trace-cmd. {POLICY}")
    add_buffer_args(p)
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="print at most N trace lines after the format's '#' header "
                        "(text formats)")
    add_config(p)
    add_turns(p)
    add_modules(p)
    add_cycles(p, "count")
    add_json(p)
    p.set_defaults(func=cmd_ftrace)


def cmd_ftrace(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args)
    check_workload(args.workload, args.size)
    fmt = get_format(args.format or ("graph" if args.tracer == "function_graph" else "seed"))
    if not fmt.text and args.out is None:
        raise UsageError(f"--format {fmt.name} needs --out DIR")
    if fmt.text and args.out is not None:
        raise UsageError(f"--out is for --format ctf, chrome or trace-cmd, not {fmt.name}")
    if fmt.needs not in (None, FAMILY[args.tracer]):
        raise UsageError(f"--format {fmt.name} needs --tracer "
                         f"{'function_graph' if fmt.needs == 'funcgraph' else 'function'}")
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be >= 0")
    if args.limit is not None and not fmt.text:
        raise UsageError(f"--limit counts printed lines; --format {fmt.name} writes files")
    _check_glob(args)
    check_drain(args)                        # before a possibly long build
    b, guest, tracer = _traced_guest(args, cpus=args.cpus, workload=args.workload,
                                     size=args.size, quantum=args.quantum, seed=args.seed,
                                     expect=args.expect, timing=timing(args))
    init = guest.ftrace_boot               # the boot converted every site (ftrace_init)
    options = trace_options(args, b.config, tracer.event_names, MAX_INSTRUCTIONS)
    session = TraceSession(guest, options)
    arch = guest.arch
    info = run_info(arch, (
        b.key, "ftrace", args.tracer, args.cpus, args.workload, args.size, args.seed,
        args.quantum, tuple(args.filter), tuple(args.notrace), args.glob, args.mode,
        args.subbuf_size, args.subbufs, args.drain_every),
        workload=args.workload, cpus=args.cpus, tracer=args.tracer)
    sink = open_sink(fmt.name, args.out, SinkContext(info, session.classes, args.tracer,
                                                     tracer.symbols, guest.image,
                                                     cpus=args.cpus))
    events = EventList(forward=sink)
    tracer.start()
    try:
        result = session.run(events)
    except BaseException:
        sink.abort()
        raise
    info.add_totals(result.total.to_json())
    files = close_sink(sink)
    note_removed(sink.out)
    lines = list(sink.lines()) if isinstance(sink, TextSink) else []
    if args.limit is not None:             # the header, then N lines of the trace
        head = next((i for i, line in enumerate(lines) if not line.startswith("#")),
                    len(lines))
        lines = lines[:head + args.limit]
    events = events.events
    traced = tracer.summary(events)
    summary = {"arch": b.arch, "cpus": args.cpus, "workload": args.workload,
               "tracer": args.tracer, "dynamic_ftrace": traced["dynamic_ftrace"],
               "sites": traced["sites"], "sites_enabled": traced["sites_enabled"],
               "functions_traced": traced["functions_traced"],
               "boot_conversion": None if init is None else init.to_json(),
               "events": len(events), "calls": traced["calls"],
               "buffers": result.to_json()["total"], "format": fmt.name,
               "files": [str(f) for f in files],
               "checksum_ok": result.checksum_ok, "checksum_checked": checksum_checked(args),
               "instructions": result.instructions,
               "modeled_cycles": result.modeled_cycles}
    if args.json:
        summary["trace"] = lines
        print_json(summary)
        return 0 if result.checksum_ok else 1
    for line in lines:
        print(line)
    conv = "" if init is None else (f"; {init.sites} sites converted to nops at boot in "
                                    f"{init.seconds * 1e3:.2f} ms host")
    t = result.total
    print(f"# {len(events)} events ({t.produced} produced, {t.discarded} discarded, "
          f"{t.overwritten} overwritten), {summary['sites_enabled']} of "
          f"{summary['sites']} mcount sites live{conv}; checksum "
          f"{checksum_word(args, result.checksum_ok)}; {result.instructions:,} "
          f"instructions, {result.modeled_cycles:,.0f} modeled cycles")
    if files:
        print(f"# trace: {args.out} ({fmt.name}, {', '.join(f.name for f in files)})")
    return 0 if result.checksum_ok else 1


def _traced_guest(args: argparse.Namespace, **guest: Any) -> tuple[Any, Guest, Any]:
    """The kernel the arguments choose (built, its .config noted), a guest of it
    (``guest``: its options), and the tracer on it with the filters written: what a
    run and --list share."""
    config_note(args)
    b = build(args.arch, args.config, overrides=overrides(args), modules=args.modules)
    check_function_tracer(b, args.tracer, bool(args.filter or args.notrace))
    machine = Guest(b, **guest)
    return b, machine, function_tracer(machine, load_tables(b.elf, b.spec), args.tracer,
                                       args.filter, args.notrace, args.glob)


def _check_glob(args: argparse.Namespace) -> None:
    if args.glob != "2.6.28" and not (args.filter or args.notrace):
        raise UsageError(f"--glob {args.glob} sets the syntax of --filter and --notrace: "
                         "give one")


def _list(args: argparse.Namespace) -> int:
    for option, given in (("--format", args.format), ("--out", args.out),
                          ("--limit", args.limit)):
        if given is not None:
            raise UsageError(f"--list prints functions and runs nothing: it takes no {option}")
    _check_glob(args)
    b, _, tracer = _traced_guest(args, cpus=1)
    if not tracer.ftrace.dynamic:
        raise UsageError("--list reads available_filter_functions, which needs "
                         "CONFIG_DYNAMIC_FTRACE=y")
    functions = tracer.ftrace.traced_functions()
    if args.json:
        print_json({"arch": b.arch, "filter": args.filter, "notrace": args.notrace,
                    "glob": args.glob, "functions": functions})
    elif functions:                     # none left: the file is empty
        print("\n".join(functions))
    return 0
