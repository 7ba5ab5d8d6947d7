"""trace.dat: what kisim writes, read back with the real ``trace-cmd report``.

Fast tests feed the sink events directly (no guest): time extends, large
payloads, lost-event marks and the per-CPU stats, on each arch's word size
and byte order (ppc32: a big-endian file read on this little-endian host).
Slow tests record guests on every arch (tracepoints, kmem, function,
function_graph, a lossy run) and compare ``trace-cmd report`` with kisim's
own text, event for event: same task, CPU, microsecond, event and fields.
"""
from __future__ import annotations

import json
import re
import struct
import subprocess
import uuid
from collections import Counter
from pathlib import Path

import pytest

from arches import Arch
from kbuild import build
from patcher.tables import load_tables
from probes.function_tracer import FunctionTracer
from sim.event import STRING, Event, EventClass, make_event, s, u
from sim.guest import Guest
from tracing import babeltrace, tracecmd
from tracing.ctf import PacketInfo, TraceInfo
from tracing.events import event_classes, parse_probes
from tracing.errors import TraceError
from tracing.outdir import OutDir
from tracing.session import EventList, TraceOptions, TraceResult, TraceSession
from tracing.sinks import SinkContext, open_sink
from tracing.text import kernel_line, render
from tracing.tracedat import (OPTION_CPUSTAT, OPTION_DONE, OPTION_TRACECLOCK, PAGE_SIZE,
                              RB_MISSED_EVENTS, RB_MISSED_STORED, TRACE_CLOCK, TRACEFS_FIELDS,
                              TS_MASK, CpuPages, TraceDatSink, buf_max_data_size, event_format,
                              marker_spec, select_events, tracefs_name)

needs_tc = pytest.mark.skipif(tracecmd.available() is None,
                              reason="trace-cmd is not installed and apt is not available "
                                     "to install it (make test does)")

BIG = EventClass("kisim/big", tuple((f"w{i}", u(64, 16)) for i in range(30)))
SMALL = EventClass("kisim/small", (("a", u(32)), ("b", s(32)), ("c", u(16, 16))))
TEXT = EventClass("kisim/text", (("n", u(8)), ("msg", STRING), ("m", s(64))))


def _write(tmp: Path, arch: Arch, packets: list[tuple[PacketInfo, list[Event]]],
           classes=(SMALL, BIG, TEXT)) -> Path:
    sink = TraceDatSink(OutDir(tmp), arch.name, list(classes))
    for packet, events in packets:
        assert sink.write_packet(packet, events) == len(events)
    return sink.close()[0]


def _ev(cls: EventClass, cpu: int, ts: int, values) -> Event:
    return make_event(cls, cpu=cpu, timestamp=ts, tid=7, comm="worker", values=values)


def _info(e: Event) -> str:
    return " ".join(f"{n}={v:#x}" if t.base == 16 else f"{n}={v}" for n, t, v in e.typed_fields())


@needs_tc
def test_deltas_extends_and_large_payloads(tmp_path: Path, arch: Arch) -> None:
    """Deltas over 2^27 ns take a TIME_EXTEND, a 248-byte payload a type_len-0
    length word, strings a __data_loc, 300 events several pages; trace-cmd reads
    each back."""
    events, ts = [], 1_000
    for i in range(300):
        ts += (i % 7) * 997 + (3 * TS_MASK if i % 50 == 49 else 0)
        if i % 3 == 0:
            events.append(_ev(BIG, 0, ts, tuple((i << 8) + k for k in range(30))))
        elif i % 5 == 0:          # a __data_loc string among fixed fields
            events.append(_ev(TEXT, 0, ts, (i & 0xff, "x" * (i % 37), -i)))
        else:
            events.append(_ev(SMALL, 0, ts, (i, -i, i & 0xffff)))
    path = _write(tmp_path, arch, [(PacketInfo(0, 0, 0, ts, 0), events)])
    assert path.stat().st_size > 4 * PAGE_SIZE
    got = tracecmd.report(path, "-N")
    assert not got.other and not got.dropped
    assert [(r.cpu, r.time, r.name, r.info) for r in got.lines] == [
        (0, f"{(e.timestamp + 500) // 1000 // 10**6}.{(e.timestamp + 500) // 1000 % 10**6:06d}",
         tracefs_name(e.cls)[1], _info(e)) for e in events]
    endian = tracecmd.run("report", "-e", path).stdout
    assert f"file is {arch.endian} endian" in endian
    summary = tracecmd.run("dump", "--summary", path).stdout
    assert "\t[Tracing clock]\n\t\t[global]\n" in summary
    assert f"\t\t{'1' if arch.endian == 'big' else '0'}\t[{arch.endian.title()} endian]" in summary
    assert f"\t\t{arch.bits // 8}\t[Bytes in a long]" in summary


