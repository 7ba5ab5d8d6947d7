"""``kisim probe``: a line-number probe, placed from DWARF, on a running guest.

``kisim probe --arch A FILE:LINE|FUNC:N [--fetch VAR,...] --workload W``
builds the guest (its Kconfig chooses the optimization level, -O2 by
default), finds the line's addresses in the DWARF line table (FUNC:N, as in
perf probe, is the line N after the one that declares FUNC), registers a
kprobe on each one and, at every hit, reads the named variables through
their DWARF locations from the registers the breakpoint trap saved; as in
perf probe, VAR->member, VAR.member and VAR[N] follow the variable's type. The same workload
also runs without the probe, so the cost of a hit (guest instructions,
traps, modeled cycles) is exact on one CPU. A line without code, or a variable without a
location at that address, is reported as such: the optimizer decides what
a line-number probe can see (the "simple dprobe like markers" thread).
"""
from __future__ import annotations

import argparse

from kisim.commands.common import (add_arch, add_cpus, add_cycles, add_json, add_modules, add_set,
                                   add_workload, arch_of, checksum_checked, checksum_word,
                                   overrides, print_json, timing)
from kisim.errors import UsageError
from lab.lineprobe import probe_line
from probes.dwarf import DwarfError
from probes.lineprobe import LineProbeError, parse_location
from sim.errors import ConfigError
from sim.guest import check_workload

SHOW_HITS = 5


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except (DwarfError, LineProbeError, ConfigError) as err:
        # no such file/line/variable, a kprobe refusal, a kernel without kprobes
        raise UsageError(str(err)) from None


def _run(args: argparse.Namespace) -> int:
    arch = arch_of(args)
    check_workload(args.workload, args.size)
    parse_location(args.location)           # malformed: refused before the build
    fetch = [v.strip() for v in (args.fetch or "").split(",") if v.strip()]
    doc = probe_line(arch, args.location, fetch, workload=args.workload, cpus=args.cpus,
                     size=args.size, overrides=overrides(args), modules=args.modules,
                     expect=args.expect, timing=timing(args))
    ok = doc["checksum_ok"]
    doc["checksum_checked"] = checksum_checked(args)
    if args.json:
        print_json(doc)
        return 0 if ok else 1
    print(f"modeled cycles from the {doc['cycles']}")
    print(f"{arch.name}: {doc['file']}:{doc['line']} (built {doc['optimization']}), "
          f"{len(doc['sites'])} address(es); probe: {doc['mechanism']}")
    for site in doc["sites"]:
        print(f"\n  {site['address']:#x} in {site['function']}(): in scope")
        for v in site["in_scope"]:
            print(f"    {v['kind']:9} {v['type']:24} {v['name']:12} {v['location']}")
    print("\n  kprobes/list:\n" + "\n".join(f"    {entry}" for entry in doc["kprobes"]))
    print(f"\n{args.workload} on {args.cpus} CPU(s): {doc['hits']} hits, checksum "
          f"{checksum_word(args, ok)}")
    cost = doc["cost_per_hit"]
    if cost:
        print(f"  cost per hit (vs the same run unprobed"
              f"{'' if cost['exact'] else ', inexact on >1 CPU'}): "
              f"{cost['instructions']:.1f} guest instructions, {cost['traps']:.1f} traps, "
              f"{cost['modeled_cycles']:.1f} modeled cycles")
    for h in doc["events"][:SHOW_HITS]:
        shown = [f"{k}={v:#x}" if v > 0xFFFF else f"{k}={v}" for k, v in h["values"].items()]
        shown += [f"{k}=<{why.split(' (')[0]}>" for k, why in h["unavailable"].items()]
        print(f"  cpu{h['cpu']} {h['address']:#x}: {' '.join(shown) or '(nothing fetched)'}")
    if doc["hits"] > SHOW_HITS:
        print(f"  ... {doc['hits'] - SHOW_HITS} more (--json lists every hit)")
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="probe a source line (DWARF) and fetch variables",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arch(p)
    p.add_argument("location", metavar="FILE:LINE|FUNC:N",
                   help="source line, e.g. kernel/slab.c:232, or perf probe's line N after "
                        "the one declaring FUNC, e.g. kmalloc:16")
    p.add_argument("--fetch", metavar="VAR,...",
                   help="variables to read at each hit; perf probe's VAR->member, "
                        "VAR.member and VAR[N] follow pointers, structs and arrays "
                        "(e.g. cachep->size)")
    add_workload(p, None)
    add_set(p, "CC_OPTIMIZE_FOR_SIZE=y")
    add_cpus(p)
    add_modules(p)
    add_cycles(p, "timing")
    add_json(p)
    p.set_defaults(func=run)
