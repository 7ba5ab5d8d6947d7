"""The ``--out DIR`` of a trace (or of ``kisim compare``): kisim writes there
only what it owns.

Policy (stated in ``kisim trace --help``, ``kisim ftrace --help`` and
``kisim compare --help``):
DIR may be missing (it is created), empty, or a trace kisim wrote before.
A kisim trace directory holds a hidden stamp, ``.kisim-trace``, listing
the files kisim wrote there; a new trace replaces exactly those (removing
the listed ones it does not write again, e.g. the stream of a CPU the new
run lacks) and refuses, before any run, a directory holding any other
file. Hidden files (names starting with ``.``) are left alone: babeltrace2
skips them too. Every file is written through :mod:`fsio` (a temporary
name, then a rename; a link, FIFO or device at a target is refused).

One run at a time: a run holds an exclusive lock on the hidden
``.kisim-trace.lock`` from the claim to the stamp (or its abort), and a
second run that claims the same DIR meanwhile is refused before it starts,
so two runs never mix their files. The lock file goes with the lock; a
killed run's is taken over.
"""
from __future__ import annotations

import fcntl
import json
import os
import stat
import weakref
from pathlib import Path

import fsio
from tracing.errors import TraceError

STAMP = ".kisim-trace"
LOCK = ".kisim-trace.lock"
STAMP_LIMIT = 1 << 20
POLICY = ("DIR is created if missing; an existing DIR must be empty or one kisim "
          "wrote (its .kisim-trace stamp lists kisim's files): kisim replaces only those "
          "and refuses any other file there, and a DIR another kisim run is writing")


class OutDir:
    """A directory kisim may write a trace into, claimed before the run."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not os.fspath(path):
            raise TraceError("'': not a directory name")
        self.path = Path(path)
        if self.path.is_symlink():      # the stamp and the lock are no guard through a link
            raise TraceError(f"{self.path}: a symbolic link; kisim writes a trace only into "
                             "a directory named directly")
        #: The directories this claim makes, outermost first: a run that ends without
        #: a trace (an error, Ctrl-C) removes them again if they are still empty.
        self.created = [d for d in (*reversed(self.path.parents), self.path)
                        if not os.path.lexists(d)]
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise TraceError(f"{self.path}: not a directory") from None
        #: The files of the earlier output that :meth:`commit` removed (not written again).
        self.removed: list[str] = []
        self._lock = self._claim()
        try:
            self.previous = self._stamped()
            for name in self.previous:    # a link or FIFO swapped in: refused before the run
                fsio.check_output(self.path / name)
            foreign = sorted(p.name for p in self.path.iterdir()
                             if not p.name.startswith(".") and p.name not in self.previous)
            if foreign:
                shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
                raise TraceError(f"{self.path}: holds {shown}, which kisim did not write; "
                                 "use an empty directory or one kisim wrote before")
        except BaseException:
            self.release()
            raise

    def _claim(self) -> weakref.finalize:
        """Lock the directory for this run (released by :meth:`release`, or when
        this object or the process goes)."""
        path = self.path / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                         | os.O_CLOEXEC, 0o644)
        except OSError as err:
            raise TraceError(f"{path}: cannot open the lock file ({err.strerror})") from None
        lock = weakref.finalize(self, _unlock, path, fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            lock.detach()
            os.close(fd)
            raise TraceError(f"{path}: not a regular file; remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if not _same_file(path, fd):    # its holder removed it on release: lost the race
                raise BlockingIOError
        except BlockingIOError:
            lock.detach()
            os.close(fd)
            raise TraceError(f"{self.path}: another kisim run is writing there now; "
                             "wait for it or use another directory") from None
        return lock

    def release(self) -> None:
        """Unlock the directory: this run writes nothing more there. The directories
        the claim made and nothing was written into go (rmdir() takes only empty ones)."""
        self._lock()
        for made in reversed(self.created):
            try:
                os.rmdir(made)
            except OSError:
                break

    def _stamped(self) -> set[str]:
        stamp = fsio.check_output(self.path / STAMP)
        if not os.path.lexists(stamp):
            return set()
        try:
            files = json.loads(fsio.read_text(stamp, limit=STAMP_LIMIT, what="trace stamp"))
            names = set(files["files"])
        except (ValueError, KeyError, TypeError, RecursionError):    # nested past the parser
            raise TraceError(f"{stamp}: not a kisim trace stamp; use an empty "
                             "directory") from None
        if not all(isinstance(n, str) and n and "/" not in n and not n.startswith(".")
                   for n in names):
            raise TraceError(f"{stamp}: lists a name kisim never writes")
        return names

    def target(self, name: str) -> Path:
        """The path of ``name`` in the directory, refused now if unsafe (a link, a FIFO)."""
        return fsio.check_output(self.path / name)

    def commit(self, written: list[Path], sha256: dict[str, str] | None = None) -> None:
        """The run wrote ``written``: drop the previous trace's other files, stamp the
        new (with ``sha256``, name -> digest, of the files a reader verifies), and
        unlock the directory."""
        names = {p.name for p in written}
        for stale in sorted(self.previous - names):
            path = self.path / stale
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    path.unlink()
                    self.removed.append(stale)
            except FileNotFoundError:
                pass
        fsio.atomic_write(self.path / STAMP, json.dumps(
            {"files": sorted(names), **({"sha256": sha256} if sha256 else {})}) + "\n")
        self.release()


def _same_file(path: Path, fd: int) -> bool:
    """Whether ``path`` is still the file open as ``fd``."""
    try:
        here, held = os.lstat(path), os.fstat(fd)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


def _unlock(path: Path, fd: int) -> None:
    """Remove the lock file (if it is still this run's) and release the lock."""
    if _same_file(path, fd):
        path.unlink()
    os.close(fd)


__all__ = ["LOCK", "OutDir", "POLICY", "STAMP"]
