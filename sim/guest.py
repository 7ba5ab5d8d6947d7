"""Boot the kisim guest kernel on a :class:`~sim.machine.Machine` and run a workload.

Boot protocol.  Every CPU starts at the ELF entry ``_start`` with its index
in argument register 0 and the CPU count in argument register 1. Before the
first instruction the host fills the guest's ``boot_params`` (magic, size,
flags, workload name; see ``kernel/include/kisim/hypercall.h``).

Hypercall ABI.  The guest executes its arch's system-call instruction
(x86-64 ``syscall``, ARM ``svc #0``, PowerPC ``sc``) with the hypercall
number in argument register 0 and up to three arguments in argument
registers 1..3; the result goes back in the return register. The numbers
are the ``HC_*`` lines of ``kernel/include/kisim/hypercall.h``, parsed
here so that C and Python cannot drift apart:

=============  ========================================================
HC_EXIT        a1 = status; the CPU has finished and halts
HC_WRITE       a1 = buffer, a2 = length; console output
HC_CHECKSUM    a1 = the workload's u32 checksum (reported by init)
HC_PANIC       a1 = message; the run ends with a :class:`GuestFault`
HC_IDLE        nothing to run on this CPU: its turn ends early
HC_WORKLOAD    a1 = workload name, a2 = the size the guest actually uses
HC_MARKER      a1 = struct marker address, a2 = u64 array, a3 = count
HC_TRACEPOINT  a1 = struct tracepoint address, a2 = word array, a3 = count
=============  ========================================================

Workloads.  Each workload's checksum depends only on its name and size,
never on the arch, the CPU count or the interleaving, and
:func:`reference_checksum` recomputes it in Python from the algorithm
described at the top of each ``kernel/workloads/*.c``.
"""
from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from arches import TrapKind, get_arch
from sim.elf import read_elf
from sim.errors import ConfigError
from sim.machine import UNHANDLED, Cpu, Machine, Trap

REPO = Path(__file__).resolve().parent.parent
HYPERCALL_H = REPO / "kernel" / "include" / "kisim" / "hypercall.h"
WORKLOADS_C = REPO / "kernel" / "workloads" / "workloads.c"

#: Default instruction budget of a whole run (all CPUs): ~100x a default workload.
MAX_INSTRUCTIONS = 300_000_000
DEFAULT_QUANTUM = 10_000


def _parse_defines(path: Path, prefix: str) -> dict[str, int]:
    pattern = re.compile(rf"^#define\s+({prefix}\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", re.M)
    return {name: int(value, 0) for name, value in pattern.findall(path.read_text())}


#: Hypercall numbers by name (HC_EXIT, HC_WRITE, ...), from the shared header.
HYPERCALLS: dict[str, int] = _parse_defines(HYPERCALL_H, "HC_")
_HC = HYPERCALLS
_CONSTS = _parse_defines(HYPERCALL_H, "")
BOOT_PARAMS_MAGIC = _CONSTS["BOOT_PARAMS_MAGIC"]
WORKLOAD_NAME_LEN = _CONSTS["WORKLOAD_NAME_LEN"]


def _parse_workloads(path: Path) -> dict[str, int]:
    pattern = re.compile(r'\{\s*"(\w+)",\s*\w+,\s*(\d+)\s*\}')
    return {name: int(size) for name, size in pattern.findall(path.read_text())}


#: Default size of each workload, from the guest's own table.
DEFAULT_SIZES: dict[str, int] = _parse_workloads(WORKLOADS_C)
WORKLOADS: tuple[str, ...] = tuple(DEFAULT_SIZES)


class WorkloadError(ValueError):
    """An unknown workload name or a bad size."""


def check_workload(name: str, size: int | None = None) -> None:
    if name not in WORKLOADS:
        raise WorkloadError(f"unknown workload {name!r} (valid: {', '.join(WORKLOADS)})")
    if size is not None and not 1 <= size <= 0xFFFF_FFFF:
        raise WorkloadError(f"workload size must be 1..{0xFFFF_FFFF}, not {size}")


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


_REFERENCES: dict[str, Callable[[int], int]] = {
    "fib": _ref_fib, "getppid": _ref_getppid, "kmalloc": _ref_kmalloc,
    "hackbench": _ref_hackbench,
}


