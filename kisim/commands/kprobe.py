"""``kisim kprobe``: run a workload with one kprobe and show what each hit costs.

The probe (empty guest pre_handler, and post_handler with ``--post``;
with ``--ret`` a kretprobe with an empty return handler, and with
``--with-kprobe`` a kprobe beside it on the same entry) is
registered at ``SYMBOL[+OFF]`` of the defconfig kernel; the workload runs
once without and once with it, so the difference divided by the hits is
one hit's cost: exact guest instructions, traps and modeled cycles. A
kretprobe's own nmissed (entries that found none of its instances free,
whose returns it did not probe) is printed beside the entry probe's.
``kisim kprobe list ...`` prints the probes at the address as debugfs
``kprobes/list`` does, and ``kisim kprobe blacklist --arch A`` (no ``--at``)
what no kprobe may probe, as debugfs ``kprobes/blacklist`` does.
``SYMBOL`` may be ``MODULE:SYMBOL`` (a name several modules define must be).

``--every-instruction MOD|[MOD:]FUNC`` instead puts a probe on every
instruction of that module's functions (or that one function), runs the
workload on one CPU and checks each probe's hits against an unprobed run's
count of that instruction (:mod:`lab.transparency`): probed, refused (with
the kernel's reason), hits, mismatches, nmissed (and the kretprobes' own
with ``--ret``), and the checksum. Exit 1
on a mismatch or a wrong checksum.
"""
from __future__ import annotations

import argparse

from arches import get_arch
from kisim.commands.common import (add_arch, add_cpus, add_cycles, add_json, add_modules, add_set,
                                   add_workload, checksum_word, int_in, overrides, print_json,
                                   timing)
from kisim.errors import UsageError
from kbuild import build
from lab.kprobe import kprobe_blacklist, measure_kprobe
from lab.report import breakdown_line
from lab.transparency import every_instruction
from probes.kprobe_events import KRETPROBE_MAXACTIVE_MAX
from sim.workloads import module_workload


