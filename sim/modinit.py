"""Modules whose init fails are not loaded, as in Linux (kernel/module.c).

v5.10's do_init_module() frees a module whose init function returns
non-zero: it is not loaded, its functions are gone. kisim links modules
into the image, so the host does the rest: every registration the module
API made while that init ran (``module_loading`` names it) is undone, last
first, through the same service that made it; the failure is part of the
run's result (not ``ok``); and a workload in that module is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from sim.machine import CALL_GAP

if TYPE_CHECKING:
    from sim.guest import Guest
    from sim.machine import Cpu

#: Each module API registration and the call that undoes it.
UNDO = {"MOD_KPROBE_REGISTER": "MOD_KPROBE_UNREGISTER",
        "MOD_KPROBE_REGISTER_RET": "MOD_KPROBE_UNREGISTER_RET",
        "MOD_MARKER_REGISTER": "MOD_MARKER_UNREGISTER",
        "MOD_MARKER_ARM": "MOD_MARKER_DISARM",
        "MOD_TRACEPOINT_REGISTER": "MOD_TRACEPOINT_UNREGISTER"}

#: Calls whose a2 points at a block the caller built on its stack, in words
#: (marker_probe_register's ``{ name, format, probe, private }``): the block
#: is copied when the call is made, since that stack is reused by the time
#: an undo runs, and handed to the undo from below the undoing CPU's stack
#: (as far below it as a host call's frame, :data:`sim.machine.CALL_GAP`).
STACK_BLOCKS = {"MOD_MARKER_REGISTER": 4}


@dataclass(frozen=True)
class FailedModule:
    """A module whose init returned ``error`` (a -errno) and was not loaded."""

    name: str
    error: int
    errno: str | None        # its name (EINVAL), if it is one

    def __str__(self) -> str:
        what = f"{self.error} ({self.errno})" if self.errno else str(self.error)
        return f"module {self.name}: init failed with {what}; not loaded"

    def to_json(self) -> dict:
        return {"name": self.name, "error": self.error, "errno": self.errno}


class ModuleInits:
    """Watches the module API calls each module's init makes; undoes a failed one's."""

    def __init__(self, guest: Guest) -> None:
        self.guest = guest
        # (module, op, a2, a3, the block a2 pointed at if STACK_BLOCKS has op)
        self._made: list[tuple[str, str, int, int, bytes]] = []

    def record(self, op: str, a2: int, a3: int, result: int) -> None:
        """A module API call returned ``result``: keep a registration made by an init."""
        if result != 0 or op not in UNDO:
            return
        symbols = self.guest.image.symbols
        if "module_loading" not in symbols:
            return
        machine = self.guest.machine
        name = machine.read_word(symbols["module_loading"])
        if name:
            block = machine.read(a2, STACK_BLOCKS[op] * machine.arch.word) \
                if op in STACK_BLOCKS else b""
            self._made.append((self.guest.read_string(name, 64), op, a2, a3, block))

    def failed(self, cpu: Cpu, call: Callable[[Cpu, str, int, int], int]) -> list[FailedModule]:
        """The modules whose init failed, each one's registrations undone by ``call``."""
        from sim.guest import ERRNO
        symbols, machine = self.guest.image.symbols, self.guest.machine
        if "nr_failed_modules" not in symbols:
            return []
        count = machine.read_word(symbols["nr_failed_modules"], 4)
        names = machine.read_words(symbols["failed_modules"], count)
        errors = [e - (1 << 32) if e >> 31 else e    # C ints
                  for e in machine.read_words(symbols["failed_module_errors"], count, 4)]
        by_number = {number: name for name, number in ERRNO.items()}
        failed = [FailedModule(self.guest.read_string(n, 64), e, by_number.get(-e))
                  for n, e in zip(names, errors)]
        gone = {f.name for f in failed}
        for module, op, a2, a3, block in reversed(self._made):
            if module not in gone:
                continue
            if block:
                a2 = (cpu.reg(machine.arch.sp) - CALL_GAP - len(block)) & ~15
                machine.write(a2, block)
            call(cpu, UNDO[op], a2, a3)
        self._made = [m for m in self._made if m[0] not in gone]
        return failed


__all__ = ["FailedModule", "ModuleInits", "UNDO"]
