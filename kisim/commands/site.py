"""``kisim site``: one marker's or tracepoint's sites, before and after arming.

For teaching: shows the section record that located each enable site
(``__markers``/``__tracepoints``, then ``__imv`` or ``__jump_table``), and
the site's bytes and disassembly dormant and armed.
"""
from __future__ import annotations

import argparse

from kbuild import build
from kisim.commands.common import (add_arch, add_config, add_json, config_note, overrides,
                                   print_json)
from patcher.errors import PatchError
from patcher.instrument import Instrumentation, attach
from sim.asm import disassemble
from sim.guest import Guest


def _views(inst: Instrumentation, name: str, kind: str | None) -> list[tuple[str, list, list[int]]]:
    """(kind, struct records, enable-site addresses) for each thing called ``name``.

    ``kind`` (``"marker"``/``"tracepoint"``) picks one when the name is both,
    as sched_switch, sched_wakeup, kmalloc and kfree are; without it both
    are returned, the marker first.
    """
    views: list[tuple[str, list, list[int]]] = []
    markers = inst.tables.markers_named(name) if kind != "tracepoint" else []
    if markers:
        views.append(("marker", markers, [a for m in markers for a in m.sites]))
    if kind != "marker":
        try:
            tp = inst.tables.tracepoint(name)
            views.append(("tracepoint", [tp], list(tp.sites)))
        except KeyError:
            pass
    if views:
        return views
    known = (inst.tables.marker_names() if kind != "tracepoint" else []) + \
        ([t.name for t in inst.tables.tracepoints] if kind != "marker" else [])
    raise PatchError("ENOENT", f"no {kind or 'marker or tracepoint'} {name!r} "
                               f"(known: {', '.join(sorted(set(known)))})")


def _site_record(inst: Instrumentation, addr: int) -> dict:
    for e in inst.tables.imv:
        if e.insn == addr:
            return {"section": "__imv", "var": e.var, "imv": e.imv, "insn": e.insn,
                    "size": e.size, "function": e.function}
    for e in inst.tables.jump_entries:
        if e.code == addr:
            return {"section": "__jump_table", "code": e.code, "target": e.target,
                    "key": e.key, "function": e.function}
    return {"section": "(memory load of state)", "insn": addr,
            "function": inst.tables.image.describe(addr)}


def _snapshot(inst: Instrumentation, addrs: list[int]) -> list[dict]:
    arch = inst.guest.arch
    out = []
    for addr in addrs:
        size = arch.max_insn_len if arch.insn_align > 1 else 8
        code = inst.guest.machine.read(addr, size)
        insn = disassemble(arch, code, addr, count=1)
        text, raw = (insn[0].text, insn[0].bytes) if insn else ("(undecodable)", code[:4])
        out.append({"address": addr, "bytes": raw.hex(), "text": text})
    return out


def _view(inst: Instrumentation, name: str, kind: str, records: list,
          addrs: list[int]) -> dict:
    """Arm ``name`` as ``kind``, snapshot its sites before and after, then disarm it."""
    before = _snapshot(inst, addrs)
    if kind == "marker":
        probe = lambda *a: None  # noqa: E731
        inst.markers.marker_probe_register(name, records[0].format, probe)
        inst.markers.marker_arm(name)          # ENOENT without a probe (2.6.27)
    else:
        probe = lambda *a: None  # noqa: E731
        inst.tracepoints.register_trace(name, probe)
    after = _snapshot(inst, addrs)
    if kind == "marker":
        inst.markers.marker_disarm(name)
        inst.markers.marker_probe_unregister(name, probe)
    else:
        inst.tracepoints.unregister_trace(name, probe)
    return {"kind": kind,
            "records": [{k: v for k, v in vars(r).items() if k != "sites"} for r in records],
            "sites": [{"record": _site_record(inst, a), "dormant": d, "armed": x}
                      for a, d, x in zip(addrs, before, after)],
            "enable": records[0].enable}


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
    b = build(args.arch, args.config, overrides=overrides(args))
    inst = attach(Guest(b, cpus=1))
    views = [_view(inst, args.name, *v) for v in _views(inst, args.name, args.kind)]
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
    add_json(p)
    p.set_defaults(func=run)
