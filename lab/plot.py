"""Plots for ``kisim compare``: modeled costs per mechanism per arch, published figures beside.

Three panels, log scale: dormant cost per pass, active cost per hit (both
modeled cycles, one bar per arch; a mechanism an arch does not have is
marked "n/a"), and the published figures in cycles with their sources.
Written as PNG and SVG (matplotlib, Agg backend), each through
:func:`fsio.atomic_open` (a link or FIFO at the target is refused).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

import fsio
from arches import get_arch
from arches.base import KPROBE_PATHS, PublishedHit
from lab.published import EVENT, EVENTS
from probes.kprobes import arch_kprobes

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

#: The same figure gives the same file: SVG element ids hashed from a fixed salt
#: (matplotlib draws a random one per process), and no creation date in the SVG
#: (PNG carries none).
SAME_BYTES = {"svg.hashsalt": "kisim compare"}
NO_DATE = {"svg": {"Date": None}}

#: The event figure drawn beside a row's modeled bars: (section, mechanism) -> cycles.
BESIDE: dict[tuple[str, str], float] = {
    ("dormant", "marker_flag"): EVENT["L1-hit flag load per site"],
    ("dormant", "marker_imv"): EVENT["immediate value per site"],
    ("active", "marker_imv"): EVENT["enabled marker, empty probe"],
}


def published_hits(arch: str) -> tuple[PublishedHit, ...]:
    """kprobes.rst's hits on machines of ``arch``'s ISA family (its ``PUBLISHED``)."""
    return arch_kprobes(get_arch(arch)).PUBLISHED


def hit_marks(doc: dict) -> dict[str, list[float]]:
    """The published hits, in cycles of the machine each was timed on, to draw beside
    each kprobe row of ``doc``: those of the path the row took on its arch (its
    ``kprobe_path``, lab.compare.kprobe_paths())."""
    return {r["mechanism"]: [h.cycles for h in published_hits(doc["arch"])
                             if h.path == r["kprobe_path"]]
            for r in doc["rows"] if r.get("kprobe_path")}


FLOOR = 0.1     # log scale: a zero or negative modeled cost is drawn at this floor


def _value(row: dict, section: str, metric: str) -> float | None:
    return row[section][metric] if row[section] is not None else None


def _bars(ax, docs: list[dict], section: str, metric: str, title: str) -> None:
    labels = [r["label"] for r in docs[0]["rows"]]
    width = 0.8 / len(docs)
    for i, doc in enumerate(docs):
        values = [_value(r, section, metric) for r in doc["rows"]]
        heights = [max(v, FLOOR) if v is not None else FLOOR for v in values]
        xs = [j + i * width for j in range(len(labels))]
        over = f", median of {doc['n']} layouts" if "n" in doc else ""
        ax.bar(xs, heights, width, label=f"{doc['arch']} (modeled{over})")
        for x, v in zip(xs, values):
            ax.text(x, max(v or 0, FLOOR) * 1.15, "n/a" if v is None else f"{v:.1f}",
                    ha="center", va="bottom", rotation=90, fontsize=6)
    keys = [r["mechanism"] for r in docs[0]["rows"]]
    marks = [(j + 0.4 - width / 2, BESIDE[section, k]) for j, k in enumerate(keys)
             if (section, k) in BESIDE]
    if section == "active":     # kprobes.rst's hits beside the bar of the arch they fit
        for i, doc in enumerate(docs):
            beside = hit_marks(doc)
            marks += [(j + i * width, y) for j, k in enumerate(keys) for y in beside.get(k, ())]
    if marks:
        ax.scatter([x for x, _ in marks], [y for _, y in marks], marker="_", s=900,
                   linewidths=2, color="black", zorder=3,
                   label="published (hardware, not modeled; sources at right)")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(labels))], labels,
                  rotation=20, ha="right", fontsize=8)
    ax.set_yscale("log")
    top = max([(_value(r, section, metric) or 0) for d in docs for r in d["rows"]]
              + [y for _, y in marks])
    ax.set_ylim(FLOOR, max(top, 1.0) * 4)
    ax.set_ylabel("modeled cycles (log)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)


def plot(docs: list[dict], out_dir: Path, stem: str = "compare") -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` into ``out_dir``; return their paths."""
    paths = [fsio.check_output(out_dir / f"{stem}.{ext}") for ext in ("png", "svg")]
    fig, axes = plt.subplots(1, 3, figsize=(24, 7.5), layout="constrained",
                             gridspec_kw={"width_ratios": [1.4, 1.4, 1]})
    pressure = " (memory pressure: cold flag load)" if docs[0]["memory_pressure"] else ""
    _bars(axes[0], docs, "dormant", "per_pass_modeled_cycles",
          f"dormant, per pass of a site: modeled cycles{pressure}")
    _bars(axes[1], docs, "active", "per_hit_modeled_cycles",
          "armed, per hit: modeled cycles (empty probes; the ring buffer, function "
          "tracer and line probe do their work)")
    ax = axes[2]
    published = list(EVENTS) + [
        (f"{KPROBE_PATHS[h.path]} ({h.path}) hit", h.cycles,
         f"kprobes.rst: {h.microseconds:g} us, {h.machine}")
        for arch in dict.fromkeys(d["arch"] for d in docs) for h in published_hits(arch)]
    ys = range(len(published))
    ax.barh(list(ys), [c for _, c, _ in published], color="grey")
    ax.set_yticks(list(ys), [f"{label}\n[{src}]" for label, _, src in published], fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("published cycles, log (measured on hardware, not modeled)")
    ax.set_title("published figures, for comparison", fontsize=10)
    fig.suptitle(f"kisim compare: {docs[0]['workload']} on {docs[0]['cpus']} CPU(s), sites "
                 f"{', '.join(docs[0]['sites'])} (functions "
                 f"{', '.join(docs[0]['kprobe_points'])}); coloured bars are modeled cycles, "
                 "not measurements", fontsize=11)
    try:
        for path in paths:
            fmt = path.suffix[1:]
            with fsio.atomic_open(path, "wb") as f, matplotlib.rc_context(SAME_BYTES):
                fig.savefig(f, dpi=110, format=fmt, metadata=NO_DATE.get(fmt))
    finally:
        plt.close(fig)
    return paths
