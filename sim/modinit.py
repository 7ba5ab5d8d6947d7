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

if TYPE_CHECKING:
    from sim.guest import Guest
    from sim.machine import Cpu

#: Each module API registration and the call that undoes it.
UNDO = {"MOD_KPROBE_REGISTER": "MOD_KPROBE_UNREGISTER",
        "MOD_KPROBE_REGISTER_RET": "MOD_KPROBE_UNREGISTER_RET",
        "MOD_MARKER_REGISTER": "MOD_MARKER_UNREGISTER",
        "MOD_TRACEPOINT_REGISTER": "MOD_TRACEPOINT_UNREGISTER"}


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
        self._made: list[tuple[str, str, int, int]] = []     # (module, op, a2, a3)

    def record(self, op: str, a2: int, a3: int, result: int) -> None:
        """A module API call returned ``result``: keep a registration made by an init."""
        if result != 0 or op not in UNDO:
            return
        symbols = self.guest.image.symbols
        if "module_loading" not in symbols:
            return
        name = self.guest.machine.read_word(symbols["module_loading"])
        if name:
            self._made.append((self.guest.read_string(name, 64), op, a2, a3))

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
        for module, op, a2, a3 in reversed(self._made):
            if module in gone:
                call(cpu, UNDO[op], a2, a3)
        self._made = [m for m in self._made if m[0] not in gone]
        return failed


__all__ = ["FailedModule", "ModuleInits", "UNDO"]