@needs_tc
def test_lost_events_are_marked_and_counted(tmp_path: Path, arch: Arch) -> None:
    """Each loss between packets marks the next page (RB_MISSED_EVENTS with the
    count stored); a loss after the last event is only in the CPU's stats."""
    def packet(cpu: int, seq: int, t0: int, discarded: int, overwritten: int = 0):
        return (PacketInfo(cpu, seq, t0, t0 + 100, discarded, overwritten),
                [_ev(SMALL, cpu, t0 + k, (k, k, k)) for k in range(5)])
    packets = [packet(0, 0, 1000, 0), packet(1, 0, 1500, 0),
               packet(0, 1, 2000, 3), packet(0, 2, 3000, 3, 40),
               packet(1, 3, 4000, 0, 17), packet(0, 3, 5000, 10, 40),
               (PacketInfo(0, 4, 6000, 6000, 12, 40), [])]
    path = _write(tmp_path, arch, packets)
    got = tracecmd.report(path, "-N")
    assert got.dropped == {0: 3 + 40 + 7, 1: 17}
    assert len(got.lines) == 30
    stats = tracecmd.run("report", "--stat", path).stdout
    assert "dropped events: 12\nread events: 20" in stats
    assert "overrun: 40\n" in stats and "overrun: 17\n" in stats
    # Negative control: the same events without losses carry no marks.
    clean = [(PacketInfo(p.cpu, p.seq, p.timestamp_begin, p.timestamp_end, 0), ev)
             for p, ev in packets]
    assert tracecmd.report(_write(tmp_path / "clean", arch, clean), "-N").dropped == {}


def test_time_extend_encoding() -> None:
    """The header words as include/linux/ring_buffer.h lays them out, both byte orders."""
    for prefix, word in (("<", lambda t, d: (d << 5) | t), (">", lambda t, d: (t << 27) | d)):
        pages = CpuPages(prefix, 8)
        pages.add(10, b"\1\2\3\4")
        pages.add(10 + (5 << 27) + 9, b"\5\6\7\x08")
        pages.finish()
        data = pages.pages[0][16:40]
        order = "little" if prefix == "<" else "big"
        words = [int.from_bytes(data[i:i + 4], order) for i in range(0, 20, 4)]
        assert words == [word(1, 0), int.from_bytes(b"\1\2\3\4", order), word(30, 9), 5,
                         word(1, 0)]
        assert int.from_bytes(pages.pages[0][8:16], order) == 24      # commit: 3 words x 8


def test_a_lost_count_is_stored_only_where_the_page_has_room() -> None:
    """ring_buffer_read_page stores the lost count after the events when it fits; a
    page its first event fills (BUF_MAX_DATA_SIZE) says only that events were lost."""
    for long_size in (8, 4):
        full, room = CpuPages("<", long_size), CpuPages("<", long_size)
        for pages, payload in ((full, buf_max_data_size(long_size)), (room, 100)):
            pages.add(1, b"\1")
            pages.lost(3)
            pages.add(2, bytes(payload))
            pages.finish()
        for pages, stored in ((full, 0), (room, RB_MISSED_STORED)):
            commit = int.from_bytes(pages.pages[1][8:8 + long_size], "little")
            assert commit & (RB_MISSED_EVENTS | RB_MISSED_STORED) == RB_MISSED_EVENTS | stored
        with pytest.raises(TraceError, match="does not fit"):
            full.add(3, bytes(buf_max_data_size(long_size) + 1))


