"""Benchmark: the whole default ``kisim compare`` on every arch (target: <= 2 minutes).

Three timings in one process:

1. cold: a fresh build cache (``KISIM_CACHE`` in a temporary directory),
   so every kernel the comparison needs is compiled;
2. warm: the same comparison again, every build from the cache;
3. baseline: the same number of plain guest runs (defconfig, no probes, no
   code hooks), to show what the comparison adds over just running the
   workloads: warm / baseline is the ratio reported.

``--size N`` runs the workload at that size (default: its own).
``--no-cold`` skips the cold run; ``--smallest`` runs size 1 without it (the smoke test's run:
it compiles nothing new).

Usage: ``.venv/bin/python benchmarks/bench_compare.py [--size N] [--no-cold] [--smallest]``
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import parse_args, run_main

REPO = Path(__file__).resolve().parent.parent


def timed_compare(cache: str, out: str, size: int | None) -> float:
    env = dict(os.environ, KISIM_CACHE=cache)
    sized = [] if size is None else ["--size", str(size)]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kisim.cli", "compare", "--out", out, "--json", *sized],
                   cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def baseline(runs_per_arch: int, size: int | None) -> float:
    from arches import NAMES
    from kbuild import build
    from sim.guest import boot
    images = [build(name) for name in NAMES]
    started = time.perf_counter()
    for image in images:
        for _ in range(runs_per_arch):
            assert boot(image, workload="kmalloc", size=size).ok
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=None, help="workload size")
    parser.add_argument("--cold", action=argparse.BooleanOptionalAction, default=True,
                        help="time a run on a fresh build cache first (default)")
    args = parse_args(parser, size=1, cold=False)
    from kbuild import default_cache_dir
    from lab.mechanisms import runs_per_arch
    runs = runs_per_arch()
    with tempfile.TemporaryDirectory(prefix="kisim-bench-") as tmp:
        cache = os.path.join(tmp, "cache") if args.cold else str(default_cache_dir())
        out = os.path.join(tmp, "out")
        cold = timed_compare(cache, out, args.size) if args.cold else None
        warm = timed_compare(cache, out, args.size)
    base = baseline(runs, args.size)
    print(f"kisim compare, 3 arches, default options ({runs} runs per arch):")
    if cold is not None:
        print(f"  cold cache (compiles every kernel): {cold:7.1f} s   target <= 120 s: "
              f"{'ok' if cold <= 120 else 'MISSED'}")
    print(f"  warm cache:                         {warm:7.1f} s")
    print(f"  baseline, {3 * runs} plain guest runs:       {base:7.1f} s   "
          f"warm / baseline = {warm / base:.1f}x")


if __name__ == "__main__":
    run_main(main)
