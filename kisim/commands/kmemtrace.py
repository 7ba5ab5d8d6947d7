"""``kisim kmemtrace report TRACE_DIR``: the kmemtrace / perf kmem report of a CTF trace.

Per call site allocated and requested bytes (totals and per hit), hits,
cross-CPU frees and fragmentation; totals; the allocator misuses kmemtrace
was written to find; allocations never freed. Reads a trace from any arch.
"""
from __future__ import annotations

import argparse

from kisim.commands.common import add_json, print_json
from kisim.errors import UsageError
from tracing.kmemtrace import analyze, format_report


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("kmemtrace", help="kmemtrace report of a recorded CTF trace")
    sub = p.add_subparsers(dest="kmemtrace_command", metavar="SUBCOMMAND")
    sub.required = True
    r = sub.add_parser("report", help="per call site totals, fragmentation, errors, leaks")
    r.add_argument("trace", metavar="TRACE_DIR", help="a CTF trace from `kisim trace`")
    r.add_argument("--limit", type=int, default=20, metavar="N",
                   help="rows of call sites and leaks to print (default 20; JSON has all)")
    add_json(r)
    r.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError(f"--limit must be at least 1, not {args.limit}")
    if not args.trace:                  # Path("") is the current directory
        raise UsageError("TRACE_DIR is empty: name the trace's directory ('.' for this one)")
    report = analyze(args.trace)
    if args.json:
        print_json(report.to_json())
    else:
        print(format_report(report, args.limit))
    return 0
