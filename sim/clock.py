"""The guest-visible modeled clock: read exactly at an instruction, by ending the turn.

A CPU's retired-instruction count, and so its modeled clock
(:attr:`sim.machine.Cpu.clock_ns`), is exact only at the end of a turn:
inside a turn Unicorn counts in C and the host sees the count when
``emu_start`` returns. So a reading requested from a trap handler (a
hypercall) ends that CPU's turn there (:meth:`Cpu.yield_turn`), and the
value is delivered when the turn ends, before the CPU runs again.
:class:`Machine` owns one :class:`TurnEndClock` and delivers after every
turn. How the turn ends at the trap is the machine's ``turn_end``: on
Unicorn's instruction counter (fast), or in the counting loop (the
reference); both retire the same instructions, so readings are equal bit
for bit (docs/machine.md, "Ending a turn, and exact clock reads").

The value is the CPU's ``clock_ns`` plus an offset that only grows: a
reading that would not be later than the last one handed out on any CPU
moves that CPU's offset forward to one nanosecond past it, as a
forward-only TSC synchronization would. CPUs run their turns one after
another, so without it a CPU that idled could stamp an event earlier than
one that preceded it on another CPU; with it, readings are unique, follow
the order in which the machine ran them, and advance on each CPU with its
own modeled cycles between synchronizations. Everything is a function of
the instruction stream: same seed, same readings.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:                      # the machine imports this module
    from sim.machine import Cpu, Machine

Deliver = Callable[[int], None]


class TurnEndClock:
    """Per-CPU modeled clocks, synchronized forward-only, read at turn ends."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.offset = [0] * len(machine.cpus)
        self.last_ns = 0
        self.reads = 0
        self._pending: list[tuple[int, Deliver]] = []

    def now(self, index: int) -> int:
        """CPU ``index``'s clock plus its offset, moved forward past the last reading."""
        now = self.machine.cpus[index].clock_ns + self.offset[index]
        if now <= self.last_ns:
            self.offset[index] += self.last_ns + 1 - now
            now = self.last_ns + 1
        self.last_ns = now
        return now

    def read_at_turn_end(self, cpu: Cpu, deliver: Deliver) -> None:
        """End ``cpu``'s turn here; call ``deliver(ns)`` with its exact clock at the turn's end."""
        cpu.yield_turn()
        self._pending.append((cpu.index, deliver))
        self.reads += 1

    def deliver(self) -> None:
        """Hand out the readings requested during the turn that just ended."""
        if self._pending:
            pending, self._pending = self._pending, []
            for index, deliver in pending:
                deliver(self.now(index))

    def end_ns(self) -> list[int]:
        """Each CPU's clock at the end of a run, never before the last reading."""
        return [max(c.clock_ns + self.offset[c.index], self.last_ns) for c in self.machine.cpus]


__all__ = ["Deliver", "TurnEndClock"]
