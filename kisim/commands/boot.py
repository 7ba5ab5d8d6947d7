"""``kisim boot``: build the guest kernel, boot it on N CPUs and run a workload.

Prints the guest console, each CPU's retired instructions and modeled
cycles, the workload checksum (checked against the Python reference) and
the instrumentation sites the image holds. A checksum that differs from
the reference exits 1. With CONFIG_DYNAMIC_FTRACE=y every mcount site is
converted to the arch's nop before the CPUs start, as ftrace_init does.
"""
from __future__ import annotations

import argparse

from kconfig.build import build
from kisim.commands.build import add_config, overrides, sites_line
from kisim.commands.common import add_arch, add_cpus, add_json, print_json
from patcher.ftrace import ftrace_for
from patcher.tables import load_tables
from sim.guest import DEFAULT_QUANTUM, MAX_INSTRUCTIONS, WORKLOADS, Guest, check_workload


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("boot", help="boot the guest kernel and run a workload")
    add_arch(p)
    add_cpus(p)
    p.add_argument("--workload", default="hackbench", metavar="W",
                   help=f"workload to run: {', '.join(WORKLOADS)} (default hackbench)")
    p.add_argument("--size", type=int, default=None, metavar="N",
                   help="workload size (hackbench loops, kmalloc/getppid iterations, "
                        "fib depth; default: the workload's own)")
    add_config(p)
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="draw each turn's length from 1..quantum with this seed")
    p.add_argument("--quantum", type=int, default=DEFAULT_QUANTUM, metavar="Q",
                   help=f"instructions per CPU turn (default {DEFAULT_QUANTUM})")
    p.add_argument("--max-instructions", type=int, default=MAX_INSTRUCTIONS, metavar="N",
                   help=f"instruction budget of the whole run (default {MAX_INSTRUCTIONS})")
    add_json(p)
    p.set_defaults(func=cmd_boot)


def cmd_boot(args: argparse.Namespace) -> int:
    check_workload(args.workload, args.size)      # before a possibly long build
    b = build(args.arch, args.config, overrides=overrides(args))
    tables = load_tables(b.elf, b.arch)
    guest = Guest(b, cpus=args.cpus, workload=args.workload, size=args.size,
                  quantum=args.quantum, seed=args.seed)
    if b.is_set("DYNAMIC_FTRACE"):          # ftrace_init: every mcount site a nop
        ftrace_for(guest.machine, tables, dynamic=True).ftrace_init()
    result = guest.run(max_instructions=args.max_instructions)
    if args.json:
        out = result.to_json()
        out.update(cached=b.cached, key=b.key, sites=tables.counts())
        print_json(out)
        return 0 if result.ok else 1
    print(result.console, end="" if result.console.endswith("\n") else "\n")
    print(f"{'CPU':>4} {'instructions':>14} {'modeled cycles':>16}")
    for c in result.per_cpu:
        print(f"{c['cpu']:>4} {c['instructions']:>14,} {c['modeled_cycles']:>16,.0f}")
    print(f"{'all':>4} {result.instructions:>14,} {result.modeled_cycles:>16,.0f}"
          f"   ({result.seconds:.2f} s host time)")
    if result.ok:
        print(f"checksum {result.checksum:#010x} (matches the reference)")
    else:
        got = "none" if result.checksum is None else f"{result.checksum:#010x}"
        print(f"checksum {got} MISMATCH: the reference is {result.expected:#010x}")
    print(f"sites: {sites_line(tables.counts())}")
    return 0 if result.ok else 1
