"""Host code built like the guest: the pinned zig compiles it into the cache.

kisim's one piece of host C is the machine's trap hook
(``sim/native/hooks.c``), which serves trace clock reads without
entering Python (docs/machine.md). It is a shared library for the host
this Python runs on, compiled by ``python -m ziglang cc`` and kept in the
same verified, content-addressed cache as the guest kernels
(:mod:`kbuild.cache`): the key covers the source, the flags, the compiler
and the host, and a built library is never committed.
"""
from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Sequence

from kbuild import cache
from kbuild.image import _run, _zig, _zig_env, compiler_version, default_cache_dir

LIBRARY = "lib.so"
HOST_FILES = (LIBRARY,)
HOST_CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
               "-fno-fast-math")       # the hook's float arithmetic must equal Python's


def host_library(source: Path, cache_dir: Path | None = None, *,
                 extra: Sequence[Path] = ()) -> Path:
    """The shared library built from ``source`` (and ``extra`` sources) for this
    host, built on first use; headers are found beside ``source``.

    The cache key covers every source and the headers beside the first.
    Raises :class:`kbuild.BuildError` when the compiler fails.
    """
    started = time.perf_counter()
    cache_dir = Path(cache_dir).resolve() if cache_dir is not None else default_cache_dir()
    sources = (source, *extra)
    headers = sorted(source.parent.glob("*.h"))
    key = cache.content_key(
        f"host-{source.stem}",
        (*(p.read_bytes() for p in (*sources, *headers)), " ".join(HOST_CFLAGS).encode(),
         compiler_version().encode(), platform.machine().encode()))

    def make(work: Path) -> dict:
        _run(_zig("cc", *HOST_CFLAGS, "-I", os.fspath(source.parent), "-o",
                  os.fspath(work / LIBRARY), *map(os.fspath, sources), "-lm"),
             f"compiling {', '.join(p.name for p in sources)} for the host", _zig_env(cache_dir))
        return {"key": key, "sources": [p.name for p in sources], "cflags": list(HOST_CFLAGS),
                "compiler": compiler_version(), "host": platform.machine(),
                "built_seconds": round(time.perf_counter() - started, 3)}
    cache.entry(cache_dir, key, "host", make, HOST_FILES)
    return cache_dir / key / LIBRARY


__all__ = ["HOST_CFLAGS", "host_library"]
