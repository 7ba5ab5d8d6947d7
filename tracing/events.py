"""The events the guest's ring-buffer probes record, and their record layout.

Names and field names are lttng-modules' (instrumentation/events/kmem.h and
sched.h), and the function tracers' ``function`` / ``funcgraph_entry`` /
``funcgraph_exit`` (kernel/trace/trace_entries.h): ``kmem_kmalloc``/``kmem_cache_alloc`` carry ``call_site, ptr,
bytes_req, bytes_alloc, gfp_flags``; ``kmem_kfree``/``kmem_cache_free``
carry ``call_site, ptr``; ``sched_switch`` carries ``prev_comm, prev_tid,
prev_prio, prev_state, next_comm, next_tid, next_prio``; ``sched_wakeup``
carries ``comm, tid, prio, target_cpu``. Word-sized fields are as wide as
the guest's ``unsigned long`` (lttng's ``ctf_integer(unsigned long, ...)``).

The event ids are the ``RB_EV_*`` lines of
``kernel/include/linux/ring_buffer.h``, parsed here so C and Python cannot
drift apart; the payload order is that of ``kernel/trace_probes.c``.
"""
from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from arches import Arch
from sim.event import STRING, Event, EventClass, FieldType, s, u

REPO = Path(__file__).resolve().parent.parent
RING_BUFFER_H = REPO / "kernel" / "include" / "linux" / "ring_buffer.h"

COMM = "comm"          # a 16-byte task name in the record
WORD = "word"          # an unsigned long
SWORD = "sword"        # a long
HEX = "hex"            # an unsigned long shown in hex (addresses, flags)
NAME = "name"          # a marker's name, NUL-padded to 32 bytes

#: Record header: u64 timestamp, u16 id, u16 size, s32 tid, char comm[16].
HEADER = "QHHi16s"
COMM_LEN = 16

#: event name -> (tracepoint it probes, guest probe symbol, payload fields)
EVENTS: dict[str, tuple[str, str, tuple[tuple[str, str], ...]]] = {
    "kmem_kmalloc": ("kmalloc", "probe_kmem_kmalloc",
                     (("call_site", HEX), ("ptr", HEX), ("bytes_req", WORD),
                      ("bytes_alloc", WORD), ("gfp_flags", HEX))),
    "kmem_cache_alloc": ("kmem_cache_alloc", "probe_kmem_cache_alloc",
                         (("call_site", HEX), ("ptr", HEX), ("bytes_req", WORD),
                          ("bytes_alloc", WORD), ("gfp_flags", HEX))),
    "kmem_kfree": ("kfree", "probe_kmem_kfree", (("call_site", HEX), ("ptr", HEX))),
    "kmem_cache_free": ("kmem_cache_free", "probe_kmem_cache_free",
                        (("call_site", HEX), ("ptr", HEX))),
    "sched_switch": ("sched_switch", "probe_sched_switch",
                     (("prev_comm", COMM), ("prev_tid", SWORD), ("prev_prio", SWORD),
                      ("prev_state", SWORD), ("next_comm", COMM), ("next_tid", SWORD),
                      ("next_prio", SWORD))),
    "sched_wakeup": ("sched_wakeup", "probe_sched_wakeup",
                     (("comm", COMM), ("tid", SWORD), ("prio", SWORD),
                      ("target_cpu", SWORD))),
}

#: Events the function tracers of kernel/ftrace.c record (the payloads of
#: 2.6.28's struct ftrace_entry and 2.6.29's ftrace_graph_ent; an exit
#: carries the same two fields, its duration is the time since its entry).
#: Recorded when ftrace calls those tracers, not through a tracepoint.
FTRACE_EVENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "function": (("ip", HEX), ("parent_ip", HEX)),
    "funcgraph_entry": (("func", HEX), ("depth", WORD)),
    "funcgraph_exit": (("func", HEX), ("depth", WORD)),
}

def _header_define(name: str, path: Path = RING_BUFFER_H) -> int:
    """A ``#define NAME <number>`` of the guest's ring_buffer.h."""
    found = re.search(rf"^#define\s+{name}\s+(\d+)\b", path.read_text(), re.M)
    assert found is not None, f"{path}: no {name}"
    return int(found.group(1))


#: A marker hit, recorded by the guest's ``marker_probe_ring`` (kernel/marker.c)
#: on every marker when ``markers`` is asked for: the name, how many arguments
#: the format declared (up to ``RB_MARKER_ARGS``), and those arguments as
#: words (a %s argument is its address). The format text stays the site's.
MARKER_ARGS = _header_define("RB_MARKER_ARGS")
NAME_LEN = _header_define("RB_MARKER_NAME_LEN")
MARKER_EVENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "marker": (("name", NAME), ("nargs", WORD),
               *((f"arg{i}", HEX) for i in range(MARKER_ARGS))),
}

#: Every record's payload fields, by event name.
FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    **{name: fields for name, (_, _, fields) in EVENTS.items()}, **FTRACE_EVENTS,
    **MARKER_EVENTS}