def test_format_text_is_tracefs_shape(arch: Arch) -> None:
    """``format`` as f_show prints it: common fields, a blank line, the event's
    fields at natural alignment, ``print fmt``; v5.10's sched field names."""
    from tracing.events import event_classes
    cls = event_classes(arch)["sched_switch"]
    text = event_format(cls, 20, arch.bits).text(arch.char_signed)
    word = arch.bits // 8
    assert text.startswith("name: sched_switch\nID: 20\nformat:\n"
                           "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n")
    assert "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" \
           f"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:{int(arch.char_signed)};\n" \
           f"\tfield:long prev_pid;\toffset:24;\tsize:{word};\tsigned:1;\n" in text
    assert text.endswith(", REC->next_prio\n")
    assert f"next_pid={'%ld' if arch.bits == 64 else '%d'}" in text


# -- guests -------------------------------------------------------------------

def _nearest(sym, addr: int) -> str:
    """The kallsyms name at or below ``addr``, as libtraceevent's %ps finds it
    (a function's name where several symbols share the address)."""
    entries = sym.tables.image.symbols.entries
    return max((s for s in entries if s.addr <= addr),
               key=lambda s: (s.addr, s.kind == "func")).name


def _expected(e: Event, sym) -> tuple:
    """kisim's text line of ``e`` as trace-cmd report -N should print it."""
    line = re.match(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d{6}): (.*)$", kernel_line(e, sym))
    assert line is not None
    comm, tid, cpu, time, info = line.groups()
    if e.name == "function":
        # trace_fn_trace's "func <-parent"; kisim looks a return address up one
        # byte back (%pB), v5.10's print fmt (%ps) at the address itself, which
        # after a call that never returns is the next function.
        info = f"{info.split(' <-')[0]} <-- {_nearest(sym, e.values[1])}"
    else:
        info = info.split(": ", 1)[1]
    if e.name.startswith("funcgraph"):
        func, depth = e.values
        info = f"{'-->' if e.name == 'funcgraph_entry' else '<--'} {sym.name(func)} ({depth})"
    else:
        for ours, theirs in TRACEFS_FIELDS.items():
            info = info.replace(f"{ours}=", f"{theirs}=")
    return ("<idle>" if int(tid) == 0 else comm, int(tid), int(cpu), time,
            tracefs_name(e.cls)[1], info)


def _compare(path: Path, events: list[Event], sym=None) -> tracecmd.Report:
    got = tracecmd.report(path, "-N")
    want = [_expected(e, sym) for e in sorted(events, key=lambda e: (e.timestamp, e.cpu))]
    seen = [(r.comm, r.pid, r.cpu, r.time, r.name,
             r.info.split(" (start:")[0] if r.name == "funcgraph_exit" else r.info)
            for r in got.lines]
    assert len(seen) == len(want) and seen == want, _unread(got)
    return got


def _unread(got: tracecmd.Report) -> str:
    """What trace-cmd printed besides its event lines, for a failure's message."""
    return f"stderr: {got.stderr[-500:]!r}; other lines: {got.other[:5]!r}"


def _trace(arch: Arch, tmp: Path, probes: str = "kmem,sched", *, size: int = 100,
           **opts) -> tuple[TraceResult, list[Event], TraceDatSink]:
    guest = Guest(build(arch.name), cpus=2, workload="kmalloc", size=size)
    session = TraceSession(guest, TraceOptions(parse_probes(probes), **opts))
    info = TraceInfo(arch.endian, uuid.UUID(int=37), arch.name)
    sink = open_sink("trace-cmd", tmp, SinkContext(info, session.classes, image=guest.image))
    events = EventList(forward=sink)
    result = session.run(events)
    sink.close()
    return result, events.events, sink


