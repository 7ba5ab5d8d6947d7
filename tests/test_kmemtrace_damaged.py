"""``kisim kmemtrace report`` refuses a damaged CTF trace in one line (exit 2).

Each case damages a copy of one real recorded trace (arm, 2 CPUs, kmem
probes) the way a copy or a full disk would: a stream deleted, emptied,
cut at a packet boundary (it still parses), copied over the other CPU's,
or holding its packets twice. Before the reader checked what the trace
records (``kisim_cpus``, ``kisim_events_packets``/``_recorded``, each
packet's CPU and number), each gave exit 0 and a report short of events,
or one full of invented double frees.
"""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from arches import ARCHES
from kisim.cli import main
from tracing.ctf import PACKET_CONTEXT, PACKET_HEADER, endian_prefix

ARCH = "arm"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kmem") / "t"
    assert main(["trace", "--arch", ARCH, "--cpus", "2", "--workload", "kmalloc",
                 "--size", "200", "--probes", "kmem", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".kisim-trace", "channel0_0",
                                                     "channel0_1", "metadata"]
    return out


@pytest.fixture
def trace(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the recorded trace (its hidden stamp too), to damage."""
    return Path(shutil.copytree(recorded, tmp_path / "t"))


def _refused(trace: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of ``kmemtrace report`` (exit 2) on ``trace``."""
    capsys.readouterr()
    assert main(["kmemtrace", "report", str(trace)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _packet_ends(stream: Path) -> list[int]:
    """The offset after each packet of ``stream``, from its packet_size fields."""
    head = struct.Struct(endian_prefix(ARCHES[ARCH].endian) + PACKET_HEADER + PACKET_CONTEXT)
    data = stream.read_bytes()
    ends = [0]
    while ends[-1] < len(data):
        ends.append(ends[-1] + head.unpack_from(data, ends[-1])[7] // 8)   # packet_size, bits
    return ends[1:]


def test_the_intact_trace_reports(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["kmemtrace", "report", str(trace)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "Total bytes requested: 0\n" not in out and "ERRORS: 0" in out


def test_a_deleted_stream_is_missing(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (trace / "channel0_0").unlink()
    err = _refused(trace, capsys)
    assert "channel0_0: missing stream for CPU 0" in err and "2 CPUs" in err


def test_an_emptied_stream_is_refused(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (trace / "channel0_0").write_bytes(b"")
    assert "channel0_0: empty stream (no packet) for CPU 0" in _refused(trace, capsys)


def test_a_stream_cut_at_a_packet_boundary_is_truncated(
        trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = trace / "channel0_0"
    ends = _packet_ends(stream)
    assert len(ends) > 2
    stream.write_bytes(stream.read_bytes()[:ends[len(ends) // 2 - 1]])
    err = _refused(trace, capsys)
    assert "truncated or altered streams" in err
    assert f"channel0_0 {len(ends) // 2}, channel0_1 {len(_packet_ends(trace / 'channel0_1'))}" \
        in err
    assert f"the metadata records {len(ends) + len(_packet_ends(trace / 'channel0_1'))} " \
        "packets" in err


def test_a_duplicated_stream_claims_a_cpu_twice(trace: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copyfile(trace / "channel0_0", trace / "channel0_1")
    err = _refused(trace, capsys)
    assert "channel0_1: two streams claim CPU 0" in err and "channel0_0" in err


def test_a_stream_holding_its_packets_twice_is_refused(
        trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = trace / "channel0_1"
    ends = _packet_ends(stream)
    stream.write_bytes(stream.read_bytes() * 2)
    err = _refused(trace, capsys)
    assert f"channel0_1: packet at offset {ends[-1]} is number 0, after number" in err


def test_a_trace_recorded_without_kmem_is_refused(tmp_path, capsys) -> None:
    """Every kisim trace declares the kmem classes; its ``kisim_probes`` env says
    whether it recorded them: a ``--probes sched`` trace is no empty report."""
    out = tmp_path / "sched"
    assert main(["trace", "--arch", "arm", "--workload", "kmalloc", "--size", "20",
                 "--probes", "sched", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["kmemtrace", "report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no slab allocation events" in err


def test_a_packet_claiming_more_than_a_sub_buffer_is_refused(
        trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A header that claims a 3 GiB packet (the stream made that long, sparse) is
    refused at once, not read into memory: a packet is one sub-buffer."""
    from tracing.ctfread import PACKET_LIMIT
    stream = trace / "channel0_0"
    head = struct.Struct(endian_prefix(ARCHES[ARCH].endian) + PACKET_HEADER + PACKET_CONTEXT)
    fields = list(head.unpack_from(stream.read_bytes()))
    fields[6] = fields[7] = (3 << 30) * 8                   # content_size, packet_size: bits
    with open(stream, "r+b") as f:
        f.write(head.pack(*fields))
        f.truncate(3 << 30)
    err = _refused(trace, capsys)
    assert f"a packet of {3 << 30} bytes at offset 0, over the {PACKET_LIMIT}" in err
