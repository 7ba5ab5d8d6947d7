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

Both hand out the same value at the same instruction, bit for bit. On
``"counter"``, the guest's clock read (``HC_CLOCK``, served by
:meth:`ModeledClock.serve`) does not even enter Python: the machine's host
trap hook (:mod:`sim.native`) serves it over the same state with the same
arithmetic (``ModeledClock.in_host``; False keeps it in Python).

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

import functools
from typing import TYPE_CHECKING, Callable

from sim.errors import ConfigError
from sim.native import ClockState

if TYPE_CHECKING:                      # the machine imports this module
    from sim.hypercall import HypercallTable
    from sim.machine import Cpu, Machine

Deliver = Callable[[int], None]

#: The ways to serve a clock read: ``(Machine.turn_end, ModeledClock.native)``.
#: ``"host"`` is the default; all three give the same readings, bit for bit.
CLOCK_PATHS = {"host": ("counter", True), "counter": ("counter", False), "spin": ("spin", False)}


class ModeledClock:
    """Per-CPU modeled clocks, synchronized forward-only, read at any instruction."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.state = ClockState()              # last_ns and the offsets, shared with the host hook
        self.offset = self.state.offset
        self.reads = 0
        self.native = True                     # let the host hook serve reads it can
        self._table: HypercallTable | None = None
        self.serving = False                   # serve() was called (a cheap first test)
        self._handler = self._hypercall          # one bound method: serve() registers it
        self._pending: list[tuple[int, Deliver]] = []

    def use(self, path: str) -> None:
        """Serve reads the :data:`CLOCK_PATHS` way ``path`` (between turns)."""
        if path not in CLOCK_PATHS:
            raise ConfigError(f"clock path {path!r} is not one of {', '.join(CLOCK_PATHS)}")
        self.machine.turn_end, self.native = CLOCK_PATHS[path]

    @property
    def last_ns(self) -> int:
        """The last reading handed out on any CPU."""
        return self.state.last_ns

    @property
    def in_host(self) -> bool:
        """Whether the host hook serves ``HC_CLOCK`` (where the CPU can tell its position):
        :attr:`native`, and the hypercall's handler is still :meth:`serve`'s."""
        return self.native and self.serving \
            and self._table.handlers.get(self.state.hypercall) is self._handler

    def _stamp(self, index: int, clock_ns: int) -> int:
        """``clock_ns`` of CPU ``index`` plus its offset, moved forward past the last reading."""
        state = self.state
        now = clock_ns + state.offset[index]
        if now <= state.last_ns:
            state.offset[index] += state.last_ns + 1 - now
            now = state.last_ns + 1
        state.last_ns = now
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

    # -- the guest's clock read ---------------------------------------------
    def serve(self, table: HypercallTable) -> None:
        """Serve ``HC_CLOCK`` (``trace_clock_read()``, kernel/ring_buffer.c).

        ``a1`` is a ``u64 *``: the CPU's clock at the hypercall is stored
        there in guest byte order and the call returns 0. It is charged as
        the arch's ``clock_read`` cost (rdtsc, PMCCNTR, mftb), not as a
        trap. The host hook (``hooks.c``) does exactly this, in C.
        """
        self.state.hypercall = table.register("HC_CLOCK", self._handler)
        self._table, self.serving = table, True

    def _hypercall(self, cpu: Cpu, where: int, _a2: int, _a3: int) -> None:
        self.machine.memory.read(where, 8)     # a bad pointer faults now, on every path
        cpu.charge("trap", -1)
        cpu.charge("clock_read")
        self.read(cpu, functools.partial(self._store, where))

    def _store(self, where: int, ns: int) -> None:
        self.machine.memory.write(where, ns.to_bytes(8, self.machine.arch.endian))

    def fold(self, cpu: Cpu) -> None:
        """Count the reads the host hook served on ``cpu`` as the Python path counts them."""
        served = cpu.take_host_served()
        self.reads += served
        cpu.events["trap"] += 0                # charged and taken back, as in _hypercall
        cpu.events["clock_read"] += served
        if self._table is not None:
            self._table.counts["HC_CLOCK"] += served


__all__ = ["CLOCK_PATHS", "Deliver", "ModeledClock"]
