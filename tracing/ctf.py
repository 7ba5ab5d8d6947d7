"""CTF 1.8 writer: a trace directory that babeltrace2 and Trace Compass open.

Layout (CTF 1.8 spec §3, as babeltrace2 2.0's ``src.ctf.fs`` reads it): a
directory holding a plain-text ``metadata`` file in TSDL and one stream file
per CPU (``channel0_<cpu>``, as LTTng names them). Each stream is a sequence
of packets; one packet is one drained sub-buffer of that CPU's ring buffer.

Packet header (CTF 1.8 §5, names babeltrace2 gives meaning to):
``magic = 0xC1FC1FC1``, ``uuid[16]`` (the trace's UUID), ``stream_id``,
``stream_instance_id`` (the CPU).  Packet context: ``timestamp_begin``,
``timestamp_end`` (mapped to the clock), ``content_size`` and
``packet_size`` in bits, ``packet_seq_num`` (gaps mean lost packets, as in
overwrite mode), ``events_discarded`` (a cumulative per-stream counter:
babeltrace2 reports the difference between consecutive packets) and
``cpu_id`` (lttng-modules' packet context).

Every integer is declared byte-aligned (``align = 8``), so records are
packed with no padding; the byte order is the guest's (``le`` for x86-64
and ARM, ``be`` for PowerPC), so the metadata describes what the guest
wrote. Event header: ``uint32 id`` then a 64-bit timestamp mapped to the
``monotonic`` clock (1 GHz: nanoseconds of the CPU's modeled clock). Each
event carries a context of ``tid`` and ``procname`` (the current task's pid
and comm, lttng's ``tid``/``procname`` contexts). Field names are written
with a leading underscore, as lttng-modules does, which babeltrace2 strips.

The writer streams: it keeps one open file per CPU and the bytes of the
packet being built, never the list of events of a run. Each file goes
through :func:`fsio.atomic_open` (a temporary name renamed over the target
when the writer closes cleanly, removed if it fails) into a directory
claimed by :class:`tracing.outdir.OutDir` (kisim replaces only its own
files there); the metadata is written at close, with the run's final env.
"""
from __future__ import annotations

import hashlib
import struct
import uuid as uuidlib
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable, Mapping, Sequence

import fsio
from sim.event import NSEC_PER_SEC, Event, EventClass, FieldType
from tracing.errors import TraceError
from tracing.outdir import OutDir

CTF_MAGIC = 0xC1FC1FC1
#: The one stream class of a kisim trace (lttng-modules: one per channel).
STREAM_ID = 0
#: lttng-modules identification picked up by Trace Compass (LttngKernelTrace).
TRACER_NAME = "lttng-modules"
TRACER_MAJOR = 2
TRACER_MINOR = 0
PROCNAME_LEN = 16

_INT_TYPES = {(8, False): "uint8_t", (16, False): "uint16_t", (32, False): "uint32_t",
              (64, False): "uint64_t", (8, True): "int8_t", (16, True): "int16_t",
              (32, True): "int32_t", (64, True): "int64_t"}
_STRUCT_CODES = {(8, False): "B", (16, False): "H", (32, False): "I", (64, False): "Q",
                 (8, True): "b", (16, True): "h", (32, True): "i", (64, True): "q"}

#: Packet header: magic, uuid[16], stream_id, stream_instance_id.
PACKET_HEADER = "I16sIQ"
#: Packet context: ts_begin, ts_end, content_size, packet_size, seq, discarded, cpu_id.
PACKET_CONTEXT = "QQQQQQI"
#: Event header (id, timestamp) and event context (tid, procname[16]).
EVENT_HEADER = "IQ"
EVENT_CONTEXT = f"i{PROCNAME_LEN}s"


def endian_prefix(byte_order: str) -> str:
    """The :mod:`struct` prefix of a guest byte order ("little"/"big")."""
    if byte_order not in ("little", "big"):
        raise ValueError(f"byte order {byte_order!r} (little or big)")
    return "<" if byte_order == "little" else ">"


def tsdl_byte_order(byte_order: str) -> str:
    return "le" if byte_order == "little" else "be"


def _int_decl(ftype: FieldType) -> str:
    base = "" if ftype.base == 10 else f" base = {ftype.base};"
    return (f"integer {{ size = {ftype.bits}; align = 8; "
            f"signed = {'true' if ftype.signed else 'false'};{base} }}")


def _field_decl(name: str, ftype: FieldType) -> str:
    if ftype.kind == "string":
        return f"\t\tstring _{name};"
    return f"\t\t{_int_decl(ftype)} _{name};"


