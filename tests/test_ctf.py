"""The CTF writer, read back by the real babeltrace2 and by kisim's own reader.

Synthetic ``Event`` streams in each arch's byte order: babeltrace2 must
print every event with its name, CPU, task and field values, report the
discarded-event deltas of the cumulative ``events_discarded`` counter and
lost packets from ``packet_seq_num`` gaps. Corrupt or truncated traces give
kisim's reader a one-line :class:`TraceError`.
"""
from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arches import Arch
from sim.event import STRING, EventClass, make_event, s, u
from tracing import babeltrace
from tracing.ctf import CtfWriter, PacketInfo, TraceInfo
from tracing.ctfread import CtfTrace
from tracing.errors import TraceError

BT = babeltrace.available()
needs_bt = pytest.mark.skipif(BT is None, reason="babeltrace2 is not installed and apt is not "
                                                 "available to install it (make test does)")

KMALLOC = EventClass("kmem_kmalloc", (("call_site", u(64, 16)), ("ptr", u(64, 16)),
                                      ("bytes_req", u(64)), ("bytes_alloc", u(64)),
                                      ("gfp_flags", u(32, 16))))
SWITCH = EventClass("sched_switch", (("prev_comm", STRING), ("prev_tid", s(32)),
                                     ("prev_prio", s(32)), ("prev_state", s(64)),
                                     ("next_comm", STRING), ("next_tid", s(32)),
                                     ("next_prio", s(32))))


def _events(cpu: int, start: int, n: int) -> list:
    out = []
    for i in range(n):
        ts = start + 10 * i
        if i % 3 == 2:
            out.append(make_event(SWITCH, cpu=cpu, timestamp=ts, tid=i, comm=f"t/{i}",
                                  values=(f"t/{i}", i, 120, -1 if i % 2 else 1,
                                          "swapper, \"x\"", 0, 20)))
        else:
            out.append(make_event(KMALLOC, cpu=cpu, timestamp=ts, tid=7, comm="hackbench/3",
                                  values=(0xFFFF_FFFF_C000_0000 + i, 0x10_0000 + 64 * i,
                                          13 + i, 16 << (i % 4), 0xD0)))
    return out


def write_trace(out: Path, arch: Arch, *, discards: tuple[int, ...] = (0, 0, 0),
                seqs: tuple[int, ...] = (0, 1, 2)) -> dict[int, list]:
    """Two CPUs, three packets each; ``discards`` is the cumulative counter per packet."""
    info = TraceInfo(arch.endian, uuid.UUID(int=42), arch.name)
    written: dict[int, list] = {}
    with CtfWriter(out, info, [KMALLOC, SWITCH]) as w:
        for cpu in range(2):
            for p, (disc, seq) in enumerate(zip(discards, seqs)):
                evs = _events(cpu, 1000 * p + 1 + cpu, 5)
                w.write_packet(PacketInfo(cpu, seq, 1000 * p, 1000 * p + 999, disc), evs)
                written.setdefault(cpu, []).extend(evs)
    return written


@needs_bt
def test_babeltrace2_reads_every_event_with_its_values(tmp_path: Path, arch: Arch) -> None:
    written = write_trace(tmp_path / "t", arch)
    out = babeltrace.read(tmp_path / "t")
    assert out.discarded_events == [] and out.unknown_discards == 0
    assert len(out.events) == sum(len(v) for v in written.values())
    by_cpu = {cpu: [e for e in out.events if e.cpu == cpu] for cpu in written}
    for cpu, events in written.items():
        for want, got in zip(events, by_cpu[cpu]):
            assert got.name == want.name and got.timestamp == want.timestamp
            assert got.tid == want.tid and got.procname == want.comm
            expect = {k: (v.replace('"', '\\"') if isinstance(v, str) else v)
                      for k, v in want.fields.items()}
            assert got.fields == expect


@needs_bt
def test_ppc_trace_is_big_endian_and_x86_little(tmp_path: Path, arch: Arch) -> None:
    write_trace(tmp_path / "t", arch)
    metadata = (tmp_path / "t" / "metadata").read_text()
    first = (tmp_path / "t" / "channel0_0").read_bytes()[:4]
    tag = "be" if arch.endian == "big" else "le"
    assert f"byte_order = {tag};" in metadata
    assert first == (b"\xc1\xfc\x1f\xc1" if arch.endian == "big" else b"\xc1\x1f\xfc\xc1")
    out = babeltrace.read(tmp_path / "t")
    assert out.events[0].fields["call_site"] == 0xFFFF_FFFF_C000_0000


@needs_bt
def test_discarded_counts_add_up_in_babeltrace2(tmp_path: Path, arch: Arch) -> None:
    write_trace(tmp_path / "t", arch, discards=(0, 3, 10))
    out = babeltrace.read(tmp_path / "t")
    assert out.discarded_events and sum(out.discarded_events) == 2 * 10
    assert out.unknown_discards == 0


@needs_bt
def test_sequence_gaps_are_lost_packets(tmp_path: Path, arch: Arch) -> None:
    write_trace(tmp_path / "t", arch, seqs=(0, 1, 4))
    out = babeltrace.read(tmp_path / "t")
    assert sum(out.discarded_packets) == 2 * 2


@needs_bt
def test_env_marks_a_kernel_trace(tmp_path: Path, arch: Arch) -> None:
    write_trace(tmp_path / "t", arch)
    proc = subprocess.run([BT, "-o", "ctf-metadata", str(tmp_path / "t")],
                          capture_output=True, text=True, check=True)
    assert 'domain = "kernel"' in proc.stdout
    assert 'tracer_name = "lttng-modules"' in proc.stdout


