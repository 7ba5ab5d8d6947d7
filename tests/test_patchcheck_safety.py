"""patchcheck as a careful Unix tool: users' protocols that misbehave, worker
processes that never outlive the command, --findings-out written only on
completion, --jobs capped, and sweeps that run exactly the seeds given.

The signal tests run ``kisim patchcheck --jobs 2`` as a real process, find
its workers by scanning /proc (no psutil), send SIGINT, SIGINT twice or
SIGTERM, and check the exit status, the time it took and that no worker
is left running.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kisim.cli import main
from patchcheck.guard import DEFAULT_PROTOCOL_TIMEOUT
from patchcheck.sites import CheckerError
from patchcheck.sweep import JOBS_PER_CPU, CheckSpec, max_jobs, sweep
from test_patchcheck import user_package

# Whole guest builds and boots, or real processes and signals: make test, not make check.
pytestmark = pytest.mark.slow

PROTOCOLS = '''
import sys


def raises(port, sites):
    raise ValueError("boom")


def one_argument(port):
    pass


def recurses(port, sites):
    return recurses(port, sites)


class Boom(BaseException):
    pass


def raises_base(port, sites):
    raise Boom("not an Exception")


def raises_interrupt(port, sites):
    raise KeyboardInterrupt          # the code's, not the user's Ctrl-C


def loops(port, sites):
    while True:
        try:
            pass
        except Exception:        # a timeout must not be swallowed here
            pass


def stores_sync(port, sites):
    for addr, insn in sites:
        port.write_text(addr, insn)
    port.sync_all()
'''

STOP_SECONDS = 3.0      # the issue asks for about 2 s; slack for a loaded 2-core host


@pytest.fixture
def protocols(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return user_package(tmp_path, monkeypatch, "userproto.p", PROTOCOLS)


def _one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("name, says", [
    ("raises", "raised ValueError: boom"),
    ("one_argument", "must take (port, sites); it takes (port)"),
    ("recurses", "recursed too deeply"),
    ("raises_base", "raised Boom: not an Exception"),
    ("raises_interrupt", "raised KeyboardInterrupt")])
def test_a_protocol_that_fails_is_one_line_naming_it(protocols, name, says, capsys) -> None:
    err = _one_line_exit_2(["patchcheck", "--arch", "arm", "--seeds", "3",
                            "--protocol", f"{protocols}:{name}"], capsys)
    assert f"--protocol {protocols}:{name}" in err and says in err


def test_a_protocol_that_never_returns_is_stopped(protocols, capsys) -> None:
    begin = time.monotonic()
    err = _one_line_exit_2(["patchcheck", "--arch", "arm", "--seeds", "3", "--protocol",
                            f"{protocols}:loops", "--protocol-timeout", "0.5"], capsys)
    assert "did not return within 0.5 s" in err and time.monotonic() - begin < 10


def test_protocol_timeout_default_is_stated() -> None:
    from kisim.cli import build_parser
    text = build_parser()._subparsers._group_actions[0].choices["patchcheck"].format_help()
    assert f"default {DEFAULT_PROTOCOL_TIMEOUT:g}" in " ".join(text.split())


def test_a_protocol_source_or_bytecode_that_is_a_fifo_is_not_read(tmp_path, monkeypatch,
                                                                   capsys) -> None:
    import importlib.util
    os.mkfifo(tmp_path / "fifoproto.py")
    (tmp_path / "cachedproto.py").write_text("def f(port, sites):\n    pass\n")
    cached = Path(importlib.util.cache_from_source(str(tmp_path / "cachedproto.py")))
    cached.parent.mkdir()
    os.mkfifo(cached)                      # import would block reading it
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    err = _one_line_exit_2(["patchcheck", "--arch", "arm", "--seeds", "3",
                            "--protocol", "fifoproto:f"], capsys)
    assert "cannot import fifoproto" in err
    err = _one_line_exit_2(["patchcheck", "--arch", "arm", "--seeds", "3",
                            "--protocol", "cachedproto:f"], capsys)
    assert "bytecode cache is a FIFO" in err


def test_findings_out_is_replaced_only_when_the_run_completes(protocols, tmp_path,
                                                              capsys) -> None:
    out = tmp_path / "findings.jsonl"
    out.write_bytes(b"the user's old findings\n")
    _one_line_exit_2(["patchcheck", "--arch", "arm", "--seeds", "3", "--protocol",
                      f"{protocols}:raises", "--findings-out", str(out)], capsys)
    assert out.read_bytes() == b"the user's old findings\n"          # not emptied
    assert main(["patchcheck", "--arch", "x86_64", "--naive", "--seeds", "20", "--json",
                 "--findings-out", str(out)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert len(out.read_text().splitlines()) == report["findings_total"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["findings.jsonl", "userproto"]


def test_findings_out_refuses_a_link_or_fifo_before_running(tmp_path, capsys) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "link").symlink_to(victim)
    os.mkfifo(tmp_path / "fifo")
    for target in ("link", "fifo"):
        err = _one_line_exit_2(["patchcheck", "--arch", "x86_64", "--naive", "--seeds", "5",
                                "--findings-out", str(tmp_path / target)], capsys)
        assert "never follows a link" in err
    assert victim.read_bytes() == b"precious" and (tmp_path / "fifo").is_fifo()


def test_jobs_are_capped_with_one_line(capsys) -> None:
    bound = max_jobs()
    assert main(["patchcheck", "--arch", "arm", "--seeds", "3", "--jobs", str(10 * bound)]) == 0
    err = capsys.readouterr().err
    assert err == f"kisim: --jobs {10 * bound} capped at {bound} ({JOBS_PER_CPU} per " \
                  "available CPU)\n"
    with pytest.raises(CheckerError, match="jobs"):
        sweep(CheckSpec("arm"), range(3), jobs=bound + 1)


def test_sweep_runs_exactly_the_seeds_of_a_stepped_range() -> None:
    spec = CheckSpec("x86_64", naive=True)
    stepped = sweep(spec, range(0, 10, 5))
    singles = [sweep(spec, range(s, s + 1)) for s in (0, 5)]
    assert stepped.interleavings == 2
    assert {f.seed for f in stepped.findings} <= {0, 5}
    assert stepped.total == sum(r.total for r in singles) > 0
    for bad in (range(5, 5), range(-1, 3), [0, 1]):
        with pytest.raises(CheckerError):
            sweep(spec, bad)                                   # type: ignore[arg-type]


# -- signals, with real processes ----------------------------------------------

def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()     # fields from 3 (state) on


def _children(pid: int) -> dict[int, str]:
    """Live children of ``pid``: pid -> start time (tells a reused pid apart)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields and int(fields[1]) == pid and fields[0] != "Z":
                found[int(entry)] = fields[19]
    return found