@dataclass(frozen=True)
class TraceInfo:
    """What the metadata says about the run, besides the event classes."""

    byte_order: str                        # "little" or "big": the guest's
    trace_uuid: uuidlib.UUID
    arch: str
    env: dict[str, int | str] = field(default_factory=dict)

    def add_totals(self, totals: Mapping[str, int]) -> None:
        """The run's final event counts, as ``kisim_events_NAME`` in the env, which
        :mod:`tracing.ctfread` checks the streams against. A sink writes the env when
        it closes, so a run adds these between its end and the sink's close."""
        self.env.update({f"kisim_events_{k}": v for k, v in totals.items()})


def metadata_text(info: TraceInfo, classes: Sequence[EventClass]) -> str:
    """The TSDL metadata of a trace holding events of ``classes`` (id = index)."""
    lines = ["/* CTF 1.8 */", ""]
    for (bits, signed), name in _INT_TYPES.items():
        lines.append(f"typealias integer {{ size = {bits}; align = 8; "
                     f"signed = {'true' if signed else 'false'}; }} := {name};")
    lines += [
        "",
        "trace {",
        "\tmajor = 1;",
        "\tminor = 8;",
        f'\tuuid = "{info.trace_uuid}";',
        f"\tbyte_order = {tsdl_byte_order(info.byte_order)};",
        "\tpacket.header := struct {",
        "\t\tuint32_t magic;",
        "\t\tuint8_t  uuid[16];",
        "\t\tuint32_t stream_id;",
        "\t\tuint64_t stream_instance_id;",
        "\t};",
        "};",
        "",
        "env {",
    ]
    env: dict[str, int | str] = {
        "hostname": "kisim", "domain": "kernel", "sysname": "Linux",
        "kernel_release": "2.6.29-kisim", "kernel_version": f"kisim {info.arch}",
        "tracer_name": TRACER_NAME, "tracer_major": TRACER_MAJOR,
        "tracer_minor": TRACER_MINOR, "tracer_patchlevel": 0,
        "trace_buffering_scheme": "global", "architecture": info.arch,
    }
    env.update(info.env)
    for key, value in env.items():
        shown = value if isinstance(value, int) else '"' + str(value).replace('"', "'") + '"'
        lines.append(f"\t{key} = {shown};")
    lines += [
        "};",
        "",
        "clock {",
        "\tname = \"monotonic\";",
        f'\tuuid = "{info.trace_uuid}";',
        "\tdescription = \"each CPU's modeled clock: modeled cycles at the arch's frequency\";",
        f"\tfreq = {NSEC_PER_SEC};",
        "\tprecision = 1;",
        "\toffset_s = 0;",
        "\toffset = 0;",
        "\tabsolute = FALSE;",
        "};",
        "",
        "typealias integer { size = 64; align = 8; signed = false; "
        "map = clock.monotonic.value; } := uint64_clock_monotonic_t;",
        "",
        "struct packet_context {",
        "\tuint64_clock_monotonic_t timestamp_begin;",
        "\tuint64_clock_monotonic_t timestamp_end;",
        "\tuint64_t content_size;",
        "\tuint64_t packet_size;",
        "\tuint64_t packet_seq_num;",
        "\tuint64_t events_discarded;",
        "\tuint32_t cpu_id;",
        "};",
        "",
        "stream {",
        f"\tid = {STREAM_ID};",
        "\tevent.header := struct {",
        "\t\tuint32_t id;",
        "\t\tuint64_clock_monotonic_t timestamp;",
        "\t};",
        "\tpacket.context := struct packet_context;",
        "\tevent.context := struct {",
        "\t\tint32_t _tid;",
        f"\t\tinteger {{ size = 8; align = 8; signed = false; encoding = UTF8; }} "
        f"_procname[{PROCNAME_LEN}];",
        "\t};",
        "};",
        "",
    ]
    for event_id, cls in enumerate(classes):
        lines += ["event {", f'\tname = "{cls.name}";', f"\tid = {event_id};",
                  f"\tstream_id = {STREAM_ID};", "\tfields := struct {"]
        lines += [_field_decl(name, ftype) for name, ftype in cls.fields]
        lines += ["\t};", "};", ""]
    return "\n".join(lines)


class _EventCodec:
    """Packs the events of one class: fixed-size runs of integers, then strings."""

    def __init__(self, prefix: str, event_id: int, cls: EventClass) -> None:
        self.event_id = event_id
        self.parts: list[tuple[struct.Struct | None, list[int]]] = []
        codes = ""
        run: list[int] = []
        for i, (_, ftype) in enumerate(cls.fields):
            if ftype.kind == "string":
                if run:
                    self.parts.append((struct.Struct(prefix + codes), run))
                    codes, run = "", []
                self.parts.append((None, [i]))
            else:
                codes += _STRUCT_CODES[(ftype.bits, ftype.signed)]
                run.append(i)
        if run:
            self.parts.append((struct.Struct(prefix + codes), run))

    def pack(self, values: Sequence[int | str]) -> bytes:
        out = []
        for packer, indexes in self.parts:
            if packer is None:
                out.append(str(values[indexes[0]]).encode() + b"\0")
            else:
                out.append(packer.pack(*(values[i] for i in indexes)))
        return b"".join(out)


