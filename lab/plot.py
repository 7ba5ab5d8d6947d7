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

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

#: Published per-event costs in cycles: (label, cycles, source). Microsecond
#: figures are converted at the clock of the machine they were measured on.
PUBLISHED: tuple[tuple[str, float, str], ...] = (
    ("disabled marker, load+test+branch", 1.17, "LTTng microbenchmark, P4 3 GHz"),
    ("disabled marker, immediate value", 2.50, "LTTng microbenchmark, P4 3 GHz"),
    ("immediate value per site", 7.84, "Documentation/immediate.txt, P4 3 GHz"),
    ("L1-hit flag load per site", 12.14, "Documentation/immediate.txt, P4 3 GHz"),
    ("enabled marker, empty probe", 48.11, "LTTng microbenchmark, P4 3 GHz"),
    ("optprobe hit", 0.06 * 2330, "kprobes.txt: 0.06 us, Xeon E5410 2.33 GHz"),
    ("cache-cold flag load per site", 559.0, "Documentation/immediate.txt, P4 3 GHz"),
    ("kprobe hit", 0.49 * 2000, "kprobes.txt: 0.49 us, Opteron 2 GHz"),
    ("boosted kprobe hit", 0.43 * 2330, "kprobes.txt: 0.43 us, Xeon E5410 2.33 GHz"),
    ("kretprobe hit", 0.80 * 2000, "kprobes.txt: 0.80 us, Opteron 2 GHz"),
    ("kprobe hit, not boosted", 0.99 * 2330, "kprobes.txt: 0.99 us, Xeon E5410 2.33 GHz"),
)

#: The published figure drawn beside a row's modeled bars: (section, mechanism) -> cycles.
#: Each is one of :data:`PUBLISHED`, at the clock it was measured on.
BESIDE: dict[tuple[str, str], float] = {
    ("dormant", "marker_flag"): 12.14,
    ("dormant", "marker_imv"): 7.84,
    ("active", "marker_imv"): 48.11,
    ("active", "kprobe"): 0.99 * 2330,
    ("active", "kprobe_boosted"): 0.43 * 2330,
    ("active", "optprobe"): 0.06 * 2330,
    ("active", "kretprobe"): 0.80 * 2000,
}

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
    ys = range(len(PUBLISHED))
    ax.barh(list(ys), [c for _, c, _ in PUBLISHED], color="grey")
    ax.set_yticks(list(ys), [f"{label}\n[{src}]" for label, _, src in PUBLISHED], fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("published cycles, log (measured on hardware, not modeled)")
    ax.set_title("published figures, for comparison", fontsize=10)
    fig.suptitle(f"kisim compare: {docs[0]['workload']} on {docs[0]['cpus']} CPU(s), sites "
                 f"{', '.join(docs[0]['sites'])} (functions "
                 f"{', '.join(docs[0]['kprobe_points'])}); coloured bars are modeled cycles, "
                 "not measurements", fontsize=11)
    try:
        for path in paths:
            with fsio.atomic_open(path, "wb") as f:
                fig.savefig(f, dpi=110, format=path.suffix[1:])
    finally:
        plt.close(fig)
    return paths
