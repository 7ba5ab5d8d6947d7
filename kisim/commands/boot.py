"""``kisim boot``: build the guest kernel, boot it on N CPUs and run a workload.

Prints the guest console, each CPU's retired instructions and modeled
cycles, the workload checksum (checked against the Python reference) and
the instrumentation sites the image holds. A checksum that differs from
the reference exits 1. With CONFIG_DYNAMIC_FTRACE=y every mcount site is
converted to the arch's nop before the CPUs start, as ftrace_init does.
"""
from __future__ import annotations

import argparse
import sys
import time

from kbuild import build
from kisim.commands.common import (add_cycles, timing, add_json, add_run_args, config_note, overrides, print_json,
                                   sites_line)
from kisim.progress import progress
from patcher.tables import load_tables
from sim.guest import Guest, check_workload


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("boot", help="boot the guest kernel and run a workload")
    add_run_args(p)
    add_cycles(p, "count")
    add_json(p)
    p.set_defaults(func=cmd_boot)


def cmd_boot(args: argparse.Namespace) -> int:
    check_workload(args.workload, args.size)      # before a possibly long build
    started = time.perf_counter()
    config_note(args)
    with progress(f"boot {args.arch} {args.workload}", enabled=not args.json):
        b = build(args.arch, args.config, overrides=overrides(args), modules=args.modules)
        tables = load_tables(b.elf, b.spec)
        guest = Guest(b, cpus=args.cpus, workload=args.workload, size=args.size,
                      quantum=args.quantum, seed=args.seed, expect=args.expect,
                  timing=timing(args))
        result = guest.run(max_instructions=args.max_instructions)
    wall = time.perf_counter() - started
    if args.json:
        out = result.to_json()
        init = guest.ftrace_boot
        out.update(cached=b.cached, key=b.key, sites=tables.counts(), config=args.config,
                   modules=[m.name for m in b.modules],
                   wall_seconds=round(wall, 3),
                   ftrace_init=None if init is None else init.to_json())
        print_json(out)
        return 0 if result.ok else 1
    print(result.console, end="" if result.console.endswith("\n") else "\n")
    print(f"{'CPU':>4} {'instructions':>14} {'modeled cycles':>16}")
    for c in result.per_cpu:
        print(f"{c['cpu']:>4} {c['instructions']:>14,} {c['modeled_cycles']:>16,.0f}")
    print(f"{'all':>4} {result.instructions:>14,} {result.modeled_cycles:>16,.0f}"
          f"   ({wall:.2f} s host time, build and boot)")
    for failed in result.failed_modules:
        print(f"kisim: {failed}", file=sys.stderr)
    if result.checksum_ok and result.expected is None:
        print(f"checksum {result.checksum:#010x} (a module's workload: --expect HEX checks it)")
    elif result.checksum_ok:
        print(f"checksum {result.checksum:#010x} (matches "
              f"{'--expect' if args.expect is not None else 'the reference'})")
    else:
        got = "none" if result.checksum is None else f"{result.checksum:#010x}"
        want = "any" if result.expected is None else f"{result.expected:#010x}"
        print(f"checksum {got} MISMATCH: "
              f"{'expected' if args.expect is not None else 'the reference is'} {want}")
    print(f"sites: {sites_line(tables.counts())}")
    if result.patching is not None:
        taken = ", ".join(map(str, result.patching["ipis_taken"]))
        print(f"patching: the kernel's own code (PATCHING_IN_GUEST), "
              f"{result.patching['calls']} calls; IPIs taken per CPU: {taken}")
    if guest.ftrace_boot is not None:          # the kernel's "ftrace: converting mcount calls"
        init = guest.ftrace_boot
        print(f"ftrace: {init.sites} mcount sites converted to nops before the CPUs started "
              f"({init.seconds * 1e3:.2f} ms host, {init.modeled_cycles:,.0f} modeled cycles "
              "on CPU 0)")
        if init.bug is not None:
            print(f"ftrace: {init.bug}: ftrace_bug killed ftrace; the sites from there on "
                  "still call mcount")
    return 0 if result.ok else 1
