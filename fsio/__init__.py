"""Safe file I/O for every layer: outputs never damage what a user owns.

The one home for how kisim touches the file system:

- An output is written to a temporary name in its own directory and
  renamed over the target, so a crash or an error leaves the old file
  whole and a reader never sees half a file.
- A symbolic link, FIFO, device or directory at an output path is refused
  before anything is written: a link is never followed.
- An input is read only if it is a regular file, opened without blocking
  (a FIFO named as input cannot hang the run), and only up to a stated size.

Errors are :class:`UnsafePath` (a ``ValueError``) with a one-line message
naming the path; the CLI turns it into exit 2.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import IO, BinaryIO, Iterator

#: Inputs larger than this are refused unless a caller states its own limit.
DEFAULT_INPUT_LIMIT = 64 << 20


class UnsafePath(ValueError):
    """A path kisim refuses to write or read, with the reason in one line."""


def _kind(mode: int) -> str:
    return ("a symbolic link" if stat.S_ISLNK(mode) else
            "a directory" if stat.S_ISDIR(mode) else
            "a FIFO" if stat.S_ISFIFO(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def check_output(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path` if an output may be written there: it does
    not exist, or is a regular file (not followed through a link). An empty
    name, or one ending in ``/`` (a directory's), names no file."""
    text = os.fspath(path)
    if not text or text.endswith(os.sep):
        raise UnsafePath(f"{text!r}: not a file name" + (" (it ends in '/')" if text else ""))
    target = Path(path)
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as err:
        raise UnsafePath(f"{target}: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):
        raise UnsafePath(f"{target}: {_kind(mode)}; kisim writes outputs only to "
                         "regular files and never follows a link")
    return target


def check_writable(path: str | os.PathLike[str]) -> Path:
    """:func:`check_output`, and a file made and removed where the output will go
    (its nearest directory that exists): refused now, not after a run, where no
    file can be made, whatever the permission bits tell root (a read-only
    mount, sysfs)."""
    target = check_output(path)
    where = target.absolute().parent
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=where)
    except OSError as err:
        raise UnsafePath(f"{target}: cannot write into {where}: {err.strerror or err}") from None
    os.close(fd)
    os.unlink(probe)
    return target


#: What writing a file's data can fail with (the disk or quota full, a file too large).
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on a clean exit rename it over
    ``path`` (keeping an existing file's permissions), else remove it."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode {mode!r} (only 'w' or 'wb')")
    target = check_output(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:                  # name the user's file, not the temporary one
        raise UnsafePath(f"{target}: cannot write it: {err.strerror or err}") from None
    try:
        try:
            with os.fdopen(fd, mode) as f:
                yield f
        except OSError as err:              # a write or the close's flush: name the file
            if err.filename is not None or err.errno not in _WRITE_ERRNOS:
                raise
            raise UnsafePath(f"{target}: cannot write it: {err.strerror}") from None
        check_output(target)                 # nothing swapped in meanwhile
        try:
            perms = stat.S_IMODE(os.lstat(target).st_mode)
        except FileNotFoundError:
            perms = 0o666 & ~_umask()
        os.chmod(tmp, perms)
        os.replace(tmp, target)
        tmp = ""
    finally:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_open`."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def open_regular(path: str | os.PathLike[str], *, limit: int = DEFAULT_INPUT_LIMIT,
                 what: str = "input") -> BinaryIO:
    """``path`` opened for binary reading if it is a regular file of at most
    ``limit`` bytes (for readers that seek, such as an ELF parser); the
    caller closes it.

    Links are followed (an input may live anywhere), but the file reached
    must be regular; it is opened non-blocking, so a FIFO is refused, not
    waited on."""
    source = Path(path)
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise UnsafePath(f"{source}: {err.strerror or err}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(fd)
        raise UnsafePath(f"{source}: {what} is {_kind(info.st_mode)}, not a regular file"
                         if not stat.S_ISREG(info.st_mode) else
                         f"{source}: {what} is {info.st_size} bytes, over the "
                         f"{limit}-byte limit")
    return os.fdopen(fd, "rb")


def read_regular(path: str | os.PathLike[str], *, limit: int = DEFAULT_INPUT_LIMIT,
                 what: str = "input") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes
    (:func:`open_regular`; a file that grows past the limit while read is refused too)."""
    with open_regular(path, limit=limit, what=what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnsafePath(f"{path}: {what} is over the {limit}-byte limit")
    return data


def read_text(path: str | os.PathLike[str], *, limit: int = DEFAULT_INPUT_LIMIT,
              what: str = "input") -> str:
    """:func:`read_regular`, decoded as UTF-8 (refused in one line if it is not)."""
    data = read_regular(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UnsafePath(f"{path}: {what} is not UTF-8 text (byte {err.start})") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["DEFAULT_INPUT_LIMIT", "UnsafePath", "atomic_open", "atomic_write",
           "check_output", "check_writable", "open_regular", "read_regular", "read_text"]
