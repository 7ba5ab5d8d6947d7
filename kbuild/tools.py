"""Running the compiler, assembler and linker: bounded, and never outliving kisim.

Every tool runs in its own process group with stdin from ``/dev/null``,
for at most :data:`TOOL_SECONDS` of wall-clock time; then the whole group
(``zig cc`` runs clang as a child) is killed and the build fails in one
line, naming the FIFO or device the tool held open if there is one. A
signal that interrupts a build (:func:`tool_pool`) kills every tool still
running, so the compile threads end and the work directory is removed.

A module is checked before it is compiled (:func:`refuse_special_includes`):
an ``#include`` or ``.incbin`` naming a FIFO, a device or anything else
that is not a regular file is refused in one line, since reading one
blocks or never ends. A name made by a macro cannot be checked: a tool
seen holding a FIFO or device open twice, :data:`POLL_SECONDS` apart, is
stopped then, and the time limit stops whatever else hangs.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from kbuild.errors import BuildError, ModuleError

#: Wall-clock limit of one compiler, assembler or linker run (the slowest
#: kernel file compiles in about 2 s; a loaded machine may be 20x slower).
TOOL_SECONDS = 120.0
#: How often a running tool is looked at: one that holds the same FIFO or
#: device open at two looks in a row is reading it (a macro-made #include
#: names one that refuse_special_includes() cannot see) and is stopped then.
POLL_SECONDS = 1.0
#: Devices a tool may hold open without reading one as a source.
_STREAMS = frozenset({os.devnull, "/dev/urandom", "/dev/random", "/dev/tty"})

_live: set[subprocess.Popen[str]] = set()
_live_lock = threading.Lock()
_stopping = threading.Event()        # a signal interrupts the build: start no more tools

#: ``#include "x"``, ``#include <x>`` and ``.incbin "x"`` (also inside a C
#: string of inline asm, its quotes escaped).
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include(?:_next)?[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)',
                      re.MULTILINE)
_INCBIN = re.compile(rb'\.incbin[ \t]+\\?"((?:[^"\\\n]|\\[^"])+)\\?"')


def run_tool(cmd: list[str], what: str, env: dict[str, str],
             cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` to its end (its output, decoded with replacement, and status);
    :class:`BuildError` if it runs longer than :data:`TOOL_SECONDS`."""
    timeout = TOOL_SECONDS
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            encoding="utf-8", errors="replace", start_new_session=True)
    with _live_lock:
        _live.add(proc)
        if _stopping.is_set():          # started as the build was interrupted
            _kill(proc)
    deadline, seen = time.monotonic() + timeout, set()
    try:
        while True:
            try:
                out, err = proc.communicate(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                held = _special_files(proc.pid)
                if not set(held) & seen and time.monotonic() < deadline:
                    seen = set(held)
                    continue
            _kill(proc)
            proc.communicate()
            if held:
                raise BuildError(f"{what}: stopped: it was reading {held[0]}, which is not "
                                 "a regular file") from None
            raise BuildError(f"{what}: stopped after {timeout:g} s (the time limit of one "
                             "compiler, assembler or linker run)") from None
    except BaseException:
        _kill(proc)
        proc.wait()
        raise
    finally:
        with _live_lock:
            _live.discard(proc)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _kill(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc``'s process group (the tool and what it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _special_files(pid: int) -> list[str]:
    """The FIFOs and devices open in ``pid``'s process group (but /dev/null and
    :data:`_STREAMS`), and "a FIFO" for a process of it waiting in open() for a
    FIFO's writer (fs/pipe.c ``wait_for_partner``, as ``/proc/PID/wchan`` names it)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if os.getpgid(int(entry.name)) != pid:
                continue
            if (entry / "wchan").read_text() == "wait_for_partner":
                found.append("a FIFO")
            for fd in (entry / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("/") and target not in _STREAMS:
                    mode = os.stat(fd).st_mode
                    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                        found.append(target)
        except OSError:
            continue
    return found


@contextlib.contextmanager
def tool_pool(jobs: int) -> Iterator[ThreadPoolExecutor]:
    """A thread pool running tools. Interrupted (a signal: not an ``Exception``),
    it drops the queued work and kills every tool running (and any that starts
    meanwhile), so its threads end at once."""
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        yield pool
    except BaseException as exc:
        if not isinstance(exc, Exception):
            pool.shutdown(wait=False, cancel_futures=True)
            with _live_lock:
                _stopping.set()
                for proc in _live:
                    _kill(proc)
        raise
    finally:
        pool.shutdown(wait=True)
        _stopping.clear()


def check_tool_path(path: str | os.PathLike[str], what: str,
                    error: type[BuildError] = BuildError) -> None:
    """``error`` if ``path`` holds a control character (a newline): neither a
    ``#line`` directive nor the compiler's dependency file can carry it."""
    text = os.fspath(path)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise error(f"{what} {text!r} holds a control character (a newline?), which the "
                    "compiler cannot take in a file name; rename it")


def refuse_special_includes(files: Mapping[Path, tuple[str, bytes]], unit: Path,
                            include_dirs: Iterable[Path], cwd: Path) -> None:
    """:class:`ModuleError` if compiling ``unit`` would include or ``.incbin`` a file
    that exists and is not a regular file. ``files`` maps the paths the compiler
    reads to (the name for messages, the text): ``unit`` and every file of
    ``files`` it includes, directly or not, are checked; ``cwd`` and
    ``include_dirs`` are searched as the compiler and assembler do."""
    dirs = list(include_dirs)
    todo, seen = [unit], {unit}
    while todo:
        path = todo.pop()
        shown, text = files[path]
        found = []
        for match in _INCLUDE.finditer(text):
            quoted, angled = match.groups()
            name = os.fsdecode(quoted or angled)
            directive = f'#include "{name}"' if quoted else f"#include <{name}>"
            found.append(_check(shown, text, match.start(), directive,
                                ([path.parent] if quoted else []) + dirs, name))
        for match in _INCBIN.finditer(text):
            name = os.fsdecode(match.group(1))
            _check(shown, text, match.start(), f'.incbin "{name}"', [cwd, *dirs], name)
        for included in found:
            if included in files and included not in seen:
                seen.add(included)
                todo.append(included)


def _check(shown: str, text: bytes, at: int, directive: str, search: list[Path],
           name: str) -> Path | None:
    """The file ``name`` is found at (None: nowhere); refused if it is not a regular file."""
    for where in ([Path(name)] if os.path.isabs(name) else [d / name for d in search]):
        try:
            mode = os.stat(where).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            return Path(os.path.normpath(where))
        if not stat.S_ISDIR(mode):
            line = text.count(b"\n", 0, at) + 1
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a device")
            raise ModuleError(f"{shown}:{line}: {directive} is {kind}, not a regular file; "
                              "refused (it would never be read to its end)")
    return None


__all__ = ["POLL_SECONDS", "TOOL_SECONDS", "check_tool_path", "refuse_special_includes",
           "run_tool", "tool_pool"]
