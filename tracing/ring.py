"""The host side of the guest's per-CPU ring buffers: setup and the consumer.

The guest half (``kernel/ring_buffer.c``, layout in
``kernel/include/linux/ring_buffer.h``) writes records; this module maps the
buffer memory, describes it in ``ring_buffer_channel`` before boot, and
drains closed sub-buffers like a relay reader: one packet per sub-buffer,
handed to a sink with the sub-buffer's sequence number, begin/end time and
the CPU's cumulative discarded count. At the end of the run it flushes the
open sub-buffer of each CPU, as ``lttng stop`` does.

Accounting is exact and checked: for each CPU, the guest's ``produced``
counter equals the events the consumer delivered plus the guest's
``discarded`` and ``overwritten`` counters.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Iterator, Protocol

from arches import Arch
from sim.event import Event
from sim.machine import Machine
from tracing.ctf import PacketInfo
from tracing.errors import TraceError
from tracing.events import HEADER, record_layouts

MODES = {"discard": 0, "overwrite": 1}
SUBBUF_HEADER = "QQQIIII"        # ts_begin, ts_end, discarded, seq, data_size, nr_events, closed
CPU_STATE = "QQQIIIIII"          # produced, discarded, overwritten, head, open, offset, ...
CPU_STRIDE = 56                  # sizeof(struct rb_cpu) on every arch (see the header)
CHANNEL_HEAD = 16                # subbuf_size, nr_subbufs, mode, nr_cpus
BASE_OFFSET = 48                 # offsetof(struct rb_cpu, base)
CONSUMED_OFFSET = 40             # offsetof(struct rb_cpu, consumed)
HEAD_OFFSET = 24                 # offsetof(struct rb_cpu, head)
#: Stated limits of the buffer geometry, checked before the guest runs: the
#: buffers are guest memory mapped (and host memory) up front, so 1 GiB
#: sub-buffers cost gigabytes of RSS however few events they hold.
MAX_SUBBUF_SIZE = 1 << 20        # bytes per sub-buffer
MAX_SUBBUFS = 1024               # sub-buffers per CPU
MAX_RING_BYTES = 64 << 20        # all buffers of all CPUs


class PacketSink(Protocol):
    def write_packet(self, packet: PacketInfo, events: Iterator[Event] | list[Event]) -> int: ...


@dataclass
class CpuCounts:
    """One CPU's accounting, as the guest counted and the consumer delivered."""

    produced: int = 0
    recorded: int = 0
    discarded: int = 0
    overwritten: int = 0
    packets: int = 0
    lost_packets: int = 0

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class RingBuffers:
    """The channel of one guest: geometry, guest addresses and the consumer state."""

    machine: Machine
    channel: int                 # address of ring_buffer_channel
    base: int                    # first byte of the buffers (host-mapped)
    subbuf_size: int
    nr_subbufs: int
    mode: str
    counts: list[CpuCounts] = field(default_factory=list)
    _last_seq: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        arch = self.machine.arch
        self.arch: Arch = arch
        prefix = "<" if arch.endian == "little" else ">"
        self._sub = struct.Struct(prefix + SUBBUF_HEADER)
        self._cpu = struct.Struct(prefix + CPU_STATE)
        self._head = struct.Struct(prefix + HEADER)
        self._layouts = record_layouts(arch)
        self._hc = struct.Struct(prefix + "IIIII")      # head, open, offset, nr_events, consumed
        n = len(self.machine.cpus)
        region = self.machine.memory.find(self.channel, CHANNEL_HEAD + n * CPU_STRIDE)
        if region is None:
            raise TraceError(f"ring_buffer_channel at {self.channel:#x} is not mapped")
        self._channel_mem = region
        self.counts = [CpuCounts() for _ in range(n)]
        self._last_seq = [-1] * n

    # -- setup -------------------------------------------------------------
    @classmethod
    def install(cls, machine: Machine, channel: int, base: int, *, subbuf_size: int,
                nr_subbufs: int, mode: str, max_record: int) -> RingBuffers:
        """Map the buffers at ``base`` and fill ``ring_buffer_channel``."""
        if mode not in MODES:
            raise TraceError(f"unknown buffer mode {mode!r} (discard or overwrite)")
        for what, value in (("subbuf_size", subbuf_size), ("nr_subbufs", nr_subbufs)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TraceError(f"{what} must be an integer, not {type(value).__name__}")
        if not 2 <= nr_subbufs <= MAX_SUBBUFS:
            raise TraceError(f"--subbufs must be 2..{MAX_SUBBUFS}, not {nr_subbufs}")
        smallest = struct.calcsize(">" + SUBBUF_HEADER) + max_record
        if not smallest <= subbuf_size <= MAX_SUBBUF_SIZE or subbuf_size % 8:
            raise TraceError(f"--subbuf-size must be a multiple of 8 in {smallest}.."
                             f"{MAX_SUBBUF_SIZE} bytes (at least a sub-buffer header and the "
                             f"largest record), not {subbuf_size}")
        cpus = len(machine.cpus)
        if subbuf_size * nr_subbufs * cpus > MAX_RING_BYTES:
            raise TraceError(f"--subbuf-size {subbuf_size} x --subbufs {nr_subbufs} x {cpus} "
                             f"CPUs = {subbuf_size * nr_subbufs * cpus} bytes of buffers, over "
                             f"the {MAX_RING_BYTES}-byte limit")
        per_cpu = subbuf_size * nr_subbufs
        machine.map(base, per_cpu * cpus, "rw")
        arch = machine.arch
        machine.write(channel, b"".join(arch.from_int(v, 4)
                                        for v in (subbuf_size, nr_subbufs, MODES[mode], cpus)))
        for cpu in range(cpus):
            machine.write_word(channel + CHANNEL_HEAD + cpu * CPU_STRIDE + BASE_OFFSET,
                               base + cpu * per_cpu)
        return cls(machine, channel, base, subbuf_size, nr_subbufs, mode)

    @property
    def largest_payload(self) -> int:
        """Bytes of the largest record's payload a sub-buffer holds beside its header
        (the guest's ring_buffer_reserve pads header and payload to 8 bytes)."""
        return self.subbuf_size - self._sub.size - self._head.size

    def add_layouts(self, layouts: dict) -> None:
        """Decode records of more event ids (kprobe events, defined at run time):
        id -> an object with ``decode(cpu, header, body, offset)``."""
        self._layouts = {**self._layouts, **layouts}

    # -- guest state -------------------------------------------------------
    def _state_addr(self, cpu: int) -> int:
        return self.channel + CHANNEL_HEAD + cpu * CPU_STRIDE

    def state(self, cpu: int) -> dict[str, int]:
        names = ("produced", "discarded", "overwritten", "head", "open", "offset",
                 "nr_events", "consumed", "reserved")
        raw = self.machine.read(self._state_addr(cpu), self._cpu.size)
        return dict(zip(names, self._cpu.unpack(raw)))

    def _set_consumed(self, cpu: int, seq: int) -> None:
        self.machine.write(self._state_addr(cpu) + CONSUMED_OFFSET, self.arch.from_int(seq, 4))

    def _slot(self, cpu: int, seq: int) -> int:
        return self.base + cpu * self.subbuf_size * self.nr_subbufs \
            + (seq % self.nr_subbufs) * self.subbuf_size

    # -- consuming ---------------------------------------------------------
    def _events(self, cpu: int, data: bytes, count: int) -> Iterator[Event]:
        pos = 0
        head = self._head
        for _ in range(count):
            header = head.unpack_from(data, pos)
            layout = self._layouts.get(header[1])
            if layout is None or header[2] < head.size or pos + header[2] > len(data):
                raise TraceError(f"CPU {cpu}: corrupt ring-buffer record at offset {pos}")
            yield layout.decode(cpu, header, data, pos + head.size)
            pos += header[2]

    def _emit(self, sink: PacketSink, cpu: int, seq: int, ts_begin: int, ts_end: int,
              discarded: int, data: bytes, count: int) -> None:
        c = self.counts[cpu]
        gap = seq - self._last_seq[cpu] - 1
        if gap:      # the guest is stopped: its count covers every sub-buffer before seq
            c.lost_packets += gap
            c.overwritten = self.state(cpu)["overwritten"]
        self._last_seq[cpu] = seq
        c.discarded = discarded          # the last snapshot delivered, until flush()
        c.recorded += sink.write_packet(PacketInfo(cpu, seq, ts_begin, ts_end, discarded,
                                                   c.overwritten),
                                        self._events(cpu, data, count))
        c.packets += 1

    def _head_consumed(self, cpu: int) -> tuple[int, int]:
        """``head`` and ``consumed`` of one CPU, read in place (this runs every turn)."""
        head, _, _, _, consumed = self._hc.unpack_from(
            self._channel_mem.buf, self._state_addr(cpu) + HEAD_OFFSET - self._channel_mem.base)
        return head, consumed

    def drain(self, sink: PacketSink) -> int:
        """Deliver every closed, unconsumed sub-buffer of every CPU; return how many."""
        done = 0
        hsize = self._sub.size
        for cpu in range(len(self.counts)):
            head, seq = self._head_consumed(cpu)
            if seq == head:
                continue
            while seq < head:
                slot = self._slot(cpu, seq)
                ts_b, ts_e, disc, sseq, size, count, closed = self._sub.unpack(
                    self.machine.read(slot, hsize))
                if sseq != seq or not closed:
                    raise TraceError(f"CPU {cpu}: sub-buffer {seq} is not closed "
                                     f"(header says {sseq})")
                self._emit(sink, cpu, seq, ts_b, ts_e, disc,
                           self.machine.read(slot + hsize, size), count)
                seq += 1
                done += 1
            self._set_consumed(cpu, seq)
        return done

    def flush(self, sink: PacketSink, end_ns: list[int]) -> None:
        """End of run: drain, then deliver each CPU's open sub-buffer (or an empty
        packet carrying the final discarded count), and check the accounting."""
        self.drain(sink)
        for cpu, c in enumerate(self.counts):
            st = self.state(cpu)
            if st["open"]:
                slot = self._slot(cpu, st["head"])
                ts_b = self._sub.unpack(self.machine.read(slot, self._sub.size))[0]
                data = self.machine.read(slot + self._sub.size, st["offset"])
                self._emit(sink, cpu, st["head"], ts_b, max(end_ns[cpu], ts_b),
                           st["discarded"], data, st["nr_events"])
            elif c.packets == 0 or st["discarded"] != c.discarded:
                self._emit(sink, cpu, st["head"], end_ns[cpu], end_ns[cpu],
                           st["discarded"], b"", 0)
            c.produced = st["produced"]
            c.discarded = st["discarded"]
            c.overwritten = st["overwritten"]
            if c.produced != c.recorded + c.discarded + c.overwritten:
                raise TraceError(f"CPU {cpu}: accounting mismatch: produced {c.produced} != "
                                 f"recorded {c.recorded} + discarded {c.discarded} + "
                                 f"overwritten {c.overwritten}")

    def totals(self) -> CpuCounts:
        t = CpuCounts()
        for c in self.counts:
            for k, v in c.__dict__.items():
                setattr(t, k, getattr(t, k) + v)
        return t


__all__ = ["CpuCounts", "MODES", "PacketSink", "RingBuffers"]
