"""``kisim record``: trace-cmd record's flags, its refusals, and the trace.dat it writes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kisim.cli import main
from kisim.commands.record import UNSUPPORTED
from tracing import tracecmd

needs_tc = pytest.mark.skipif(tracecmd.available() is None,
                              reason="trace-cmd is not installed and apt is not available "
                                     "to install it (make test does)")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)            # -o defaults to ./trace.dat


def _refused(capsys, tmp_path: Path, *args: str) -> str:
    """``kisim record ARGS`` exits 2 with one line on stderr, writing nothing."""
    (tmp_path / "pyproject.toml").write_text("")        # a file where a directory is named
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["record", "--arch", "x86_64", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    return err


@pytest.mark.parametrize("flag", ["-T", "-M", "-F", "--profile", "--max-graph-depth",
                                  "--file-version", "-B"])
def test_trace_cmd_flags_kisim_lacks_are_refused_by_name(capsys, tmp_path, flag) -> None:
    err = _refused(capsys, tmp_path, "-e", "kmem", flag, *(["1"] if flag[1] == "-" else []))
    assert f"{flag} ({UNSUPPORTED[flag]}) is a trace-cmd record option" in err


@pytest.mark.parametrize("args, says", [
    (("-e", "kmem", "-C", "local"), "-C local: kisim records with one clock"),
    (("-e", "nosuch"), "-e nosuch: no such event (events: kmem:kmalloc"),
    (("-e", "kmem:nosuch*"), "-e kmem:nosuch*: no such event"),
    (("-f", "bytes_req > 64", "-e", "kmem"), "-f FILTER filters the -e EVENT before it"),
    (("-e", "kmem", "-f", "a", "-f", "b"), "-e kmem has a filter already"),
    (("-e", "kmem", "-b", "8", "--subbufs", "4"), "-b KB and --subbufs both size"),
    (("-p", "nop", "-l", "kmalloc"), "-l/-n filter the function tracers"),
    ((), "no event or tracer to record"),
    (("-e", "kmem", "-b", "0"), "-b"),
    (("-e", "kmem", "-o", "nodir/x.dat"), "nodir does not exist"),
    (("-e", "kmem", "-o", "pyproject.toml/y.dat"), "pyproject.toml is not a directory"),
    (("-e", "kmem", "-b", "65536"), "-b 65536: 16384 sub-buffers of 4096 bytes, over the 1024"),
    (("-e", "kmem", "-o", "."), "a directory; kisim writes outputs only to regular files"),
    (("-e", "kmem", "nosuch_workload"), "nosuch_workload"),
])
def test_bad_input_is_one_line(capsys, tmp_path, args, says) -> None:
    assert says in _refused(capsys, tmp_path, *args)


def test_a_link_at_the_output_is_refused(capsys, tmp_path) -> None:
    (tmp_path / "victim").write_text("keep")
    (tmp_path / "trace.dat").symlink_to(tmp_path / "victim")
    assert "never follows a link" in _refused(capsys, tmp_path, "-e", "kmem")
    assert (tmp_path / "victim").read_text() == "keep"


def test_event_specs_select_as_set_event_does() -> None:
    from arches import get_arch
    from tracing.events import event_classes
    from tracing.tracedat import select_events
    classes = event_classes(get_arch("x86_64")).values()
    assert select_events("kmem", classes) == ["kmem_kmalloc", "kmem_cache_alloc", "kmem_kfree",
                                              "kmem_cache_free"]
    assert select_events("kmem:kmalloc", classes) == ["kmem_kmalloc"]
    assert select_events("sched_switch", classes) == ["sched_switch"]
    assert select_events("sched:*wake*", classes) == ["sched_wakeup"]
    assert len(select_events("all", classes)) == 7          # never the ftrace system's
    assert select_events("ftrace:function", classes) == []


@pytest.mark.slow
@needs_tc
def test_record_events_and_tracer_into_trace_dat(capsys, tmp_path) -> None:
    """-e and -p together, -l filtering, -b sizing, -o; the same run gives the same bytes."""
    args = ["record", "--arch", "x86_64", "--cpus", "2", "--size", "40", "-e", "kmem:kmalloc",
            "-e", "sched_switch", "-p", "function", "-l", "kfree", "-b", "8", "--json"]
    assert main([*args, "-o", "a.dat", "kmalloc"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["subbufs"] == 2 and data["subbuf_size"] == 4096      # 8 KiB per CPU
    assert data["probes"] == ["kmem_kmalloc", "sched_switch", "function"]
    got = tracecmd.report(tmp_path / "a.dat", "-N")
    names = {r.name for r in got.lines}
    assert names == {"kmalloc", "sched_switch", "function"}
    assert {r.info.split(" <--")[0] for r in got.lines if r.name == "function"} == {"kfree"}
    assert len(got.lines) == data["total"]["recorded"]
    assert main([*args, "-o", "b.dat", "kmalloc"]) == 0
    assert (tmp_path / "a.dat").read_bytes() == (tmp_path / "b.dat").read_bytes()


@pytest.mark.slow
@needs_tc
def test_graph_function_limits_function_graph_to_its_calls(capsys, tmp_path) -> None:
    """-g kmalloc: every outermost call is kmalloc, with what it calls under it;
    without -g other functions are outermost too (the negative control)."""
    def outermost(*flags: str) -> tuple[set[str], set[str]]:
        out = f"{len(flags)}.dat"
        assert main(["record", "--arch", "arm", "--size", "10", "-p", "function_graph",
                     *flags, "-o", out, "kmalloc"]) == 0
        lines = [r.info for r in tracecmd.report(tmp_path / out, "-N").lines
                 if r.name == "funcgraph_entry"]
        return ({i.split()[1] for i in lines if i.endswith(" (1)")},
                {i.split()[1] for i in lines if not i.endswith(" (1)")})
    top, inner = outermost("-g", "kmalloc")
    assert top == {"kmalloc"} and inner          # kmalloc's callees (__cache_alloc)
    assert len(outermost()[0]) > 3
    capsys.readouterr()
    err = _refused(capsys, tmp_path, "-g", "no_such_function*")
    assert "'no_such_function*' matches no traceable function" in err
    assert "-g sets the function_graph tracer's functions; not for -p function" in \
        _refused(capsys, tmp_path, "-p", "function", "-g", "kmalloc")


@pytest.mark.slow
@needs_tc
def test_kprobe_events_and_their_filter_into_trace_dat(capsys, tmp_path) -> None:
    """--kprobe-event defines and records kprobe events; ``-e kprobes:big -f``
    filters one of them in the guest: trace.dat holds its accepted hits only,
    while an unfiltered twin on the same function holds them all."""
    assert main(["record", "--arch", "arm", "--cpus", "2", "--size", "30",
                 "--kprobe-event", "p:big kmalloc size=%r0", "--kprobe-event",
                 "p:every kmalloc size=%r0", "--kprobe-event", "r:myret kmalloc ptr=$retval",
                 "-e", "kprobes:big", "-f", "size > 64", "--json", "kmalloc"]) == 0
    data = json.loads(capsys.readouterr().out)
    counts = {c["event"]: c for c in data["kprobe_event_counts"]}
    got = tracecmd.report(tmp_path / "trace.dat", "-N")
    sizes = {name: [int(r.info.rsplit("size=", 1)[1], 16) for r in got.lines if r.name == name]
             for name in ("big", "every")}
    assert counts["kprobes/every"]["filtered"] == 0 and sizes["every"]
    assert min(sizes["every"]) <= 64 < max(sizes["every"])       # the filter has work to do
    assert sizes["big"] == [n for n in sizes["every"] if n > 64]
    assert counts["kprobes/big"]["filtered"] == sum(n <= 64 for n in sizes["every"])
    assert sum(r.name == "myret" for r in got.lines) == counts["kprobes/myret"]["hits"]
    assert len(got.lines) == data["total"]["recorded"]


@pytest.mark.slow
def test_an_event_no_kprobe_event_matches_is_refused(capsys, tmp_path) -> None:
    """-e naming neither a kisim event nor a defined kprobe event: one line, exit 2
    (checked once the definitions are parsed, before the run writes anything)."""
    err = _refused(capsys, tmp_path, "--kprobe-event", "p:mine kmalloc", "-e",
                   "kprobes:other", "-f", "size > 1", "--size", "1", "kmalloc")
    assert "-e kprobes:other: no such event (kprobe events: kprobes:mine)" in err
