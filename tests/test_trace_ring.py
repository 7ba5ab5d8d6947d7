"""Guest ring buffers end to end: guest probes record, the host drains, babeltrace2 reads.

Every check runs on each arch: the events babeltrace2 prints equal, field by
field, what an independent host probe on the same tracepoints saw; under
pressure babeltrace2's discarded-event warnings add up to kisim's count;
overwrite mode loses whole sub-buffers; the accounting identity holds per
CPU; the same seed gives the same trace bytes.
"""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from arches import Arch
from kbuild import build
from sim.event import Event
from sim.guest import Guest
from tracing import babeltrace
from tracing.ctf import CtfWriter, TraceInfo
from tracing.ctfread import CtfTrace
from tracing.errors import TraceError
from tracing.events import EVENTS, parse_probes
from tracing.session import EventList, TraceOptions, TraceResult, TraceSession

needs_bt = pytest.mark.skipif(babeltrace.available() is None,
                              reason="babeltrace2 is not installed and apt is not available "
                                     "to install it (make test does)")


def record(arch: Arch, out: Path, *, probes: str = "kmem,sched", size: int = 150,
           seed: int | None = None, host_probe=None, **opts) -> TraceResult:
    guest = Guest(build(arch.name), cpus=2, workload="kmalloc", size=size, seed=seed)
    session = TraceSession(guest, TraceOptions(parse_probes(probes), **opts))
    if host_probe is not None:
        for name in parse_probes(probes):
            session.inst.tracepoints.tracepoint_probe_register(EVENTS[name][0], host_probe)
    with CtfWriter(out, TraceInfo(arch.endian, uuid.UUID(int=7), arch.name),
                   session.classes) as writer:
        return session.run(writer)


@pytest.mark.slow
@needs_bt
def test_babeltrace2_sees_what_the_guest_produced(tmp_path: Path, arch: Arch) -> None:
    seen: list[Event] = []
    result = record(arch, tmp_path / "t", probes="kmem", host_probe=seen.append)
    assert result.checksum_ok
    assert result.total.discarded == 0 and result.total.recorded == result.total.produced
    out = babeltrace.read(tmp_path / "t")
    assert len(out.events) == result.total.recorded == len(seen) > 100
    names = {"kmem_kmalloc", "kmem_cache_alloc", "kmem_kfree", "kmem_cache_free"}
    for cpu in (0, 1):
        want = [(e.name, e.values) for e in seen if e.cpu == cpu]
        got = [(e.name, tuple(e.fields.values())) for e in out.events if e.cpu == cpu]
        assert got == want
    assert {e.name for e in out.events} == names


@pytest.mark.slow
@needs_bt
def test_sched_switch_fields_and_tasks(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "t", probes="sched_switch")
    out = babeltrace.read(tmp_path / "t")
    switches = out.events
    assert switches and all(e.name == "sched_switch" for e in switches)
    assert set(switches[0].fields) == {"prev_comm", "prev_tid", "prev_prio", "prev_state",
                                       "next_comm", "next_tid", "next_prio"}
    for e in switches:       # the event context is the task being switched out
        assert e.tid == e.fields["prev_tid"] and e.procname == e.fields["prev_comm"]
    assert any(e.fields["next_comm"] == "kmalloc/0" for e in switches)


@pytest.mark.slow
@needs_bt
def test_pressure_discards_add_up_in_babeltrace2(tmp_path: Path, arch: Arch) -> None:
    result = record(arch, tmp_path / "t", subbuf_size=512, subbufs=2, drain_every=300)
    assert result.total.discarded > 0
    for c in result.per_cpu:
        assert c.produced == c.recorded + c.discarded
    out = babeltrace.read(tmp_path / "t")
    assert out.unknown_discards == 0
    assert sum(out.discarded_events) == result.total.discarded
    assert len(out.events) == result.total.recorded


