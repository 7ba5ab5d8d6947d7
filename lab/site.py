"""What ``kisim site`` shows: one marker's or tracepoint's enable sites, dormant and armed.

The section record that located each enable site (``__markers``/``__tracepoints``,
then ``__imv`` or ``__jump_table``, patcher/tables.py), and the site's bytes and
disassembly before and after the name is armed through the patcher (a marker
with an empty probe, 2.6.27's ``marker_probe_register`` and ``marker_arm``; a
tracepoint with ``register_trace``).
"""
from __future__ import annotations

from patcher.errors import PatchError
from patcher.instrument import Instrumentation
from sim.asm import disassemble


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
        code = inst.guest.machine.read(addr, arch.max_insn_len)
        insn = disassemble(arch, code, addr, count=1)
        text, raw = (insn[0].text, insn[0].bytes) if insn else ("(undecodable)", code[:4])
        out.append({"address": addr, "bytes": raw.hex(), "text": text})
    return out


def _armed_view(inst: Instrumentation, name: str, kind: str, records: list,
          addrs: list[int]) -> dict:
    """Arm ``name`` as ``kind``, snapshot its sites before and after, then disarm it."""
    before = _snapshot(inst, addrs)
    probe = lambda *a: None  # noqa: E731
    if kind == "marker":
        inst.markers.marker_probe_register(name, records[0].format, probe)
        inst.markers.marker_arm(name)          # ENOENT without a probe (2.6.27)
    else:
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


def site_views(inst: Instrumentation, name: str, kind: str | None = None) -> list[dict]:
    """Each marker or tracepoint called ``name`` (``kind`` picks one where the name is
    both; ENOENT for neither): its records, and each enable site's section record and
    code dormant and armed. The guest is left as it was found (disarmed)."""
    return [_armed_view(inst, name, *view) for view in _views(inst, name, kind)]


__all__ = ["site_views"]
