"""The content-addressed build cache, verified before use.

An entry is ``<cache>/<key>/`` holding the image and what it was built
from; its ``build.json`` records the SHA-256 of each of those files. An
entry is used only if ``build.json`` parses, names the same key and every
file hashes as recorded; anything else (a flipped byte, a truncated image,
a missing or corrupt ``build.json``, a half-copied directory) is rebuilt.
Entries are assembled in a temporary directory inside the cache and
renamed into place, so a reader never sees a partial one.

Concurrent builds (several ``kisim`` processes at once) are safe:

- A sound entry is never moved or removed once installed; a second build
  of the same key keeps the first one and drops its own work (install runs
  holding flock(2) on the cache directory itself: no lock file is left).
- Each work directory is flock'ed by the build filling it for as long as
  the build runs; the lock dies with the process. A ``tmp-*`` directory
  whose lock is free was left by a killed build and is removed by the next
  :func:`new_work_dir`.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from kbuild.errors import BuildError
from kbuild.tools import check_tool_path

#: The files of an entry whose content build.json records.
ENTRY_FILES = ("vmlinux", ".config", "include/generated/autoconf.h")
META = "build.json"
#: The most an entry's build.json may take, and any other file of it (a
#: kernel's vmlinux, debug information included, is under 8 MiB).
META_LIMIT = 1 << 20
FILE_LIMIT = 512 << 20
_held: dict[Path, int] = {}       # work directory -> the fd holding its flock


def default_cache_dir(repo: Path) -> Path:
    """``$KISIM_CACHE`` (made absolute), else ``<repo>/.cache/kisim`` in a source
    checkout, else ``$XDG_CACHE_HOME/kisim`` (``~/.cache/kisim``) when installed."""
    env = os.environ.get("KISIM_CACHE")
    if env:
        check_tool_path(env, "build cache directory ($KISIM_CACHE)")
        return Path(env).expanduser().resolve()
    if (repo / "pyproject.toml").is_file():
        return repo / ".cache" / "kisim"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kisim"


class _Corrupt(BuildError):
    """A file of an entry that is not what kisim wrote there (the reason)."""


def _open(path: Path, limit: int) -> BinaryIO:
    """The regular file ``path`` of an entry, opened without following a link or
    waiting on a FIFO; :class:`_Corrupt` if it is anything else or over ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _Corrupt(f"{path.name} missing") from None
    except OSError as err:
        raise _Corrupt(f"{path.name} is a symbolic link" if err.errno == errno.ELOOP
                       else f"{path.name}: {err.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(fd)
        raise _Corrupt(f"{path.name} is not a regular file" if not stat.S_ISREG(info.st_mode)
                       else f"{path.name} is {info.st_size} bytes, over the "
                            f"{limit >> 20} MiB limit")
    return os.fdopen(fd, "rb")


def _read(path: Path, limit: int) -> bytes:
    """The bytes of an entry's file ``path`` (:func:`_open`), never past ``limit``."""
    with _open(path, limit) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise _Corrupt(f"{path.name} grew over the {limit >> 20} MiB limit while read")
    return data


def _sha256(path: Path, limit: int) -> str:
    """SHA-256 of an entry's file ``path`` (:func:`_open`), read in chunks."""
    digest, size = hashlib.sha256(), 0
    with _open(path, limit) as f:
        while chunk := f.read(1 << 20):
            size += len(chunk)
            if size > limit:
                raise _Corrupt(f"{path.name} grew over the {limit >> 20} MiB limit "
                               "while read")
            digest.update(chunk)
    return digest.hexdigest()


def file_hashes(entry: Path, files: tuple[str, ...] = ENTRY_FILES) -> dict[str, str]:
    """SHA-256 of each of ``files`` (a kernel entry's: :data:`ENTRY_FILES`) in ``entry``."""
    return {name: _sha256(entry / name, FILE_LIMIT) for name in files}


def verify(entry: Path, key: str,
           files: tuple[str, ...] = ENTRY_FILES) -> tuple[dict | None, str]:
    """``(build.json, "")`` for a sound entry, else ``(None, why it is not)``.
    Nothing in it is trusted: a link (even for the entry itself) is not
    followed, a FIFO or device not read, a file not read past its limit."""
    try:
        if not stat.S_ISDIR(os.lstat(entry).st_mode):
            return None, "not a directory"
        if not os.path.lexists(entry / META):
            return None, f"no {META}"
        meta = _read(entry / META, META_LIMIT)
        info = json.loads(meta)
        if not isinstance(info, dict) or info.get("key") != key \
                or not isinstance(info.get("files"), dict):
            return None, f"{META} does not describe this entry"
        for name in files:
            if _sha256(entry / name, FILE_LIMIT) != info["files"].get(name):
                return None, f"{name} does not match its recorded SHA-256"
    except _Corrupt as err:
        return None, str(err)
    except FileNotFoundError:
        return None, "missing"
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        return None, f"{META} unreadable ({type(err).__name__})"
    return info, ""


def report_rebuilt(entry: Path, why: str) -> None:
    """Tell the user, in one line, that a corrupt ``entry`` was rebuilt (if ``why``)."""
    if why:
        print(f"kisim: cache entry {entry} was corrupt ({why}); rebuilt", file=sys.stderr)


@contextlib.contextmanager
def _locked(cache_dir: Path) -> Iterator[None]:
    """Hold the cache directory's flock (exclusive, blocking) for the ``with`` block."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(cache_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _abandoned(path: Path) -> bool:
    """Whether no live process holds ``path``'s flock (its build was killed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def new_work_dir(cache_dir: Path, label: str) -> Path:
    """A fresh temporary directory inside the cache (same file system as entries),
    flock'ed by this process until :func:`install` or :func:`discard`. Work
    directories of killed builds are removed first."""
    check_tool_path(cache_dir, "build cache directory ($KISIM_CACHE)")
    with _locked(cache_dir):
        for stale in cache_dir.glob("tmp-*"):
            if stale.is_dir() and not stale.is_symlink() and stale not in _held \
                    and _abandoned(stale):
                shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f"tmp-{label}-", dir=cache_dir))
        fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held[work] = fd
    return work