def reference_checksum(workload: str, size: int | None = None) -> int:
    """The checksum the guest must report, computed in Python."""
    check_workload(workload, size)
    return _REFERENCES[workload](DEFAULT_SIZES[workload] if size is None else size)


# -- booting -------------------------------------------------------------------

@dataclass
class BootResult:
    """What one boot-and-run produced."""

    arch: str
    cpus: int
    workload: str
    size: int
    checksum: int | None
    expected: int
    per_cpu: list[dict]
    console: str
    exit_status: list[int | None]
    hypercalls: dict[str, int]
    seconds: float
    quantum: int
    seed: int | None
    elf: str

    @property
    def ok(self) -> bool:
        return self.checksum == self.expected

    @property
    def instructions(self) -> int:
        return sum(c["instructions"] for c in self.per_cpu)

    @property
    def modeled_cycles(self) -> float:
        return sum(c["modeled_cycles"] for c in self.per_cpu)

    def to_json(self) -> dict:
        return {"arch": self.arch, "cpus": self.cpus, "workload": self.workload,
                "size": self.size, "checksum": self.checksum, "expected": self.expected,
                "ok": self.ok, "instructions": self.instructions,
                "modeled_cycles": self.modeled_cycles, "per_cpu": self.per_cpu,
                "exit_status": self.exit_status, "hypercalls": self.hypercalls,
                "seconds": round(self.seconds, 3), "quantum": self.quantum,
                "seed": self.seed, "elf": self.elf, "console": self.console}


MarkerHook = Callable[[Cpu, int, list[int]], None]