VIEWS = ("run", "list", "blacklist")
#: What the kprobe optimizer had done with the probe as the run ended (KprobeCost.optimizer).
OPTIMIZER = {
    "": "not queued (a post_handler, the sysctl, or a region the arch cannot detour)",
    "queued": "queued at registration; the run ended before the optimizer's 5 jiffies "
              "(--opt runs it first)",
    "optimized": "optimized before the run (--opt)",
    "optimized during the run": "optimized during the run, once its modeled clock passed "
                                "5 jiffies: the first hits trapped"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("kprobe", help="run a workload with a kprobe: hits and cost per hit",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    # checked in cmd_kprobe, not by argparse's choices: an option this command does not
    # take (`--layout 3`) is then reported as such, not its value as a wrong view
    p.add_argument("view", nargs="?", default="run", metavar="{run,list,blacklist}",
                   help="run: hits and cost per hit (default); list: the debugfs kprobes/list "
                        "lines; blacklist: the debugfs kprobes/blacklist lines, what no "
                        "kprobe may probe (no --at)")
    add_arch(p)
    where = p.add_mutually_exclusive_group()   # one of them, unless the view is blacklist
    where.add_argument("--at", metavar="[MOD:]SYMBOL[+OFF]",
                       help="where to probe, e.g. kmalloc, kmalloc+0x4 or mymod:run")
    where.add_argument("--every-instruction", metavar="MOD|[MOD:]FUNC", dest="every",
                       help="a probe on every instruction of a module's functions (or of "
                            "one function); hits checked against an unprobed run")
    p.add_argument("--post", action="store_true", help="add a post_handler (no boosting)")
    p.add_argument("--opt", action="store_true",
                   help="run the kprobe optimizer before the workload, as if its 5-jiffy "
                        "delay had passed (int3 -> jmp into a detour buffer); without it a "
                        "probe queued at registration is optimized once the run's modeled "
                        "clock passes 20 ms")
    p.add_argument("--kprobes-optimization", type=int, choices=(0, 1), default=None,
                   metavar="{0,1}",
                   help="the debug.kprobes-optimization sysctl before registering (default: "
                        "the kernel's, 1, where it has optprobes): 0 keeps every probe on "
                        "its breakpoint path, as kprobes.rst measures k, b and r")
    p.add_argument("--ret", action="store_true",
                   help="a kretprobe instead: its handler runs at every return")
    p.add_argument("--maxactive", type=int_in(1, KRETPROBE_MAXACTIVE_MAX), default=0,
                   metavar="N",
                   help="with --ret, the kretprobe's instances (default: v5.10's, one per "
                        "CPU); an entry that finds none free is the kretprobe's nmissed")
    p.add_argument("--with-kprobe", action="store_true",
                   help="with --ret, a kprobe with an empty pre_handler at the same entry "
                        "too: the two share an aggr_kprobe (kprobes.rst's \"kr\")")
    add_workload(p, "kmalloc")
    add_cpus(p)
    add_modules(p)
    p.add_argument("--handler", default=None, metavar="FUNC",
                   help="a guest function (e.g. a --module's) as the pre_handler, or with "
                        "--ret the return handler, instead of the empty one")
    add_set(p)          # the kernel's configuration, e.g. THUMB2_KERNEL=y
    add_cycles(p, "timing")
    add_json(p)
    p.set_defaults(func=cmd_kprobe)


def cmd_kprobe(args: argparse.Namespace) -> int:
    if args.view not in VIEWS:
        raise UsageError(f"unknown view {args.view!r} (views: {', '.join(VIEWS)})")
    get_arch(args.arch)
    if args.view == "blacklist":
        return _blacklist(args)
    if args.at is None and args.every is None:
        raise UsageError("one of the arguments --at --every-instruction is required")
    if args.ret and args.post:
        raise UsageError("--ret and --post do not combine (a kretprobe has no post_handler)")
    if args.opt and (args.ret or args.post):
        raise UsageError("--opt takes a plain kprobe: no --post (never optimized), no --ret")
    if args.opt and args.kprobes_optimization == 0:
        raise UsageError("--opt needs the optimizer: not with --kprobes-optimization 0")
    if args.kprobes_optimization is not None and args.every is not None:
        raise UsageError("--kprobes-optimization sets the sysctl for a run of --at: "
                         "--every-instruction has its own modes")
    if args.with_kprobe and not args.ret:
        raise UsageError("--with-kprobe adds a kprobe to a kretprobe: it needs --ret")
    if args.maxactive and (not args.ret or args.every is not None):
        raise UsageError("--maxactive sizes the kretprobe of --at ... --ret: it needs both")
    if args.every is not None:
        return _every_instruction(args)
    cost = measure_kprobe(args.arch, args.at, workload=args.workload, post=args.post,
                          ret=args.ret, with_kprobe=args.with_kprobe, optimize=args.opt,
                          maxactive=args.maxactive,
                          optimization=(None if args.kprobes_optimization is None
                                        else bool(args.kprobes_optimization)),
                          cpus=args.cpus, size=args.size,
                          modules=args.modules, handler=args.handler, expect=args.expect,
                          timing=timing(args), overrides=overrides(args))
    if args.view == "list":
        if args.json:
            print_json({"list": list(cost.list_lines)})
        else:
            print("\n".join(cost.list_lines))
        return 0 if cost.checksum_ok else 1      # the run behind it checked --expect too
    if args.json:
        print_json(cost.to_json())
        return 0 if cost.checksum_ok else 1
    print(f"kprobe at {cost.at} ({cost.address:#x}) on {cost.arch}, {cost.handlers} handler(s), "
          f"{cost.workload} on {cost.cpus} CPU(s)")
    print(f"  site before   {cost.site_before}")
    print(f"  site armed    {cost.site_after}")
    print(f"  hit path      {cost.kind}")
    if cost.optimization is not None:
        print(f"  optimizer     debug.kprobes-optimization={int(cost.optimization)}; "
              + OPTIMIZER.get(cost.optimizer, cost.optimizer))
    print(f"  hits          {cost.hits:,}   nmissed {cost.nmissed:,}")
    if cost.kretprobe_nmissed is not None:
        print(f"  kretprobe     nmissed {cost.kretprobe_nmissed:,}: entries that found none of "
              f"its {cost.maxactive} instance(s) free, whose return was not probed")
    if cost.hits:
        print(f"  per hit       {cost.instructions_per_hit:,.1f} guest instructions, "
              f"{cost.traps_per_hit:g} trap(s), {cost.modeled_cycles_per_hit:,.1f} modeled "
              "cycles")
        print(f"  stalls/hit    {breakdown_line(cost.breakdown)}")
    elif not cost.nmissed:
        hint = ("; a --module's function runs in a --workload MODULE:FUNC"
                if args.modules and not module_workload(args.workload) else "")
        print(f"  per hit       none: {cost.workload} never ran {cost.at}{hint}")
    print(f"  cycles from   {cost.cycles}")
    print(f"  checksum      {checksum_word(args, cost.checksum_ok)}")
    return 0 if cost.checksum_ok else 1


def _blacklist(args: argparse.Namespace) -> int:
    probe = {"--at": args.at is not None, "--every-instruction": args.every is not None,
             "--post": args.post,
             "--opt": args.opt, "--ret": args.ret, "--maxactive": args.maxactive,
             "--with-kprobe": args.with_kprobe, "--handler": args.handler}
    given = [name for name, value in probe.items() if value]
    if given:
        raise UsageError(f"the blacklist view lists what no kprobe may probe: it takes no "
                         f"{given[0]} (--arch, --set and --module choose the kernel)")
    lines, entries = kprobe_blacklist(args.arch, modules=args.modules,
                                      overrides=overrides(args))
    if args.json:
        print_json({"blacklist": lines,
                    "entries": [{"start": e.start, "end": e.end, "function": e.name,
                                 "why": e.why} for e in entries]})
    else:
        print("\n".join(lines))
    return 0


def _every_instruction(args: argparse.Namespace) -> int:
    if args.view == "list" or args.handler or args.cpus != 1 or args.with_kprobe:
        raise UsageError("--every-instruction takes no list view, --handler, --cpus or "
                         "--with-kprobe (one CPU, the empty handlers, one probe a place)")
    mode = "ret" if args.ret else "post" if args.post else "opt" if args.opt else "pre"
    kernel = build(args.arch, overrides=overrides(args), modules=args.modules)
    found = every_instruction(kernel, args.every, workload=args.workload, size=args.size,
                              mode=mode, expect=args.expect)
    if args.json:
        print_json(found.to_json())
        return 0 if found.ok else 1
    print(f"every instruction of {args.every} on {found.arch}: {found.functions} "
          f"function(s), {mode} probes, {found.workload} size {found.size} on 1 CPU")
    print(f"  probed        {found.probed:,}" + (
        f" ({found.optimized:,} optimized, {found.batches} batch(es))" if mode == "opt" else ""))
    print(f"  refused       {len(found.refused):,}")
    for reason, n in found.refusal_reasons().most_common():
        print(f"    {n:>5}  {reason}")
    print(f"  hits          {found.hits:,}   counted without probes {found.counted:,}")
    print(f"  mismatches    {len(found.mismatches)}")
    for m in found.mismatches[:10]:
        print(f"    {m.where} ({m.address:#x}): {m.hits:,} hits, ran {m.counted:,} times")
    print(f"  nmissed       {found.nmissed:,}")
    if mode == "ret":
        print(f"  kretprobes    nmissed {found.kretprobe_nmissed:,} (entries that found no "
              "free instance: their returns were not probed)")
    value = "none" if found.checksum is None else f"{found.checksum:#x}"
    print(f"  checksum      {value}: {checksum_word(args, found.checksum_ok)}"
          + (", the same as without probes" if found.checksum_ok else ""))
    if not found.ok:
        print(f"  not ok        {found.failure}")
    return 0 if found.ok else 1
