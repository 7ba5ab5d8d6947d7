"""The ``--out DIR`` of a trace: kisim writes there only what it owns.

Policy (stated in ``kisim trace --help`` and ``kisim ftrace --help``):
DIR may be missing (it is created), empty, or a trace kisim wrote before.
A kisim trace directory holds a hidden stamp, ``.kisim-trace``, listing
the files kisim wrote there; a new trace replaces exactly those (removing
the listed ones it does not write again, e.g. the stream of a CPU the new
run lacks) and refuses, before any run, a directory holding any other
file. Hidden files (names starting with ``.``) are left alone: babeltrace2
skips them too. Every file is written through :mod:`fsio` (a temporary
name, then a rename; a link, FIFO or device at a target is refused).
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import fsio
from tracing.errors import TraceError

STAMP = ".kisim-trace"
STAMP_LIMIT = 1 << 20
POLICY = ("DIR is created if missing; an existing DIR must be empty or a trace kisim "
          "wrote (its .kisim-trace stamp lists kisim's files): kisim replaces only those "
          "and refuses any other file there")


class OutDir:
    """A directory kisim may write a trace into, claimed before the run."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise TraceError(f"{self.path}: not a directory") from None
        self.previous = self._stamped()
        for name in self.previous:        # a link or FIFO swapped in: refused before the run
            fsio.check_output(self.path / name)
        foreign = sorted(p.name for p in self.path.iterdir()
                         if not p.name.startswith(".") and p.name not in self.previous)
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise TraceError(f"{self.path}: holds {shown}, which kisim did not write; "
                             "use an empty directory or one kisim traced into before")

    def _stamped(self) -> set[str]:
        stamp = fsio.check_output(self.path / STAMP)
        if not os.path.lexists(stamp):
            return set()
        try:
            files = json.loads(fsio.read_text(stamp, limit=STAMP_LIMIT, what="trace stamp"))
            names = set(files["files"])
        except (ValueError, KeyError, TypeError):
            raise TraceError(f"{stamp}: not a kisim trace stamp; use an empty "
                             "directory") from None
        if not all(isinstance(n, str) and n and "/" not in n and not n.startswith(".")
                   for n in names):
            raise TraceError(f"{stamp}: lists a name kisim never writes")
        return names

    def target(self, name: str) -> Path:
        """The path of ``name`` in the directory, refused now if unsafe (a link, a FIFO)."""
        return fsio.check_output(self.path / name)

    def commit(self, written: list[Path]) -> None:
        """The run wrote ``written``: drop the previous trace's other files, stamp the new."""
        names = {p.name for p in written}
        for stale in sorted(self.previous - names):
            path = self.path / stale
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    path.unlink()
            except FileNotFoundError:
                pass
        fsio.atomic_write(self.path / STAMP, json.dumps({"files": sorted(names)}) + "\n")


__all__ = ["OutDir", "POLICY", "STAMP"]