class Guest:
    """One guest kernel loaded on a fresh machine, ready to run a workload.

    ``on_marker(cpu, marker_address, values)`` and
    ``on_tracepoint(cpu, tracepoint_address, values)`` receive what the
    guest's host-forwarding probes (``marker_probe_hc``, a tracepoint's
    ``hc_probe``) send. Traps other than hypercalls are left to the
    machine's other handlers (``machine.add_trap_handler``).
    """

    def __init__(self, build_or_elf, *, cpus: int = 1, workload: str = "hackbench",
                 size: int | None = None, quantum: int = DEFAULT_QUANTUM,
                 seed: int | None = None) -> None:
        check_workload(workload, size)
        config = getattr(build_or_elf, "config", None)
        self.build = build_or_elf if config is not None else None
        self.elf = Path(getattr(build_or_elf, "elf", build_or_elf))
        arch = get_arch(getattr(build_or_elf, "arch", None) or read_elf(self.elf).machine)
        nr_cpus = int((config or {}).get("NR_CPUS", cpus))
        if cpus > nr_cpus:
            raise ConfigError(f"{cpus} CPUs requested but the kernel was built with "
                              f"CONFIG_NR_CPUS={nr_cpus}")
        self.arch = arch
        self.workload = workload
        self.machine = Machine(arch, cpus, quantum=quantum, seed=seed)
        self.image = self.machine.load_elf(os.fspath(self.elf))
        self.console: list[str] = []
        self.checksum: int | None = None
        self.size = DEFAULT_SIZES[workload] if size is None else size
        self.exit_status: list[int | None] = [None] * cpus
        self.counts: Counter[str] = Counter()
        self.on_marker: MarkerHook | None = None
        self.on_tracepoint: MarkerHook | None = None
        self._names = {number: name for name, number in HYPERCALLS.items()}
        self._write_boot_params(size or 0)
        for cpu in self.machine.cpus:
            cpu.pc = self.image.entry
            cpu.set_reg(arch.args[0], cpu.index)
            cpu.set_reg(arch.args[1], cpus)
        self.machine.on_trap = self._on_trap

    def _write_boot_params(self, size: int) -> None:
        addr = self.image.symbols.get("boot_params")
        if addr is None:
            raise ConfigError(f"{self.elf}: no boot_params symbol: not a kisim kernel")
        arch = self.arch
        name = self.workload.encode().ljust(WORKLOAD_NAME_LEN, b"\0")
        self.machine.write(addr, arch.from_int(BOOT_PARAMS_MAGIC, 4) + arch.from_int(size, 4)
                           + arch.from_int(0, 4) + name)

    # -- guest memory helpers ----------------------------------------------
    def read_string(self, addr: int, limit: int = 4096) -> str:
        out = bytearray()
        while len(out) < limit:
            chunk = self.machine.read(addr + len(out), 1)
            if chunk == b"\0":
                break
            out += chunk
        return out.decode("utf-8", "replace")

    def read_words(self, addr: int, count: int, size: int) -> list[int]:
        data = self.machine.read(addr, count * size) if count else b""
        return [self.arch.to_int(data[i:i + size]) for i in range(0, len(data), size)]

    # -- hypercalls ----------------------------------------------------------
    def _on_trap(self, cpu: Cpu, trap: Trap):
        if trap.kind is not TrapKind.SYSCALL:
            return UNHANDLED
        nr, a1, a2, a3 = (cpu.arg(i) for i in range(4))
        name = self._names.get(nr)
        if name is None:
            raise self.machine.fault(cpu, f"unknown hypercall {nr}", pc=trap.address)
        self.counts[name] += 1
        result = 0
        if nr == _HC["HC_EXIT"]:
            self.exit_status[cpu.index] = a1
            cpu.halt()
        elif nr == _HC["HC_WRITE"]:
            self.console.append(self.machine.read(a1, a2).decode("utf-8", "replace"))
            result = a2
        elif nr == _HC["HC_CHECKSUM"]:
            self.checksum = a1 & _M
        elif nr == _HC["HC_PANIC"]:
            raise self.machine.fault(cpu, f"kernel panic: {self.read_string(a1)}",
                                     pc=trap.address)
        elif nr == _HC["HC_IDLE"]:
            cpu.yield_turn()
        elif nr == _HC["HC_WORKLOAD"]:
            self.size = a2
        elif nr == _HC["HC_MARKER"]:
            if self.on_marker is not None:
                self.on_marker(cpu, a1, self.read_words(a2, a3, 8))
        elif nr == _HC["HC_TRACEPOINT"]:
            if self.on_tracepoint is not None:
                self.on_tracepoint(cpu, a1, self.read_words(a2, a3, self.arch.word))
        cpu.set_reg(self.arch.ret, result)
        return None

    # -- running ---------------------------------------------------------------
    def run(self, max_instructions: int | None = MAX_INSTRUCTIONS,
            on_turn: Callable[[Machine], None] | None = None) -> BootResult:
        """Run until every CPU has exited; :class:`GuestFault` on a crash or panic.

        ``on_turn`` is passed to :meth:`Machine.run` (called after every turn).
        """
        started = time.perf_counter()
        self.machine.run(max_instructions=max_instructions, on_turn=on_turn)
        seconds = time.perf_counter() - started
        per_cpu = [{"cpu": c.index, "instructions": c.instructions,
                    "modeled_cycles": c.modeled_cycles, "events": dict(c.events)}
                   for c in self.machine.cpus]
        return BootResult(arch=self.arch.name, cpus=len(self.machine.cpus),
                          workload=self.workload, size=self.size, checksum=self.checksum,
                          expected=reference_checksum(self.workload, self.size),
                          per_cpu=per_cpu, console="".join(self.console),
                          exit_status=list(self.exit_status), hypercalls=dict(self.counts),
                          seconds=seconds, quantum=self.machine.quantum,
                          seed=self.machine.seed, elf=os.fspath(self.elf))


def boot(build_or_elf, *, cpus: int = 1, workload: str = "hackbench", size: int | None = None,
         quantum: int = DEFAULT_QUANTUM, seed: int | None = None,
         max_instructions: int | None = MAX_INSTRUCTIONS) -> BootResult:
    """Boot a kernel (a :class:`kconfig.build.Build` or an ELF path) and run ``workload``."""
    guest = Guest(build_or_elf, cpus=cpus, workload=workload, size=size,
                  quantum=quantum, seed=seed)
    return guest.run(max_instructions=max_instructions)


__all__ = ["BootResult", "DEFAULT_SIZES", "Guest", "HYPERCALLS", "WORKLOADS",
           "WorkloadError", "boot", "check_workload", "mix32", "reference_checksum"]
