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

import fnmatch

import struct
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol

from patcher.instrument import Instrumentation, attach
from sim.guest import MAX_INSTRUCTIONS, Guest
from sim.event import Event, EventClass
from sim.machine import Cpu, Machine
from tracing.ctf import PacketInfo
from tracing.errors import TraceError
from tracing.events import (EVENT_IDS, EVENTS, FTRACE_EVENTS, GROUPS, HEADER, MARKER_EVENTS,
                            builtin_event, event_classes, record_layouts, record_size)
from tracing.filter import (COMM_KEY, CPU_KEY, Predicate, compile_filter, filter_fields,
                            system_filter)
from tracing.ring import CpuCounts, PacketSink, RingBuffers

RING_GAP = 0x100000          # the ring buffers start this far above the probe-array pool
PROGRESS_TURNS = 1024        # turns between progress reports
#: The systems of the tracepoint events (events/<sys>/filter takes a system's filter).
SYSTEMS = {group: members for group, members in GROUPS.items()
           if group != "all" and all(name in EVENTS for name in members)}


@dataclass
class TraceOptions:
    """How to record: which events, buffer geometry and mode, consumer period."""

    probes: tuple[str, ...]
    subbuf_size: int = 4096
    subbufs: int = 8
    mode: str = "discard"
    drain_every: int = 1
    max_instructions: int | None = MAX_INSTRUCTIONS
    #: kprobe_events lines, in the order tracefs took them (probes/trace_kprobe.py).
    kprobe_events: tuple[str, ...] = ()
    #: (event, filter expression) pairs, written in order: events/<sys>/<event>/filter,
    #: or events/<sys>/filter for a system's name (tracing/filter.py).
    filters: tuple[tuple[str, str], ...] = ()
    #: Names (shell globs) of the markers the ``marker`` event records; empty: all.
    markers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """:class:`TraceError` for a size or period that is no integer, or a
        period under 1 turn (the geometry's range: :meth:`RingBuffers.install`)."""
        for name in ("subbuf_size", "subbufs", "drain_every"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TraceError(f"{name} must be an integer, not {type(value).__name__}")
        if self.drain_every < 1:
            raise TraceError(f"drain_every must be at least 1 turn, not {self.drain_every}")

    @classmethod
    def from_config(cls, probes: tuple[str, ...], config: Mapping[str, str], *,
                    subbuf_size: int | None = None, subbufs: int | None = None,
                    **options: Any) -> TraceOptions:
        """Options with the buffer geometry asked for, else the kernel's
        (CONFIG_RING_BUFFER_SUBBUF_SIZE, CONFIG_RING_BUFFER_SUBBUFS), else the
        defaults above (a kernel without TRACEPOINTS has neither symbol)."""
        return cls(probes,
                   subbuf_size=subbuf_size or int(config.get("RING_BUFFER_SUBBUF_SIZE")
                                                  or cls.subbuf_size),
                   subbufs=subbufs or int(config.get("RING_BUFFER_SUBBUFS") or cls.subbufs),
                   **options)


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
    #: Records each filter kept out of the buffers, by event (tracepoint events).
    filtered: dict[str, int] = field(default_factory=dict)

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
                "kprobe_events": list(o.kprobe_events), "markers": list(o.markers),
                "filters": [f"{event}:{expr}" for event, expr in o.filters],
                "per_cpu": [dict(cpu=i, **c.to_json()) for i, c in enumerate(self.per_cpu)],
                "total": self.total.to_json(), "instructions": self.instructions,
                "modeled_cycles": self.modeled_cycles, "clock_reads": self.clock_reads,
                "end_ns": self.end_ns, "filtered": self.filtered,
                "seconds": round(self.seconds, 3)}


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


