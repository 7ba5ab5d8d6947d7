"""``kisim boot``: build the guest kernel, boot it on N CPUs and run a workload.

Prints the guest console, each CPU's retired instructions and modeled
cycles, the workload checksum (checked against the Python reference) and
the instrumentation sites the image holds. A checksum that differs from
the reference exits 1. With CONFIG_DYNAMIC_FTRACE=y every mcount site is
converted to the arch's nop before the CPUs start, as ftrace_init does.
"""
from __future__ import annotations

import argparse
import time

from kbuild import build
from kisim.commands.build import add_config, chosen_config, overrides, sites_line
from kisim.commands.common import (MAX_BUDGET, MAX_CPUS, MAX_QUANTUM, MAX_SIZE, add_arch,
                                   add_cpus, add_json, int_in, print_json)
from kisim.errors import UsageError
from kisim.progress import progress
from patcher.tables import load_tables
from sim.guest import DEFAULT_QUANTUM, MAX_INSTRUCTIONS, WORKLOADS, Guest, check_workload


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("boot", help="boot the guest kernel and run a workload")
    add_run_args(p)
    add_json(p)
    p.set_defaults(func=cmd_boot)


def add_run_args(p: argparse.ArgumentParser) -> None:
    """--arch, --cpus, the workload, the kernel config and the machine's turn options."""
    add_arch(p)
    add_cpus(p)
    p.add_argument("--workload", default="hackbench", metavar="W",
                   help=f"workload to run: {', '.join(WORKLOADS)} (default hackbench)")
    p.add_argument("--size", type=int, default=None, metavar="N",
                   help="workload size (hackbench loops, kmalloc/getppid iterations, "
                        f"fib depth; 1..{MAX_SIZE}; default: the workload's own)")
    add_config(p)
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="draw each turn's length from 1..quantum with this seed")
    p.add_argument("--quantum", type=int_in(1, MAX_QUANTUM), default=DEFAULT_QUANTUM,
                   metavar="Q", help=f"instructions per CPU turn, 1..{MAX_QUANTUM} "
                                     f"(default {DEFAULT_QUANTUM})")
    p.add_argument("--max-instructions", type=int_in(1, MAX_BUDGET), default=MAX_INSTRUCTIONS,
                   metavar="N", help=f"instruction budget of the whole run, 1..{MAX_BUDGET} "
                                     f"(default {MAX_INSTRUCTIONS})")


def config_note(args: argparse.Namespace) -> None:
    """Resolve ``args.config`` in place (--config, else ./.config, else the defconfig)."""
    path = chosen_config(args).path
    args.config = None if path is None else str(path)


def _check_numbers(args: argparse.Namespace) -> None:
    if not 1 <= args.cpus <= MAX_CPUS:
        raise UsageError(f"--cpus {args.cpus} out of range 1..{MAX_CPUS}")


def cmd_boot(args: argparse.Namespace) -> int:
    _check_numbers(args)
    check_workload(args.workload, args.size)      # before a possibly long build
    started = time.perf_counter()
    config_note(args)
    with progress(f"boot {args.arch} {args.workload}", enabled=not args.json):
        b = build(args.arch, args.config, overrides=overrides(args))
        tables = load_tables(b.elf, b.arch)
        guest = Guest(b, cpus=args.cpus, workload=args.workload, size=args.size,
                      quantum=args.quantum, seed=args.seed)     # ftrace_init included
        result = guest.run(max_instructions=args.max_instructions)
    wall = time.perf_counter() - started
    if args.json:
        out = result.to_json()
        init = guest.ftrace_boot
        out.update(cached=b.cached, key=b.key, sites=tables.counts(), config=args.config,
                   wall_seconds=round(wall, 3),
                   ftrace_init=None if init is None else {
                       "sites": init.sites, "host_seconds": round(init.seconds, 6),
                       "modeled_cycles": init.modeled_cycles})
        print_json(out)
        return 0 if result.ok else 1
    print(result.console, end="" if result.console.endswith("\n") else "\n")
    print(f"{'CPU':>4} {'instructions':>14} {'modeled cycles':>16}")
    for c in result.per_cpu:
        print(f"{c['cpu']:>4} {c['instructions']:>14,} {c['modeled_cycles']:>16,.0f}")
    print(f"{'all':>4} {result.instructions:>14,} {result.modeled_cycles:>16,.0f}"
          f"   ({wall:.2f} s host time, build and boot)")
    if result.ok:
        print(f"checksum {result.checksum:#010x} (matches the reference)")
    else:
        got = "none" if result.checksum is None else f"{result.checksum:#010x}"
        print(f"checksum {got} MISMATCH: the reference is {result.expected:#010x}")
    print(f"sites: {sites_line(tables.counts())}")
    if guest.ftrace_boot is not None:          # the kernel's "ftrace: converting mcount calls"
        init = guest.ftrace_boot
        print(f"ftrace: {init.sites} mcount sites converted to nops before the CPUs started "
              f"({init.seconds * 1e3:.2f} ms host, {init.modeled_cycles:,.0f} modeled cycles "
              "on CPU 0)")
    return 0 if result.ok else 1
