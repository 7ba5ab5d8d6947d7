"""``kisim probe``: a line-number probe, placed from DWARF, on a running guest.

``kisim probe --arch A FILE:LINE [--fetch VAR,...] --workload W`` builds
the guest (its Kconfig chooses the optimization level, -O2 by default),
finds the line's addresses in the DWARF line table, registers a kprobe on
each one and, at every hit, reads the named variables through their DWARF
locations from the registers the breakpoint trap saved. The same workload
also runs without the probe, so the cost of a hit (guest instructions,
traps, modeled cycles) is exact on one CPU. A line without code, or a variable without a
location at that address, is reported as such: the optimizer decides what
a line-number probe can see (the "simple dprobe like markers" thread).
"""
from __future__ import annotations

import argparse
from collections import Counter

from kbuild import build
from kisim.commands.common import add_arch, add_cpus, add_json, add_modules, arch_of, print_json
from kisim.errors import UsageError
from probes.dwarf import DebugInfo, DwarfError, Unavailable
from probes.kprobes import Kprobes
from probes.lineprobe import MECHANISM, LineProbe, LineProbeError, parse_location
from sim.errors import ConfigError
from sim.guest import WORKLOADS, Guest, check_workload

SHOW_HITS = 5


def _overrides(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected NAME=VALUE")
        out[name] = value
    return out


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except (DwarfError, LineProbeError, ConfigError) as err:
        # no such file/line/variable, a kprobe refusal, a kernel without kprobes
        raise UsageError(str(err)) from None


def _traps(result) -> int:
    return sum(c["events"].get("trap", 0) for c in result.per_cpu)


def _run(args: argparse.Namespace) -> int:
    arch = arch_of(args)
    check_workload(args.workload, args.size)
    file, line = parse_location(args.location)
    fetch = [v for v in (args.fetch or "").split(",") if v]
    image = build(arch.name, overrides=_overrides(args.set), modules=args.modules)
    guest = Guest(image, cpus=args.cpus, workload=args.workload, size=args.size,
                  expect=args.expect)
    kprobes = Kprobes(guest)
    with DebugInfo(image.elf, arch) as debug:
        probe = LineProbe(kprobes, debug, file, line, fetch)
        sites = []
        for la in probe.addresses:
            scope = []
            for var in debug.variables_at(la.address):
                try:
                    ops = var.expression(debug, la.address)
                    where = " ".join(op.op_name.removeprefix("DW_OP_")
                                     + ("(" + ",".join(map(str, op.args)) + ")" if op.args else "")
                                     for op in ops)
                except Unavailable as why:
                    where = str(why)
                scope.append({"name": var.name, "kind": var.kind, "type": var.type_name,
                              "location": where})
            sites.append({"address": la.address, "function": la.function, "in_scope": scope})
        probe.arm()
        listing = kprobes.list()
        result = guest.run()
    base = Guest(image, cpus=args.cpus, workload=args.workload, size=args.size,
                 expect=args.expect).run()
    n = len(probe.hits)
    cost = {"instructions": (result.instructions - base.instructions) / n,
            "modeled_cycles": (result.modeled_cycles - base.modeled_cycles) / n,
            "traps": (_traps(result) - _traps(base)) / n,
            "exact": args.cpus == 1} if n else None
    per_address = Counter(h.address for h in probe.hits)
    doc = {"arch": arch.name, "file": probe.addresses[0].file, "line": line,
           "optimization": next(f for f in image.info["cflags"] if f.startswith("-O")),
           "mechanism": MECHANISM, "workload": args.workload, "cpus": args.cpus,
           "checksum_ok": result.ok, "sites": sites, "kprobes": listing,
           "hits": len(probe.hits), "kprobe_hits": probe.kprobe_hits, "cost_per_hit": cost, "hits_per_address": {f"{a:#x}": n for a, n in
                                                          sorted(per_address.items())},
           "events": [{"cpu": h.cpu, "address": h.address, "values": h.values,
                       "unavailable": h.unavailable} for h in probe.hits]}
    if args.json:
        print_json(doc)
        return 0 if result.ok else 1
    print(f"{arch.name}: {doc['file']}:{line} (built {doc['optimization']}), "
          f"{len(sites)} address(es); probe: {MECHANISM}")
    for site in sites:
        print(f"\n  {site['address']:#x} in {site['function']}(): in scope")
        for v in site["in_scope"]:
            print(f"    {v['kind']:9} {v['type']:24} {v['name']:12} {v['location']}")
    print("\n  kprobes/list:\n" + "\n".join(f"    {entry}" for entry in listing))
    print(f"\n{args.workload} on {args.cpus} CPU(s): {len(probe.hits)} hits, checksum "
          f"{'ok' if result.ok else 'WRONG'}")
    if cost:
        print(f"  cost per hit (vs the same run unprobed{'' if cost['exact'] else ', inexact on >1 CPU'}): "
              f"{cost['instructions']:.1f} guest instructions, {cost['traps']:.1f} traps, "
              f"{cost['modeled_cycles']:.1f} modeled cycles")
    for h in probe.hits[:SHOW_HITS]:
        shown = [f"{k}={v:#x}" if v > 0xFFFF else f"{k}={v}" for k, v in h.values.items()]
        shown += [f"{k}=<{why.split(' (')[0]}>" for k, why in h.unavailable.items()]
        print(f"  cpu{h.cpu} {h.address:#x}: {' '.join(shown) or '(nothing fetched)'}")
    if len(probe.hits) > SHOW_HITS:
        print(f"  ... {len(probe.hits) - SHOW_HITS} more (--json lists every hit)")
    return 0 if result.ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="probe a source line (DWARF) and fetch variables",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arch(p)
    p.add_argument("location", metavar="FILE:LINE", help="source line, e.g. kernel/slab.c:225")
    p.add_argument("--fetch", metavar="VAR,...", help="variables to read at each hit")
    p.add_argument("--workload", required=True, metavar="W",
                   help=f"workload to run: {', '.join(WORKLOADS)}, or a --module's MODULE:FUNC")
    p.add_argument("--size", type=int, default=None, metavar="N",
                   help="workload size (default: the workload's own)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="Kconfig override, e.g. --set CC_OPTIMIZE_FOR_SIZE=y")
    add_cpus(p)
    add_modules(p)
    add_json(p)
    p.set_defaults(func=run)
