"""Progress for long commands, on stderr, silent when asked.

Every command that can take more than a couple of seconds reports progress
through :func:`progress` (a bar, or a spinner with elapsed time). A
command that has no steps to count runs under :func:`ambient` instead
(started by ``kisim.cli`` for the commands it names): a spinner that shows
after :data:`AMBIENT_DELAY` seconds and goes away at the command's first
line of output or its own :func:`progress`. Under ``--json``, or when
stderr is not a terminal, both are silent, so scripted output stays clean.
Both draw on stderr, never on stdout.
"""
from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TextIO

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                           TextColumn, TimeElapsedColumn)

Advance = Callable[..., None]
"""``advance(n=1, description=None)``: n more steps done, optionally retitled."""

AMBIENT_DELAY = 0.5        # seconds before a command without its own bar shows a spinner


def _bar(description: str, total: int | None) -> Progress:
    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    columns.append(TimeElapsedColumn())
    bar = Progress(*columns, transient=True, console=Console(stderr=True),
                   redirect_stdout=False)
    bar.add_task(description, total=total)
    return bar


@contextmanager
def progress(description: str, total: int | None = None, *,
             enabled: bool = True) -> Iterator[Advance]:
    """A progress bar (``total`` steps, or a spinner when None) for the ``with`` block."""
    _Ambient.stop_current()
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1, description=None: None
        return
    with _bar(description, total) as bar:
        task = bar.task_ids[0]

        def advance(n: int = 1, description: str | None = None) -> None:
            bar.update(task, advance=n, **({"description": description} if description else {}))
        yield advance


class _Ambient:
    """The spinner of :func:`ambient`; started by a timer, stopped once."""

    current: _Ambient | None = None

    def __init__(self, description: str) -> None:
        self.description = description
        self.lock = threading.Lock()
        self.bar: Progress | None = None
        self.stopped = False
        self.timer = threading.Timer(AMBIENT_DELAY, self._start)
        self.timer.daemon = True

    def _start(self) -> None:
        with self.lock:
            if not self.stopped:
                self.bar = _bar(self.description, None)
                self.bar.start()

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            self.timer.cancel()
            if self.bar is not None:
                self.bar.stop()
                self.bar = None

    @classmethod
    def stop_current(cls) -> None:
        if cls.current is not None:
            cls.current.stop()


class _StopOnWrite:
    """``sys.stdout`` while a spinner may run: the first write stops the spinner."""

    def __init__(self, stream: TextIO, spinner: _Ambient) -> None:
        self._stream = stream
        self._spinner = spinner

    def write(self, text: str) -> int:
        self._spinner.stop()
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def ambient(description: str, *, enabled: bool = True) -> Iterator[None]:
    """A spinner with elapsed time on stderr for a long command with no bar of its own."""
    if not enabled or not sys.stderr.isatty():
        yield
        return
    spinner = _Ambient(description)
    stdout, sys.stdout = sys.stdout, _StopOnWrite(sys.stdout, spinner)   # type: ignore
    _Ambient.current = spinner
    spinner.timer.start()
    try:
        yield
    finally:
        spinner.stop()
        _Ambient.current = None
        sys.stdout = stdout
