"""``kisim probe``: a line-number probe, placed from DWARF, on a running guest.

``kisim probe --arch A FILE:LINE|FUNC:N [--fetch VAR,...] --workload W``
builds the guest (its Kconfig chooses the optimization level, -O2 by
default), finds the line's addresses in the DWARF line table (FUNC:N, as in
perf probe, is the line N after the one that declares FUNC), registers a
kprobe on each one and, at every hit, reads the named variables through
their DWARF locations from the registers the breakpoint trap saved; as in
perf probe, VAR->member, VAR.member and VAR[N] follow the variable's type.
The same workload also runs without the probe, so the cost of a hit (guest
instructions, traps, modeled cycles) is exact on one CPU. A line without
code, or a variable without a location at that address, is reported as
such: the optimizer decides what a line-number probe can see (the "simple
dprobe like markers" thread).

Without a run, as perf probe's -L and -V: ``-L FUNC[:N[+NUM|-M]]`` or
``-L FILE[:A[+NUM|-B]]`` lists the source with the number of every line
the compiler placed code for (relative to FUNC's declaration), and ``-V
FILE:LINE|FUNC:N`` lists the variables at each address of the line, with
those that have no location there and why. ``-D`` prints what perf probe
-D prints: the kprobe_events definition of each address, the --fetch
arguments converted from their DWARF locations, for ``kisim trace
--kprobe-event``.
"""
from __future__ import annotations

import argparse

from kisim.commands.common import (add_arch, add_cpus, add_cycles, add_json, add_modules, add_set,
                                   add_workload, arch_of, checksum_checked, checksum_word,
                                   overrides, print_json, timing)
from kisim.errors import UsageError
from lab.lineprobe import available_variables, definitions, list_lines, probe_line
from probes.dwarf import DwarfError, parse_fetch
from probes.lineprobe import LineProbeError, parse_location, split_name
from sim.errors import ConfigError
from sim.guest import check_workload

SHOW_HITS = 5


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except (DwarfError, LineProbeError, ConfigError) as err:
        # no such file/line/variable, a kprobe refusal, a kernel without kprobes
        raise UsageError(str(err)) from None


def _checked(args: argparse.Namespace) -> list[str]:
    """The --fetch list, once the options are known to go together: as perf probe, an
    option that the chosen mode would ignore is refused (-L, -V and -D run nothing;
    -L lists a range, and -V shows every variable)."""
    mode = next((flag for flag, on in (("-L", args.line is not None), ("-V", args.vars),
                                       ("-D", args.definition)) if on), None)
    unused = [option for option, given in (
        ("a probe point", args.location is not None and mode == "-L"),
        ("--fetch", args.fetch is not None and mode in ("-L", "-V")),
        ("--workload", args.workload is not None), ("--size", args.size is not None),
        ("--expect", args.expect is not None), ("--cpus", args.cpus != 1),
        ("--cycles", args.cycles != "timing")) if given and mode]
    if unused:
        raise UsageError(f"{unused[0]} cannot be used with {mode}, which "
                         + ("lists a range of lines" if mode == "-L" else
                            "lists every variable" if unused[0] == "--fetch" else "runs nothing"))
    if mode != "-L" and args.location is None:
        raise UsageError("give a probe point, FILE:LINE or FUNC:N (or -L to list lines)")
    fetch = [] if args.fetch is None else [v.strip() for v in args.fetch.split(",")]
    for name in fetch:
        parse_fetch(split_name(name)[1])    # malformed: refused before the build
    return fetch


