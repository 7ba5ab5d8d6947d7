"""Samples of a comparison: one per (arch, layout), each deterministic by its seed.

``--layouts N --layout-seed S`` draws, for each arch, the layouts of seeds
S, S+1, ..., S+N-1 (:mod:`kbuild.layout`). A sample is a picklable
:class:`Task` (the experiment, the arch, its seed, the experiment's
arguments): it runs alone, in a worker process, or on a Dask worker, with
the same result, and ``--layouts 1 --layout-seed SEED`` replays it.
:func:`run_samples` runs them through :func:`workers.ordered_map`, so the
results come back in the order drawn whatever ``jobs`` or ``scheduler``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Sequence

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

    def replay(self) -> str:
        """The options that run this sample alone."""
        return f"--arch {self.arch} --layouts 1 --layout-seed {self.layout}"


def run_task(task: Task) -> dict:
    """Run one sample (module level: workers receive it pickled)."""
    return task.experiment(task.arch, layout=task.layout, **task.kwargs)


def layout_seeds(layouts: int, seed: int) -> range:
    """The seeds of ``layouts`` layouts from ``seed``: each one replayable alone."""
    if isinstance(layouts, bool) or not 1 <= layouts <= MAX_LAYOUTS:
        raise SampleError(f"--layouts {layouts}: 1..{MAX_LAYOUTS}")
    if not 0 <= seed <= MAX_SEED - layouts + 1:
        raise SampleError(f"--layout-seed {seed}: 0..{MAX_SEED - layouts + 1} for "
                          f"{layouts} layouts")
    return range(seed, seed + layouts)


def tasks(experiment: Callable[..., dict], arches: Sequence[str], seeds: Sequence[int | None],
          **kwargs) -> list[Task]:
    """Every (arch, seed) sample of ``experiment``, arch by arch."""
    return [Task(experiment, arch, seed, kwargs) for arch in arches for seed in seeds]


def run_samples(todo: Sequence[Task], *, jobs: int = 1, scheduler: str | None = None
                ) -> Iterator[dict]:
    """Each task's document, in order (here, in ``jobs`` processes, or on Dask)."""
    return ordered_map(run_task, todo, jobs=jobs, scheduler=scheduler, error=SampleError)


__all__ = ["MAX_LAYOUTS", "SampleError", "Task", "layout_seeds", "run_samples", "run_task",
           "tasks"]
