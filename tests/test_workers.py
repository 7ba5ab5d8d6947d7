"""workers: a sweep closed early stops its workers without a word on stderr.

The patch checker's ``--ablate`` stops reading a sweep at the first seed that
catches a variant: ordered_map() is closed with tasks in flight, and its
workers are killed. Run in a real process, since the pool's own thread
prints what it raises (threading.excepthook) after the call has returned.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow                        # a second of real processes

#: Sweeps closed after two results; each one had about a 1 in 10 chance of the
#: traceback when ordered_map() cancelled its futures itself (0 of 200 since).
CLOSED_EARLY = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from workers import ordered_map

    def task(i):
        time.sleep(0.01 * (i % 3))
        return i

    for _ in range(60):
        sweep = ordered_map(task, range(40), jobs=2)
        assert [next(sweep), next(sweep)] == [0, 1]
        sweep.close()
    def live_child(pid):
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            return False
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
        return int(ppid) == os.getpid() and state != "Z"

    time.sleep(0.2)
    print(sum(live_child(p) for p in os.listdir("/proc") if p.isdigit()))
""")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_sweep_closed_early_prints_nothing_and_leaves_no_worker() -> None:
    proc = subprocess.run([sys.executable, "-c", CLOSED_EARLY, str(REPO)], text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.strip() == "0"               # no worker outlived its sweep
