"""Read back the CTF traces kisim writes, for kisim's own reports.

This is not a general CTF reader (babeltrace2 is): it accepts the TSDL
subset :mod:`tracing.ctf` emits (byte-aligned integers, NUL-terminated
strings, one stream class) in either byte order, from any arch, on any
host. Anything else, and any corrupt or truncated stream, raises
:class:`TraceError` with a one-line message naming the file and offset.
A trace must also be whole, as far as it records what it holds: one
stream per CPU (the CPU of its packets), every CPU of the metadata's
``kisim_cpus`` with one, and, once read, the packets and events of its
``kisim_events_packets`` and ``kisim_events_recorded``.

Events come out merged across CPUs by timestamp (ties by CPU), one packet
per stream in memory at a time.
"""
from __future__ import annotations

import hashlib
import heapq
import json
import os
import re
import stat
import struct
import uuid as uuidlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import fsio
from arches import NAMES
from sim.event import STRING, Event, EventClass, FieldType, s, u
from tracing.ctf import (CTF_MAGIC, EVENT_CONTEXT, EVENT_HEADER, PACKET_CONTEXT, PACKET_HEADER,
                         _STRUCT_CODES, TraceInfo, endian_prefix, metadata_text)
from tracing.errors import TraceError
from tracing.ring import MAX_SUBBUF_SIZE
from tracing.outdir import STAMP, STAMP_LIMIT

_EVENT_RE = re.compile(r'event\s*\{\s*name\s*=\s*"([^"]+)";\s*id\s*=\s*(\d+);\s*'
                       r'stream_id\s*=\s*\d+;\s*fields\s*:=\s*struct\s*\{(.*?)\};\s*\};', re.S)
_INT_FIELD_RE = re.compile(r"integer\s*\{\s*size\s*=\s*(\d+);\s*align\s*=\s*8;\s*"
                           r"signed\s*=\s*(true|false);(?:\s*base\s*=\s*(\d+);)?\s*\}\s*_(\w+);")
_STRING_FIELD_RE = re.compile(r"string\s+_(\w+);")
#: The largest metadata file read; kisim's own is a few KiB.
METADATA_LIMIT = 1 << 20
#: A stream holds the packets of one CPU's ring, each a sub-buffer of at most
#: MAX_SUBBUF_SIZE bytes; the limits bound what a hostile header can make it read.
STREAM_LIMIT = 1 << 34
PACKET_LIMIT = MAX_SUBBUF_SIZE


@dataclass
class Packet:
    """One packet's header and context as read."""

    cpu: int
    seq: int
    timestamp_begin: int
    timestamp_end: int
    events_discarded: int
    content_bytes: int


@dataclass
class TraceMeta:
    byte_order: str
    trace_uuid: uuidlib.UUID
    env: dict[str, str]
    classes: dict[int, EventClass]


def _parse_fields(body: str, where: str) -> tuple[tuple[str, FieldType], ...]:
    fields: list[tuple[int, str, FieldType]] = []
    for m in _INT_FIELD_RE.finditer(body):
        bits, signed, base, name = int(m[1]), m[2] == "true", int(m[3] or 10), m[4]
        if (bits, signed) not in _STRUCT_CODES or base not in (2, 8, 10, 16):
            raise TraceError(f"{where}: field _{name}: a {bits}-bit base-{base} integer "
                             "(kisim writes 8/16/32/64-bit, base 2/8/10/16)")
        ftype = s(bits) if signed else u(bits, base)
        fields.append((m.start(), name, ftype))
    for m in _STRING_FIELD_RE.finditer(body):
        fields.append((m.start(), m[1], STRING))
    declared = sum(1 for line in body.splitlines() if line.strip())
    if len(fields) != declared:
        raise TraceError(f"{where}: unsupported field declaration in the metadata")
    return tuple((name, ftype) for _, name, ftype in sorted(fields, key=lambda f: f[0]))


