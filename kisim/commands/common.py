"""Argument helpers shared by subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import patcher.instrument  # noqa: F401  (serves static keys, markers, tracepoints of modules)
import probes.kprobes  # noqa: F401  (serves register_kprobe() & co. called by guest modules)
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


def add_modules(parser: argparse.ArgumentParser, expect: bool = True) -> None:
    """``--module FILE.c`` (repeatable, into ``args.modules``) and ``--expect HEX``
    (not for commands whose workload is fixed: ``expect=False``).

    Each module is compiled against the guest kernel's headers and linked
    into the image (kbuild/modules.py; docs/modules.md); ``--workload
    MODULE:FUNC`` runs one of its functions, whose return value is the
    checksum that ``--expect`` checks.
    """
    parser.add_argument("--module", action="append", default=[], dest="modules",
                        metavar="FILE.c",
                        help="build this C file into the guest as a module (repeatable; "
                             "--workload MODULE:FUNC runs one of its functions)")
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
    if not 0 <= value <= 0xFFFF_FFFF:
        raise argparse.ArgumentTypeError(f"{text!r} is not a u32 checksum")
    return value


def arch_of(args: argparse.Namespace) -> Arch:
    return get_arch(args.arch)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
