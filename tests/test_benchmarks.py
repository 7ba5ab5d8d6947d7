"""Every script in benchmarks/ runs end to end at its smallest size (``--smallest``).

The figures such a run prints mean nothing; what is checked is that each
script still runs against the code it measures (bench_ftrace.py had crashed
on a table the patcher no longer took) and prints its report.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((REPO / "benchmarks").glob("bench_*.py"))
#: What a script needs beside ``--smallest``: bench_untraced compares with a revision.
EXTRA = {"bench_untraced.py": ["--base", "HEAD"]}


def bench(script: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``script`` run with ``args`` from the repository, ``env`` added to the environment."""
    return subprocess.run([sys.executable, str(script), *args], cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO), **env),
                          capture_output=True, text=True, timeout=600)


def test_every_benchmark_takes_smallest_and_runs_through_benchlib() -> None:
    """Each script parses its options through benchlib.parse_args (so takes --smallest)
    and runs its main through benchlib.run_main (so bad input is one line)."""
    assert len(SCRIPTS) >= 10
    missing = [s.name for s in SCRIPTS if "parse_args(p" not in s.read_text()]
    assert not missing, f"not through benchlib.parse_args: {missing}"
    missing = [s.name for s in SCRIPTS if "\n    run_main(main)\n" not in s.read_text()
               or "def run_main" in s.read_text()]     # nor a name of its own that hides it
    assert not missing, f"not through benchlib.run_main: {missing}"


def test_a_benchmark_reports_bad_input_in_one_line() -> None:
    """A CPU zig does not know, in KISIM_HOST_MARCH, stops the build of the timing
    model's library: one line naming it and exit 2, as kisim does, not a traceback."""
    proc = bench(REPO / "benchmarks" / "bench_timing.py", "--smallest",
                 KISIM_HOST_MARCH="no_such_cpu")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.startswith("bench_timing: error: KISIM_HOST_MARCH='no_such_cpu': zig "
                                  "knows no such CPU"), proc.stderr[-3000:]
    assert proc.stderr.count("\n") == 1 and not proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_benchmark_runs_at_its_smallest(script: Path) -> None:
    if script.name == "bench_untraced.py" and not (REPO / ".git").exists():
        pytest.skip("bench_untraced.py compares with a git revision: not a git checkout")
    proc = bench(script, "--smallest", *EXTRA.get(script.name, []))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip(), f"{script.name} printed no report"
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_the_counting_hook_runs_the_guest_the_count_only_run_does() -> None:
    """bench_timing's floor (--callgrind's "counting" mode: kisim_counting_hook in place
    of Unicorn's count) retires exactly the count-only run's instructions."""
    retired = {}
    for mode in ("count", "counting"):
        proc = bench(REPO / "benchmarks" / "bench_timing.py", "--child", "arm", "kmalloc",
                     mode, "0")
        assert proc.returncode == 0, proc.stderr[-3000:]
        retired[mode] = int(proc.stdout.split()[-1])
    assert retired["counting"] == retired["count"] > 1_000_000
