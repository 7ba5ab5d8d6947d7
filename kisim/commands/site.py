"""``kisim site``: one marker's or tracepoint's sites, before and after arming.

For teaching: shows the section record that located each enable site
(``__markers``/``__tracepoints``, then ``__imv`` or ``__jump_table``), and
the site's bytes and disassembly dormant and armed.
"""
from __future__ import annotations

import argparse

from kbuild import build
from kisim.commands.common import (add_arch, add_config, add_json, add_modules, config_note,
                                   overrides, print_json)
from lab.site import site_views
from patcher.instrument import attach
from sim.guest import Guest


def _print_view(arch: str, name: str, view: dict) -> None:
    kind, structs, sites = view["kind"], view["records"], view["sites"]
    section = "__markers" if kind == "marker" else "__tracepoints"
    print(f"{arch}: {kind} {name}, {len(structs)} {section} record(s), "
          f"{len(sites)} enable site(s), mechanism {view['enable']}")
    for r in structs:
        print(f"  {section} @ {r['address']:#x}: state @ {r['state_addr']:#x}"
              + (f", format {r['format']!r}" if "format" in r else ""))
    for s in sites:
        rec = s["record"]
        fields = ", ".join(f"{k}={v:#x}" if isinstance(v, int) else f"{k}={v}"
                           for k, v in rec.items() if k != "section")
        print(f"\n  {rec['section']}: {fields}")
        for label in ("dormant", "armed"):
            d = s[label]
            print(f"    {label:8} {d['address']:#x}:  {d['bytes']:<20} {d['text']}")


def run(args: argparse.Namespace) -> int:
    config_note(args)
    b = build(args.arch, args.config, overrides=overrides(args), modules=args.modules)
    inst = attach(Guest(b, cpus=1))
    views = site_views(inst, args.name, args.kind)
    if args.json:
        if len(views) == 1:
            print_json({"arch": b.arch, "name": args.name, "config": args.config, **views[0]})
        else:
            print_json({"arch": b.arch, "name": args.name, "config": args.config,
                        "kind": "ambiguous", "views": views})
        return 0
    if len(views) > 1:
        print(f"{args.name!r} is both a marker and a tracepoint; both are shown "
              "(--marker or --tracepoint picks one)\n")
    for i, view in enumerate(views):
        if i:
            print()
        _print_view(b.arch, args.name, view)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("site", help="show a marker's or tracepoint's sites dormant and armed",
                       description=__doc__)
    add_arch(p)
    p.add_argument("name", help="marker or tracepoint name, e.g. kmalloc or sched_switch")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--marker", dest="kind", action="store_const", const="marker",
                       help="NAME is a marker (for names that are both)")
    which.add_argument("--tracepoint", dest="kind", action="store_const", const="tracepoint",
                       help="NAME is a tracepoint (for names that are both)")
    add_config(p)
    add_modules(p, expect=False)
    add_json(p)
    p.set_defaults(func=run)
