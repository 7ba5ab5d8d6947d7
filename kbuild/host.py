"""Host code built like the guest: the pinned zig compiles it into the cache.

kisim's host C is the machine's hooks (``sim/native/hooks.c``: trace
clock reads served without entering Python, docs/machine.md) and the
timing model (``sim/native/timing.c`` with the arch's decoder,
docs/timing.md). Each is a shared library for the host this Python runs
on, compiled by ``python -m ziglang cc`` and kept in the same verified,
content-addressed cache as the guest kernels (:mod:`kbuild.cache`): the
key covers the sources, the flags, the compiler and the host, and a
built library is never committed.

zig builds for the CPU it runs on, so the key also covers that CPU (its
name and instruction-set flags, :func:`host_cpu`): a cache shared between
hosts of one architecture and different CPUs (``$KISIM_CACHE`` on a shared
disk) then holds a library for each, instead of handing one CPU's library
to another, where it would die of an illegal instruction.
``KISIM_HOST_MARCH`` names another CPU (``-march``, for instance
``x86_64_v3``), so that the library runs where this one's instructions do
not: under valgrind, which has no AVX-512 (``benchmarks/bench_timing.py
--callgrind``).
"""
from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
import time
from pathlib import Path
from typing import Sequence

from kbuild import cache
from kbuild.errors import BuildError
from kbuild.image import _run, _zig, _zig_env, compiler_version, default_cache_dir

LIBRARY = "lib.so"
HOST_FILES = (LIBRARY,)
HOST_CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
               "-fno-fast-math")       # the hook's float arithmetic must equal Python's
MARCH_ENV = "KISIM_HOST_MARCH"
CPUINFO = Path("/proc/cpuinfo")
CPUINFO_LIMIT = 1 << 20                    # bytes read of it: its first CPU is at the top


@functools.cache
def host_cpu() -> str:
    """This host's CPU as the native build sees it: the first CPU's model and
    instruction-set flags of /proc/cpuinfo (x86 ``flags``, Arm ``Features``),
    hashed, or :func:`platform.processor` where there is no such file."""
    try:
        with CPUINFO.open("rb") as f:
            text = f.read(CPUINFO_LIMIT).decode("ascii", "replace")
    except OSError:
        return platform.processor() or "unknown"
    first = text.split("\n\n", 1)[0]
    wanted = [line for line in first.splitlines()
              if line.split(":", 1)[0].strip() in ("model name", "flags", "Features",
                                                   "CPU implementer", "CPU part", "cpu")]
    return hashlib.sha256("\n".join(wanted).encode()).hexdigest()[:16]


def host_cflags() -> tuple[str, ...]:
    """:data:`HOST_CFLAGS`, and ``-march`` of ``$KISIM_HOST_MARCH`` where it is set."""
    march = os.environ.get(MARCH_ENV, "")
    if not march:
        return HOST_CFLAGS
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}", march):
        raise BuildError(f"{MARCH_ENV}={march[:40]!r}: not a CPU name (letters, digits, "
                         "'_', '.', '+', '-')")
    return (*HOST_CFLAGS, f"-march={march}")


def host_library(source: Path, cache_dir: Path | None = None, *,
                 extra: Sequence[Path] = ()) -> Path:
    """The shared library built from ``source`` (and ``extra`` sources) for this
    host, built on first use; headers are found beside ``source``.

    The cache key covers every source and the headers beside the first.
    Raises :class:`kbuild.BuildError` when the compiler fails.
    """
    started = time.perf_counter()
    cflags = host_cflags()
    cache_dir = Path(cache_dir).resolve() if cache_dir is not None else default_cache_dir()
    sources = (source, *extra)
    headers = sorted(source.parent.glob("*.h"))
    key = cache.content_key(
        f"host-{source.stem}",
        (*(p.read_bytes() for p in (*sources, *headers)), " ".join(cflags).encode(),
         compiler_version().encode(), platform.machine().encode(), host_cpu().encode()))

    def make(work: Path) -> dict:
        try:
            _run(_zig("cc", *cflags, "-I", os.fspath(source.parent), "-o",
                      os.fspath(work / LIBRARY), *map(os.fspath, sources), "-lm"),
                 f"compiling {', '.join(p.name for p in sources)} for the host",
                 _zig_env(cache_dir))
        except BuildError as err:
            march = os.environ.get(MARCH_ENV, "")
            if march and "unknown CPU" in str(err):     # not zig's list of every CPU
                raise BuildError(f"{MARCH_ENV}={march!r}: zig knows no such CPU for "
                                 f"{platform.machine()} ('python -m ziglang targets' lists "
                                 "them, under \"cpus\")") from None
            raise
        return {"key": key, "sources": [p.name for p in sources], "cflags": list(cflags),
                "compiler": compiler_version(), "host": platform.machine(), "cpu": host_cpu(),
                "built_seconds": round(time.perf_counter() - started, 3)}
    cache.entry(cache_dir, key, "host", make, HOST_FILES)
    return cache_dir / key / LIBRARY


__all__ = ["HOST_CFLAGS", "MARCH_ENV", "host_cflags", "host_cpu", "host_library"]
