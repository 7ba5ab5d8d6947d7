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

``--scale K`` runs each workload at K times its default size: the count-only
run's fixed costs (translating the guest's blocks) then weigh less, and the
ratio comes nearer the model's cost per instruction.

``benchmarks/bench_untraced.py --base REV`` compares the count-only machine
with an earlier revision.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import parse_args            # noqa: E402
from kbuild import build                   # noqa: E402
from sim.guest import Guest                # noqa: E402
from sim.timing import TimingModel         # noqa: E402
from sim.workloads import DEFAULT_SIZES    # noqa: E402

ARCHES = ("arm", "ppc32", "x86_64")
WORKLOADS = ("kmalloc", "hackbench")
CPUS = 2


MODES = ("count", "timing", "hooks")


def seconds(arch: str, workload: str, mode: str, size: int | None = None) -> tuple[float, int]:
    """The run time of a fresh guest in ``mode`` (:data:`MODES`), and the instructions
    it retired."""
    guest = Guest(build(arch), cpus=CPUS, workload=workload, size=size,
                  timing=mode == "timing")
    if mode == "hooks":
        guest.machine.timing = TimingModel(guest.machine, decoded_accesses=False)
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
    p.add_argument("--json", action="store_true")
    args = parse_args(p, rounds=1, size=2)
    rows = [measure(arch, workload, args.rounds,
                    DEFAULT_SIZES[workload] * args.scale if args.scale else args.size)
            for arch in ARCHES for workload in WORKLOADS]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'arch':8} {'workload':10} {'instructions':>12} {'count-only s':>13} "
          f"{'timing s':>9} {'ratio':>6} {'hooks s':>8} {'ratio':>6}")
    for r in rows:
        print(f"{r['arch']:8} {r['workload']:10} {r['instructions']:>12,} "
              f"{r['count_seconds']:>13.4f} {r['timing_seconds']:>9.4f} {r['ratio']:>6.2f} "
              f"{r['hooks_seconds']:>8.4f} {r['hooks_ratio']:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