@pytest.mark.slow
@needs_tc
def test_tracepoints_round_trip(tmp_path: Path, arch: Arch) -> None:
    result, events, sink = _trace(arch, tmp_path)
    path = sink.path
    assert result.checksum_ok and result.total.discarded == 0
    _compare(path, events)
    assert {e.name for e in events} >= {"kmem_kmalloc", "kmem_kfree", "sched_switch"}
    plugins = tracecmd.run("report", path).stdout          # with trace-cmd's plugins
    assert "CANT FIND" not in plugins and "FAILED TO PARSE" not in plugins
    stats = tracecmd.run("report", "--stat", path).stdout
    for cpu, c in enumerate(result.per_cpu):
        assert f"CPU: {cpu}\n" in stats
        assert f"dropped events: {c.discarded}\nread events: {c.recorded}\n" in stats
    # trace-cmd hist: events per task and event, as kisim recorded them.
    hist = re.findall(r"\((\d+)\) \S+\s+(\S+) #(\d+)$",
                      tracecmd.run("hist", "-i", path).stdout, re.M)
    assert {(int(pid), name): int(n) for pid, name, n in hist} == \
        Counter((e.tid, tracefs_name(e.cls)[1]) for e in events)


@pytest.mark.slow
@needs_tc
@pytest.mark.parametrize("mode", ["discard", "overwrite"])
def test_losses_equal_kisims_counts(tmp_path: Path, arch: Arch, mode: str) -> None:
    """Small buffers drained every 3 turns: trace-cmd reports, per CPU, every
    event kisim counts lost (discarded or overwritten) before a later page, and
    its stats hold the totals (a loss after a CPU's last event: there only)."""
    result, events, sink = _trace(arch, tmp_path, "kmem", subbuf_size=512, subbufs=2,
                                  drain_every=3, mode=mode)
    lost = result.total.discarded + result.total.overwritten
    assert lost > 100 and (result.total.overwritten > 0) == (mode == "overwrite")
    got = _compare(path := sink.path, events)
    stats = tracecmd.run("report", "--stat", path).stdout
    for cpu, c in enumerate(result.per_cpu):
        assert (f"overrun: {c.overwritten}\n" in stats
                and f"dropped events: {c.discarded}\nread events: {c.recorded}\n" in stats)
        assert c.produced == c.recorded + c.discarded + c.overwritten
        assert got.dropped.get(cpu, 0) + sink.unmarked[cpu] == c.discarded + c.overwritten
    assert sum(got.dropped.values()) > lost // 2


@pytest.mark.slow
@needs_tc
@pytest.mark.parametrize("tracer", ["function", "function_graph"])
def test_function_tracers_round_trip(tmp_path: Path, arch: Arch, tracer: str) -> None:
    """The graph on one CPU: trace-cmd's plugin takes a leaf's return from the next
    record of any CPU (tracecmd_peek_next_data), the kernel's trace file, as kisim's
    text, from the same CPU's; on one CPU the two draw the same graph."""
    b = build(arch.name)
    guest = Guest(b, cpus=1 if tracer == "function_graph" else 2, workload="kmalloc", size=30)
    ft = FunctionTracer(guest, load_tables(b.elf, b.spec), tracer=tracer)
    session = TraceSession(guest, TraceOptions(ft.event_names))
    info = TraceInfo(arch.endian, uuid.UUID(int=37), arch.name)
    sink = open_sink("trace-cmd", tmp_path, SinkContext(info, session.classes, tracer,
                                                        ft.symbols, guest.image))
    events = EventList(forward=sink)
    ft.start()
    result = session.run(events)
    path = sink.close()[0]
    assert result.checksum_ok and len(events.events) > 100
    _compare(path, events.events, ft.symbols)
    if tracer == "function_graph":       # trace-cmd's plugin draws kisim's graph
        plugin = tracecmd.report(path)
        rows = [m.groups() for m in (re.match(r"^\s*\d+\)(.*?)\|(.*)$", line) for line in
                                     render("graph", events.events, ft.symbols)) if m]
        assert [r.info.split("|", 1)[1].strip() for r in plugin.lines] == \
            [func.strip() for _, func in rows], _unread(plugin)
        assert [r.info.split("|")[0].strip() for r in plugin.lines] == \
            [duration.strip() for duration, _ in rows]


