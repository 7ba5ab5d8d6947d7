"""Samples of a comparison: one per (arch, layout), each deterministic by its seed.

``--layouts N --layout-seed S`` draws, for each arch, the layouts of seeds
S, S+1, ..., S+N-1 (:mod:`kbuild.layout`). With ``--vary-assumptions`` the
same seed also draws a value for each modelling assumption of the arch's
reference core from its declared range (:class:`arches.base.Range`), and the
timing model runs on that core. A sample is a picklable :class:`Task` (the
experiment, the arch, its seed, the experiment's arguments): it runs alone,
in a worker process, or on a Dask worker, with the same result, and
``--layouts 1 --layout-seed SEED`` (with ``--vary-assumptions``) replays it.
:func:`run_samples` runs them through :func:`workers.ordered_map`, so the
results come back in the order drawn whatever ``jobs`` or ``scheduler``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Sequence

from arches import get_arch
from arches.base import ReferenceCore
from kbuild.layout import MAX_SEED
from workers import ordered_map

#: The most layouts one command may draw per arch (each is a set of kernel builds).
MAX_LAYOUTS = 1000


class SampleError(ValueError):
    """Bad sampling input: a layout count or seed out of range."""


@dataclass(frozen=True)
class Task:
    """One sample: ``experiment(arch, layout=layout, **kwargs)``."""

    experiment: Callable[..., dict]
    arch: str
    layout: int | None
    kwargs: Mapping = field(default_factory=dict)
    #: Draw the core's modelling assumptions from the same seed.
    vary: bool = False

    def replay(self) -> str:
        """The options that run this sample alone."""
        return (f"--arch {self.arch} --layouts 1 --layout-seed {self.layout}"
                + (" --vary-assumptions" if self.vary else ""))


def draw_assumptions(arch: str, seed: int) -> tuple[ReferenceCore, dict[str, float]]:
    """``arch``'s reference core with each modelling assumption drawn from its range
    by ``seed``, and the values drawn."""
    core = get_arch(arch).core
    rng = random.Random(f"kisim assumptions {seed}")       # a str seed: SHA-512, stable
    values = {name: r.draw(rng) for name, (r, _) in sorted(core.assumptions().items())}
    return core.with_values(values), values


def run_task(task: Task) -> dict:
    """Run one sample (module level: workers receive it pickled); its document records
    the assumptions drawn (None: the reference core as declared)."""
    kwargs, values = dict(task.kwargs), None
    if task.vary:
        kwargs["core"], values = draw_assumptions(task.arch, task.layout)
    return {**task.experiment(task.arch, layout=task.layout, **kwargs), "assumptions": values}


def layout_seeds(layouts: int, seed: int) -> range:
    """The seeds of ``layouts`` layouts from ``seed``: each one replayable alone."""
    if isinstance(layouts, bool) or not 1 <= layouts <= MAX_LAYOUTS:
        raise SampleError(f"--layouts {layouts}: 1..{MAX_LAYOUTS}")
    if not 0 <= seed <= MAX_SEED - layouts + 1:
        raise SampleError(f"--layout-seed {seed}: 0..{MAX_SEED - layouts + 1} for "
                          f"{layouts} layouts")
    return range(seed, seed + layouts)


def tasks(experiment: Callable[..., dict], arches: Sequence[str], seeds: Sequence[int | None],
          vary: bool = False, **kwargs) -> list[Task]:
    """Every (arch, seed) sample of ``experiment``, arch by arch (``vary``: each with
    its assumptions drawn)."""
    if vary and None in seeds:
        raise SampleError("--vary-assumptions draws with the layouts: give --layouts N")
    return [Task(experiment, arch, seed, kwargs, vary) for arch in arches for seed in seeds]


def run_samples(todo: Sequence[Task], *, jobs: int = 1, scheduler: str | None = None
                ) -> Iterator[dict]:
    """Each task's document, in order (here, in ``jobs`` processes, or on Dask)."""
    return ordered_map(run_task, todo, jobs=jobs, scheduler=scheduler, error=SampleError)


__all__ = ["MAX_LAYOUTS", "SampleError", "Task", "draw_assumptions", "layout_seeds",
           "run_samples", "run_task", "tasks"]
