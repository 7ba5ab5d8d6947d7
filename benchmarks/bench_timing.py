"""The timing model's host cost: the same run with it and counting only.

For each arch and workload (kmalloc and hackbench, 2 CPUs), runs the guest
count-only and on the timing model (``Guest(timing=True)``), alternating,
and prints the best CPU time of each (``time.process_time``, the run only,
not the build or the model's setup) and their ratio. Both runs retire the
same instructions; the ratio is what the model costs. The model is asked
to cost at most 3x (docs/timing.md says where it does not).

    .venv/bin/python benchmarks/bench_timing.py [--rounds R] [--json]

``benchmarks/bench_untraced.py --base REV`` compares the count-only machine
with an earlier revision.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kbuild import build                   # noqa: E402
from sim.guest import Guest                # noqa: E402

ARCHES = ("arm", "ppc32", "x86_64")
WORKLOADS = ("kmalloc", "hackbench")
CPUS = 2


def best_seconds(arch: str, workload: str, timing: bool, rounds: int) -> tuple[float, int]:
    """The best run time over ``rounds`` fresh guests, and the instructions retired."""
    kernel = build(arch)
    times, instructions = [], 0
    for _ in range(rounds):
        guest = Guest(kernel, cpus=CPUS, workload=workload, timing=timing)
        started = time.process_time()
        result = guest.run()
        times.append(time.process_time() - started)
        assert result.ok, f"{arch} {workload}: checksum mismatch"
        instructions = result.instructions
    return min(times), instructions


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="runs per mode; the best is kept")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = []
    for arch in ARCHES:
        for workload in WORKLOADS:
            count, insns = best_seconds(arch, workload, False, args.rounds)
            timed, _ = best_seconds(arch, workload, True, args.rounds)
            rows.append({"arch": arch, "workload": workload, "cpus": CPUS, "instructions": insns,
                         "count_seconds": round(count, 4), "timing_seconds": round(timed, 4),
                         "ratio": round(timed / count, 2)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'arch':8} {'workload':10} {'instructions':>12} {'count-only s':>13} "
          f"{'timing s':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['arch']:8} {r['workload']:10} {r['instructions']:>12,} "
              f"{r['count_seconds']:>13.4f} {r['timing_seconds']:>9.4f} {r['ratio']:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