def test_own_reader_round_trips(tmp_path: Path, arch: Arch) -> None:
    written = write_trace(tmp_path / "t", arch, discards=(0, 2, 5))
    trace = CtfTrace(tmp_path / "t")
    got = list(trace.events())
    want = sorted((e for evs in written.values() for e in evs),
                  key=lambda e: (e.timestamp, e.cpu))
    assert got == want
    assert trace.discarded() == {0: 5, 1: 5}


@pytest.mark.parametrize("damage", ["truncate", "magic", "metadata", "no-metadata"])
def test_corrupt_traces_get_one_line_errors(tmp_path: Path, arch: Arch, damage: str) -> None:
    d = tmp_path / "t"
    write_trace(d, arch)
    stream = d / "channel0_1"
    if damage == "truncate":
        stream.write_bytes(stream.read_bytes()[:-7])
    elif damage == "magic":
        stream.write_bytes(b"\0\0\0\0" + stream.read_bytes()[4:])
    elif damage == "metadata":
        text = (d / "metadata").read_text()
        (d / "metadata").write_text(text[: len(text) // 2])
    else:
        (d / "metadata").unlink()
    with pytest.raises(TraceError) as err:
        list(CtfTrace(d).events())
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_cli_reports_corrupt_trace_in_one_line(tmp_path: Path, arch: Arch) -> None:
    d = tmp_path / "t"
    write_trace(d, arch)
    (d / "channel0_0").write_bytes((d / "channel0_0").read_bytes()[:100])
    proc = subprocess.run([sys.executable, "-m", "kisim", "kmemtrace", "report", str(d)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "truncated" in proc.stderr


def test_writer_refuses_a_directory_with_other_files(tmp_path: Path, arch: Arch) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "trace.json").write_text("{}")
    (tmp_path / "t" / "channel0_0").write_text("a user's file")
    with pytest.raises(TraceError, match="kisim did not write"):
        write_trace(tmp_path / "t", arch)
    assert (tmp_path / "t" / "channel0_0").read_text() == "a user's file"   # untouched
    write_trace(tmp_path / "u", arch)
    write_trace(tmp_path / "u", arch)          # a kisim trace may be overwritten
    assert len(list(CtfTrace(tmp_path / "u").events())) == 2 * 3 * 5


def test_a_failed_write_leaves_the_previous_trace(tmp_path: Path, arch: Arch) -> None:
    """Streams are written to temporary names: a writer that fails leaves the old trace."""
    write_trace(tmp_path / "t", arch)
    before = {p.name: p.read_bytes() for p in (tmp_path / "t").iterdir()}
    info = TraceInfo(arch.endian, uuid.UUID(int=43), arch.name)
    with pytest.raises(RuntimeError):
        with CtfWriter(tmp_path / "t", info, [KMALLOC]) as w:
            w.write_packet(PacketInfo(0, 0, 0, 9, 0), _events(0, 1, 1)[:1])
            raise RuntimeError("the run failed")
    assert {p.name: p.read_bytes() for p in (tmp_path / "t").iterdir()} == before


def test_kernel_text_line_is_trace_print_context() -> None:
    """One text renderer for the kernel's trace file: kernel/trace/trace_output.c prints the
    context as "%16s-%-5d [%03d]  %5lu.%06lu: " (no irq information), then the event."""
    from tracing.text import kernel_line, render
    ev = _events(3, 2_000_123_456, 1)[0]
    assert kernel_line(ev) == ("     hackbench/3-7     [003]      2.000123: kmem_kmalloc: "
                               "call_site=0xffffffffc0000000 ptr=0x100000 bytes_req=13 "
                               "bytes_alloc=16 gfp_flags=0xd0")
    lines = list(render("text", [ev]))
    assert lines[0] == "# tracer: nop" and lines[-1] == kernel_line(ev)


def test_text_header_is_v5_10s_with_the_overrun_and_the_cpus(tmp_path: Path, arch: Arch) -> None:
    """The text file's header is v5.10's with irq-info off (trace.c s_show,
    print_event_info, print_func_help_header): entries in the buffer, then those plus
    every CPU's overrun (a packet's cumulative events_overwritten), and #P."""
    from tracing.outdir import OutDir
    from tracing.sinks import SinkContext, TextSink
    ctx = SinkContext(TraceInfo(arch.endian, uuid.UUID(int=44), arch.name), [KMALLOC],
                      cpus=2)
    sink = TextSink("text", OutDir(tmp_path / "t"), ctx)
    sink.write_packet(PacketInfo(0, 0, 0, 9, 0, events_overwritten=4), _events(0, 1, 2))
    sink.write_packet(PacketInfo(0, 1, 9, 19, 0, events_overwritten=7), _events(0, 10, 1))
    sink.write_packet(PacketInfo(1, 0, 0, 9, 5, events_overwritten=0), _events(1, 2, 3))
    sink.close()
    lines = (tmp_path / "t" / "trace.txt").read_text().splitlines()
    assert lines[:6] == ["# tracer: nop",
                         "#",
                         "# entries-in-buffer/entries-written: 6/13   #P:2",
                         "#",
                         "#           TASK-PID     CPU#   TIMESTAMP  FUNCTION",
                         "#              | |         |       |         |"]
    assert len(lines) == 6 + 6