@pytest.mark.slow
@needs_tc
def test_kallsyms_name_module_functions(tmp_path: Path, arch: Arch) -> None:
    """A module's functions are in the file's kallsyms with ``[MODULE]``, and
    trace-cmd names the module's traced calls with them."""
    (tmp_path / "tdat.c").write_text(
        "#include <linux/module.h>\n"
        "static noinline unsigned long tdat_step(unsigned long n) { return n * 7 + 1; }\n"
        "unsigned long tdat_main(unsigned long n)\n"
        "{\n\tunsigned long s = 0, i;\n\tfor (i = 0; i < n; i++)\n"
        "\t\ts ^= tdat_step(i + s);\n\treturn s;\n}\n")
    b = build(arch.name, modules=[tmp_path / "tdat.c"])
    guest = Guest(b, cpus=1, workload="tdat:tdat_main", size=5)
    ft = FunctionTracer(guest, load_tables(b.elf, b.spec))
    session = TraceSession(guest, TraceOptions(ft.event_names))
    info = TraceInfo(arch.endian, uuid.UUID(int=37), arch.name)
    sink = open_sink("trace-cmd", tmp_path / "t", SinkContext(info, session.classes, "function",
                                                              ft.symbols, guest.image))
    ft.start()
    session.run(sink)
    path = sink.close()[0]
    step = guest.image.symbols["tdat:tdat_step"]
    functions = tracecmd.run("report", "-f", path).stdout
    assert f"{step:016x} tdat_step [tdat]" in functions
    report = tracecmd.report(path, "-N")
    calls = [r.info for r in report.lines]
    assert calls.count("tdat_step <-- tdat_main") == 5, _unread(report)


