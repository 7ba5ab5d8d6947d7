"""The hypercall table: numbers the guest's system-call instruction reaches.

ABI.  The guest executes its arch's system-call instruction (x86-64
``syscall``, ARM ``svc #0``, PowerPC ``sc``) with the hypercall number in
argument register 0 and up to three arguments in argument registers 1..3;
the handler's result goes back in the return register. Numbers are the
``HC_*`` lines of ``kernel/include/kisim/hypercall.h``, parsed here so that
C and Python cannot drift apart.

The table only dispatches. Each layer registers the numbers it serves:
:mod:`sim.guest` the boot-protocol calls (exit, write, checksum, panic,
idle, workload), the patcher the host-forwarding probes of markers and
tracepoints, the kprobe layer HC_KPROBE. A number nobody registered faults
the run. A handler may end the call elsewhere by returning :class:`Resume`
(the kprobe exception return restores every register and the interrupted PC).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from arches import TrapKind
from sim.errors import ConfigError, UnmappedAccess
from sim.machine import UNHANDLED, Cpu, Machine, Trap, TrapPriority

HYPERCALL_H = Path(__file__).resolve().parent.parent / "kernel" / "include" / "kisim" / "hypercall.h"


def parse_defines(path: Path, prefix: str) -> dict[str, int]:
    """``#define NAME value`` lines of a C header whose name starts with ``prefix``."""
    pattern = re.compile(rf"^#define\s+({prefix}\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", re.M)
    return {name: int(value, 0) for name, value in pattern.findall(path.read_text())}


#: Hypercall numbers by name (HC_EXIT, HC_WRITE, ...), from the shared header.
HYPERCALLS: dict[str, int] = parse_defines(HYPERCALL_H, "HC_")

@dataclass(frozen=True)
class Resume:
    """A handler's result: resume at ``pc``, registers as the handler left them."""

    pc: int


#: ``handler(cpu, a1, a2, a3)``: the value for the return register (None: 0),
#: or :class:`Resume`.
Hypercall = Callable[[Cpu, int, int, int], "int | Resume | None"]


class HypercallTable:
    """Number -> handler, installed on a machine as a guest-priority trap handler."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.handlers: dict[int, Hypercall] = {}
        self.counts: Counter[str] = Counter()
        self.address = 0            # the hypercall instruction being served
        self._names = {number: name for name, number in HYPERCALLS.items()}
        machine.add_trap_handler(self._on_trap, TrapPriority.GUEST)

    def register(self, name: str, handler: Hypercall) -> int:
        """Serve hypercall ``name`` (an ``HC_*`` name) with ``handler``; return its number."""
        if name not in HYPERCALLS:
            raise ConfigError(f"unknown hypercall {name!r} "
                              f"(valid: {', '.join(HYPERCALLS)})")
        number = HYPERCALLS[name]
        if number in self.handlers:
            raise ConfigError(f"hypercall {name} already has a handler")
        self.handlers[number] = handler
        return number

    def unregister(self, name: str) -> None:
        if self.handlers.pop(HYPERCALLS.get(name, -1), None) is None:
            raise ConfigError(f"hypercall {name!r} has no handler")

    def _on_trap(self, cpu: Cpu, trap: Trap) -> object:
        if trap.kind is not TrapKind.SYSCALL:
            return UNHANDLED
        nr, a1, a2, a3 = trap.args[:4]
        handler = self.handlers.get(nr)
        if handler is None:
            name = self._names.get(nr)
            what = f"hypercall {name} has no handler" if name else f"unknown hypercall {nr}"
            raise self.machine.fault(cpu, what, pc=trap.address)
        self.counts[self._names[nr]] += 1
        self.address = trap.address
        try:
            result = handler(cpu, a1, a2, a3)
        except UnmappedAccess as err:   # a NULL or wild pointer from the guest: its oops
            raise self.machine.fault(cpu, f"{self._names[nr]}: the guest passed a bad "
                                          f"pointer: {err}", pc=trap.address) from None
        if isinstance(result, Resume):
            return result.pc
        cpu.set_reg(cpu.arch.ret, result or 0)
        return None


__all__ = ["HYPERCALLS", "HYPERCALL_H", "Hypercall", "HypercallTable", "Resume",
           "parse_defines"]
