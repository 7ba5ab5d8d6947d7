"""``kisim ftrace``: boot a guest with the function tracer on and print its trace.

With ``CONFIG_DYNAMIC_FTRACE=y`` (the defconfig) every mcount site is
converted to the arch's nop before the CPUs start, then only the sites the
filters select are patched to ``call ftrace_caller`` in one batch; with
``--set DYNAMIC_FTRACE=n`` the calls stay live, as in the mcount RFC.
"""
from __future__ import annotations

import argparse
from collections import Counter

from kbuild import build
from kisim.commands.build import add_config, overrides
from kisim.commands.common import add_arch, add_cpus, add_json, print_json
from kisim.errors import UsageError
from patcher.tables import load_tables
from probes.ftrace_output import render
from probes.function_tracer import FunctionTracer
from sim.guest import DEFAULT_QUANTUM, MAX_INSTRUCTIONS, WORKLOADS, Guest, check_workload

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
                        "(default: seed for function, graph for function_graph)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="print at most N trace lines")
    add_config(p)
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="draw each turn's length from 1..quantum with this seed")
    p.add_argument("--quantum", type=int, default=DEFAULT_QUANTUM, metavar="Q")
    add_json(p)
    p.set_defaults(func=cmd_ftrace)


def cmd_ftrace(args: argparse.Namespace) -> int:
    check_workload(args.workload, args.size)
    fmt = args.format or ("graph" if args.tracer == "function_graph" else "seed")
    if fmt in ("ctf", "chrome"):
        raise UsageError(f"--format {fmt} needs the trace sinks of issue 11, "
                         "which this build does not have yet")
    if fmt == "graph" and args.tracer != "function_graph":
        raise UsageError("--format graph needs --tracer function_graph")
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be >= 0")
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
    tracer.start()
    result = tracer.run(max_instructions=MAX_INSTRUCTIONS)
    lines = list(render(fmt, tracer.events, tracer.symbols))
    if args.limit is not None:
        lines = lines[:args.limit]
    per_func = Counter(tracer.symbols.name(e.values[0]) for e in tracer.events
                       if e.name in ("function", "funcgraph_entry"))
    summary = {"arch": b.arch, "cpus": args.cpus, "workload": args.workload,
               "tracer": args.tracer, "dynamic_ftrace": dynamic,
               "sites": len(tables.mcount),
               "sites_enabled": len(ft.enabled_sites()) if dynamic else len(tables.mcount),
               "functions_traced": ft.filtered_functions() if dynamic else None,
               "boot_conversion": None if init is None else
               {"sites": init.sites, "host_seconds": round(init.seconds, 6),
                "modeled_cycles": init.modeled_cycles},
               "events": len(tracer.events), "calls": dict(per_func.most_common()),
               "checksum_ok": result.ok, "instructions": result.instructions,
               "modeled_cycles": result.modeled_cycles}
    if args.json:
        summary["trace"] = lines
        print_json(summary)
        return 0 if result.ok else 1
    for line in lines:
        print(line)
    conv = "" if init is None else (f"; {init.sites} sites converted to nops at boot in "
                                    f"{init.seconds * 1e3:.2f} ms host")
    print(f"# {len(tracer.events)} events, {summary['sites_enabled']} of "
          f"{len(tables.mcount)} mcount sites live{conv}; checksum "
          f"{'ok' if result.ok else 'MISMATCH'}; {result.instructions:,} instructions, "
          f"{result.modeled_cycles:,.0f} modeled cycles")
    return 0 if result.ok else 1
