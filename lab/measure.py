"""The one cost computation: two runs differenced, divided by what happened in between.

Every figure kisim prints per pass of a dormant site or per hit of an armed
probe comes from :func:`measure`: the tallies (retired instructions and
charged events, exact) of a run without and a run with the thing measured,
and the count that divides their difference (passes or hits). Modeled
cycles are recomputed from the tallies with a :class:`CostModel`, so the
same two runs give the same cycles under any cost table. On one CPU the
two runs differ only by what is measured, and the result is exact.
"""
from __future__ import annotations

import math
import reprlib
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import fsio
from arches import Arch
from sim.timing import EMPTY, Breakdown, cycles_from

if TYPE_CHECKING:
    from sim.guest import BootResult
    from sim.machine import Machine

#: The cost-table events a cost model may override.
EVENTS = ("insn", "trap", "ipi", "serialize", "icache_flush", "clock_read")

#: The largest cycles a cost model may give one event: a thousand times the dearest
#: published figure kisim uses (a kretprobe hit, kprobes.txt: 0.80 us at 2 GHz = 1600
#: cycles), rounded up; beyond it a figure is a typo, and the plots' log scale overflows.
MAX_EVENT_CYCLES = 10_000_000

#: A cost model file is a few lines of TOML; anything larger is not one.
COST_MODEL_LIMIT = 1 << 20


class CompareError(ValueError):
    """Bad comparison input: an unreadable or wrong cost model, an unknown mechanism."""


# -- cost model ---------------------------------------------------------------------

@dataclass(frozen=True)
class CostModel:
    """Modeled cycles per event, per arch; defaults from each arch's cost table."""

    overrides: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    source: str = "defaults"

    def cost(self, arch: Arch, event: str) -> float:
        for scope in (arch.name, "default"):
            if event in self.overrides.get(scope, {}):
                return float(self.overrides[scope][event])
        return arch.cost(event)

    def source_of(self, arch: Arch, event: str) -> str:
        for scope in (arch.name, "default"):
            if event in self.overrides.get(scope, {}):
                return f"{self.source} [{scope}]"
        return arch.costs[event].source

    def table(self, arch: Arch) -> dict[str, dict]:
        return {e: {"cycles": self.cost(arch, e), "source": self.source_of(arch, e)}
                for e in EVENTS if e in arch.costs}

    def cycles(self, arch: Arch, instructions: int, events: Mapping[str, int]) -> float:
        return (instructions * self.cost(arch, "insn")
                + sum(n * self.cost(arch, e) for e, n in events.items()))


def _cycles_value(value: object) -> bool:
    """A number of cycles in range (compared first: a huge int is no float)."""
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and 0 <= value <= MAX_EVENT_CYCLES and math.isfinite(value))


def load_cost_model(path: str | Path, arch_names: tuple[str, ...]) -> CostModel:
    """A TOML cost model: ``[default]`` and ``[<arch>]`` tables of ``event = cycles``.

    Read as UTF-8 from a regular file (:func:`fsio.read_text`); every value
    must be a finite number of cycles in 0..:data:`MAX_EVENT_CYCLES`, checked
    before any run (``inf``, ``nan`` and ``1e400``, which TOML reads as inf,
    are refused)."""
    try:
        data = tomllib.loads(fsio.read_text(path, limit=COST_MODEL_LIMIT, what="cost model"))
    except fsio.UnsafePath as err:
        raise CompareError(str(err)) from None
    except ValueError as err:        # TOMLDecodeError, or an int of over 4300 digits
        raise CompareError(f"{path}: not valid TOML: {err}") from None
    except RecursionError:           # tomllib recurses once per level of nesting
        raise CompareError(f"{path}: not valid TOML: nested too deeply") from None
    for scope, table in data.items():
        if scope != "default" and scope not in arch_names:
            raise CompareError(f"{path}: [{scope}] is neither [default] nor an arch "
                               f"({', '.join(arch_names)})")
        if not isinstance(table, dict):
            raise CompareError(f"{path}: {scope} must be a table of event = cycles")
        for event, value in table.items():
            if event not in EVENTS:
                raise CompareError(f"{path}: [{scope}] {event}: unknown event "
                                   f"(known: {', '.join(EVENTS)})")
            if not _cycles_value(value):
                shown = reprlib.repr(value)       # a 4000-digit int, abridged
                raise CompareError(f"{path}: [{scope}] {event} = {shown}: expected a "
                                   f"finite number of cycles, 0..{MAX_EVENT_CYCLES:,}")
    return CostModel(data, source=str(path))


