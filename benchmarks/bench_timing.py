"""The timing model's host cost: the same run with it and counting only.

For each arch and workload (kmalloc and hackbench, 2 CPUs), runs the guest
count-only, on the timing model (``Guest(timing=True)``), and on the model
fed by Unicorn's memory hooks instead of the arch's decoder (the way it
took its data accesses before; ``TimingModel(decoded_accesses=False)``).
Each round runs the three modes one after the other, so that they see the
same machine load, and takes each mode's ratio to that round's count-only
run; it prints the median over the rounds of each mode's CPU time
(``time.process_time``, the run only, not the build or the model's setup)
and of each ratio. All runs retire the same instructions; the first ratio
is what the model costs, and it is asked to cost at most 3x.

    .venv/bin/python benchmarks/bench_timing.py [--rounds R] [--size N | --scale K] [--json] [--smallest]
    .venv/bin/python benchmarks/bench_timing.py --callgrind [--size N | --scale K] [--json]

``--scale K`` runs each workload at K times its default size: the count-only
run's fixed costs (translating the guest's blocks) then weigh less, and the
ratio comes nearer the model's cost per instruction.

``--callgrind`` counts instead of timing: each run once under valgrind's
callgrind, the host instructions executed inside Unicorn's ``cpu_exec``
(the guest's code, the hooks and the model) per guest instruction,
count-only, counted by a hook that only counts (``kisim_counting_hook``,
in place of Unicorn's count, as the model's own hook counts: what a hook
on every instruction costs before the model does anything), and timing. Those counts do not move with the
machine's load, which moves a timed ratio by 15 % on a shared machine;
they are not cycles (the model's code retires more host instructions per
cycle than translated guest code).
It needs ``valgrind`` and ``callgrind_annotate`` on the PATH, and builds the
host library for ``x86_64_v3`` on an x86 host (``KISIM_HOST_MARCH``,
kbuild/host.py), whose instructions valgrind runs.

``benchmarks/bench_untraced.py --base REV`` compares the count-only machine
with an earlier revision.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import unicorn
from unicorn.unicorn_py3.unicorn import uclib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import parse_args, run_main       # noqa: E402
from kbuild import build                   # noqa: E402
from kbuild.host import MARCH_ENV          # noqa: E402
from sim import native                     # noqa: E402
from sim.guest import Guest                # noqa: E402
from sim.timing import TimingModel       # noqa: E402
from sim.uccount import Count              # noqa: E402
from sim.workloads import DEFAULT_SIZES    # noqa: E402

ARCHES = ("arm", "ppc32", "x86_64")
WORKLOADS = ("kmalloc", "hackbench")
CPUS = 2


MODES = ("count", "timing", "hooks")


def seconds(arch: str, workload: str, mode: str, size: int | None = None) -> tuple[float, int]:
    """The run time of a fresh guest in ``mode`` (:data:`MODES`, or ``counting``:
    count-only, counted by :func:`counting_hook`), and the instructions it retired."""
    guest = Guest(build(arch), cpus=CPUS, workload=workload, size=size,
                  timing=mode == "timing")
    if mode == "hooks":
        guest.machine.timing = TimingModel(guest.machine, decoded_accesses=False)
    if mode == "counting":
        counting_hook(guest)
    started = time.process_time()
    result = guest.run()
    elapsed = time.process_time() - started
    assert result.ok, f"{arch} {workload}: checksum mismatch"
    return elapsed, result.instructions


def measure(arch: str, workload: str, rounds: int, size: int | None = None) -> dict:
    """``rounds`` rounds of every mode: the median time of each, and the median of
    each round's ratios to its count-only run."""
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    instructions = 0
    for _ in range(rounds):
        for mode in MODES:
            elapsed, instructions = seconds(arch, workload, mode, size)
            times[mode].append(elapsed)
    ratios = {mode: [t / c for t, c in zip(times[mode], times["count"])] for mode in MODES}
    return {"arch": arch, "workload": workload, "cpus": CPUS, "instructions": instructions,
            "rounds": rounds,
            **{f"{mode}_seconds": round(statistics.median(times[mode]), 4) for mode in MODES},
            "ratio": round(statistics.median(ratios["timing"]), 2),
            "hooks_ratio": round(statistics.median(ratios["hooks"]), 2)}


class Counting(Count):
    """``struct kisim_counting`` (sim/native/hooks.c)."""

    _fields_ = [("stop", ctypes.c_void_p)]


def counting_hook(guest: Guest) -> None:
    """On each CPU of ``guest``, a code hook that only counts its slices in place of
    Unicorn's count (``kisim_counting_hook``), as the timing model's hook does first."""
    hook = ctypes.cast(native.library().kisim_counting_hook, ctypes.c_void_p).value
    stop = ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p).value
    for cpu in guest.machine.cpus:
        counter = Counting(stop=stop)
        native.hook_add_range(cpu.uc, unicorn.UC_HOOK_CODE, hook, ctypes.addressof(counter),
                              1, 0)
        cpu.count_with(counter, counter)


