"""``kisim ftrace``: boot a guest with the function tracer on and print its trace.

With ``CONFIG_DYNAMIC_FTRACE=y`` (the defconfig) the boot converted every
mcount site to the arch's nop before the CPUs started; only the sites the
filters select are patched to ``call ftrace_caller``, in one batch. With
``--set DYNAMIC_FTRACE=n`` the calls stay live, as in the mcount RFC.

The guest tracer records into the per-CPU ring buffers, drained by the
host consumer with exact loss accounting (``kisim trace``'s buffers and
options). Text formats go to stdout; ``ctf`` writes a CTF 1.8 directory
and ``chrome`` ``DIR/trace.json`` (``--out DIR``).
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Callable

from kbuild import build
from kisim.commands.build import add_config, overrides
from kisim.commands.common import MAX_QUANTUM, add_arch, add_cpus, add_json, int_in, print_json
from kisim.errors import UsageError
from patcher.tables import load_tables
from probes.ftrace_output import render
from kisim.commands.trace import TRACE_NAMESPACE, add_buffer_args, convert, trace_options
from probes.function_tracer import FunctionTracer
from sim.guest import DEFAULT_QUANTUM, MAX_INSTRUCTIONS, WORKLOADS, Guest, check_workload
from tracing.ctf import CtfWriter, TraceInfo
from tracing.session import EventList, TraceResult, TraceSession

FORMATS = ("seed", "ftrace", "graph", "ctf", "chrome")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("ftrace", help="trace every guest function call (mcount / ftrace)")
    add_arch(p)
    add_cpus(p)
    p.add_argument("--workload", default="hackbench", metavar="W",
                   help=f"workload to run: {', '.join(WORKLOADS)} (default hackbench)")
    p.add_argument("--size", type=int, default=None, metavar="N", help="workload size")
    p.add_argument("--tracer", choices=("function", "function_graph"), default="function")
    p.add_argument("--filter", action="append", default=[], metavar="GLOB",
                   help="set_ftrace_filter word (repeatable; the first replaces, "
                        "the others append)")
    p.add_argument("--notrace", action="append", default=[], metavar="GLOB",
                   help="set_ftrace_notrace word (repeatable); notrace wins")
    p.add_argument("--glob", choices=("2.6.28", "full"), default="2.6.28",
                   help="filter syntax: 2.6.28's x*, *x, *x* (default) or full glob(7)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="seed (the RFC's lines), ftrace (2.6.28 trace file), graph "
                        "(default: seed for function, graph for function_graph); "
                        "ctf or chrome into --out DIR")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="trace directory for --format ctf|chrome")
    add_buffer_args(p)
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="print at most N trace lines")
    add_config(p)
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="draw each turn's length from 1..quantum with this seed")
    p.add_argument("--quantum", type=int_in(1, MAX_QUANTUM), default=DEFAULT_QUANTUM, metavar="Q")
    add_json(p)
    p.set_defaults(func=cmd_ftrace)


def cmd_ftrace(args: argparse.Namespace) -> int:
    check_workload(args.workload, args.size)
    fmt = args.format or ("graph" if args.tracer == "function_graph" else "seed")
    if fmt in ("ctf", "chrome") and args.out is None:
        raise UsageError(f"--format {fmt} needs --out DIR")
    if fmt not in ("ctf", "chrome") and args.out is not None:
        raise UsageError(f"--out is for --format ctf or chrome, not {fmt}")
    if fmt == "graph" and args.tracer != "function_graph":
        raise UsageError("--format graph needs --tracer function_graph")
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be >= 0")
    if args.drain_every < 1:                 # before a possibly long build
        raise UsageError(f"--drain-every must be at least 1, not {args.drain_every}")
    b = build(args.arch, args.config, overrides=overrides(args))
    if not b.is_set("FUNCTION_TRACER"):
        raise UsageError("the kernel is built with CONFIG_FUNCTION_TRACER=n: nothing to trace")
    if args.tracer == "function_graph" and not b.is_set("FUNCTION_GRAPH_TRACER"):
        raise UsageError("--tracer function_graph needs CONFIG_FUNCTION_GRAPH_TRACER=y")
    dynamic = b.is_set("DYNAMIC_FTRACE")
    if (args.filter or args.notrace) and not dynamic:
        raise UsageError("--filter/--notrace need CONFIG_DYNAMIC_FTRACE=y")
    tables = load_tables(b.elf, b.arch)
    guest = Guest(b, cpus=args.cpus, workload=args.workload, size=args.size,
                  quantum=args.quantum, seed=args.seed)
    tracer = FunctionTracer(guest, tables, tracer=args.tracer)
    ft = tracer.ftrace
    ft.glob = args.glob
    init = guest.ftrace_boot               # the boot converted every site (ftrace_init)
    for i, word in enumerate(args.filter):
        ft.write_filter(word, append=i > 0)
    for i, word in enumerate(args.notrace):
        ft.write_filter(word, append=i > 0, notrace=True)
    options = trace_options(args, b.config, tracer.event_names, MAX_INSTRUCTIONS)
    session = TraceSession(guest, options)
    tracer.start()
    files: list[Path] = []
    if fmt in ("ctf", "chrome"):
        result, events, files = _record_ctf(args, fmt, b.key, session, tracer.symbols.name)
        lines: list[str] = []
    else:
        sink = EventList()
        result = session.run(sink)
        events = sink.events
        lines = list(render(fmt, events, tracer.symbols))
    if args.limit is not None:
        lines = lines[:args.limit]
    per_func = Counter(tracer.symbols.name(e.values[0]) for e in events
                       if e.name in ("function", "funcgraph_entry"))
    summary = {"arch": b.arch, "cpus": args.cpus, "workload": args.workload,
               "tracer": args.tracer, "dynamic_ftrace": dynamic,
               "sites": len(tables.mcount),
               "sites_enabled": len(ft.enabled_sites()) if dynamic else len(tables.mcount),
               "functions_traced": ft.filtered_functions() if dynamic else None,
               "boot_conversion": None if init is None else
               {"sites": init.sites, "host_seconds": round(init.seconds, 6),
                "modeled_cycles": init.modeled_cycles},
               "events": len(events), "calls": dict(per_func.most_common()),
               "buffers": result.to_json()["total"], "format": fmt,
               "files": [str(f) for f in files],
               "checksum_ok": result.checksum_ok, "instructions": result.instructions,
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
          f"{len(tables.mcount)} mcount sites live{conv}; checksum "
          f"{'ok' if result.checksum_ok else 'MISMATCH'}; {result.instructions:,} "
          f"instructions, {result.modeled_cycles:,.0f} modeled cycles")
    if files:
        print(f"# trace: {args.out} ({fmt}, {', '.join(f.name for f in files)})")
    return 0 if result.checksum_ok else 1


def _record_ctf(args: argparse.Namespace, fmt: str, key: str, session: TraceSession,
                symbolize: Callable[[int], str]) -> tuple[TraceResult, list, list[Path]]:
    """Run into a CTF trace (converted to Chrome JSON for ``chrome``); keep the events."""
    out = Path(args.out)
    ctf_dir = out if fmt == "ctf" else Path(tempfile.mkdtemp(prefix="kisim-ctf-"))
    arch = session.guest.arch
    trace_uuid = uuid.uuid5(TRACE_NAMESPACE, repr((
        key, "ftrace", args.tracer, args.cpus, args.workload, args.size, args.seed,
        args.quantum, tuple(args.filter), tuple(args.notrace), args.glob, args.mode,
        args.subbuf_size, args.subbufs, args.drain_every)))
    info = TraceInfo(arch.endian, trace_uuid, arch.name,
                     env={"kisim_workload": args.workload, "kisim_cpus": args.cpus,
                          "kisim_tracer": args.tracer, "kisim_cpu_clock_hz": arch.clock_hz})
    try:
        with CtfWriter(ctf_dir, info, session.classes) as writer:
            sink = EventList(forward=writer)
            result = session.run(sink)
            writer.update_env({f"kisim_events_{k}": v for k, v in result.total.to_json().items()})
        files = convert(fmt, ctf_dir, out, f"kisim {arch.name} kernel", symbolize)
    finally:
        if ctf_dir != out:
            shutil.rmtree(ctf_dir, ignore_errors=True)
    return result, sink.events, files