# -- tallies and the one difference ----------------------------------------------------

@dataclass(frozen=True)
class Tally:
    """What one run retired and was charged: exact counts, no cycles."""

    instructions: int
    events: Counter[str]
    stalls: Breakdown = EMPTY        # the timing model's; EMPTY on a count-only machine

    @classmethod
    def of(cls, result: BootResult) -> Tally:
        """The tally of a :class:`sim.guest.BootResult` (its per-CPU counts)."""
        events: Counter[str] = Counter()
        stalls = EMPTY
        for c in result.per_cpu:
            events.update(c["events"])
            if "timing" in c:
                stalls += Breakdown(c["timing"]["counts"], c["timing"]["stall_cycles"])
        return cls(result.instructions, +events, stalls)

    @classmethod
    def of_machine(cls, machine: Machine) -> Tally:
        """The tally of a :class:`sim.machine.Machine` so far (every CPU)."""
        events: Counter[str] = Counter()
        for c in machine.cpus:
            events.update(c.events)
        stalls = machine.timing.total() if machine.timing is not None else EMPTY
        return cls(machine.total_instructions, +events, stalls)

    def __sub__(self, other: Tally) -> Tally:
        """What ran after ``other`` was taken, on the same machine."""
        return Tally(self.instructions - other.instructions, +(self.events - other.events),
                     self.stalls - other.stalls)

    def cycles(self, arch: Arch, model: CostModel | None = None) -> float:
        """Modeled cycles: instructions and events under ``model``, plus the stalls."""
        return (model or CostModel()).cycles(arch, self.instructions, self.events) \
            + self.stalls.stall_cycles


@dataclass(frozen=True)
class Cost:
    """The cost of one pass or one hit: (after - before) / count; None without a count."""

    count: int
    instructions: float | None
    modeled_cycles: float | None
    traps: float | None
    #: Charged events per unit, for each event whose count changed.
    events: dict[str, float]
    #: The timing model's counts and stall cycles per unit (empty when count-only).
    breakdown: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"count": self.count, "instructions": self.instructions,
                "modeled_cycles": self.modeled_cycles, "traps": self.traps,
                "events": self.events, "breakdown": self.breakdown}


def measure(arch: Arch, before: Tally, after: Tally, count: int,
            model: CostModel | None = None) -> Cost:
    """The cost per unit of what ``after`` ran and ``before`` did not, over ``count`` units.

    ``count`` is the passes of a dormant site or the hits of an armed probe
    between the two runs; cycles are modeled with ``model`` (the arch's
    cost table by default)."""
    model = model or CostModel()
    if count <= 0:
        return Cost(count, None, None, None, {})
    changed = sorted(e for e in set(before.events) | set(after.events)
                     if after.events[e] != before.events[e])
    cycles = after.cycles(arch, model) - before.cycles(arch, model)
    stalls = after.stalls - before.stalls
    breakdown = {} if after.stalls is EMPTY else {
        "counts": {k: v / count for k, v in sorted(stalls.counts.items()) if v},
        "stall_cycles": {k: v / count for k, v in sorted(stalls.cycles.items()) if v}}
    return Cost(count, (after.instructions - before.instructions) / count, cycles / count,
                (after.events["trap"] - before.events["trap"]) / count,
                {e: (after.events[e] - before.events[e]) / count for e in changed}, breakdown)


__all__ = ["COST_MODEL_LIMIT", "CompareError", "Cost", "CostModel", "EVENTS",
           "MAX_EVENT_CYCLES", "Tally", "cycles_from", "load_cost_model", "measure"]
