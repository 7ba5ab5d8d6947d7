"""Argument helpers shared by subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from arches import NAMES, Arch, get_arch
from sim.machine import MAX_CPUS

#: Stated limits of the run options every guest command shares (checked by
#: argparse, before any build or run).
MAX_QUANTUM = 10 ** 9          # instructions in one CPU turn
MAX_BUDGET = 10 ** 12          # instructions in one run (hours of host time)
MAX_SIZE = 0xFFFF_FFFF         # a workload's size: a u32 in the guest (sim/workloads.py)


def add_arch(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--arch", required=required, metavar="ARCH",
                        help=f"target architecture: {', '.join(NAMES)}")


def add_cpus(parser: argparse.ArgumentParser, default: int = 1) -> None:
    parser.add_argument("--cpus", type=int, default=default, metavar="N",
                        help=f"number of simulated CPUs, 1..{MAX_CPUS} (default {default})")


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


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def arch_of(args: argparse.Namespace) -> Arch:
    return get_arch(args.arch)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
