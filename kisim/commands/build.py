"""``kisim build``: build (or fetch from the cache) the guest kernel of an arch.

Prints the ELF path, whether the cache had it, its size and how many
instrumentation sites of each kind its tables hold (each checked against
the disassembly by :mod:`patcher.tables`).
"""
from __future__ import annotations

import argparse
import os

from kbuild import Build, build
from kisim.commands.common import (add_arch, add_config, add_json, chosen_config, overrides,
                                   print_json, sites_line)
from kisim.progress import progress
from patcher.tables import load_tables

#: Options worth showing in the one-line configuration summary.
SHOWN = ("SMP", "NR_CPUS", "MARKERS", "IMMEDIATE", "JUMP_LABEL", "TRACEPOINTS",
         "FUNCTION_TRACER", "DYNAMIC_FTRACE", "KPROBES", "KMEMTRACE")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("build", help="build the guest kernel (content-addressed cache)")
    add_arch(p)
    add_config(p)
    add_json(p)
    p.set_defaults(func=cmd_build)


def config_summary(b: Build) -> str:
    return " ".join(f"{name}={b.config[name]}" for name in SHOWN if name in b.config)


def cmd_build(args: argparse.Namespace) -> int:
    wanted = overrides(args)
    choice = chosen_config(args)
    with progress(f"{args.arch}: building the guest kernel", enabled=not args.json) as step:
        b = build(args.arch, choice.path, overrides=wanted,
                  step=lambda what: step(0, description=what))
    tables = load_tables(b.elf, b.spec)
    sizes = tables.image.sizes()
    if args.json:
        print_json({"arch": b.arch, "elf": os.fspath(b.elf), "cached": b.cached,
                    "key": b.key, "seconds": round(b.seconds, 3),
                    "file_size": b.elf.stat().st_size, "sizes": sizes,
                    "sites": tables.counts(), "config": b.config,
                    "compiler": b.info.get("compiler"), "config_used": choice.to_json()})
        return 0
    state = "cache hit" if b.cached else f"built in {b.seconds:.2f} s"
    print(f"{b.elf}")
    print(f"  {b.arch}, {state}, key {b.key[:16]}, {b.info.get('compiler', '')}")
    print(f"  size: text {sizes['text']}, rodata {sizes['rodata']}, data {sizes['data']}, "
          f"bss {sizes['bss']} bytes; file {b.elf.stat().st_size} bytes")
    print(f"  config: {config_summary(b)}")
    print(f"  sites: {sites_line(tables.counts())}")
    return 0
