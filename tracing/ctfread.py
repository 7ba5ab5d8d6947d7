"""Read back the CTF traces kisim writes, for kisim's own reports.

This is not a general CTF reader (babeltrace2 is): it accepts the TSDL
subset :mod:`tracing.ctf` emits (byte-aligned integers, NUL-terminated
strings, one stream class) in either byte order, from any arch, on any
host. Anything else, and any corrupt or truncated stream, raises
:class:`TraceError` with a one-line message naming the file and offset.

Events come out merged across CPUs by timestamp (ties by CPU), one packet
per stream in memory at a time.
"""
from __future__ import annotations

import heapq
import os
import re
import struct
import uuid as uuidlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import fsio
from sim.event import STRING, Event, EventClass, FieldType, s, u
from tracing.ctf import (CTF_MAGIC, EVENT_CONTEXT, EVENT_HEADER, PACKET_CONTEXT, PACKET_HEADER,
                         _STRUCT_CODES, endian_prefix)
from tracing.errors import TraceError

_EVENT_RE = re.compile(r'event\s*\{\s*name\s*=\s*"([^"]+)";\s*id\s*=\s*(\d+);\s*'
                       r'stream_id\s*=\s*\d+;\s*fields\s*:=\s*struct\s*\{(.*?)\};\s*\};', re.S)
_INT_FIELD_RE = re.compile(r"integer\s*\{\s*size\s*=\s*(\d+);\s*align\s*=\s*8;\s*"
                           r"signed\s*=\s*(true|false);(?:\s*base\s*=\s*(\d+);)?\s*\}\s*_(\w+);")
_STRING_FIELD_RE = re.compile(r"string\s+_(\w+);")
#: The largest metadata file read; kisim's own is a few KiB.
METADATA_LIMIT = 1 << 20


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
    return TraceMeta("little" if order[1] == "le" else "big", trace_uuid, env, classes)


class CtfTrace:
    """One kisim CTF trace directory, read lazily."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        if not self.dir.is_dir():
            raise TraceError(f"{self.dir}: no such trace directory")
        self.meta = read_metadata(self.dir)
        prefix = endian_prefix(self.meta.byte_order)
        self._header = struct.Struct(prefix + PACKET_HEADER)
        self._context = struct.Struct(prefix + PACKET_CONTEXT)
        self._event_head = struct.Struct(prefix + EVENT_HEADER + EVENT_CONTEXT)
        self._prefix = prefix
        self.streams = sorted(p for p in self.dir.iterdir()
                              if p.is_file() and p.name != "metadata"
                              and not p.name.startswith(".") and p.stat().st_size)
        self.first: dict[int, Packet] = {}      # per CPU, once its stream was read
        self.last: dict[int, Packet] = {}
        self.lost: dict[int, int] = {}          # sub-buffers missing from the sequence

    def _packets(self, path: Path) -> Iterator[tuple[Packet, bytes]]:
        head = self._header.size + self._context.size
        with fsio.open_regular(path, limit=1 << 62, what="CTF stream") as f:
            length = os.fstat(f.fileno()).st_size
            offset = 0
            while True:
                raw = f.read(head)
                if not raw:
                    return
                if len(raw) < head:
                    raise TraceError(f"{path}: truncated packet header at offset {offset}")
                magic, uid, _sid, _inst = self._header.unpack_from(raw)
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
                if offset + size // 8 > length:       # never read or seek past the end
                    raise TraceError(f"{path}: truncated packet at offset {offset} "
                                     f"({size // 8} bytes, {length - offset} in the file)")
                body = f.read(content // 8 - head)
                if len(body) < content // 8 - head:
                    raise TraceError(f"{path}: truncated packet at offset {offset}")
                f.seek(size // 8 - content // 8, 1)
                packet = Packet(cpu, seq, ts_b, ts_e, disc, content // 8)
                prev = self.last.get(cpu)
                self.lost[cpu] = self.lost.get(cpu, 0) + (seq - prev.seq - 1 if prev else seq)
                self.first.setdefault(cpu, packet)
                self.last[cpu] = packet
                yield packet, body
                offset += size // 8

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
        for packet, body in self._packets(path):
            yield from self._decode(path, packet, body)

    def events(self) -> Iterator[Event]:
        """Every event of the trace, merged across CPUs by (timestamp, cpu)."""
        return heapq.merge(*(self.stream_events(p) for p in self.streams),
                           key=lambda e: (e.timestamp, e.cpu))

    def discarded(self) -> dict[int, int]:
        """Per CPU, the last cumulative events_discarded (after :meth:`events` ran)."""
        return {cpu: packet.events_discarded for cpu, packet in self.last.items()}


__all__ = ["CtfTrace", "Packet", "TraceError", "TraceMeta", "read_metadata"]