CALLGRIND_MODES = ("count", "counting", "timing")
#: valgrind's flags: the guest's code is translated at run time, into the heap
CALLGRIND = ("valgrind", "--tool=callgrind", "--smc-check=all-non-file")
CALLGRIND_SECONDS = 1800                   # one run's bound (about 30 s at default sizes)


def _child(arch: str, workload: str, mode: str, size: int | None) -> None:
    """The run :func:`host_instructions` measures: prints the guest instructions."""
    print(seconds(arch, workload, mode, size)[1])


def host_instructions(arch: str, workload: str, mode: str, size: int | None) -> tuple[int, int]:
    """Host instructions that a fresh guest's run in ``mode`` executes inside
    Unicorn's ``cpu_exec`` (callgrind, inclusive), and the guest instructions it
    retired."""
    env = dict(os.environ)
    if platform.machine() == "x86_64":
        env.setdefault(MARCH_ENV, "x86_64_v3")
    with tempfile.TemporaryDirectory(prefix="kisim-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        proc = subprocess.run(
            [*CALLGRIND, f"--callgrind-out-file={out}", sys.executable, __file__, "--child",
             arch, workload, mode, str(size or 0)],
            env=env, capture_output=True, text=True, timeout=CALLGRIND_SECONDS)
        if proc.returncode or not out.exists():
            raise SystemExit(f"bench_timing: {arch} {workload} {mode} under callgrind failed "
                             f"(exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
        guest = int(proc.stdout.split()[-1])
        report = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                                capture_output=True, text=True, timeout=CALLGRIND_SECONDS)
    found = re.search(r"^\s*([\d,]+) .*:cpu_exec_", report.stdout, re.M)
    if not found:
        raise SystemExit(f"bench_timing: no cpu_exec in the callgrind profile of {arch} "
                         f"{workload} {mode}")
    return int(found.group(1).replace(",", "")), guest


def measure_callgrind(arch: str, workload: str, size: int | None = None) -> dict:
    """Host instructions per guest instruction in each of :data:`CALLGRIND_MODES`, and
    the ratios of the counting hook's and the timing model's to count-only."""
    per = {}
    for mode in CALLGRIND_MODES:
        host, guest = host_instructions(arch, workload, mode, size)
        per[mode] = host / guest
    return {"arch": arch, "workload": workload, "cpus": CPUS, "instructions": guest,
            **{f"{mode}_host_per_guest": round(per[mode], 1) for mode in CALLGRIND_MODES},
            "counting_ratio": round(per["counting"] / per["count"], 2),
            "ratio": round(per["timing"] / per["count"], 2)}


def _scale(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 100")
    return value


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds of every mode; the medians are printed")
    sizes = p.add_mutually_exclusive_group()
    sizes.add_argument("--size", type=int, default=None,
                       help="every workload's size (default: its own)")
    sizes.add_argument("--scale", type=_scale, default=None, metavar="1..100",
                       help="each workload at this many times its own size")
    p.add_argument("--callgrind", action="store_true",
                   help="count host instructions under valgrind instead of timing (one run "
                        "per mode)")
    p.add_argument("--json", action="store_true")
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) or None)
        return 0
    args = parse_args(p, rounds=1, size=2)
    size_of = {w: DEFAULT_SIZES[w] * args.scale if args.scale else args.size for w in WORKLOADS}
    if args.callgrind:
        missing = [tool for tool in ("valgrind", "callgrind_annotate") if not shutil.which(tool)]
        if missing:
            print(f"bench_timing: --callgrind needs {' and '.join(missing)} on the PATH "
                  "(Debian: apt-get install valgrind)", file=sys.stderr)
            return 2
        rows = [measure_callgrind(arch, workload, size_of[workload])
                for arch in ARCHES for workload in WORKLOADS]
    else:
        rows = [measure(arch, workload, args.rounds, size_of[workload])
                for arch in ARCHES for workload in WORKLOADS]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if args.callgrind:
        print(f"{'arch':8} {'workload':10} {'instructions':>12} {'count-only':>11} "
              f"{'counting':>11} {'ratio':>6} {'timing':>8} {'ratio':>6}   "
              "(host instructions per guest instruction)")
        for r in rows:
            print(f"{r['arch']:8} {r['workload']:10} {r['instructions']:>12,} "
                  f"{r['count_host_per_guest']:>11.1f} {r['counting_host_per_guest']:>11.1f} "
                  f"{r['counting_ratio']:>6.2f} {r['timing_host_per_guest']:>8.1f} "
                  f"{r['ratio']:>6.2f}")
        return 0
    print(f"{'arch':8} {'workload':10} {'instructions':>12} {'count-only s':>13} "
          f"{'timing s':>9} {'ratio':>6} {'hooks s':>8} {'ratio':>6}")
    for r in rows:
        print(f"{r['arch']:8} {r['workload']:10} {r['instructions']:>12,} "
              f"{r['count_seconds']:>13.4f} {r['timing_seconds']:>9.4f} {r['ratio']:>6.2f} "
              f"{r['hooks_seconds']:>8.4f} {r['hooks_ratio']:>6.2f}")
    return 0


if __name__ == "__main__":
    run_main(main)