@dataclass
class PacketInfo:
    """One packet's context, as a ring buffer sub-buffer describes it."""

    cpu: int
    seq: int
    timestamp_begin: int
    timestamp_end: int
    events_discarded: int       # cumulative for this CPU's stream
    #: Cumulative events overwritten before this packet (the sub-buffers the
    #: overwrite mode took from the consumer); not part of CTF's packet context.
    events_overwritten: int = 0


class CtfWriter:
    """Write one CTF trace directory, packet by packet, per CPU stream."""

    def __init__(self, out_dir: str | Path | OutDir, info: TraceInfo,
                 classes: Sequence[EventClass]) -> None:
        self.out = out_dir if isinstance(out_dir, OutDir) else OutDir(out_dir)
        self.dir = self.out.path
        self.info = info
        self.classes = list(classes)
        prefix = endian_prefix(info.byte_order)
        self._codecs = {cls: _EventCodec(prefix, i, cls) for i, cls in enumerate(self.classes)}
        self._header = struct.Struct(prefix + PACKET_HEADER)
        self._context = struct.Struct(prefix + PACKET_CONTEXT)
        self._event_head = struct.Struct(prefix + EVENT_HEADER + EVENT_CONTEXT)
        self._files = ExitStack()
        self._streams: dict[int, BinaryIO] = {}
        self._metadata = self.out.target("metadata")
        self.files: list[Path] = []
        self.closed = False

    def stream_path(self, cpu: int) -> Path:
        return self.dir / f"channel0_{cpu}"

    def _stream(self, cpu: int) -> BinaryIO:
        f = self._streams.get(cpu)
        if f is None:
            path = self.out.target(self.stream_path(cpu).name)
            f = self._streams[cpu] = self._files.enter_context(fsio.atomic_open(path, "wb"))
            self.files.append(path)
        return f

    def encode_event(self, event: Event) -> bytes:
        codec = self._codecs.get(event.cls)
        if codec is None:
            raise ValueError(f"event class {event.cls.name!r} is not in this trace's metadata")
        comm = event.comm.encode()[:PROCNAME_LEN - 1]
        return (self._event_head.pack(codec.event_id, event.timestamp, event.tid, comm)
                + codec.pack(event.values))

    def write_packet(self, packet: PacketInfo, events: Iterable[Event]) -> int:
        """Append one packet to ``packet.cpu``'s stream; return its event count."""
        body = bytearray()
        count = 0
        for event in events:
            body += self.encode_event(event)
            count += 1
        return self.write_raw_packet(packet, bytes(body), count)

    def write_raw_packet(self, packet: PacketInfo, body: bytes, count: int) -> int:
        """Append a packet whose event records are already encoded in ``body``."""
        size_bits = (self._header.size + self._context.size + len(body)) * 8
        f = self._stream(packet.cpu)
        f.write(self._header.pack(CTF_MAGIC, self.info.trace_uuid.bytes, STREAM_ID, packet.cpu))
        f.write(self._context.pack(packet.timestamp_begin, packet.timestamp_end, size_bits,
                                   size_bits, packet.seq, packet.events_discarded, packet.cpu))
        f.write(body)
        return count

    def close(self) -> list[Path]:
        """Rename every stream into place, write the metadata, stamp the directory;
        return the files written."""
        if not self.closed:
            self.closed = True
            self._files.close()
            text = metadata_text(self.info, self.classes)
            fsio.atomic_write(self._metadata, text)
            self.files.insert(0, self._metadata)
            self.out.commit(self.files, {"metadata": hashlib.sha256(text.encode()).hexdigest()})
        return list(self.files)

    def abort(self) -> None:
        """Drop the temporary streams: the directory keeps what it held before."""
        if not self.closed:
            self.closed = True
            try:
                self._files.__exit__(TraceError, TraceError("trace aborted"), None)
            finally:                    # a stream's close may fail too (the disk full)
                self.out.release()

    def __enter__(self) -> CtfWriter:
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def trace_size(directory: str | Path) -> int:
    """Bytes of a trace directory (metadata plus streams; not kisim's hidden stamp)."""
    return sum(p.stat().st_size for p in Path(directory).iterdir()
               if p.is_file() and not p.name.startswith("."))


__all__ = ["CTF_MAGIC", "CtfWriter", "PacketInfo", "TraceInfo", "endian_prefix",
           "metadata_text", "trace_size"]
