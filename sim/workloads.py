"""Reference checksums of the guest's workloads, recomputed in Python.

Each workload's checksum depends only on its name and size, never on the
arch, the CPU count or the interleaving; :func:`reference_checksum` follows
the algorithm described at the top of each ``kernel/workloads/*.c``.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Callable

KERNEL = Path(__file__).resolve().parent.parent / "kernel"
WORKLOADS_C = KERNEL / "workloads" / "workloads.c"
#: ``boot_params.workload``'s size (kernel/include/kisim/hypercall.h): a name, then a NUL.
WORKLOAD_NAME_LEN = int(re.search(r"^#define\s+WORKLOAD_NAME_LEN\s+(\d+)",
                                  (KERNEL / "include/kisim/hypercall.h").read_text(), re.M)[1])


def _parse_workloads(path: Path) -> dict[str, int]:
    pattern = re.compile(r'\{\s*"(\w+)",\s*\w+,\s*(\d+)\s*\}')
    return {name: int(size) for name, size in pattern.findall(path.read_text())}


#: Default size of each workload, from the guest's own table.
DEFAULT_SIZES: dict[str, int] = _parse_workloads(WORKLOADS_C)
WORKLOADS: tuple[str, ...] = tuple(DEFAULT_SIZES)


class WorkloadError(ValueError):
    """An unknown workload name or a bad size."""


_IDENT = re.compile(r"[A-Za-z_]\w*\Z")


def module_workload(name: str) -> tuple[str, str] | None:
    """``(module, function)`` for a ``MODULE:FUNC`` workload, else None."""
    module, sep, func = name.partition(":")
    return (module, func) if sep else None


def check_workload(name: str, size: int | None = None) -> None:
    """A built-in workload's name, or ``MODULE:FUNC`` (a guest module's function)."""
    parts = module_workload(name)
    if parts is not None:
        if not all(_IDENT.match(part) for part in parts):
            raise WorkloadError(f"workload {name!r}: MODULE:FUNC takes a module name and "
                                "a function name (C identifiers)")
        if len(name.encode()) >= WORKLOAD_NAME_LEN:
            raise WorkloadError(f"workload {name[:40]!r}...: MODULE:FUNC is at most "
                                f"{WORKLOAD_NAME_LEN - 1} bytes (boot_params.workload)")
    elif name not in WORKLOADS:
        raise WorkloadError(f"unknown workload {name!r} (valid: {', '.join(WORKLOADS)}, "
                            "or a module's function as MODULE:FUNC)")
    low = 0 if parts is not None else 1     # a built-in workload's 0 is its default size
    if size is not None and (not isinstance(size, int) or isinstance(size, bool)):
        raise WorkloadError(f"workload size must be an integer, not {type(size).__name__}")
    if size is not None and not low <= size <= 0xFFFF_FFFF:
        raise WorkloadError(f"workload size must be {low}..{0xFFFF_FFFF}, not {size}")


# -- reference checksums (mirrors of kernel/workloads/*.c) -------------------

_M = 0xFFFF_FFFF


def mix32(x: int) -> int:
    x &= _M
    x ^= x >> 16
    x = (x * 0x7FEB352D) & _M
    x ^= x >> 15
    x = (x * 0x846CA68B) & _M
    x ^= x >> 16
    return x


def _fold(results: list[int]) -> int:
    c = 0
    for r in results:
        c = mix32(c ^ r)
    return c


def _ref_fib(depth: int) -> int:
    fib = [0, 1]
    while len(fib) < depth:
        fib.append((fib[-1] + fib[-2]) & _M)
    results = []
    for i in range(4):
        acc = 0
        for k in range(depth):
            acc = mix32(acc + fib[k] + i)
        results.append(acc)
    return _fold(results)


def _ref_getppid(iterations: int) -> int:
    init_pid = 1                     # the workload tasks are children of init
    results = []
    for i in range(4):
        acc = i
        for k in range(iterations):
            acc = mix32(acc + init_pid + k)
        results.append(acc)
    return _fold(results)


_KMALLOC_SIZES = (8, 13, 16, 24, 32, 50, 64, 96, 128, 200, 256, 384, 512, 700, 1024, 2000)
_STORM_OBJECT = 40


def _size_class(n: int) -> int:
    size = 8
    while size < n:
        size *= 2
    return size


def _ref_kmalloc(iterations: int) -> int:
    results = []
    for i in range(4):
        state = (0x9E3779B9 ^ (i * 0x85EBCA6B)) & _M
        acc = 0
        ring: list[tuple[int, int] | None] = [None] * 8     # (length, tag)

        def check(slot: tuple[int, int], acc: int) -> int:
            length, tag = slot
            return mix32(acc ^ ((tag + ((tag & 0xFF) << 8)) & _M) ^ length)

        for k in range(iterations):
            state ^= (state << 13) & _M
            state ^= state >> 17
            state ^= (state << 5) & _M
            r = state
            slot = ring[k % 8]
            if slot is not None:
                acc = check(slot, acc)
            if (r >> 4) & 3 == 0:
                length = alloc = _STORM_OBJECT
            else:
                length = _KMALLOC_SIZES[r & 15]
                alloc = _size_class(length)
            ring[k % 8] = (length, mix32(r ^ k))
            acc = mix32(acc + length + ((alloc << 12) & _M))
        for slot in ring:
            if slot is not None:
                acc = check(slot, acc)
        results.append(acc)
    return _fold(results)


def _fnv1a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & _M
    return h


def _ref_hackbench(loops: int, groups: int = 2, senders: int = 4, receivers: int = 4) -> int:
    results = []
    for g in range(groups):
        for r in range(receivers):
            acc = 0
            for s in range(senders):
                for seq in range(loops):
                    length = 16 + (((g * 7 + s * 3 + r + seq) & 7) << 4)
                    data = bytes((s * 31 + r * 17 + seq * 7 + j) & 0xFF for j in range(length))
                    acc = (acc + mix32(_fnv1a(data) ^ (s << 16) ^ ((seq << 4) & _M) ^ g)) & _M
            results.append(acc)
    return mix32(_fold(results) + groups * senders * receivers * loops)


def _ref_kmemtrace_errors(iterations: int, tasks: int = 4) -> int:
    """kernel/workloads/kmemtrace_errors.c: slab churn per task, then planted misuse."""
    results = []
    for i in range(tasks):
        acc = 0
        for k in range(iterations):
            acc = mix32(acc + 32 + (k + i) % 64)
        results.append(acc)
    return mix32(_fold(results) ^ 0x6B6D656D)


_REFERENCES: dict[str, Callable[[int], int]] = {
    "fib": _ref_fib, "getppid": _ref_getppid, "kmalloc": _ref_kmalloc,
    "hackbench": _ref_hackbench, "kmem_errors": _ref_kmemtrace_errors,
}


def reference_checksum(workload: str, size: int | None = None) -> int:
    """The checksum the guest must report, computed in Python (once per workload and
    size in a process: a sweep checks every run against it)."""
    check_workload(workload, size)
    return _reference(workload, DEFAULT_SIZES[workload] if size is None else size)


@functools.lru_cache(maxsize=64)
def _reference(workload: str, size: int) -> int:
    return _REFERENCES[workload](size)


__all__ = ["DEFAULT_SIZES", "WORKLOADS", "WorkloadError", "check_workload", "mix32",
           "module_workload", "reference_checksum"]