def read_metadata(directory: Path) -> TraceMeta:
    path = directory / "metadata"
    if not os.path.lexists(path):
        raise TraceError(f"{directory}: not a CTF trace (no metadata file)")
    try:           # a FIFO or device named metadata is refused, never read
        text = fsio.read_text(path, limit=METADATA_LIMIT, what="CTF metadata")
    except fsio.UnsafePath as err:
        raise TraceError(str(err)) from None
    if not text.startswith("/* CTF 1.8"):
        raise TraceError(f"{path}: not CTF 1.8 metadata written by kisim")
    order = re.search(r"byte_order\s*=\s*(le|be|network)\s*;", text)
    uid = re.search(r'trace\s*\{[^}]*?uuid\s*=\s*"([0-9a-f-]+)"', text, re.S)
    env_block = re.search(r"env\s*\{(.*?)\};", text, re.S)
    if not order or not uid or not env_block:
        raise TraceError(f"{path}: truncated metadata (no byte_order, uuid or env)")
    env = {k: v.strip('"') for k, v in re.findall(r"(\w+)\s*=\s*([^;]+);", env_block[1])}
    classes = {}
    for m in _EVENT_RE.finditer(text):
        fields = _parse_fields(m[3], f"{path}: event {m[1]}")
        classes[int(m[2])] = EventClass(m[1], fields)
    if text.count("event {") != len(classes):
        raise TraceError(f"{path}: truncated or unsupported event declaration")
    try:
        trace_uuid = uuidlib.UUID(uid[1])
    except ValueError:
        raise TraceError(f"{path}: bad trace uuid {uid[1]!r}") from None
    meta = TraceMeta("little" if order[1] == "le" else "big", trace_uuid, env, classes)
    _check_as_written(path, text, meta, env_block[1])
    _check_stamped(path, text)
    return meta


def _check_stamped(path: Path, text: str) -> None:
    """The SHA-256 kisim's stamp recorded for the metadata, if the stamp is there:
    it catches a changed byte in a name or a value, which still parses."""
    stamp = path.with_name(STAMP)
    if not stamp.is_file() or stamp.is_symlink():
        return
    try:
        digest = json.loads(fsio.read_text(stamp, limit=STAMP_LIMIT,
                                           what="trace stamp")).get("sha256", {}).get("metadata")
    except (ValueError, AttributeError, RecursionError, fsio.UnsafePath):
        raise TraceError(f"{stamp}: not a kisim trace stamp") from None
    if digest is not None and hashlib.sha256(text.encode()).hexdigest() != digest:
        raise TraceError(f"{path}: corrupt metadata: its SHA-256 is not the one kisim "
                         f"recorded in {STAMP}")


def _check_as_written(path: Path, text: str, meta: TraceMeta, env_text: str) -> None:
    """:class:`TraceError` unless ``text`` is exactly the metadata :mod:`tracing.ctf`
    writes for what it declares: a changed byte anywhere (a flipped bit) is
    corruption, even where the parse above does not look."""
    ids = sorted(meta.classes)
    if ids != list(range(len(ids))):
        raise TraceError(f"{path}: event ids are not 0..{len(ids) - 1}")
    env: dict[str, int | str] = {}            # the run's own keys; the rest is fixed
    for key, value in re.findall(r"(kisim_\w+)\s*=\s*([^;]+);", env_text):
        if value.startswith('"'):
            env[key] = value.strip('"')
        elif value.isdigit():
            env[key] = int(value)
        else:
            raise TraceError(f"{path}: env {key} = {value[:40]!r} is neither a string "
                             "nor an integer")
    arch = meta.env.get("architecture", "")
    if arch not in NAMES:
        raise TraceError(f"{path}: corrupt metadata: architecture {arch[:40]!r} is not "
                         f"one of {', '.join(NAMES)}")
    expected = metadata_text(TraceInfo(meta.byte_order, meta.trace_uuid, arch, env),
                             [meta.classes[i] for i in ids])
    if text != expected:
        at = next((i for i, (a, b) in enumerate(zip(text, expected)) if a != b),
                  min(len(text), len(expected)))
        line = text.count("\n", 0, at) + 1
        raise TraceError(f"{path}: corrupt metadata: line {line} (character {at}) differs "
                         "from what kisim writes for this trace")


