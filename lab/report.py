"""One readable line for a timing-model breakdown, as every table prints it."""
from __future__ import annotations

#: Counts shown, in order, with their labels (misses per level come first).
_COUNTS = (("memory", "mem"), ("transfers", "xfer"), ("mispredicts", "mispred"),
           ("serializations", "serial"), ("cache_ops", "cacheop"))


def breakdown_line(breakdown: dict) -> str:
    """``counts`` and ``stall_cycles`` of a breakdown (per pass or hit) in one line,
    each figure as it rounds (no "-0.0", no "0.0"); "-" for an empty one
    (count-only, or nothing changed)."""
    if not breakdown:
        return "-"
    counts, stalls = breakdown.get("counts", {}), breakdown.get("stall_cycles", {})
    misses = [f"{k.removesuffix('_miss')} miss {v:z.2f}" for k, v in counts.items()
              if k.endswith("_miss") and round(v, 2)]
    others = [f"{label} {counts[k]:z.2f}" for k, label in _COUNTS if round(counts.get(k, 0), 2)]
    stall = ", ".join(f"{k} {v:z.1f}" for k, v in stalls.items() if round(v, 1))
    parts = ["; ".join(misses + others), f"stall cyc {stall}" if stall else ""]
    return " = ".join(part for part in parts if part) or "-"


__all__ = ["breakdown_line"]