def _run(args: argparse.Namespace) -> int:
    arch = arch_of(args)
    fetch = _checked(args)
    if args.line is not None:
        return _lines(args, list_lines(arch, args.line, overrides=overrides(args),
                                       modules=args.modules))
    parse_location(args.location)           # malformed: refused before the build
    if args.vars:
        return _vars(args, available_variables(arch, args.location, overrides=overrides(args),
                                               modules=args.modules))
    if args.definition:
        doc = definitions(arch, args.location, fetch, overrides=overrides(args),
                          modules=args.modules)
        if args.json:
            print_json(doc)
        else:
            print("\n".join(doc["definitions"]))
        return 0
    if args.workload is None:
        raise UsageError("--workload is required to run the probe (-V lists the variables "
                         "without a run)")
    check_workload(args.workload, args.size)
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
    print(f"\n{args.workload} on {args.cpus} CPU(s): {doc['hits']} hits, nmissed "
          f"{doc['nmissed']}, checksum {checksum_word(args, ok)}")
    cost = doc["cost_per_hit"]
    if cost:
        print(f"  cost per hit (vs the same run unprobed"
              f"{'' if cost['exact'] else ', inexact on >1 CPU'}): "
              f"{cost['instructions']:.1f} guest instructions, {cost['traps']:.1f} traps, "
              f"{cost['modeled_cycles']:.1f} modeled cycles")
    opt = doc["optimizer"]
    if opt and (opt["queued"] or opt["optimized"]):
        print(f"  optimizer: of its {len(doc['sites'])} kprobe(s), {opt['queued']} queued at "
              f"registration and still waiting (5 jiffies not passed), {opt['optimized']} "
              "optimized during the run")
    for h in doc["events"][:SHOW_HITS]:
        shown = [f"{k}={v:#x}" if v > 0xFFFF else f"{k}={v}" for k, v in h["values"].items()]
        shown += [f"{k}=<{why.split(' (')[0]}>" for k, why in h["unavailable"].items()]
        print(f"  cpu{h['cpu']} {h['address']:#x}: {' '.join(shown) or '(nothing fetched)'}")
    if doc["hits"] > SHOW_HITS:
        print(f"  ... {doc['hits'] - SHOW_HITS} more (--json lists every hit)")
    return 0 if ok else 1


def _lines(args: argparse.Namespace, doc: dict) -> int:
    """perf probe -L's listing (v5.10 probe-event.c __show_line_range): the numbers of
    lines with code, as "%7d  " before the line, and nine spaces before the others."""
    if args.json:
        print_json(doc)
        return 0
    head = (f"<{doc['function']}@{doc['file']}:{doc['start'] - doc['offset']}>"
            if doc["function"] else f"<{doc['file']}:{doc['start']}>")
    print(head)
    for line in doc["lines"]:
        print((f"{line['shown']:7d}  " if line["code"] else " " * 9) + line["text"])
    return 0


def _vars(args: argparse.Namespace, doc: dict) -> int:
    """perf probe -V's listing (show_available_vars): each address as @<FUNC+OFFSET>,
    then "TYPE\tNAME" of each variable with a location there; kisim adds the others,
    with why they have none."""
    if args.json:
        print_json(doc)
        return 0
    print(f"Available variables at {doc['location']}")
    for site in doc["sites"]:
        print(f"\t@<{site['function']}+{site['offset']}>")
        for v in site["in_scope"]:
            print(f"\t\t{v['type']}\t{v['name']}" if v["available"] else
                  f"\t\t({v['type']}\t{v['name']}: {v['location']})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="probe a source line (DWARF) and fetch variables",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arch(p)
    p.add_argument("location", metavar="FILE:LINE|FUNC:N", nargs="?",
                   help="source line, e.g. kernel/slab.c:232, or perf probe's line N after "
                        "the one declaring FUNC, e.g. kmalloc:16; FUNC alone (or FUNC:0) is "
                        "the function's entry, as in perf probe")
    modes = p.add_mutually_exclusive_group()
    modes.add_argument("-L", "--line", metavar="RANGE",
                   help="list source lines with the numbers of those that have code, as "
                        "perf probe -L: FUNC[:N[+NUM|-M]] (relative to FUNC's declaration) "
                        "or FILE[:A[+NUM|-B]]; no run")
    modes.add_argument("-D", "--definition", action="store_true",
                   help="print the kprobe_events definitions of the probe and its --fetch "
                        "arguments, as perf probe -D, for kisim trace --kprobe-event; no run")
    modes.add_argument("-V", "--vars", action="store_true",
                   help="list the variables at each address of the probe point, as perf "
                        "probe -V (and those with no location there); no run")
    p.add_argument("--fetch", metavar="VAR,...",
                   help="variables to read at each hit; perf probe's VAR->member, "
                        "VAR.member and VAR[N] follow pointers, structs and arrays "
                        "(e.g. cachep->size)")
    add_workload(p, None, required=False)
    add_set(p, "CC_OPTIMIZE_FOR_SIZE=y")
    add_cpus(p)
    add_modules(p)
    add_cycles(p, "timing")
    add_json(p)
    p.set_defaults(func=run)