class DynamicEvents(Protocol):
    """Events defined at run time that record into the same buffers."""

    def fit(self, payload: int) -> None:
        """Records of more than ``payload`` bytes are lost (and counted)."""

    def classes(self) -> list[EventClass]: ...

    def layouts(self) -> dict: ...

    def set_filter(self, name: str, expr: str) -> None: ...


class TraceSession:
    """One guest, instrumented to record ``options.probes`` into its ring buffers."""

    def __init__(self, guest: Guest, options: TraceOptions,
                 inst: Instrumentation | None = None,
                 dynamic: DynamicEvents | None = None) -> None:
        """``inst``: the guest's instrumentation if already attached (else attached
        here); ``dynamic``: events defined at run time, recorded too (kprobe
        events: :class:`probes.trace_kprobe.TraceKprobes`)."""
        self.guest = guest
        self.machine: Machine = guest.machine
        self.options = options
        unknown = [p for p in options.probes if p not in EVENTS and p not in FTRACE_EVENTS
                   and p not in MARKER_EVENTS]
        if unknown:
            raise TraceError(f"unknown events: {', '.join(unknown)}")
        symbols = guest.image.symbols
        if "ring_buffer_channel" not in symbols:
            raise TraceError(f"{guest.elf}: no ring_buffer_channel: not a tracing kisim kernel")
        self.inst = inst or attach(guest)
        arch = guest.arch
        classes = event_classes(arch)
        self.classes = [classes[name] for name in EVENTS] + \
            [classes[name] for name in (*FTRACE_EVENTS, *MARKER_EVENTS) if name in options.probes]
        largest = max(record_size(arch, name) for name in classes)
        if dynamic is not None:
            self.classes += dynamic.classes()
        self.ring = RingBuffers.install(
            self.machine, symbols["ring_buffer_channel"],
            self.inst.tracepoints.pool.base + RING_GAP,
            subbuf_size=options.subbuf_size, nr_subbufs=options.subbufs, mode=options.mode,
            max_record=largest)
        if dynamic is not None:
            dynamic.fit(self.ring.largest_payload)
            self.ring.add_layouts(dynamic.layouts())
        self._layouts = record_layouts(arch)
        self._head = struct.Struct(("<" if arch.endian == "little" else ">") + HEADER)
        #: Records each event's filter kept out of the buffer, by event name.
        self.filtered: dict[str, int] = {}
        #: What the filter writes left in tracefs's error_log and took anyway, one
        #: line each (a system's filter on the events it does not parse on).
        self.error_log: list[str] = []
        self._filters = self._compile_filters(options, classes, dynamic)
        if self._filters:
            guest.hypercalls.register("HC_EVENT_FILTER", self._event_filter)
        present = {tp.name for tp in self.inst.tables.tracepoints}
        for name in (p for p in options.probes if p in EVENTS):
            tracepoint, probe, _ = EVENTS[name]
            if tracepoint not in present:   # registering would only leave a pending entry
                raise TraceError(f"{guest.elf}: no tracepoint named {tracepoint} in this "
                                 "kernel (CONFIG_TRACEPOINTS=n?)")
            if EVENT_IDS[name] in self._filters:
                probe += "_filtered"        # its twin commits through the filter
            self.inst.tracepoints.tracepoint_probe_register(tracepoint, symbols.pointer(probe))
        if any(name in options.probes for name in MARKER_EVENTS):
            self._connect_markers(symbols.pointer("marker_probe_ring"))
        self.clock = self.machine.clock
        self._turns = 0
        self.clock.serve(guest.hypercalls)

    def _connect_markers(self, probe: int) -> None:
        """Register and arm ``marker_probe_ring`` (kernel/marker.c) on the
        markers ``options.markers`` names (every marker if none); its private
        data is a ``struct marker`` of that name, whose ``name`` it copies into
        the record."""
        markers = self.inst.markers
        if not markers.sites:
            raise TraceError(f"{self.guest.elf}: no markers in this kernel "
                             "(CONFIG_MARKERS=n?)")
        globs = self.options.markers or ("*",)
        for glob in globs:
            if not fnmatch.filter(markers.sites, glob):
                raise TraceError(f"no marker named {glob!r} (markers: "
                                 f"{', '.join(sorted(markers.sites))})")
        for name, sites in markers.sites.items():
            if not any(fnmatch.fnmatchcase(name, glob) for glob in globs):
                continue
            markers.marker_probe_register(name, sites[0].format, probe, sites[0].address)
            markers.marker_arm(name)

    def _compile_filters(self, options: TraceOptions, classes: dict[str, EventClass],
                         dynamic: DynamicEvents | None) -> dict[int, Predicate]:
        """Each ``(event, expr)`` of ``options.filters``, in order, as a write to
        its filter file: the recorded tracepoint events' compiled filters, by
        event id. A system's name (``kmem``) is its system filter
        (:func:`system_filter`); any other name goes to ``dynamic`` (a kprobe
        event's filter). "0" clears (apply_event_filter, apply_subsystem_event_filter)."""
        filters: dict[int, Predicate] = {}
        for event, expr in options.filters:
            name = builtin_event(event)
            if event in SYSTEMS:
                self._system_filter(filters, event, expr, options, classes)
            elif name is None:
                if dynamic is None:
                    raise TraceError(f"--filter {event}: no such event (events: "
                                     f"{', '.join(EVENTS)}, or a kprobe event)")
                dynamic.set_filter(event, expr)
            elif name not in options.probes:
                raise TraceError(f"--filter {event}: {name} is not recorded (--probes)")
            elif expr.strip() == "0":
                filters.pop(EVENT_IDS[name], None)
            else:
                filters[EVENT_IDS[name]] = compile_filter(expr, filter_fields(classes[name]))
        return filters

    def _system_filter(self, filters: dict[int, Predicate], system: str, expr: str,
                       options: TraceOptions, classes: dict[str, EventClass]) -> None:
        """``expr`` written to events/``system``/filter, into ``filters``: each recorded
        event of the system filtered where it parses, unfiltered where it does not
        (what error_log got, in :attr:`error_log`)."""
        recorded = [n for n in SYSTEMS[system] if n in options.probes]
        if not recorded:
            raise TraceError(f"--filter {system}: no {system} event is recorded (--probes)")
        compiled, failed = ({}, {}) if expr.strip() == "0" else system_filter(
            expr, {n: filter_fields(classes[n]) for n in SYSTEMS[system]})
        for n in recorded:
            filters.pop(EVENT_IDS[n], None)
            if n in compiled:
                filters[EVENT_IDS[n]] = compiled[n]
        unfiltered = [n for n in recorded if n in failed]
        if unfiltered:
            self.error_log.append(
                f"events/{system}/filter: {expr!r} does not parse on {', '.join(unfiltered)} "
                f"({failed[unfiltered[0]]}), which record unfiltered (process_system_preds)")

    def _event_filter(self, cpu: Cpu, rec: int, _a2: int, _a3: int) -> int:
        """HC_EVENT_FILTER: run the record's event filter (filter_match_preds); host
        work, so the hypercall's trap is not charged."""
        cpu.charge("trap", -1)
        header = self._head.unpack(self.machine.read(rec, self._head.size))
        body = self.machine.read(rec, header[2])
        event = self._layouts[header[1]].decode(cpu.index, header, body, self._head.size)
        values = {**event.fields, "common_type": header[1], "common_flags": 0,
                  "common_preempt_count": 0, "common_pid": event.tid,
                  CPU_KEY: cpu.index, COMM_KEY: event.comm}
        if self._filters[header[1]](values):
            return 1
        self.filtered[event.name] = self.filtered.get(event.name, 0) + 1
        return 0

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
            options=self.options, end_ns=end_ns, filtered=dict(self.filtered))


__all__ = ["EventList", "TraceOptions", "TraceResult", "TraceSession"]
