"""Nothing a user owns is damaged by an output: links, FIFOs and unrelated files.

At every output path of ``trace`` (each format), ``ftrace`` (each file
format) and ``compare`` (the JSON and the plots) a planted symbolic link
or FIFO is refused in one line with exit 2, and the link's target keeps
its bytes; a user's unrelated file in ``--out`` survives. Negative
controls: the same commands write their outputs when nothing is planted.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kisim.cli import main
from tracing.outdir import STAMP

ARCH = "arm"
PRECIOUS = b"the user's own bytes\n"

#: Each trace output: (command line before --out, the files the format writes).
TRACE = {
    "ctf": (["trace", "--format", "ctf", "--workload", "kmalloc", "--size", "5",
             "--probes", "kmem_kmalloc", "--cpus", "2"], ["metadata", "channel0_0",
                                                           "channel0_1"]),
    "chrome": (["trace", "--format", "chrome", "--workload", "kmalloc", "--size", "5",
                "--probes", "kmem_kmalloc"], ["trace.json"]),
    "text": (["trace", "--format", "text", "--workload", "kmalloc", "--size", "5",
              "--probes", "kmem_kmalloc"], ["trace.txt"]),
    "ftrace-ctf": (["ftrace", "--format", "ctf", "--workload", "kmalloc", "--size", "3",
                    "--filter", "kmalloc"], ["metadata", "channel0_0"]),
    "ftrace-chrome": (["ftrace", "--format", "chrome", "--workload", "kmalloc", "--size",
                       "3", "--filter", "kmalloc"], ["trace.json"]),
}
CASES = [(fmt, name) for fmt, (_, names) in TRACE.items() for name in names]


def _run(argv: list[str], capsys) -> tuple[int, str]:
    code = main([argv[0], "--arch", ARCH, *argv[1:]])
    return code, capsys.readouterr().err


def _refused(code: int, err: str) -> None:
    assert code == 2, err
    assert err.startswith("kisim: error:") and err.count("\n") == 1, err


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "victim"
    target.write_bytes(PRECIOUS)
    return target


@pytest.mark.parametrize("fmt,name", CASES)
def test_link_in_a_fresh_out_dir_is_refused(tmp_path, capsys, victim, fmt, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    argv, _ = TRACE[fmt]
    _refused(*_run([*argv, "--out", str(out)], capsys))
    assert victim.read_bytes() == PRECIOUS
    assert sorted(p.name for p in out.iterdir()) == [name]      # nothing written beside it


@pytest.mark.slow
@pytest.mark.parametrize("fmt,name", CASES)
def test_link_swapped_into_a_kisim_trace_is_refused(tmp_path, capsys, victim, fmt, name):
    """A directory kisim traced into before, one of its files replaced by a link."""
    out = tmp_path / "out"
    argv, names = TRACE[fmt]
    code, err = _run([*argv, "--out", str(out)], capsys)
    assert code == 0, err                                        # negative control
    assert set(names) <= {p.name for p in out.iterdir()}
    (out / name).unlink()
    (out / name).symlink_to(victim)
    _refused(*_run([*argv, "--out", str(out)], capsys))
    assert victim.read_bytes() == PRECIOUS and (out / name).is_symlink()


@pytest.mark.parametrize("fmt", ["ctf", "chrome", "text"])
def test_fifo_at_an_output_is_refused(tmp_path, capsys, fmt):
    out = tmp_path / "out"
    out.mkdir()
    argv, names = TRACE[fmt]
    os.mkfifo(out / names[0])
    _refused(*_run([*argv, "--out", str(out)], capsys))
    assert (out / names[0]).is_fifo()


def test_stamp_link_is_refused(tmp_path, capsys, victim):
    out = tmp_path / "out"
    out.mkdir()
    (out / STAMP).symlink_to(victim)
    _refused(*_run([*TRACE["text"][0], "--out", str(out)], capsys))
    assert victim.read_bytes() == PRECIOUS


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["ctf", "text"])
def test_unrelated_user_files_survive(tmp_path, capsys, fmt):
    """A user's file in --out: a non-empty directory that is not a kisim trace is refused
    (channel0_5 is the name the old writer deleted); a hidden file in a kisim trace stays."""
    out = tmp_path / "out"
    out.mkdir()
    mine = out / "channel0_5"
    mine.write_bytes(PRECIOUS)
    argv, _ = TRACE[fmt]
    _refused(*_run([*argv, "--out", str(out)], capsys))
    assert mine.read_bytes() == PRECIOUS
    clean = tmp_path / "clean"
    assert _run([*argv, "--out", str(clean)], capsys)[0] == 0
    hidden = clean / ".notes"
    hidden.write_bytes(PRECIOUS)
    assert _run([*argv, "--out", str(clean)], capsys)[0] == 0   # a rewrite of kisim's trace
    assert hidden.read_bytes() == PRECIOUS


def test_a_rewrite_drops_only_the_previous_trace_files(tmp_path, capsys):
    """Two CPUs, then one: the second trace removes the stream kisim wrote for CPU 1."""
    out = tmp_path / "out"
    argv = TRACE["ctf"][0]
    assert _run([*argv, "--out", str(out)], capsys)[0] == 0
    assert (out / "channel0_1").exists()
    one = [a if a != "2" else "1" for a in argv]
    assert _run([*one, "--out", str(out)], capsys)[0] == 0
    assert not (out / "channel0_1").exists()
    assert json.loads((out / STAMP).read_text())["files"] == ["channel0_0", "metadata"]


@pytest.mark.parametrize("name", ["compare.json", "compare.png", "compare.svg"])
@pytest.mark.parametrize("plant", ["link", "fifo"])
def test_compare_outputs_refuse_links_and_fifos(tmp_path, capsys, victim, name, plant):
    out = tmp_path / "out"
    out.mkdir()
    if plant == "link":
        (out / name).symlink_to(victim)
    else:
        os.mkfifo(out / name)
    _refused(*_run(["compare", "--mechanism", "kprobe", "--out", str(out)], capsys))
    assert victim.read_bytes() == PRECIOUS
    assert sorted(p.name for p in out.iterdir()) == [name]


@pytest.mark.parametrize("name", ["notes.txt", "compare.json"])
def test_compare_refuses_a_directory_holding_a_users_file(tmp_path, capsys, name):
    """As trace's --out (issue 26): a user's file there is refused, not overwritten."""
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_bytes(PRECIOUS)
    _refused(*_run(["compare", "--mechanism", "kprobe", "--out", str(out)], capsys))
    assert (out / name).read_bytes() == PRECIOUS
    assert sorted(p.name for p in out.iterdir()) == [name]
