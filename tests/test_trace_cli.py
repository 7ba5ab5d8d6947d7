"""``kisim trace``: summary and JSON accounting, the three formats, bad input."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arches import Arch
from kisim.cli import main
from tracing import babeltrace
from tracing.ctfread import CtfTrace


def kisim(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kisim", *args], capture_output=True,
                          text=True, check=check)


def trace(arch: Arch, out: Path, *extra: str) -> dict:
    proc = kisim("trace", "--arch", arch.name, "--cpus", "2", "--workload", "hackbench",
                 "--size", "4", "--out", str(out), "--json", *extra)
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_ctf_summary_accounts_for_every_event(tmp_path: Path, arch: Arch) -> None:
    data = trace(arch, tmp_path / "t", "--subbuf-size", "512", "--subbufs", "2",
                 "--drain-every", "200")
    assert data["checksum_ok"]
    for c in data["per_cpu"] + [data["total"]]:
        assert c["produced"] == c["recorded"] + c["discarded"] + c["overwritten"]
    assert data["total"]["discarded"] > 0
    assert data["trace_bytes"] == sum(p.stat().st_size for p in (tmp_path / "t").iterdir()
                                      if not p.name.startswith("."))     # not the stamp
    ctf = CtfTrace(tmp_path / "t")
    assert len(list(ctf.events())) == data["total"]["recorded"]
    for key in ("produced", "recorded", "discarded", "overwritten"):
        assert int(ctf.meta.env[f"kisim_events_{key}"]) == data["total"][key]
    if babeltrace.available():
        out = babeltrace.read(tmp_path / "t")
        assert sum(out.discarded_events) == data["total"]["discarded"]


@pytest.mark.slow
def test_text_summary(tmp_path: Path, arch: Arch) -> None:
    proc = kisim("trace", "--arch", arch.name, "--workload", "kmalloc", "--size", "20",
                 "--probes", "kmem_kmalloc", "--out", str(tmp_path / "t"))
    assert "produced = recorded + discarded + overwritten" in proc.stdout
    assert "kmem_kmalloc" in proc.stdout and "bytes)" in proc.stdout


@pytest.mark.slow
def test_chrome_json_has_slices_instants_and_names(tmp_path: Path, arch: Arch) -> None:
    data = trace(arch, tmp_path / "t", "--format", "chrome")
    doc = json.loads((tmp_path / "t" / "trace.json").read_text())
    events = doc["traceEvents"]
    phases = {e["ph"] for e in events}
    assert {"M", "i", "X"} <= phases
    instants = [e for e in events if e["ph"] == "i"]
    assert len(instants) == data["total"]["recorded"]
    names = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert {"init", "swapper/0"} <= names
    slices = [e for e in events if e["ph"] == "X"]
    assert all(e["dur"] >= 0 for e in slices)
    by_tid: dict[int, list[tuple[float, float]]] = {}
    for e in slices:
        by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_tid.values():          # a task's slices never overlap
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


@pytest.mark.slow
def test_text_format_is_ftrace_like(tmp_path: Path, arch: Arch) -> None:
    data = trace(arch, tmp_path / "t", "--format", "text", "--probes", "sched")
    lines = (tmp_path / "t" / "trace.txt").read_text().splitlines()
    body = [line for line in lines if not line.startswith("#")]
    assert len(body) == data["total"]["recorded"]
    assert any("sched_switch: prev_comm=" in line for line in body)
    # kernel/trace/trace_output.c trace_print_context: "%16s-%-5d [%03d]  %5lu.%06lu: "
    context = re.compile(r"^ *\S+-\d+ +\[\d{3}\]  +\d+\.\d{6}: sched_\w+: ")
    assert all(context.match(line) for line in body), body[:2]
    assert lines[0] == "# tracer: nop"


@pytest.mark.slow
def test_same_seed_same_json(tmp_path: Path, arch: Arch) -> None:
    a = trace(arch, tmp_path / "a", "--seed", "5")
    b = trace(arch, tmp_path / "b", "--seed", "5")
    for key in ("per_cpu", "total", "instructions", "end_ns", "trace_uuid"):
        assert a[key] == b[key]


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--probes", "kmem,bogus"], ["--probes", ","],
                                   ["--subbuf-size", "100"], ["--subbufs", "1"],
                                   ["--drain-every", "0"], ["--workload", "nope"],
                                   ["--mode", "ring"]])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, extra: list[str]) -> None:
    proc = kisim("trace", "--arch", "arm", "--out", str(tmp_path / "t"), *extra, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]      # argparse prints its usage line first
    assert last.startswith("kisim") and "error:" in last


@pytest.mark.slow
def test_geometry_from_kconfig(tmp_path: Path, arch: Arch) -> None:
    data = trace(arch, tmp_path / "t", "--set", "RING_BUFFER_SUBBUF_SIZE=1024",
                 "--set", "RING_BUFFER_SUBBUFS=3")
    assert (data["subbuf_size"], data["subbufs"]) == (1024, 3)
    data = trace(arch, tmp_path / "u", "--set", "RING_BUFFER_SUBBUF_SIZE=1024",
                 "--subbuf-size", "2048")
    assert data["subbuf_size"] == 2048


@pytest.mark.slow
def test_kernel_without_tracepoints_is_one_line(tmp_path: Path) -> None:
    proc = kisim("trace", "--arch", "arm", "--set", "TRACEPOINTS=n", "--workload", "fib",
                 "--out", str(tmp_path / "t"), check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no tracepoint named" in proc.stderr


def test_probe_lists_and_groups() -> None:
    from tracing.events import EVENTS, ProbeListError, parse_probes
    assert parse_probes("all") == tuple(EVENTS)
    assert parse_probes("sched_wakeup, kmem") == ("kmem_kmalloc", "kmem_cache_alloc",
                                                  "kmem_kfree", "kmem_cache_free",
                                                  "sched_wakeup")
    with pytest.raises(ProbeListError):
        parse_probes("kmalloc")          # the tracepoint's name, not the event's


def test_a_run_says_which_files_of_the_earlier_output_it_removed(tmp_path: Path,
                                                                 capsys) -> None:
    """--out DIR replaces the earlier kisim output there (the policy --help states); the
    files it takes away without writing them again are named on stderr, and a run
    that writes the same files again says nothing."""
    out = tmp_path / "t"
    argv = ["trace", "--arch", "arm", "--size", "5", "--cycles", "count", "--out", str(out)]
    assert main([*argv, "--cpus", "2"]) == 0
    assert "removed" not in capsys.readouterr().err
    assert main([*argv, "--cpus", "2"]) == 0
    assert "removed" not in capsys.readouterr().err
    assert main(argv) == 0                            # one CPU: no channel0_1
    assert f"kisim: {out}: removed channel0_1 of the kisim output there before" in \
        capsys.readouterr().err
    assert main(["compare", "--arch", "arm", "--mechanism", "kprobe", "--cycles", "count",
                 "--size", "5", "--out", str(out)]) == 0
    assert f"kisim: {out}: removed channel0_0, metadata of the kisim output" in \
        capsys.readouterr().err