class CtfTrace:
    """One kisim CTF trace directory, read lazily."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        if not self.dir.is_dir():
            why = ("not a directory; a CTF trace is the directory kisim trace --out wrote"
                   if self.dir.exists() else "no such trace directory")
            raise TraceError(f"{self.dir}: {why}")
        self.meta = read_metadata(self.dir)
        prefix = endian_prefix(self.meta.byte_order)
        self._header = struct.Struct(prefix + PACKET_HEADER)
        self._context = struct.Struct(prefix + PACKET_CONTEXT)
        self._event_head = struct.Struct(prefix + EVENT_HEADER + EVENT_CONTEXT)
        self._prefix = prefix
        entries = [p for p in self.dir.iterdir()
                   if p.name != "metadata" and not p.name.startswith(".")]
        for p in entries:             # a directory, FIFO or link there is no stream
            if not stat.S_ISREG(os.lstat(p).st_mode):
                raise TraceError(f"{p}: a CTF stream must be a regular file")
        # babeltrace2 skips an empty file too; an empty one of a CPU is refused below
        self.streams = sorted(p for p in entries if p.stat().st_size)
        self.cpu_of = self._stream_cpus(entries)
        self.first: dict[int, Packet] = {}      # per CPU, once its stream was read
        self.last: dict[int, Packet] = {}
        self.lost: dict[int, int] = {}          # sub-buffers missing from the sequence
        self.packets: dict[int, int] = {}       # per CPU, packets and events read
        self.recorded: dict[int, int] = {}

    def _env_count(self, key: str) -> int | None:
        """The integer ``key`` of the metadata's env, None if the trace does not record it."""
        value = self.meta.env.get(key)
        if value is not None and not value.isdigit():
            raise TraceError(f"{self.dir / 'metadata'}: env {key} = {value[:40]!r} is not "
                             "a count")
        return None if value is None else int(value)

    def _stream_cpus(self, entries: list[Path]) -> dict[Path, int]:
        """Each stream's CPU, from its first packet; :class:`TraceError` for two streams
        of one CPU (a copied stream), and, if the metadata records ``kisim_cpus``
        (kisim writes a stream for each, an empty packet at least), for a CPU
        beyond them or one with no stream (deleted, or emptied)."""
        owner: dict[int, Path] = {}
        for path in self.streams:
            with fsio.open_regular(path, limit=STREAM_LIMIT, what="CTF stream") as f:
                raw = f.read(self._header.size + self._context.size)
                cpu = self._head(path, raw, 0, os.fstat(f.fileno()).st_size)[0].cpu
            if cpu in owner:
                raise TraceError(f"{path}: two streams claim CPU {cpu}: this one and "
                                 f"{owner[cpu].name} (a copied stream?)")
            owner[cpu] = path
        cpus = self._env_count("kisim_cpus")
        if cpus is not None:
            for cpu, path in sorted(owner.items()):
                if cpu >= cpus:
                    raise TraceError(f"{path}: a stream of CPU {cpu}, but the metadata "
                                     f"records {cpus} CPUs")
            missing = next((cpu for cpu in range(cpus) if cpu not in owner), None)
            if missing is not None:
                path = self.dir / f"channel0_{missing}"       # tracing.ctf's name for it
                why = "empty stream (no packet)" if path in entries else "missing stream"
                raise TraceError(f"{path}: {why} for CPU {missing} (the metadata records "
                                 f"{cpus} CPUs, each with a stream)")
        return {path: cpu for cpu, path in owner.items()}

    def _head(self, path: Path, raw: bytes, offset: int, length: int) -> tuple[Packet, int]:
        """The packet whose header and context are ``raw``, read at ``offset`` of a
        ``length``-byte stream, and its size in bytes; :class:`TraceError` unless it
        is one of this trace's, whole in the file."""
        head = self._header.size + self._context.size
        if len(raw) < head:
            raise TraceError(f"{path}: truncated packet header at offset {offset}")
        magic, uid, _sid, instance = self._header.unpack_from(raw)
        if magic != CTF_MAGIC:
            raise TraceError(f"{path}: bad CTF magic {magic:#010x} at offset {offset}")
        if uid != self.meta.trace_uuid.bytes:
            raise TraceError(f"{path}: packet UUID differs from the metadata's "
                             f"at offset {offset}")
        ts_b, ts_e, content, size, seq, disc, cpu = self._context.unpack_from(
            raw, self._header.size)
        if content % 8 or size % 8 or size < content or content < head * 8:
            raise TraceError(f"{path}: bad packet size at offset {offset} "
                             f"(content {content} bits, packet {size} bits)")
        if size // 8 > PACKET_LIMIT:
            raise TraceError(f"{path}: a packet of {size // 8} bytes at offset {offset}, over "
                             f"the {PACKET_LIMIT} of a kisim sub-buffer")
        if offset + size // 8 > length:       # never read or seek past the end
            raise TraceError(f"{path}: truncated packet at offset {offset} "
                             f"({size // 8} bytes, {length - offset} in the file)")
        if instance != cpu:
            raise TraceError(f"{path}: packet at offset {offset} is CPU {instance}'s in its "
                             f"header and CPU {cpu}'s in its context")
        return Packet(cpu, seq, ts_b, ts_e, disc, content // 8), size // 8

    def _packets(self, path: Path) -> Iterator[tuple[Packet, bytes]]:
        """The packets of one stream, each of the stream's CPU and numbered after
        the one before."""
        head = self._header.size + self._context.size
        cpu = self.cpu_of[path]
        self.packets[cpu] = self.lost[cpu] = 0
        prev: Packet | None = None
        with fsio.open_regular(path, limit=STREAM_LIMIT, what="CTF stream") as f:
            length = os.fstat(f.fileno()).st_size
            offset = 0
            while raw := f.read(head):
                packet, size = self._head(path, raw, offset, length)
                if packet.cpu != cpu:
                    raise TraceError(f"{path}: packet at offset {offset} is CPU "
                                     f"{packet.cpu}'s in a stream of CPU {cpu}")
                if prev is not None and packet.seq <= prev.seq:
                    raise TraceError(f"{path}: packet at offset {offset} is number "
                                     f"{packet.seq}, after number {prev.seq} (repeated "
                                     "or out of order)")
                body = f.read(packet.content_bytes - head)
                if len(body) < packet.content_bytes - head:
                    raise TraceError(f"{path}: truncated packet at offset {offset}")
                f.seek(size - packet.content_bytes, 1)
                self.lost[cpu] += packet.seq - prev.seq - 1 if prev else packet.seq
                self.packets[cpu] += 1
                if prev is None:
                    self.first[cpu] = packet
                self.last[cpu] = prev = packet
                yield packet, body
                offset += size

    def _decode(self, path: Path, packet: Packet, body: bytes) -> Iterator[Event]:
        pos = 0
        head = self._event_head
        while pos < len(body):
            if pos + head.size > len(body):
                raise TraceError(f"{path}: truncated event in packet {packet.seq}")
            event_id, ts, tid, comm = head.unpack_from(body, pos)
            pos += head.size
            cls = self.meta.classes.get(event_id)
            if cls is None:
                raise TraceError(f"{path}: unknown event id {event_id} in packet {packet.seq}")
            values: list[int | str] = []
            for _, ftype in cls.fields:
                if ftype.kind == "string":
                    end = body.find(b"\0", pos)
                    if end < 0:
                        raise TraceError(f"{path}: unterminated string in packet {packet.seq}")
                    values.append(body[pos:end].decode("utf-8", "replace"))
                    pos = end + 1
                else:
                    code = self._prefix + _STRUCT_CODES[(ftype.bits, ftype.signed)]
                    size = ftype.bits // 8
                    if pos + size > len(body):
                        raise TraceError(f"{path}: truncated event in packet {packet.seq}")
                    values.append(struct.unpack_from(code, body, pos)[0])
                    pos += size
            yield Event(cls, packet.cpu, ts, tid, comm.split(b"\0", 1)[0].decode(
                "utf-8", "replace"), tuple(values))

    def stream_events(self, path: Path) -> Iterator[Event]:
        cpu = self.cpu_of[path]
        self.recorded[cpu] = 0
        for packet, body in self._packets(path):
            for event in self._decode(path, packet, body):
                self.recorded[cpu] += 1
                yield event

    def events(self) -> Iterator[Event]:
        """Every event of the trace, merged across CPUs by (timestamp, cpu); at the
        end, :class:`TraceError` if the streams held less or more than the run wrote."""
        yield from heapq.merge(*(self.stream_events(p) for p in self.streams),
                               key=lambda e: (e.timestamp, e.cpu))
        self._check_complete()

    def _check_complete(self) -> None:
        """The packets and events read against the metadata's ``kisim_events_packets``
        and ``kisim_events_recorded``, when it records them: a stream cut at a packet
        boundary still parses, but is not whole."""
        packets = self._env_count("kisim_events_packets")
        events = self._env_count("kisim_events_recorded")
        got = sum(self.packets.values()), sum(self.recorded.values())
        if packets is None or events is None or got == (packets, events):
            return
        shown = ", ".join(f"{path.name} {self.packets[cpu]:,}"
                          for path, cpu in self.cpu_of.items())
        raise TraceError(f"{self.dir}: truncated or altered streams: they hold {got[0]:,} "
                         f"packets ({shown}) and {got[1]:,} events, the metadata records "
                         f"{packets:,} packets and {events:,} events")

    def discarded(self) -> dict[int, int]:
        """Per CPU, the last cumulative events_discarded (after :meth:`events` ran)."""
        return {cpu: packet.events_discarded for cpu, packet in self.last.items()}


__all__ = ["CtfTrace", "Packet", "TraceError", "TraceMeta", "read_metadata"]
