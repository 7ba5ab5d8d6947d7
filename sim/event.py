"""One event record for every probe, and the per-CPU modeled clock.

Markers, tracepoints, kprobes and the function tracer all produce an
:class:`Event`: a name, the CPU and the task that hit the probe, a
timestamp from that CPU's modeled clock, and typed fields by name. Sinks
(per-CPU buffers, CTF, Chrome JSON, ftrace text) consume only this record,
so a new probe type needs no new sink code.

Field types follow what CTF 1.8 can describe (an integer of a given size
and signedness, shown in a base, or a NUL-terminated string), so an
:class:`EventClass` maps one-to-one onto a TSDL ``event`` declaration.

The clock.  Each CPU counts modeled cycles (retired instructions at the
arch's per-instruction cost plus charged trap, IPI and flush events). At
the arch's stated frequency (``Arch.clock_hz``) that is a time in
nanoseconds, monotonic per CPU. CPUs run in turns of a shared instruction
budget, so their clocks advance together and events from all CPUs order by
time, as a trace viewer expects of one kernel.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Literal, NamedTuple

NSEC_PER_SEC = 1_000_000_000


@dataclass(frozen=True, slots=True)
class FieldType:
    """The type of one event field: an integer or a string.

    ``bits`` and ``signed`` describe an integer as the guest stored it;
    ``base`` is how readers should display it (16 for addresses and flags).
    """

    kind: Literal["int", "string"]
    bits: int = 0
    signed: bool = False
    base: int = 10

    def __post_init__(self) -> None:
        if self.kind == "int" and self.bits not in (8, 16, 32, 64):
            raise ValueError(f"integer field of {self.bits} bits (8, 16, 32 or 64)")
        if self.kind == "string" and self.bits:
            raise ValueError("a string field has no bit width")

    def check(self, value: int | str) -> int | str:
        """``value`` if it fits this type, else ValueError."""
        if self.kind == "string":
            if not isinstance(value, str):
                raise ValueError(f"string field given {value!r}")
            return value
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"integer field given {value!r}")
        lo = -(1 << (self.bits - 1)) if self.signed else 0
        hi = (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1
        if not lo <= value <= hi:
            raise ValueError(f"{value} does not fit a {'s' if self.signed else 'u'}{self.bits}")
        return value


def u(bits: int, base: int = 10) -> FieldType:
    """An unsigned integer field (``u(64, 16)``: a 64-bit address shown in hex)."""
    return FieldType("int", bits, False, base)


def s(bits: int) -> FieldType:
    """A signed decimal integer field."""
    return FieldType("int", bits, True, 10)


STRING = FieldType("string")


@dataclass(frozen=True, slots=True)
class EventClass:
    """The name and field layout shared by every event of one probe point."""

    name: str
    fields: tuple[tuple[str, FieldType], ...]
    #: The event's own print function, for the text after the context in the
    #: ``trace`` file (the kernel's ``trace_event_functions.trace``, as
    #: kprobe events have); None: ``name: field=value ...``.
    output: "Callable[[Event], str] | None" = field(default=None, compare=False, repr=False)

    def field_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.fields)


class Event(NamedTuple):
    """One hit of one probe.

    ``timestamp`` is in nanoseconds of the CPU's modeled clock; ``tid`` and
    ``comm`` name the guest task that was current on that CPU (0 and
    ``"swapper/N"`` before the scheduler runs a task, as in Linux).
    ``values`` are in the order of ``cls.fields``. A named tuple, not a
    frozen dataclass: a trace consumer makes one per recorded event, and a
    tuple is built in a tenth of the time.
    """

    cls: EventClass
    cpu: int
    timestamp: int
    tid: int
    comm: str
    values: tuple[int | str, ...]

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def fields(self) -> dict[str, int | str]:
        """The values by field name."""
        return dict(zip(self.cls.field_names(), self.values))

    def typed_fields(self) -> Iterator[tuple[str, FieldType, int | str]]:
        for (name, ftype), value in zip(self.cls.fields, self.values):
            yield name, ftype, value


def make_event(cls: EventClass, *, cpu: int, timestamp: int, tid: int, comm: str,
               values: tuple[int | str, ...] | list[int | str]) -> Event:
    """An :class:`Event` whose values are checked against ``cls``'s field types."""
    if len(values) != len(cls.fields):
        raise ValueError(f"{cls.name}: {len(values)} values for {len(cls.fields)} fields")
    checked = tuple(ftype.check(v) for (_, ftype), v in zip(cls.fields, values))
    return Event(cls, cpu, timestamp, tid, comm, checked)


def cycles_to_ns(cycles: float, clock_hz: int) -> int:
    """Nanoseconds elapsed after ``cycles`` modeled cycles at ``clock_hz``."""
    return int(cycles * NSEC_PER_SEC // clock_hz)


__all__ = ["Event", "EventClass", "FieldType", "NSEC_PER_SEC", "STRING", "cycles_to_ns",
           "make_event", "s", "u"]
