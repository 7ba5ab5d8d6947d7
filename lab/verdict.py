"""Verdicts over samples: a published ordering holds in k of N layouts, or the model cannot say.

One build is one layout: where a function lands decides which cache sets
and predictor entries it shares, and that alone can flip a conclusion
(Mytkowicz et al., ASPLOS 2009). So a comparison over randomized layouts
(:mod:`kbuild.layout`), and over the modelling assumptions' ranges with
``--vary-assumptions``, is judged by how many samples obey the ordering:

* **holds** in at least :data:`HOLDS_AT` of the samples where it was measured;
* **does not hold** in at most :data:`FAILS_AT` of them;
* **undecided by the model** between the two: the layouts (or the
  assumptions) decide it, the mechanisms do not.

Each side is reported by its median and range; where the samples split,
the entry of the timing model's breakdown that decides it is the one whose
margin between the sides differs most between the samples where the
ordering holds and those where it fails (:func:`deciding_entry`).
"""
from __future__ import annotations

import statistics
from typing import Sequence

#: At least this share of the samples: holds (Stabilizer's 95 %, Curtsinger and Berger 2013).
HOLDS_AT = 0.95
#: At most this share: does not hold.
FAILS_AT = 0.05
HOLDS, FAILS, UNDECIDED, UNMEASURED = ("holds", "does not hold", "undecided by the model",
                                       "not measured")
#: The part of a side's cycles outside the stall breakdown: retired instructions and
#: charged events under the cost table.
RETIRED = "instructions and events"


def verdict(k: int, n: int) -> str:
    """The verdict of an ordering that held in ``k`` of ``n`` samples."""
    if not 0 <= k <= n:
        raise ValueError(f"{k} of {n} samples")
    if n == 0:
        return UNMEASURED
    share = k / n
    return HOLDS if share >= HOLDS_AT else FAILS if share <= FAILS_AT else UNDECIDED


def spread(values: Sequence[float]) -> dict | None:
    """Median, minimum and maximum of ``values`` (None for none)."""
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _entries(side: dict) -> dict[str, float]:
    """A side's cycles by entry: its stall cycles, and the rest as :data:`RETIRED`."""
    stalls = side["stall_cycles"]
    return {**stalls, RETIRED: side["value"] - sum(stalls.values())}


def _margins(result: dict) -> dict[str, float]:
    """Each entry's margin between consecutive sides (the second's minus the first's;
    with more than two sides, one per pair, named by it; a lone side: its own value):
    what moves one side across the other."""
    sides = result["sides"]
    if len(sides) == 1:
        return _entries(sides[0])
    out: dict[str, float] = {}
    for a, b in zip(sides, sides[1:]):
        x, y = _entries(a), _entries(b)
        pair = f" ({b['name']} - {a['name']})" if len(sides) > 2 else ""
        for key in set(x) | set(y):
            out[key + pair] = y.get(key, 0.0) - x.get(key, 0.0)
    return out


def deciding_entry(results: Sequence[dict]) -> dict | None:
    """The breakdown entry whose margin between the sides differs most between the
    samples where the ordering held and those where it failed, with its mean margin in
    each; None unless the samples split."""
    held = [_margins(r) for r in results if r["holds"]]
    failed = [_margins(r) for r in results if r["holds"] is False]
    if not held or not failed:
        return None
    keys = sorted(set().union(*held, *failed))

    def mean(group: list[dict[str, float]], key: str) -> float:
        return statistics.fmean(m.get(key, 0.0) for m in group)
    best = max(keys, key=lambda k: (abs(mean(held, k) - mean(failed, k)), k))
    names = [s["name"] for s in results[0]["sides"]]
    return {"entry": best,
            "margin": f"{names[1]} - {names[0]}" if len(names) == 2 else
                      "the pair named" if len(names) > 2 else names[0],
            "when_holds": mean(held, best), "when_fails": mean(failed, best),
            "samples_holding": len(held), "samples_failing": len(failed)}


def judge(results: Sequence[dict]) -> dict:
    """One ordering over samples (each sample's result from :func:`lab.orderings.orderings`,
    the same claim): k, N, the verdict (or why the claim is not judged on this arch), each
    side's median and range, the deciding entry."""
    first = results[0]
    if any(r["claim"] != first["claim"] for r in results):
        raise ValueError("samples of different claims")
    measured = [r for r in results if r["holds"] is not None]
    k, n = sum(1 for r in measured if r["holds"]), len(measured)
    names = [s["name"] for s in (measured[0]["sides"] if measured else [])]
    sides = [{"name": name,
              **(spread([r["sides"][i]["value"] for r in measured]) or {})}
             for i, name in enumerate(names)]
    out = {key: first[key] for key in ("claim", "variable", "rows", "published_on",
                                       "not_judged") if key in first}
    out.update(k=k, n=n, verdict=first.get("not_judged") or verdict(k, n), sides=sides,
               deciding=deciding_entry(measured),
               per_sample=[r["holds"] for r in results])
    if n == 0:
        out["text"] = first["text"]          # why nothing was measured
    if "ratio" in first or any("ratio" in r for r in measured):
        out["ratio"] = spread([r["ratio"] for r in measured if "ratio" in r])
    return out


__all__ = ["FAILS", "FAILS_AT", "HOLDS", "HOLDS_AT", "RETIRED", "UNDECIDED", "UNMEASURED",
           "deciding_entry", "judge", "spread", "verdict"]