def _alive(pid: int, start: str) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z" and fields[19] == start


def _start(args: list[str], cwd: Path) -> tuple[subprocess.Popen, dict[int, str]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(cwd), *sys.path]))
    proc = subprocess.Popen([sys.executable, "-m", "kisim", "patchcheck", "--arch", "arm",
                             "--jobs", "2", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    workers: dict[int, str] = {}
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = _children(proc.pid)
    assert len(workers) >= 2, "the two workers never started"
    time.sleep(1.0)                                      # let them get going
    return proc, workers


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@needs_proc
@pytest.mark.parametrize("signals, status", [((signal.SIGINT,), 130),
                                             ((signal.SIGINT, signal.SIGINT), 130),
                                             ((signal.SIGTERM,), 143)],
                         ids=["SIGINT", "SIGINT twice", "SIGTERM"])
def test_signals_stop_every_worker(tmp_path, signals, status) -> None:
    proc, workers = _start(["--seeds", "1000000"], tmp_path)
    begin = time.monotonic()
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(0.05)
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - begin
    assert proc.returncode == status, err
    assert took < STOP_SECONDS, f"took {took:.1f} s to stop"
    assert "Traceback" not in err
    assert not [pid for pid, start in workers.items() if _alive(pid, start)]
    if status == 130:                                        # partial results printed
        assert "(interrupted)" in out and "interleavings" in out
    else:
        assert err.strip() == "kisim: terminated"


@needs_proc
def test_ctrl_c_stops_a_looping_protocol_with_two_jobs(tmp_path) -> None:
    (tmp_path / "spin.py").write_text(textwrap.dedent(PROTOCOLS))
    proc, workers = _start(["--seeds", "1000", "--protocol", "spin:loops"], tmp_path)
    begin = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and time.monotonic() - begin < STOP_SECONDS, err
    assert not [pid for pid, start in workers.items() if _alive(pid, start)]


@needs_proc
def test_workers_die_with_a_killed_parent(tmp_path) -> None:
    """SIGKILL cannot be caught: PR_SET_PDEATHSIG takes the workers down with it."""
    proc, workers = _start(["--seeds", "1000000"], tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + STOP_SECONDS
    while time.monotonic() < deadline and any(_alive(p, s) for p, s in workers.items()):
        time.sleep(0.1)
    assert not [pid for pid, start in workers.items() if _alive(pid, start)]


def test_a_protocol_that_leaves_a_thread_running_does_not_hold_the_exit(tmp_path) -> None:
    """The interpreter waits at exit for every non-daemon thread: one a --protocol
    started, and never ends, held kisim for ever after its error line."""
    (tmp_path / "threaded.py").write_text(
        "import threading, time\n\ndef spin():\n    while True:\n        time.sleep(0.1)\n\n"
        "def proto(port, sites):\n    threading.Thread(target=spin).start()\n"
        "    raise ValueError('after thread')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    begin = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "kisim", "patchcheck", "--arch", "arm",
                           "--seeds", "2", "--protocol", "threaded:proto"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and time.monotonic() - begin < 30
    assert "raised ValueError: after thread" in done.stderr
    assert "not waiting for 1 thread(s) still running" in done.stderr