@pytest.mark.slow
@needs_tc
def test_trace_and_ftrace_commands_write_trace_dat(tmp_path: Path, capsys) -> None:
    """``--format trace-cmd`` on both commands: DIR/trace.dat, all events in it."""
    from kisim.cli import main
    assert main(["trace", "--arch", "ppc32", "--cpus", "2", "--workload", "kmalloc", "--size",
                 "20", "--probes", "kmem", "--format", "trace-cmd", "--out",
                 str(tmp_path / "t"), "--kprobe-event", "r:myret kmalloc ptr=$retval",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["files"] == [str(tmp_path / "t" / "trace.dat")]
    lines = tracecmd.report(tmp_path / "t" / "trace.dat").lines
    assert len(lines) == data["total"]["recorded"]
    assert sum(r.name == "myret" for r in lines) == data["kprobe_event_counts"][0]["hits"] > 0
    assert main(["ftrace", "--arch", "arm", "--workload", "kmalloc", "--size", "5",
                 "--tracer", "function_graph", "--format", "trace-cmd", "--out",
                 str(tmp_path / "f"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(tracecmd.report(tmp_path / "f" / "trace.dat", "-N").lines) == data["events"]


# -- kprobe events --------------------------------------------------------------

#: Definitions on kmalloc per arch: its size and flags by register (v5.10's
#: regs_query_register_offset names), a string ($comm, a __data_loc field),
#: an array (two stack words), and a kretprobe's $retval.
KPROBE_DEFS = {
    "x86_64": ("%di", "%si"), "arm": ("%r0", "%r1"), "ppc32": ("%gpr3", "%gpr4")}


def _kprobe_lines(arch: str) -> tuple[str, ...]:
    size, flags = KPROBE_DEFS[arch]
    return (f"p:myprobe kmalloc size={size} gfp={flags}:x32 comm=$comm st=+0($stack):x32[2]",
            "r:mygroup/myret kmalloc ptr=$retval")


@pytest.mark.parametrize("bits", [32, 64])
def test_kprobe_event_format_is_its_tracefs_format(bits: int) -> None:
    """trace.dat's format text of a kprobe event is the event's own tracefs
    ``format`` (kprobe_event_define_fields, __set_print_fmt), arrays included."""
    from types import SimpleNamespace
    from probes.kprobe_events import ProbeTarget, parse_kprobe_event
    from tracing.tracedat import probe_format
    regs = ("di", "si", "sp") if bits == 64 else ("r0", "r1", "sp")
    target = ProbeTarget(bits, regs, regs[:2], 8192, lambda name: 0x1000,
                         lambda addr: ("kmalloc", addr - 0x1000))
    for line, system in ((f"p:myprobe kmalloc size=%{regs[0]} s=+0(%{regs[1]}):string "
                          f"a=+0(%sp):x16[3]", "kprobes"),
                         ("r:grp/myret kmalloc ptr=$retval:s32", "grp")):
        ev = parse_kprobe_event(line, target)
        fmt = probe_format(SimpleNamespace(id=70, cls=None, event=ev))
        assert fmt.system == system and fmt.text(False) == ev.format(70)
        assert ("field:unsigned long __probe_ip;\toffset:8;" in fmt.text(False)) \
            != ev.is_return
    assert "\tfield:u16 a[3];\toffset:" in probe_format(SimpleNamespace(
        id=70, cls=None, event=parse_kprobe_event("p kmalloc a=+0(%sp):x16[3]", target))
    ).text(False)


def _kprobe_expected(e: Event, events) -> tuple:
    """kisim's text line of a kprobe event as trace-cmd report -N prints it: the
    arguments as they are; the probe, which kisim's text prints as %pS (as the
    kernel's trace file does), is the print fmt's ``(%lx)`` /``(%lx <- %lx)``."""
    line = re.match(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d{6}): (\S+): \([^)]*\)(.*)$",
                    kernel_line(e))
    assert line is not None
    comm, tid, cpu, time, name, args = line.groups()
    tk = next(t for t in events.events.values() if t.cls is e.cls)
    head = (f"({e.values[0]:x} <- {e.values[1]:x})" if tk.event.is_return
            else f"({e.values[0]:x})")
    return comm, int(tid), int(cpu), time, name, head + args


@pytest.mark.slow
@needs_tc
def test_kprobe_events_round_trip(tmp_path: Path, arch: Arch) -> None:
    """``--format trace-cmd`` with kprobe events (the sink registry's path):
    trace-cmd report prints each kprobe and kretprobe hit as kisim's text does,
    same task, CPU and microsecond, in the event's own group."""
    from kisim.commands.common import kprobe_session
    guest = Guest(build(arch.name), cpus=2, workload="kmalloc", size=30)
    session, events = kprobe_session(guest, TraceOptions(
        parse_probes("kmem_kmalloc"), kprobe_events=_kprobe_lines(arch.name)))
    info = TraceInfo(arch.endian, uuid.UUID(int=37), arch.name)
    sink = open_sink("trace-cmd", tmp_path, SinkContext(info, session.classes,
                                                        image=guest.image, dynamic=events))
    got = EventList(forward=sink)
    assert session.run(got).checksum_ok
    sink.close()
    hits = [e for e in got.events if e.name in ("myprobe", "myret")]
    calls = sum(e.name == "kmem_kmalloc" for e in got.events)
    assert calls and Counter(e.name for e in hits) == {"myprobe": calls, "myret": calls}
    report = tracecmd.report(sink.path, "-N")
    seen = [(r.comm, r.pid, r.cpu, r.time, r.name, r.info) for r in report.lines
            if r.name != "kmalloc"]
    order = sorted(hits, key=lambda e: (e.timestamp, e.cpu))
    assert seen == [_kprobe_expected(e, events) for e in order]
    assert {r.cpu for r in report.lines} == {0, 1}
    kmalloc = guest.image.symbols["kmalloc"]
    assert seen[0][5].startswith(f"({kmalloc:x}) size=0x")
    assert "comm=\"kmalloc" in seen[0][5]
    fmts = tracecmd.run("report", "--events", sink.path).stdout
    assert "system: kprobes\nname: myprobe\n" in fmts and "system: mygroup\nname: myret\n" in fmts


# -- markers ------------------------------------------------------------------

def test_marker_event_format_and_selection(arch: Arch) -> None:
    """The marker event is ``markers:marker`` (``-e markers``, ``--probes
    markers``): a 32-byte name, the argument count, the argument words."""
    cls = event_classes(arch)["marker"]
    assert parse_probes("markers") == ("marker",)
    assert select_events("markers", [cls]) == ["marker"] == select_events("markers:marker", [cls])
    word = arch.bits // 8
    text = event_format(cls, 40, arch.bits).text(char_signed=False)
    assert text.startswith("name: marker\nID: 40\n")
    assert "\tfield:char name[32];\toffset:8;\tsize:32;\tsigned:0;\n" in text
    assert f"\tfield:unsigned long nargs;\toffset:40;\tsize:{word};\tsigned:0;\n" in text
    assert f"\tfield:unsigned long arg7;\toffset:{40 + 8 * word};\tsize:{word};" in text
    assert text.endswith(", REC->arg7\n") and '"name=%s nargs=%' in text
    assert marker_spec("markers:kmalloc") == "kmalloc" and marker_spec("markers:k*") == "k*"
    assert {marker_spec(s) for s in ("markers", "markers:marker", "markers:*", "kmem:kmalloc",
                                     "all")} == {None}


@pytest.mark.slow
@needs_tc
def test_markers_round_trip(tmp_path: Path, arch: Arch) -> None:
    """``--probes markers``: the guest's marker_probe_ring records every marker
    hit; trace-cmd reports each as kisim's text line, with the site's
    arguments as its format declares them (kmalloc: type_id, call_site, ptr,
    bytes_req, bytes_alloc, gfp_flags, node)."""
    result, events, sink = _trace(arch, tmp_path, "markers", size=20)
    assert result.checksum_ok and result.total.discarded == 0
    assert result.total.recorded == len(events) > 0
    _compare(sink.path, events)
    names = Counter(e.values[0] for e in events)
    assert names["kmalloc"] == names["kfree"] > 0 and names["sched_switch"] > 0
    kmalloc = next(e for e in events if e.values[0] == "kmalloc")
    _, nargs, _type_id, _site, ptr, req, alloc, _gfp, node, unused = kmalloc.values
    assert nargs == 7 and ptr != 0 and 0 < req <= alloc and unused == 0
    assert node == (1 << arch.bits) - 1          # NUMA_NO_NODE (-1), sign-extended


@pytest.mark.slow
@needs_tc
def test_record_named_markers(tmp_path: Path, capsys) -> None:
    """``kisim record -e markers:NAME``: only those markers' hits, each in
    trace-cmd report; an unknown name is a one-line error, exit 2."""
    from kisim.cli import main
    out = tmp_path / "trace.dat"
    assert main(["record", "--arch", "arm", "-e", "markers:kmalloc", "-e", "markers:kfree",
                 "-o", str(out), "--size", "10", "--json", "kmalloc"]) == 0
    data = json.loads(capsys.readouterr().out)
    lines = tracecmd.report(out).lines
    assert len(lines) == data["total"]["recorded"] > 0 and data["markers"] == ["kmalloc", "kfree"]
    assert Counter(r.info.split()[0] for r in lines).keys() == {"name=kmalloc", "name=kfree"}
    assert main(["record", "--arch", "arm", "-e", "markers:nosuch", "-o", str(out),
                 "kmalloc"]) == 2
    assert "no marker named 'nosuch'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(babeltrace.available() is None, reason="babeltrace2 is not installed")
def test_markers_in_ctf_read_by_babeltrace2(tmp_path: Path, arch: Arch) -> None:
    """The CTF sink: babeltrace2 reads every marker event with kisim's time,
    CPU, task and fields (the name a string, the arguments integers)."""
    guest = Guest(build(arch.name), cpus=2, workload="kmalloc", size=20)
    session = TraceSession(guest, TraceOptions(("marker",)))
    info = TraceInfo(arch.endian, uuid.UUID(int=37), arch.name)
    sink = open_sink("ctf", tmp_path / "t", SinkContext(info, session.classes))
    events = EventList(forward=sink)
    session.run(events)
    sink.close()
    out = babeltrace.read(tmp_path / "t")
    assert len(out.events) == len(events.events) > 0 and not out.discarded_events
    assert [(e.timestamp, e.name, e.cpu, e.tid, e.fields) for e in out.events] == [
        (e.timestamp, "marker", e.cpu, e.tid, e.fields)
        for e in sorted(events.events, key=lambda e: (e.timestamp, e.cpu))]


@pytest.mark.slow
def test_marker_losses_are_counted(arch: Arch) -> None:
    """Markers into small discard-mode buffers: each marker hit (counted by a
    host probe connected beside marker_probe_ring) is produced once, and is
    either recorded and drained or counted discarded."""
    guest = Guest(build(arch.name), cpus=2, workload="kmalloc", size=60)
    session = TraceSession(guest, TraceOptions(("marker",), subbuf_size=512, subbufs=2,
                                               drain_every=5))
    hits = Counter()
    for name, sites in session.inst.markers.sites.items():
        session.inst.markers.marker_probe_register(
            name, sites[0].format, lambda e, _: hits.update([e.cpu]))
    events = EventList()
    result = session.run(events)
    assert result.checksum_ok and result.total.discarded > 0
    for cpu, c in enumerate(result.per_cpu):
        assert c.produced == hits[cpu] == c.recorded + c.discarded
    assert result.total.recorded == len(events.events)


# -- the trace-cmd runner itself, on a stand-in executable -----------------------------

LINE = "          <idle>-0     [000]     0.000001: kmalloc:              bytes_req=8"


def test_an_interrupted_report_is_an_error(tmp_path: Path, monkeypatch) -> None:
    """trace-cmd's SIGINT handler (tracecmd/trace-read.c ``sig_end()``) prints what it
    had and exits 0: tracing.tracecmd.run() takes that for the error it is."""
    exe = tmp_path / "bin" / "trace-cmd"
    exe.parent.mkdir()
    exe.write_text(f"#!/bin/sh\necho '{LINE}'\necho 'trace-cmd: Received SIGINT' >&2\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    with pytest.raises(subprocess.CalledProcessError):
        tracecmd.report(tmp_path / "trace.dat")
    exe.write_text(f"#!/bin/sh\necho '{LINE}'\n")
    assert [r.info for r in tracecmd.report(tmp_path / "trace.dat").lines] == ["bytes_req=8"]


def _options(data: bytes, endian: str) -> dict[int, bytes]:
    """The options section of a v6 trace.dat: id -> payload (the last of an id)."""
    order = "<" if endian == "little" else ">"
    at = data.index(b"options  \0") + len(b"options  \0")
    found = {}
    while (option := struct.unpack_from(order + "H", data, at)[0]) != OPTION_DONE:
        size = struct.unpack_from(order + "I", data, at + 2)[0]
        found[option] = data[at + 6:at + 6 + size]
        at += 6 + size
    return found


def test_the_traceclock_option_holds_the_clock_as_a_string(tmp_path: Path, arch: Arch) -> None:
    """trace-cmd 3.1 parses the TRACECLOCK option's payload with strtok_r()
    (lib/trace-cmd/trace-input.c handle_options()): an empty one is an unterminated
    heap copy, whose garbage about one report in 200 took for a clock that is not
    shown in microseconds, printing raw nanoseconds (CI failed on it at stop 42). The
    payload is the clock after the CPU data, NUL-terminated."""
    path = _write(tmp_path, arch, [(PacketInfo(0, 0, 0, 10, 0), [_ev(SMALL, 0, 5, (1, 2, 3))])])
    options = _options(path.read_bytes(), arch.endian)
    assert options[OPTION_TRACECLOCK] == TRACE_CLOCK.encode() + b"\0"
    assert options[OPTION_CPUSTAT].startswith(b"CPU: ")