def discard(work: Path) -> None:
    """Remove a work directory (if still there) and release its lock."""
    shutil.rmtree(work, ignore_errors=True)
    fd = _held.pop(work, None)
    if fd is not None:
        os.close(fd)


def write_meta(work: Path, info: dict, files: tuple[str, ...] = ENTRY_FILES) -> None:
    """Record ``info`` plus the hashes of the entry's ``files`` as ``build.json``."""
    info = dict(info, files=file_hashes(work, files))
    tmp = work / (META + ".tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    tmp.replace(work / META)


def install(work: Path, final: Path, key: str, files: tuple[str, ...] = ENTRY_FILES) -> dict:
    """Rename the finished ``work`` to ``final`` and return its build.json.

    Under the cache lock: a sound entry already at ``final`` (another
    process built the same key meanwhile) is kept and ``work`` discarded; a
    bad one is renamed aside, removed, and replaced.
    """
    with _locked(final.parent):
        if os.path.lexists(final):      # a link there is corrupt too: moved aside, not followed
            info, _ = verify(final, key, files)
            if info is not None:
                discard(work)
                return info
            trash = Path(tempfile.mkdtemp(prefix="tmp-bad-", dir=final.parent))
            final.rename(trash / final.name)
            shutil.rmtree(trash, ignore_errors=True)
        work.rename(final)
        discard(work)                   # releases the lock; nothing is left to remove
    info, why = verify(final, key, files)
    if info is None:
        raise OSError(f"cache entry {final} unsound right after install: {why}")
    return info


def content_key(prefix: str, parts: Iterable[bytes]) -> str:
    """``prefix-`` and 32 hex digits of a SHA-256 over each part's own SHA-256."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return f"{prefix}-{digest.hexdigest()[:32]}"


def entry(cache_dir: Path, key: str, label: str, make: Callable[[Path], dict],
          files: tuple[str, ...] = ENTRY_FILES) -> tuple[dict, bool]:
    """The sound cache entry ``cache_dir/key``: its build.json, and whether it was
    there already. Otherwise ``make(work)`` builds ``files`` into a fresh work
    directory and returns what build.json records; the entry is installed, and a
    corrupt one it replaced is reported in one line."""
    final = cache_dir / key
    info, why = verify(final, key, files) if os.path.lexists(final) else (None, "")
    if info is not None:
        return info, True
    work = new_work_dir(cache_dir, label)
    try:
        write_meta(work, make(work), files)
        info = install(work, final, key, files)
    finally:
        discard(work)
    report_rebuilt(final, why)
    return info, False