@pytest.mark.slow
@needs_bt
def test_overwrite_mode_loses_whole_subbuffers(tmp_path: Path, arch: Arch) -> None:
    result = record(arch, tmp_path / "t", probes="kmem", subbuf_size=512, subbufs=2,
                    mode="overwrite", drain_every=300)
    assert result.total.overwritten > 0 and result.total.discarded == 0
    for c in result.per_cpu:
        assert c.produced == c.recorded + c.overwritten
    out = babeltrace.read(tmp_path / "t")
    assert len(out.events) == result.total.recorded
    trace = CtfTrace(tmp_path / "t")
    list(trace.events())
    first_gaps = sum(packet.seq for packet in trace.first.values())
    # babeltrace2 reports gaps between packets; a gap before a stream's first one is silent
    assert sum(out.discarded_packets) + first_gaps == result.total.lost_packets > 0
    assert sum(trace.lost.values()) == result.total.lost_packets


@pytest.mark.slow
def test_timestamps_are_the_cpu_clocks(tmp_path: Path, arch: Arch) -> None:
    result = record(arch, tmp_path / "t", probes="kmem")
    trace = CtfTrace(tmp_path / "t")
    per_cpu: dict[int, list[int]] = {}
    for e in trace.events():
        per_cpu.setdefault(e.cpu, []).append(e.timestamp)
    for cpu, stamps in per_cpu.items():
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
        assert stamps[-1] <= result.end_ns[cpu]
    assert result.clock_reads == result.total.produced


@pytest.mark.slow
def test_recording_costs_guest_instructions(tmp_path: Path, arch: Arch) -> None:
    quiet = record(arch, tmp_path / "a", probes="sched_wakeup")
    loud = record(arch, tmp_path / "b", probes="kmem")
    assert loud.total.produced > 10 * max(quiet.total.produced, 1)
    assert loud.instructions > quiet.instructions + 50 * loud.total.produced


@pytest.mark.slow
def test_same_seed_same_trace(tmp_path: Path, arch: Arch) -> None:
    record(arch, tmp_path / "a", seed=3, subbuf_size=512, drain_every=50)
    record(arch, tmp_path / "b", seed=3, subbuf_size=512, drain_every=50)
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("opts", [dict(subbuf_size=64), dict(subbufs=1), dict(mode="ring")])
def test_bad_geometry_is_refused(tmp_path: Path, arch: Arch, opts: dict) -> None:
    with pytest.raises(TraceError):
        record(arch, tmp_path / "t", **opts)


SEEDS = 30


@pytest.mark.slow
def test_overwrite_push_races_the_consumer_without_double_counting(arch: Arch) -> None:
    """The consumer runs between any two guest instructions: seeded quanta end
    turns, and so drain, inside the writer's push of ->consumed. The writer's
    cmpxchg (rb_switch) makes every lost sub-buffer count once; with a plain
    store, some of these seeds on every arch broke produced = recorded + overwritten."""
    for seed in range(SEEDS):
        guest = Guest(build(arch.name), cpus=1, workload="kmalloc", size=60, seed=seed,
                      quantum=200)
        session = TraceSession(guest, TraceOptions(parse_probes("kmem"), subbuf_size=512,
                                                   subbufs=2, mode="overwrite",
                                                   drain_every=40))
        result = session.run(EventList())          # flush() checks the identity
        assert result.total.overwritten > 0 and result.total.recorded > 0


def test_the_kconfig_ranges_are_the_rings_limits() -> None:
    """RING_BUFFER_SUBBUFS and RING_BUFFER_SUBBUF_SIZE accept what the ring takes:
    --set RING_BUFFER_SUBBUFS=4096 was accepted by Kconfig and refused by the ring
    in the words of --subbufs."""
    import re
    from pathlib import Path
    from tracing.ring import MAX_SUBBUF_SIZE, MAX_SUBBUFS
    text = (Path(__file__).resolve().parents[1] / "kconfig/Kconfig.tracepoints").read_text()
    ranges = dict(re.findall(r"config (RING_BUFFER_\w+)\n(?:\t.*\n)*?\trange \d+ (\d+)", text))
    assert ranges == {"RING_BUFFER_SUBBUF_SIZE": str(MAX_SUBBUF_SIZE),
                      "RING_BUFFER_SUBBUFS": str(MAX_SUBBUFS)}
