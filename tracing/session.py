"""Record a guest run into per-CPU ring buffers and drain them into a sink.

The pieces: the guest's recording probes (``kernel/trace_probes.c``) are
registered on the requested tracepoints, so every hit costs guest
instructions; the buffers are set up by :class:`tracing.ring.RingBuffers`;
a host consumer drains closed sub-buffers every ``drain_every`` turn
boundaries (a larger period lets the buffers fill: pressure).

The trace clock.  The guest reads its clock with the ``HC_CLOCK`` hypercall
(``trace_clock_read()``), served by the machine's clock
(:meth:`sim.clock.ModeledClock.serve`): the CPU's modeled clock exactly at
the hypercall, stored (u64, guest byte order) at the address the guest
passed before the CPU runs on, charged as the arch's ``clock_read``
cost-table entry (rdtsc, PMCCNTR, mftb) instead of a trap. The read does
not end the CPU's turn (the machine's host trap hook serves it from
Unicorn's instruction counter; with ``machine.turn_end = "spin"``, the
reference, the slice pauses in the counting loop and the turn goes on), so
the turns, and the consumer's drains between them, are the same as
untraced. Readings are synchronized forward-only across CPUs (see
:mod:`sim.clock`), so timestamp order is the order in which the machine ran
the events. Same seed and configuration give the same timestamps, bit for
bit.

Function tracing.  The function and function-graph tracers of
``kernel/ftrace.c`` record into the same buffers (``function``,
``funcgraph_entry``, ``funcgraph_exit`` in :data:`tracing.events.FTRACE_EVENTS`);
list those names in ``TraceOptions.probes`` to put them in the trace's
metadata. Which tracer the mcount stubs call is ftrace's business
(:mod:`patcher.ftrace`), not the session's.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from patcher.instrument import Instrumentation, attach
from sim.guest import MAX_INSTRUCTIONS, Guest
from sim.event import Event
from sim.machine import Machine
from tracing.ctf import PacketInfo
from tracing.errors import TraceError
from tracing.events import EVENTS, FTRACE_EVENTS, event_classes, record_size
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
    #: Event filters, (event name, filter expression) in the order given
    #: (``kisim record -f``): not applied yet, so a session refuses them.
    filters: tuple[tuple[str, str], ...] = ()
    #: kprobe_events definitions to record (``kisim record --kprobe-event``):
    #: not applied yet, so a session refuses them.
    kprobe_events: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """:class:`TraceError` for a size or period that is no integer, or a
        period under 1 turn (the geometry's range: :meth:`RingBuffers.install`)."""
        for name in ("subbuf_size", "subbufs", "drain_every"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TraceError(f"{name} must be an integer, not {type(value).__name__}")
        if self.drain_every < 1:
            raise TraceError(f"drain_every must be at least 1 turn, not {self.drain_every}")


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

    @property
    def ok(self) -> bool:
        """The workload's checksum matched its reference (as ``BootResult.ok``)."""
        return self.checksum_ok

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


class EventList:
    """A sink that keeps every drained event in memory, optionally passing
    each packet on to another sink (e.g. a :class:`tracing.ctf.CtfWriter`)."""

    def __init__(self, forward: PacketSink | None = None) -> None:
        self.events: list[Event] = []
        self.forward = forward

    def write_packet(self, packet: PacketInfo, events: Iterable[Event]) -> int:
        batch = list(events)
        self.events.extend(batch)
        if self.forward is not None:
            self.forward.write_packet(packet, batch)
        return len(batch)


class TraceSession:
    """One guest, instrumented to record ``options.probes`` into its ring buffers."""

    def __init__(self, guest: Guest, options: TraceOptions,
                 inst: Instrumentation | None = None) -> None:
        """``inst``: the guest's instrumentation if already attached (else attached here)."""
        self.guest = guest
        self.machine: Machine = guest.machine
        self.options = options
        unknown = [p for p in options.probes if p not in EVENTS and p not in FTRACE_EVENTS]
        if unknown:
            raise TraceError(f"unknown events: {', '.join(unknown)}")
        if options.filters:
            raise TraceError("event filters are not supported yet: "
                             f"{options.filters[0][0]} {options.filters[0][1]!r}")
        if options.kprobe_events:
            raise TraceError("kprobe events are not supported yet: "
                             f"{options.kprobe_events[0]!r}")
        symbols = guest.image.symbols
        if "ring_buffer_channel" not in symbols:
            raise TraceError(f"{guest.elf}: no ring_buffer_channel: not a tracing kisim kernel")
        self.inst = inst or attach(guest)
        arch = guest.arch
        classes = event_classes(arch)
        self.classes = [classes[name] for name in EVENTS] + \
            [classes[name] for name in FTRACE_EVENTS if name in options.probes]
        self.ring = RingBuffers.install(
            self.machine, symbols["ring_buffer_channel"],
            self.inst.tracepoints.pool.base + RING_GAP,
            subbuf_size=options.subbuf_size, nr_subbufs=options.subbufs, mode=options.mode,
            max_record=max(record_size(arch, name) for name in classes))
        present = {tp.name for tp in self.inst.tables.tracepoints}
        for name in (p for p in options.probes if p in EVENTS):
            tracepoint, probe, _ = EVENTS[name]
            if tracepoint not in present:   # registering would only leave a pending entry
                raise TraceError(f"{guest.elf}: no tracepoint named {tracepoint} in this "
                                 "kernel (CONFIG_TRACEPOINTS=n?)")
            self.inst.tracepoints.tracepoint_probe_register(tracepoint, symbols.pointer(probe))
        self.clock = self.machine.clock
        self._turns = 0
        self.clock.serve(guest.hypercalls)

    def run(self, sink: PacketSink, on_progress: Callable[[int], None] | None = None,
            on_turn: Callable[[Machine], None] | None = None) -> TraceResult:
        """Run the workload to the end, draining into ``sink``; flush; check accounting.

        ``on_turn`` is called after each turn, once its drain is done.
        """
        started = time.perf_counter()
        every = self.options.drain_every

        def after_turn(machine: Machine) -> None:
            self._turns += 1
            if self._turns % every == 0:
                self.ring.drain(sink)
            if on_progress is not None and self._turns % PROGRESS_TURNS == 0:
                on_progress(machine.total_instructions)
            if on_turn is not None:
                on_turn(machine)

        self.machine.run(max_instructions=self.options.max_instructions, on_turn=after_turn)
        end_ns = self.clock.end_ns()
        self.ring.flush(sink, end_ns)
        g = self.guest
        return TraceResult(
            arch=g.arch.name, cpus=len(self.machine.cpus), workload=g.workload, size=g.size,
            checksum_ok=g.checksum_ok(),
            per_cpu=self.ring.counts, total=self.ring.totals(),
            instructions=self.machine.total_instructions,
            modeled_cycles=sum(c.modeled_cycles for c in self.machine.cpus),
            clock_reads=self.clock.reads, seconds=time.perf_counter() - started,
            options=self.options, end_ns=end_ns)


__all__ = ["EventList", "TraceOptions", "TraceResult", "TraceSession"]
