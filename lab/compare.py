"""The mechanism comparison behind ``kisim compare``: same points, same workload, every arch.

Method.  For each mechanism of :data:`lab.mechanisms.MECHANISMS` the guest
is built with only that mechanism compiled in and run twice on the same
workload: dormant, and armed at the same two points. A build with nothing
compiled in is the baseline, and the dormant run of every mechanism that
compiles nothing in (kprobes, line probes). Then, through
:func:`lab.measure.measure`, exactly:

* dormant cost per pass = (dormant run - baseline run) / passes, where
  passes counts every execution of the mechanism's sites (code hooks on
  the enable instructions, mcount sites or probed addresses, which cost
  the guest nothing);
* active cost per hit = (armed run - dormant run) / hits, where hits
  counts the probe's calls (or recorded events, traced calls, kprobe hits);
* per workload: totals and the percentage over the baseline.

Instruction counts are exact. Modeled cycles are recomputed from the
counts with a :class:`lab.measure.CostModel` (retired instructions and
charged events: trap, IPI, icache flush, clock read), plus the timing
model's stalls. ``memory_pressure`` is a property of the workload
(CONFIG_WORKLOAD_MEMORY_PRESSURE, kconfig/Kconfig.workloads): every build
walks twice the outermost cache before each step, so
that a flag load misses as far as the model makes it (Desnoyers' argument
for immediate values); it needs the timing model, and its default size is
:data:`PRESSURE_SIZE_DIVISOR` times smaller than the workload's.
Arming happens before the workload starts; its cost (the text patching's
IPIs and flushes) is reported apart from the workload's.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from arches import Arch, get_arch
from arches.base import ReferenceCore
from lab.measure import CompareError, Cost, CostModel, cycles_from, measure
from lab.kprobe import path_letters
from lab.mechanisms import (KERNEL_POINTS, NONE, Run, Unavailable, mechanism, run_once, select,
                            site_points)
from lab.orderings import orderings
from lab.verdict import judge, spread
from probes.kprobes import arch_kprobes
from sim.workloads import DEFAULT_SIZES

#: Under memory pressure every step walks twice the outermost cache (65,536 loads on
#: the Cortex-A9): the default workload size shrinks by this factor to keep runs short.
PRESSURE_SIZE_DIVISOR = 20


@dataclass
class Row:
    """One mechanism on one arch."""

    key: str
    label: str
    passes: int
    hits: int
    dormant: dict
    active: dict | None
    arming_cycles: float | None
    published: str
    detail: str = ""
    unavailable: str | None = None
    #: A kprobe row: kprobes.rst's letter for the path its hits took (:func:`kprobe_paths`).
    kprobe_path: str | None = None

    def to_json(self) -> dict:
        return {"mechanism": self.key, "label": self.label, "passes": self.passes,
                "hits": self.hits, "dormant": self.dormant, "active": self.active,
                "arming_modeled_cycles": self.arming_cycles, "published": self.published,
                "kprobe_path": self.kprobe_path, "detail": self.detail,
                "unavailable": self.unavailable}


def _pct(x: float, base: float) -> float:
    return 100.0 * (x - base) / base if base else 0.0


def _traps(row: Row | None) -> float | None:
    return row.active["per_hit_events"].get("trap", 0.0) if row and row.active else None


def kprobe_paths(rows: Sequence[Row]) -> dict[str, str]:
    """kprobes.rst's letter for the path each kprobe row's hits took on its arch
    (:func:`lab.kprobe.path_letters`, from the traps a hit of the kprobe row and of the
    boosted kprobe row took); none where either row was not run."""
    by_key = {r.key: r for r in rows}
    post, plain = _traps(by_key.get("kprobe")), _traps(by_key.get("kprobe_boosted"))
    if post is None or plain is None:
        return {}
    letter = path_letters(post, plain)
    return {r.key: letter[way] for r in rows
            if (way := mechanism(r.key).kprobe_way) is not None and r.active is not None}


def kprobe_published(arch: Arch, path: str) -> str:
    """kprobes.rst's hits of ``path`` on machines of ``arch``'s ISA family, as text."""
    hits = [str(h) for h in arch_kprobes(arch).PUBLISHED if h.path == path]
    return "; ".join(hits) or (f"{path}: no hit of this path timed on a machine of "
                               f"{arch.name}'s ISA (Documentation/trace/kprobes.rst)")


def name_kprobe_paths(arch: Arch, rows: Sequence[Row]) -> None:
    """Give each kprobe row of ``rows`` (run on ``arch``) its ``kprobe_path``
    (:func:`kprobe_paths`) and, as its ``published``, kprobes.rst's hits of that path
    (:func:`kprobe_published`)."""
    paths = kprobe_paths(rows)
    for row in rows:
        if row.key in paths:
            row.kprobe_path = paths[row.key]
            row.published = kprobe_published(arch, row.kprobe_path)


def compare_arch(arch_name: str, *, workload: str = "kmalloc", cpus: int = 1,
                 size: int | None = None, model: CostModel | None = None,
                 memory_pressure: bool = False, mechanisms: Sequence[str] | None = None,
                 advance: Callable[..., None] = lambda *a, **k: None,
                 modules: Sequence = (), expect: int | None = None,
                 timing: bool = True, layout: int | None = None,
                 core: ReferenceCore | None = None,
                 sites: Sequence[str] | None = None) -> dict:
    """The mechanisms of :data:`MECHANISMS` (or those :func:`select` picks) on one arch:
    the table as a JSON-ready dict. ``layout``: every build in the randomized text
    layout of that seed (:mod:`kbuild.layout`); None: as kernel/kernel.lds links it.
    ``core``: the timing model's core (other values of the reference core's
    assumptions); None: the arch's reference core. ``sites``: the markers and
    tracepoints to arm (a module's own: :func:`lab.mechanisms.site_points`), the
    kprobe family at the functions holding them; None: the kernel's kmalloc and
    sched_switch (:data:`lab.mechanisms.KERNEL_POINTS`)."""
    arch = get_arch(arch_name)
    mechs = select(mechanisms)
    points = KERNEL_POINTS if sites is None else site_points(arch, sites, modules)
    model = model or CostModel()
    if memory_pressure and not timing:
        raise CompareError("memory pressure needs the timing model (--cycles timing): "
                           "count-only cycles have no caches to evict")
    if memory_pressure and size is None and workload in DEFAULT_SIZES:
        size = max(1, DEFAULT_SIZES[workload] // PRESSURE_SIZE_DIVISOR)
    kw = dict(workload=workload, cpus=cpus, size=size, modules=modules, expect=expect,
              timing=timing, layout=layout, core=core, points=points,
              workload_config={"WORKLOAD_MEMORY_PRESSURE": "y"} if memory_pressure else {})
    counted_here = lambda m: m.passes_from is None      # noqa: E731
    # Nothing compiled in: the uninstrumented run counts their points' passes.
    base = run_once(arch, NONE, count=tuple(m for m in mechs
                                            if not m.compiled_in and counted_here(m)), **kw)
    advance(description=f"{arch.name}: uninstrumented")
    base_cycles = base.tally.cycles(arch, model)
    dormant_runs: dict[str, Run] = {m.key: base for m in mechs if not m.compiled_in}
    passes = dict(base.passes)
    for m in mechs:
        if m.key not in dormant_runs and m.dormant_from is None:
            dormant_runs[m.key] = run_once(arch, m.config, mech=m,
                                           count=(m,) if counted_here(m) else (), **kw)
            passes.update(dormant_runs[m.key].passes)
            advance(description=f"{arch.name}: {m.label}, dormant")
    rows = []
    checks = [base.checksum_ok]
    for m in mechs:
        dormant = dormant_runs.get(m.key) or dormant_runs[m.dormant_from]
        n = passes[m.passes_from or m.key]
        d_tally = dormant.tally
        d_cyc = d_tally.cycles(arch, model)
        per_pass = measure(arch, base.tally, d_tally, n, model)
        dormant_doc = {"instructions": d_tally.instructions, "modeled_cycles": d_cyc,
                       "per_pass_instructions": per_pass.instructions,
                       "per_pass_modeled_cycles": per_pass.modeled_cycles,
                       "per_pass_breakdown": per_pass.breakdown,
                       "percent_over_uninstrumented": _pct(d_cyc, base_cycles)}
        checks.append(dormant.checksum_ok)
        try:
            active = run_once(arch, m.config, mech=m, armed=True, **kw)
        except Unavailable as why:
            advance(description=f"{arch.name}: {m.label}: not on this arch")
            rows.append(Row(m.key, m.label, n, 0, dormant_doc, None, None, m.published,
                            unavailable=str(why)))
            continue
        advance(description=f"{arch.name}: {m.label}, armed")
        checks.append(active.checksum_ok)
        a_tally = active.tally
        a_cyc = a_tally.cycles(arch, model)
        hit: Cost = measure(arch, d_tally, a_tally, active.hits, model)
        rows.append(Row(
            m.key, m.label, n, active.hits, dormant_doc,
            active={"instructions": a_tally.instructions, "modeled_cycles": a_cyc,
                    "per_hit_instructions": hit.instructions,
                    "per_hit_modeled_cycles": hit.modeled_cycles,
                    "per_hit_events": hit.events,
                    "per_hit_breakdown": hit.breakdown,
                    "percent_over_uninstrumented": _pct(a_cyc, base_cycles)},
            arming_cycles=model.cycles(arch, 0, active.arm_events),
            published=m.published, detail=active.detail))
    name_kprobe_paths(arch, rows)
    doc = {"arch": arch.name, "layout": layout, "workload": workload, "cpus": cpus,
           "sites": list(points.sites),
           "kprobe_points": list(points.functions),
           "exact": cpus == 1,      # with more CPUs, runs also differ in interleaving
           "memory_pressure": memory_pressure, "size": DEFAULT_SIZES.get(workload) if size is None else size,
           "checksums_ok": all(checks),
           "cycles": cycles_from(arch, timing),
           "uninstrumented": {"instructions": base.tally.instructions,
                              "modeled_cycles": base_cycles},
           "rows": [r.to_json() for r in rows], "cost_model": model.table(arch)}
    doc["orderings"] = orderings(doc)
    return doc


def compare_document(docs: list[dict], plots: Sequence[Path],
                     cost_model_file: str | None) -> dict:
    """``compare.json``: each arch's document (:func:`compare_arch`, or
    :func:`over_samples` of its samples), the plots drawn from them and the cost
    model file they were costed with (None: the arches' own tables)."""
    return {"kind": "kisim-compare", "modeled": True,
            "note": "cycles are modeled cycles (each arch document's 'cycles' says from "
                    "what: the reference core's timing model or counts only; charged "
                    "events' sources in cost_model), not measurements; instruction counts "
                    "are exact",
            "cost_model_file": cost_model_file, "arches": docs,
            "plots": [str(p) for p in plots]}


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _medians(items: list):
    """The element-wise median of samples of one document shape: numbers become their
    median (a number missing from a sample, such as a breakdown entry, counts as 0),
    anything else is the first sample's."""
    first = items[0]
    if isinstance(first, dict):
        keys = list(dict.fromkeys(k for i in items if isinstance(i, dict) for k in i))
        return {k: _medians([i.get(k) if isinstance(i, dict) else None for i in items])
                for k in keys}
    if isinstance(first, list) and all(isinstance(i, list) and len(i) == len(first)
                                       for i in items):
        return [_medians([i[j] for i in items]) for j in range(len(first))]
    if any(_number(i) for i in items) and all(i is None or _number(i) for i in items) \
            and any(i != first for i in items):
        return statistics.median([0 if i is None else i for i in items])
    return first


def over_samples(docs: list[dict]) -> dict:
    """One arch's comparison over samples (layouts, assumption draws): the first
    sample's shape with every figure the median of the samples', each row's per-pass
    and per-hit modeled cycles with their range, and each ordering judged over the
    samples (:func:`lab.verdict.judge`); the samples themselves under ``per_sample``."""
    if not docs or any(d["arch"] != docs[0]["arch"] for d in docs):
        raise ValueError("samples of one arch")
    out = _medians([{k: v for k, v in d.items()
                     if k not in ("orderings", "layout", "assumptions")} for d in docs])
    for i, row in enumerate(out["rows"]):
        row["dormant"]["per_pass_modeled_cycles_spread"] = spread(
            [d["rows"][i]["dormant"]["per_pass_modeled_cycles"] for d in docs
             if d["rows"][i]["dormant"]["per_pass_modeled_cycles"] is not None])
        if row["active"] is not None:
            row["active"]["per_hit_modeled_cycles_spread"] = spread(
                [d["rows"][i]["active"]["per_hit_modeled_cycles"] for d in docs
                 if d["rows"][i]["active"] and
                 d["rows"][i]["active"]["per_hit_modeled_cycles"] is not None])
    out.update(n=len(docs), checksums_ok=all(d["checksums_ok"] for d in docs),
               layouts=[d["layout"] for d in docs],
               assumptions=[d.get("assumptions") for d in docs],
               orderings=[judge([d["orderings"][i] for d in docs])
                          for i in range(len(docs[0]["orderings"]))],
               per_sample=docs)
    return out


__all__ = ["Row", "compare_arch", "compare_document", "kprobe_paths", "kprobe_published",
           "name_kprobe_paths", "over_samples"]
