"""Boot the kisim guest kernel on a :class:`~sim.machine.Machine` and run a workload.

Boot protocol.  Every CPU starts at the ELF entry ``_start`` with its index
in argument register 0 and the CPU count in argument register 1. Before the
first instruction the host fills the guest's ``boot_params`` (magic, size,
flags, workload name; see ``kernel/include/kisim/hypercall.h``).

Dynamic ftrace.  A kernel built with ``CONFIG_DYNAMIC_FTRACE`` has every
mcount call site converted to the arch's nop before any CPU starts, as
``start_kernel`` calls ``ftrace_init`` before SMP bring-up
(:mod:`sim.ftrace_init`); :attr:`Guest.ftrace_boot` says what it did.

Hypercalls.  The guest registers the base hypercalls of the boot
protocol into the machine's :class:`~sim.hypercall.HypercallTable`:

=============  ========================================================
HC_EXIT        a1 = status; the CPU has finished and halts
HC_WRITE       a1 = buffer, a2 = length; console output
HC_CHECKSUM    a1 = the checksum (reported by init): a built-in workload's
               u32, a module workload's unsigned long
HC_PANIC       a1 = message; the run ends with a :class:`GuestFault`
HC_IDLE        nothing to run on this CPU: its turn ends early
HC_WORKLOAD    a1 = workload name, a2 = the size the guest actually uses
=============  ========================================================

``HC_MODULE`` is the host half of the guest module API
(``kernel/include/kisim/module.h``): each ``MOD_<SERVICE>_*`` operation
goes to the service an upper layer registered with
:func:`register_module_service` (``KPROBE``: :mod:`probes.kprobes`),
created for this guest at its first call. A module function can be the
workload (``workload="MODULE:FUNC"``): its address goes into the guest's
``module_workload``; its signature is ``unsigned long FUNC(unsigned long
size)`` and its whole return value is the checksum, checked against
``expect`` when given (there is no reference to recompute).

``HC_MARKER`` and ``HC_TRACEPOINT`` (host-forwarding probes) are registered
by the patcher layer when it attaches (:mod:`patcher.markers`,
:mod:`patcher.tracepoint`). Reference checksums live in
:mod:`sim.workloads`.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable
from pathlib import Path

from arches import get_arch
from arches.base import ReferenceCore
from sim.dwarf import Layout, struct
from sim.elf import read_elf
from sim.errors import ConfigError, check_int
from sim.ftrace_init import InitStats, boot_convert
from sim.hypercall import HYPERCALL_H, HYPERCALLS, HypercallTable, parse_defines
from sim.machine import Cpu, Machine
from sim.modinit import FailedModule, ModuleInits
from sim.self_patching import SelfPatching
from sim.workloads import (DEFAULT_SIZES, WORKLOAD_NAME_LEN, WORKLOADS, WorkloadError,
                           check_workload, mix32, module_workload, reference_checksum)

if TYPE_CHECKING:                       # the annotation only: kbuild is the layer above
    from kbuild.image import Build

#: Default instruction budget of a whole run (all CPUs): ~100x a default workload.
MAX_INSTRUCTIONS = 300_000_000
DEFAULT_QUANTUM = 10_000
#: The console output a run keeps: a module's printk loop would fill the host's
#: memory. What comes past it is dropped, counted, and said at the console's end.
MAX_CONSOLE_BYTES = 4 << 20


_CONSTS = parse_defines(HYPERCALL_H, "")
BOOT_PARAMS_MAGIC = _CONSTS["BOOT_PARAMS_MAGIC"]
TASK_COMM_LEN = 16          # kernel/include/linux/sched.h
MODULE_H = HYPERCALL_H.with_name("module.h")
#: errno numbers by name (kernel/include/linux/errno.h): module calls return -errno.
ERRNO: dict[str, int] = parse_defines(HYPERCALL_H.parent.parent / "linux" / "errno.h", "E")
#: HC_MODULE operations by number (MOD_KPROBE_REGISTER, ...), from the shared header.
MODULE_OPS: dict[int, str] = {number: name for name, number
                              in parse_defines(MODULE_H, "MOD_").items()}

#: ``handler(cpu, op_name, a2, a3)``: one HC_MODULE operation; 0 or -errno.
ModuleCall = Callable[[Cpu, str, int, int], int]
#: SERVICE -> ``factory(guest)`` giving that guest's handler (see register_module_service).
MODULE_SERVICES: dict[str, "Callable[[Guest], ModuleCall]"] = {}


def register_module_service(service: str, factory: "Callable[[Guest], ModuleCall]") -> None:
    """Serve the ``MOD_<service>_*`` operations of every guest with ``factory(guest)``."""
    MODULE_SERVICES[service] = factory


# -- booting -------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    """A guest task as a probe sees it: its task_struct, pid and comm."""

    address: int
    pid: int
    comm: str


@dataclass
class BootResult:
    """What one boot-and-run produced."""

    arch: str
    cpus: int
    workload: str
    size: int
    checksum: int | None
    expected: int | None        # None: a module workload run without --expect
    per_cpu: list[dict]
    console: str
    exit_status: list[int | None]
    hypercalls: dict[str, int]
    seconds: float
    quantum: int
    seed: int | None
    elf: str
    cycles: str = "count-only: retired instructions and charged events"
    failed_modules: list[FailedModule] = field(default_factory=list)   # not loaded
    #: CONFIG_PATCHING_IN_GUEST: :meth:`sim.self_patching.SelfPatching.stats` (else None)
    patching: dict | None = None

    @property
    def checksum_ok(self) -> bool:
        return self.checksum is not None and self.expected in (None, self.checksum)

    @property
    def ok(self) -> bool:
        """The checksum is right and every module loaded."""
        return self.checksum_ok and not self.failed_modules

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
                "seed": self.seed, "elf": self.elf, "cycles": self.cycles,
                "failed_modules": [f.to_json() for f in self.failed_modules],
                "patching": self.patching, "console": self.console}


class Guest:
    """One guest kernel loaded on a fresh machine, ready to run a workload.

    The base hypercalls are served from ``machine.hypercalls``; upper
    layers register theirs there. Traps other than hypercalls are left to
    the machine's other handlers (``machine.add_trap_handler``). ``core``
    replaces the arch's reference core for the timing model (the same core
    with other values of its modelling assumptions:
    :meth:`arches.base.ReferenceCore.with_values`).
    """

    def __init__(self, build_or_elf, *, cpus: int = 1, workload: str = "hackbench",
                 size: int | None = None, quantum: int = DEFAULT_QUANTUM,
                 seed: int | None = None, expect: int | None = None,
                 timing: bool = False, core: ReferenceCore | None = None) -> None:
        check_workload(workload, size)
        check_int("cpus", cpus)
        config = getattr(build_or_elf, "config", None)
        self.build = build_or_elf if config is not None else None
        self.elf = Path(getattr(build_or_elf, "elf", build_or_elf))
        if config is not None:
            arch = get_arch(build_or_elf.arch).for_config(config)
        else:                               # a bare ELF: its code says which variant built it
            image = read_elf(self.elf)
            arch = get_arch(image.machine)
            arch = arch.for_code_isa(image.symbols.pointer("start_kernel") & arch.isa_bits
                                     if "start_kernel" in image.symbols else 0)
        nr_cpus = int((config or {}).get("NR_CPUS", cpus))
        if cpus > nr_cpus:
            raise ConfigError(f"{cpus} CPUs requested but the kernel was built with "
                              f"CONFIG_NR_CPUS={nr_cpus}")
        if core is not None:                # the reference core with other assumptions
            arch = dataclasses.replace(arch, core=core)
        self.arch = arch
        self.workload = workload
        self.machine = Machine(arch, cpus, quantum=quantum, seed=seed, timing=timing)
        self.image = self.machine.load_elf(os.fspath(self.elf))
        # start_kernel's ftrace_init, before any CPU runs (CONFIG_DYNAMIC_FTRACE)
        converted = boot_convert(self.machine, self.image)
        # CONFIG_PATCHING_IN_GUEST: the kernel's own code writes text from now on
        self.self_patching = SelfPatching(self.machine, self.image) \
            if "pc_patch" in self.image.symbols else None
        self.machine.text_poke = self.self_patching
        self.mcount_sites: list[int] = converted[0] if converted else []
        self.ftrace_boot: InitStats | None = converted[1] if converted else None
        self.console: list[str] = []
        self.console_kept = self.console_dropped = 0      # bytes of HC_WRITE
        self.checksum: int | None = None
        self.expect = expect
        # which symbols each module defines, as the build recorded it (kbuild/image.py)
        self.image.symbols.bind_modules({
            m["name"]: (m["locals"], m["globals"])
            for m in getattr(build_or_elf, "info", {}).get("modules", ())})
        if self.machine.timing is not None:        # Linux loads modules into vmalloc'd pages
            self.machine.timing.small_pages([
                (s.addr, s.addr + s.size) for m in self.image.symbols.modules
                for s in self.image.symbols.in_module(m) if s.size])
        self.module_function = self._module_workload(build_or_elf, workload)
        self.size = (size or 0) if self.module_function else (
            DEFAULT_SIZES[workload] if size is None else size)
        self.exit_status: list[int | None] = [None] * cpus
        self.hypercalls = HypercallTable(self.machine)
        for name, handler in (("HC_EXIT", self._hc_exit), ("HC_WRITE", self._hc_write),
                              ("HC_CHECKSUM", self._hc_checksum), ("HC_PANIC", self._hc_panic),
                              ("HC_IDLE", self._hc_idle), ("HC_WORKLOAD", self._hc_workload),
                              ("HC_MODULE", self._hc_module)):
            self.hypercalls.register(name, handler)
        self.services: dict[str, ModuleCall] = {}
        self.module_inits = ModuleInits(self)
        self.failed_modules: list[FailedModule] = []
        self._write_boot_params(size or 0)
        self._write_memory_pressure()
        for cpu in self.machine.cpus:
            cpu.pc = self.image.entry
            cpu.set_reg(arch.args[0], cpu.index)
            cpu.set_reg(arch.args[1], cpus)

    def _module_workload(self, build_or_elf, workload: str) -> int:
        """The address of a ``MODULE:FUNC`` workload's function (0: a built-in
        workload): FUNC as module MODULE defines it, never another module's or
        the kernel's function of that name."""
        parts = module_workload(workload)
        if parts is None:
            return 0
        module, func = parts
        built = [m.name for m in getattr(build_or_elf, "modules", ())]
        if module not in built:
            raise WorkloadError(f"workload {workload}: no module {module!r} in this kernel "
                                f"(modules: {', '.join(built) or 'none'}; give --module "
                                f"{module}.c)")
        symbols = self.image.symbols
        if not any(s.kind == "func" for s in symbols.candidates(workload)):
            raise WorkloadError(f"workload {workload}: module {module} has no function "
                                f"{func!r}")
        addr = symbols[workload]            # SymbolError if two of its files define it
        self.machine.write_word(symbols["module_workload"], symbols.pointer(workload))
        return addr

    def _write_boot_params(self, size: int) -> None:
        addr = self.image.symbols.get("boot_params")
        if addr is None:
            raise ConfigError(f"{self.elf}: no boot_params symbol: not a kisim kernel")
        arch = self.arch
        name = self.workload.encode()[:WORKLOAD_NAME_LEN].ljust(WORKLOAD_NAME_LEN, b"\0")
        self.machine.write(addr, arch.from_int(BOOT_PARAMS_MAGIC, 4) + arch.from_int(size, 4)
                           + arch.from_int(0, 4) + name)

    def _write_memory_pressure(self) -> None:
        """CONFIG_WORKLOAD_MEMORY_PRESSURE: the walk covers twice the reference core's
        outermost cache at its smallest line (kernel/workloads/workloads.c)."""
        symbols = self.image.symbols
        if "memory_pressure_bytes" not in symbols:
            return
        caches = self.arch.core.caches
        self.machine.write_word(symbols["memory_pressure_bytes"], 2 * caches[-1].size)
        self.machine.write_word(symbols["memory_pressure_line"], min(c.line for c in caches))

    # -- guest memory helpers ----------------------------------------------
    def read_string(self, addr: int, limit: int = 4096) -> str:
        out = bytearray()
        while len(out) < limit:
            chunk = self.machine.read(addr + len(out), 1)
            if chunk == b"\0":
                break
            out += chunk
        return out.decode("utf-8", "replace")

    @cached_property
    def _task_layouts(self) -> tuple[int, Layout, Layout]:
        """THREAD_SIZE and the thread_info and task_struct layouts, read from the
        DWARF once per guest: :meth:`current_task` runs at every hypercall."""
        return (struct(self.elf, "thread_union").size, struct(self.elf, "thread_info"),
                struct(self.elf, "task_struct"))

    def current_task(self, cpu: Cpu) -> Task:
        """The task running on ``cpu``, read from guest memory as ``current`` is.

        ``current`` is ``current_thread_info()->task``, the thread_info at
        the bottom of the THREAD_SIZE-aligned stack
        (kernel/include/kisim/thread_info.h, as Linux 2.6 x86-32); offsets
        and THREAD_SIZE come from the kernel's DWARF (:mod:`sim.dwarf`).
        """
        thread_size, info, task = self._task_layouts
        base = cpu.reg(self.arch.sp) & ~(thread_size - 1)
        address = self.machine.read_word(base + info.offset("task"))
        pid = self.machine.read_word(address + task.offset("pid"), 4)
        comm = self.machine.read(address + task.offset("comm"), TASK_COMM_LEN)
        return Task(address, pid, comm.split(b"\0")[0].decode("utf-8", "replace"))

    # -- base hypercalls ------------------------------------------------------
    def _hc_exit(self, cpu: Cpu, status: int, _a2: int, _a3: int) -> None:
        """A CPU is done. The kernel exits a CPU only from ``cpu_idle`` once init
        has set ``system_halting``; an exit before that (a module's code calling
        the hypercall) ends that CPU's part of the run: a guest fault that says so."""
        halting = self.image.symbols.get("system_halting")
        if halting is not None and not self.arch.to_int(self.machine.read(halting, 4)):
            at = self.image.describe(self.hypercalls.address)
            raise self.machine.fault(cpu, f"HC_EXIT (kisim's exit hypercall) at {at} while "
                                          "the kernel was not halting: this CPU would stop "
                                          "there and the run end without the workload's "
                                          "checksum (the kernel exits a CPU only from "
                                          "cpu_idle, once init is done)",
                                     pc=self.hypercalls.address)
        self.exit_status[cpu.index] = status
        cpu.halt()

    def _hc_write(self, cpu: Cpu, buf: int, length: int, _a3: int) -> int:
        keep = max(0, min(length, MAX_CONSOLE_BYTES - self.console_kept))
        if keep:
            self.console.append(self.machine.read(buf, keep).decode("utf-8", "replace"))
        self.console_kept += keep
        self.console_dropped += length - keep
        return length

    def console_text(self) -> str:
        """The console, and how much of it was dropped past :data:`MAX_CONSOLE_BYTES`."""
        dropped = (f"\n[kisim: {self.console_dropped} bytes of console output past the "
                   f"{MAX_CONSOLE_BYTES}-byte limit were dropped]\n"
                   if self.console_dropped else "")
        return "".join(self.console) + dropped

    def _hc_checksum(self, cpu: Cpu, checksum: int, _a2: int, _a3: int) -> None:
        self.checksum = checksum & ((1 << self.arch.bits) - 1)

    def _hc_panic(self, cpu: Cpu, message: int, _a2: int, _a3: int) -> None:
        raise self.machine.fault(cpu, f"kernel panic: {self.read_string(message)}",
                                 pc=self.hypercalls.address)

    def _hc_idle(self, cpu: Cpu, _a1: int, _a2: int, _a3: int) -> None:
        cpu.yield_turn()

    def _hc_workload(self, cpu: Cpu, _name: int, size: int, _a3: int) -> None:
        """Every module's init has run: the failed ones are not loaded (:mod:`sim.modinit`)."""
        self.size = size
        self.failed_modules = self.module_inits.failed(cpu, self._module_service)
        workload_module = (module_workload(self.workload) or (None,))[0]
        for failed in self.failed_modules:
            if failed.name == workload_module:
                raise self.machine.fault(cpu, f"{failed}: its function {self.workload} "
                                              "cannot be the workload",
                                         pc=self.hypercalls.address)

    def _hc_module(self, cpu: Cpu, op: int, a2: int, a3: int) -> int:
        """HC_MODULE: hand ``MOD_<SERVICE>_*`` to that service (made at its first call)."""
        name = MODULE_OPS.get(op)
        if name is None:
            raise self.machine.fault(cpu, f"unknown module operation {op}",
                                     pc=self.hypercalls.address)
        result = self._module_service(cpu, name, a2, a3)
        self.module_inits.record(name, a2, a3, result)
        return result & ((1 << self.arch.bits) - 1)

    def _module_service(self, cpu: Cpu, name: str, a2: int, a3: int) -> int:
        """One ``MOD_<SERVICE>_*`` operation, by its service (made at its first call)."""
        service = name.split("_")[1]
        handler = self.services.get(service)
        if handler is None:
            factory = MODULE_SERVICES.get(service)
            if factory is None:
                raise self.machine.fault(cpu, f"{name}: nothing serves {service} calls "
                                              "(its host layer is not loaded)",
                                         pc=self.hypercalls.address)
            handler = self.services[service] = factory(self)
        return handler(cpu, name, a2, a3)

    def expected_checksum(self) -> int | None:
        """``expect`` if given, else the workload's reference checksum (None for a
        module's workload, which has no reference)."""
        if self.expect is not None or self.module_function:
            return self.expect
        return reference_checksum(self.workload, self.size)

    def checksum_ok(self) -> bool:
        """The workload reported a checksum, and the expected one if there is one."""
        return self.checksum is not None and self.expected_checksum() in (None, self.checksum)

    # -- running ---------------------------------------------------------------
    def run(self, max_instructions: int | None = MAX_INSTRUCTIONS,
            on_turn: Callable[[Machine], None] | None = None) -> BootResult:
        """Run until every CPU has exited; :class:`GuestFault` on a crash or panic.

        ``on_turn`` is passed to :meth:`Machine.run` (called after every turn).
        """
        started = time.perf_counter()
        self.machine.run(max_instructions=max_instructions, on_turn=on_turn)
        expected = self.expected_checksum()
        seconds = time.perf_counter() - started     # the run and its reference checksum
        timing = self.machine.timing
        per_cpu = [{"cpu": c.index, "instructions": c.instructions,
                    "modeled_cycles": c.modeled_cycles, "events": dict(c.events),
                    **({"timing": timing.stats(c.index).to_json()} if timing else {})}
                   for c in self.machine.cpus]
        return BootResult(arch=self.arch.name, cpus=len(self.machine.cpus),
                          workload=self.workload, size=self.size, checksum=self.checksum,
                          expected=expected,
                          per_cpu=per_cpu, console=self.console_text(),
                          exit_status=list(self.exit_status), hypercalls=dict(self.hypercalls.counts),
                          seconds=seconds, quantum=self.machine.quantum,
                          seed=self.machine.seed, elf=os.fspath(self.elf),
                          cycles=self.machine.cycles_from,
                          failed_modules=list(self.failed_modules),
                          patching=self.self_patching and self.self_patching.stats())


def boot(build_or_elf: Build | str | os.PathLike[str], *, cpus: int = 1,
         workload: str = "hackbench", size: int | None = None,
         quantum: int = DEFAULT_QUANTUM, seed: int | None = None,
         max_instructions: int | None = MAX_INSTRUCTIONS, expect: int | None = None,
         timing: bool = False) -> BootResult:
    """Boot a kernel (a :class:`kbuild.Build` or an ELF path) and run ``workload``."""
    guest = Guest(build_or_elf, cpus=cpus, workload=workload, size=size,
                  quantum=quantum, seed=seed, expect=expect, timing=timing)
    return guest.run(max_instructions=max_instructions)


__all__ = ["BootResult", "Task", "DEFAULT_SIZES", "ERRNO", "Guest", "HYPERCALLS", "MODULE_OPS",
           "MODULE_SERVICES", "ModuleCall", "WORKLOADS", "register_module_service",
           "WorkloadError", "boot", "check_workload", "mix32", "reference_checksum"]
