"""The guest-visible modeled clock, read exactly at an instruction, mid-turn.

A CPU's modeled clock (:attr:`sim.machine.Cpu.clock_ns`) is its retired
instructions at the arch's per-instruction cost plus the cycles charged to
it, at the arch's frequency. A reading requested from a trap handler (the
trace clock's hypercall) is that clock at the trapping instruction, and
reading it does not end the CPU's turn: the scheduler sees the same turns
whether or not anything reads the clock. How the position inside the
running slice is learned is the machine's ``turn_end``
(docs/machine.md, "Exact clock reads"):

- ``"counter"``: from Unicorn's own instruction counter, in place
  (:meth:`Cpu.position`); the reading is handed out at once and the slice
  goes on;
- ``"spin"`` (the reference): the slice ends at the trap in the counting
  loop (:meth:`Cpu.pause_slice`), the reading is handed out at the slice's
  end, and the same turn goes on in a new slice.

Both hand out the same value at the same instruction, bit for bit.

The value is the CPU's clock plus an offset that only grows: a reading
that would not be later than the last one handed out on any CPU moves that
CPU's offset forward to one nanosecond past it, as a forward-only TSC
synchronization would. CPUs run their turns one after another, so without
it a CPU that idled could stamp an event earlier than one that preceded it
on another CPU; with it, readings are unique, follow the order in which
the machine ran them, and advance on each CPU with its own modeled cycles
between synchronizations. Everything is a function of the instruction
stream: same seed, same readings.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:                      # the machine imports this module
    from sim.machine import Cpu, Machine

Deliver = Callable[[int], None]


class ModeledClock:
    """Per-CPU modeled clocks, synchronized forward-only, read at any instruction."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.offset = [0] * len(machine.cpus)
        self.last_ns = 0
        self.reads = 0
        self._pending: list[tuple[int, Deliver]] = []

    def _stamp(self, index: int, clock_ns: int) -> int:
        """``clock_ns`` of CPU ``index`` plus its offset, moved forward past the last reading."""
        now = clock_ns + self.offset[index]
        if now <= self.last_ns:
            self.offset[index] += self.last_ns + 1 - now
            now = self.last_ns + 1
        self.last_ns = now
        return now

    def now(self, index: int) -> int:
        """CPU ``index``'s reading between slices."""
        return self._stamp(index, self.machine.cpus[index].clock_ns)

    def read(self, cpu: Cpu, deliver: Deliver) -> None:
        """Call ``deliver(ns)`` with ``cpu``'s exact clock at the current instruction.

        In place when the CPU can tell its position; otherwise the slice
        ends here and ``deliver`` runs at its end, before the CPU goes on.
        """
        self.reads += 1
        position = cpu.position()
        if position is not None:
            deliver(self._stamp(cpu.index, cpu.clock_ns_at(position)))
        else:
            cpu.pause_slice()
            self._pending.append((cpu.index, deliver))

    def deliver(self) -> None:
        """Hand out the readings requested during the slice that just ended."""
        if self._pending:
            pending, self._pending = self._pending, []
            for index, deliver in pending:
                deliver(self.now(index))

    def end_ns(self) -> list[int]:
        """Each CPU's clock at the end of a run, never before the last reading."""
        return [max(c.clock_ns + self.offset[c.index], self.last_ns) for c in self.machine.cpus]


__all__ = ["Deliver", "ModeledClock"]
