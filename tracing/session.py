"""Record a guest run into per-CPU ring buffers and drain them into a sink.

The pieces: the guest's recording probes (``kernel/trace_probes.c``) are
registered on the requested tracepoints, so every hit costs guest
instructions; the buffers are set up by :class:`tracing.ring.RingBuffers`;
a host consumer drains closed sub-buffers every ``drain_every`` turn
boundaries (a larger period lets the buffers fill: pressure).

The trace clock.  The guest reads its clock with the ``HC_CLOCK``
hypercall (``trace_clock_read()``). Its handler ends the CPU's turn there
(``Cpu.yield_turn``): the rest of the slice is spent in the counting loop,
so when the turn ends the CPU's retired-instruction count, and with it its
modeled clock, stands exactly at the hypercall. The host then stores the
trace clock (u64, guest byte order) at the address the guest passed,
before the CPU runs again.

The trace clock of a CPU is its ``Cpu.clock_ns`` plus an offset that only
grows: a read that would not be later than the last stamp handed out on
any CPU moves that CPU's offset forward to one nanosecond past it, as a
forward-only TSC synchronization would. CPUs run their turns one after
another, so without it a CPU that idled or took fewer instructions would
stamp an allocation earlier than the free, on another CPU, that preceded
it; with it, timestamp order is the order in which the machine ran the
events, on every CPU, and each CPU's stamps still advance with its own
modeled cycles between synchronizations. The read is charged as the arch's
``clock_read`` cost-table entry (rdtsc, PMCCNTR, mftb) instead of a trap.
Same seed and configuration give the same timestamps, bit for bit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from patcher.instrument import attach
from sim.guest import MAX_INSTRUCTIONS, Guest, reference_checksum
from sim.machine import Cpu, Machine
from tracing.errors import TraceError
from tracing.events import EVENTS, event_classes, record_size
from tracing.ring import CpuCounts, PacketSink, RingBuffers

RING_GAP = 0x100000          # the ring buffers start this far above the probe-array pool
PROGRESS_TURNS = 1024        # turns between progress reports


@dataclass
class TraceOptions:
    """How to record: which events, buffer geometry and mode, consumer period."""

    probes: tuple[str, ...]
    subbuf_size: int = 4096
    subbufs: int = 8
    mode: str = "discard"
    drain_every: int = 1
    max_instructions: int | None = MAX_INSTRUCTIONS


@dataclass
class TraceResult:
    arch: str
    cpus: int
    workload: str
    size: int
    checksum_ok: bool
    per_cpu: list[CpuCounts]
    total: CpuCounts
    instructions: int
    modeled_cycles: float
    clock_reads: int
    seconds: float
    options: TraceOptions
    end_ns: list[int] = field(default_factory=list)

    def to_json(self) -> dict:
        o = self.options
        return {"arch": self.arch, "cpus": self.cpus, "workload": self.workload,
                "size": self.size, "checksum_ok": self.checksum_ok,
                "probes": list(o.probes), "mode": o.mode, "subbuf_size": o.subbuf_size,
                "subbufs": o.subbufs, "drain_every": o.drain_every,
                "per_cpu": [dict(cpu=i, **c.to_json()) for i, c in enumerate(self.per_cpu)],
                "total": self.total.to_json(), "instructions": self.instructions,
                "modeled_cycles": self.modeled_cycles, "clock_reads": self.clock_reads,
                "end_ns": self.end_ns, "seconds": round(self.seconds, 3)}


class TraceSession:
    """One guest, instrumented to record ``options.probes`` into its ring buffers."""

    def __init__(self, guest: Guest, options: TraceOptions) -> None:
        self.guest = guest
        self.machine: Machine = guest.machine
        self.options = options
        unknown = [p for p in options.probes if p not in EVENTS]
        if unknown:
            raise TraceError(f"unknown events: {', '.join(unknown)}")
        symbols = guest.image.symbols
        if "ring_buffer_channel" not in symbols:
            raise TraceError(f"{guest.elf}: no ring_buffer_channel: not a tracing kisim kernel")
        self.inst = attach(guest)
        arch = guest.arch
        self.classes = [event_classes(arch)[name] for name in EVENTS]
        self.ring = RingBuffers.install(
            self.machine, symbols["ring_buffer_channel"],
            self.inst.tracepoints.pool.base + RING_GAP,
            subbuf_size=options.subbuf_size, nr_subbufs=options.subbufs, mode=options.mode,
            max_record=max(record_size(arch, name) for name in EVENTS))
        present = {tp.name for tp in self.inst.tables.tracepoints}
        for name in options.probes:
            tracepoint, probe, _ = EVENTS[name]
            if tracepoint not in present:   # registering would only leave a pending entry
                raise TraceError(f"{guest.elf}: no tracepoint named {tracepoint} in this "
                                 "kernel (CONFIG_TRACEPOINTS=n?)")
            self.inst.tracepoints.tracepoint_probe_register(tracepoint, symbols[probe])
        self._pending: dict[int, int] = {}
        self._offset = [0] * len(self.machine.cpus)
        self._last_ns = 0
        self.clock_reads = 0
        self._turns = 0
        guest.hypercalls.register("HC_CLOCK", self._clock)

    def _read_clock(self, index: int) -> int:
        """The CPU's modeled clock plus its offset, moved forward past the last stamp."""
        now = self.machine.cpus[index].clock_ns + self._offset[index]
        if now <= self._last_ns:
            self._offset[index] += self._last_ns + 1 - now
            now = self._last_ns + 1
        self._last_ns = now
        return now

    def _clock(self, cpu: Cpu, where: int, _a2: int, _a3: int) -> None:
        """HC_CLOCK: end the turn here; the stamp is written at the turn's end."""
        cpu.charge("trap", -1)
        cpu.charge("clock_read")
        cpu.yield_turn()
        self._pending[cpu.index] = where
        self.clock_reads += 1

    def run(self, sink: PacketSink,
            on_progress: Callable[[int], None] | None = None) -> TraceResult:
        """Run the workload to the end, draining into ``sink``; flush; check accounting."""
        started = time.perf_counter()
        every = max(1, self.options.drain_every)

        def on_turn(machine: Machine) -> None:
            for index, addr in self._pending.items():
                machine.write_word(addr, self._read_clock(index), 8)
            self._pending.clear()
            self._turns += 1
            if self._turns % every == 0:
                self.ring.drain(sink)
            if on_progress is not None and self._turns % PROGRESS_TURNS == 0:
                on_progress(machine.total_instructions)

        self.machine.run(max_instructions=self.options.max_instructions, on_turn=on_turn)
        end_ns = [max(c.clock_ns + self._offset[c.index], self._last_ns)
                  for c in self.machine.cpus]
        self.ring.flush(sink, end_ns)
        g = self.guest
        return TraceResult(
            arch=g.arch.name, cpus=len(self.machine.cpus), workload=g.workload, size=g.size,
            checksum_ok=g.checksum == reference_checksum(g.workload, g.size),
            per_cpu=self.ring.counts, total=self.ring.totals(),
            instructions=self.machine.total_instructions,
            modeled_cycles=sum(c.modeled_cycles for c in self.machine.cpus),
            clock_reads=self.clock_reads, seconds=time.perf_counter() - started,
            options=self.options, end_ns=end_ns)


__all__ = ["TraceOptions", "TraceResult", "TraceSession"]
