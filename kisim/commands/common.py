"""Argument helpers shared by subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from arches import NAMES, Arch, get_arch
from sim.machine import MAX_CPUS


def add_arch(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--arch", required=required, metavar="ARCH",
                        help=f"target architecture: {', '.join(NAMES)}")


def add_cpus(parser: argparse.ArgumentParser, default: int = 1) -> None:
    parser.add_argument("--cpus", type=int, default=default, metavar="N",
                        help=f"number of simulated CPUs, 1..{MAX_CPUS} (default {default})")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def arch_of(args: argparse.Namespace) -> Arch:
    return get_arch(args.arch)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
