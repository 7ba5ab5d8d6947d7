"""Progress for long commands: one rich bar on stderr, silent when asked.

Every command that can take more than a couple of seconds reports progress
through :func:`progress`; under ``--json`` (or when stderr is not a
terminal) it is silent, so scripted output stays clean.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                           TextColumn, TimeElapsedColumn)

Advance = Callable[..., None]
"""``advance(n=1, description=None)``: n more steps done, optionally retitled."""


@contextmanager
def progress(description: str, total: int | None = None, *,
             enabled: bool = True) -> Iterator[Advance]:
    """A progress bar (``total`` steps, or a spinner when None) for the ``with`` block."""
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1, description=None: None
        return
    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    columns.append(TimeElapsedColumn())
    with Progress(*columns, transient=True, console=None) as bar:
        task = bar.add_task(description, total=total)

        def advance(n: int = 1, description: str | None = None) -> None:
            bar.update(task, advance=n, **({"description": description} if description else {}))
        yield advance