#: Shorthands for --probes.
GROUPS = {"kmem": ("kmem_kmalloc", "kmem_cache_alloc", "kmem_kfree", "kmem_cache_free"),
          "sched": ("sched_switch", "sched_wakeup"),
          "markers": tuple(MARKER_EVENTS),
          "all": tuple(EVENTS)}

#: Events --probes may name: the tracepoint events and the marker event.
PROBE_EVENTS = (*EVENTS, *MARKER_EVENTS)


def _parse_ids(path: Path = RING_BUFFER_H) -> dict[str, int]:
    found = re.findall(r"^#define\s+RB_EV_(\w+)\s+(\d+)\b", path.read_text(), re.M)
    return {name.lower(): int(number) for name, number in found}


#: Event ids by name, from the guest header.
EVENT_IDS: dict[str, int] = _parse_ids()


class ProbeListError(ValueError):
    """An unknown event or group in a --probes list."""


def parse_probes(text: str) -> tuple[str, ...]:
    """``"kmem,sched_switch"`` -> the event names, in table order, without repeats."""
    wanted: set[str] = set()
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item in GROUPS:
            wanted.update(GROUPS[item])
        elif item in PROBE_EVENTS:
            wanted.add(item)
        else:
            raise ProbeListError(f"unknown probe {item!r} (events: {', '.join(PROBE_EVENTS)}; "
                                 f"groups: {', '.join(GROUPS)})")
    if not wanted:
        raise ProbeListError("empty --probes list")
    return tuple(name for name in PROBE_EVENTS if name in wanted)


def builtin_event(name: str) -> str | None:
    """The recordable tracepoint event called ``name``, as kisim names it
    (``kmem_kmalloc``) or as tracefs does (``kmem/kmalloc``, ``kmem:kmalloc``,
    ``sched/sched_switch``); None if there is none."""
    group, _, event = name.replace(":", "/").rpartition("/")
    if group and (group not in GROUPS or group == "all"):
        return None                         # another group's event (kprobes/...)
    for candidate in (name, event, f"{group}_{event}"):
        if candidate in EVENTS:
            return candidate
    return None


def _field_type(kind: str, bits: int) -> FieldType:
    return {COMM: STRING, NAME: STRING, WORD: u(bits), SWORD: s(bits), HEX: u(bits, 16)}[kind]


@dataclass(frozen=True)
class RecordLayout:
    """How one event's records look in one arch's ring buffer."""

    cls: EventClass
    payload: struct.Struct
    kinds: tuple[str, ...]
    has_comm: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "has_comm", COMM in self.kinds or NAME in self.kinds)

    def decode(self, cpu: int, header: tuple, body: bytes, offset: int) -> Event:
        """The event of one record (this runs once per recorded event)."""
        ts, _id, _size, tid, comm = header
        values = self.payload.unpack_from(body, offset)
        if self.has_comm:
            values = tuple(_cstr(v) if kind in (COMM, NAME) else v for kind, v in zip(self.kinds, values))
        return _make_event((self.cls, cpu, ts, tid, _cstr(comm), values))


_make_event = Event._make


@functools.lru_cache(maxsize=4096)
def _cstr(raw: bytes) -> str:
    """A NUL-padded comm as text (a trace holds few distinct ones: cached)."""
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def event_classes(arch: Arch) -> dict[str, EventClass]:
    """Every recordable event's class, fields as wide as the arch's words."""
    return {name: EventClass(name, tuple((f, _field_type(kind, arch.bits))
                                         for f, kind in fields))
            for name, fields in FIELDS.items()}


def record_layouts(arch: Arch) -> dict[int, RecordLayout]:
    """Event id -> record layout, in the arch's byte order and word size."""
    prefix = "<" if arch.endian == "little" else ">"
    word, sword = ("Q", "q") if arch.bits == 64 else ("I", "i")
    codes = {COMM: f"{COMM_LEN}s", NAME: f"{NAME_LEN}s", WORD: word, SWORD: sword, HEX: word}
    classes = event_classes(arch)
    out = {}
    for name, fields in FIELDS.items():
        kinds = tuple(kind for _, kind in fields)
        fmt = prefix + "".join(codes[k] for k in kinds)
        out[EVENT_IDS[name]] = RecordLayout(classes[name], struct.Struct(fmt), kinds)
    return out


def record_size(arch: Arch, name: str) -> int:
    """Bytes of one record of ``name`` (header + payload, padded to 8)."""
    layout = record_layouts(arch)[EVENT_IDS[name]]
    return (struct.calcsize(HEADER) + layout.payload.size + 7) & ~7


__all__ = ["EVENTS", "EVENT_IDS", "FIELDS", "FTRACE_EVENTS", "GROUPS", "HEADER", "MARKER_EVENTS",
           "NAME", "NAME_LEN", "PROBE_EVENTS", "ProbeListError",
           "RecordLayout", "builtin_event", "event_classes", "parse_probes", "record_layouts",
           "record_size"]
