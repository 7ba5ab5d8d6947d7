"""``kisim site``: one marker's or tracepoint's sites, before and after arming.

For teaching: shows the section record that located each enable site
(``__markers``/``__tracepoints``, then ``__imv`` or ``__jump_table``), and
the site's bytes and disassembly dormant and armed.
"""
from __future__ import annotations

import argparse

from kbuild import build
from kisim.commands.build import add_config, overrides
from kisim.commands.common import add_arch, add_json, print_json
from patcher.errors import PatchError
from patcher.instrument import Instrumentation, attach
from sim.asm import disassemble
from sim.guest import Guest


def _records(inst: Instrumentation, name: str) -> tuple[str, list, list[int]]:
    """(kind, struct records, enable-site addresses) for ``name``."""
    markers = inst.tables.markers_named(name)
    if markers:
        return "marker", markers, [a for m in markers for a in m.sites]
    try:
        tp = inst.tables.tracepoint(name)
    except KeyError:
        names = inst.tables.marker_names() + [t.name for t in inst.tables.tracepoints]
        raise PatchError("ENOENT", f"no marker or tracepoint {name!r} "
                                   f"(known: {', '.join(sorted(set(names)))})") from None
    return "tracepoint", [tp], list(tp.sites)


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


def run(args: argparse.Namespace) -> int:
    b = build(args.arch, args.config, overrides=overrides(args))
    inst = attach(Guest(b, cpus=1))
    kind, records, addrs = _records(inst, args.name)
    before = _snapshot(inst, addrs)
    if kind == "marker":
        inst.markers.marker_probe_register(args.name, records[0].format, lambda *a: None)
        inst.markers.marker_arm(args.name)          # ENOENT without a probe (2.6.27)
    else:
        inst.tracepoints.register_trace(args.name, lambda *a: None)
    after = _snapshot(inst, addrs)
    sites = [{"record": _site_record(inst, a), "dormant": d, "armed": x}
             for a, d, x in zip(addrs, before, after)]
    structs = [{k: v for k, v in vars(r).items() if k != "sites"} for r in records]
    if args.json:
        print_json({"arch": b.arch, "name": args.name, "kind": kind,
                    "records": structs, "sites": sites})
        return 0
    section = "__markers" if kind == "marker" else "__tracepoints"
    print(f"{b.arch}: {kind} {args.name}, {len(records)} {section} record(s), "
          f"{len(sites)} enable site(s), mechanism {records[0].enable}")
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
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("site", help="show a marker's or tracepoint's sites dormant and armed",
                       description=__doc__)
    add_arch(p)
    p.add_argument("name", help="marker or tracepoint name, e.g. kmalloc or sched_switch")
    add_config(p)
    add_json(p)
    p.set_defaults(func=run)
