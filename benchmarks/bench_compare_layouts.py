"""Benchmark: ``kisim compare --layouts 8`` on every arch (target: <= 5 minutes warm, 2 cores).

Three timings, each a separate ``kisim`` process:

1. cold: a fresh build cache (``KISIM_CACHE`` in a temporary directory), so every
   layout's kernels are compiled (reported apart from the target); skipped with
   ``--warm-only``, which uses ``$KISIM_CACHE`` as it is (warm it first);
2. warm: the same command again, every build from the cache;
3. baseline: one plain ``kisim compare`` (the default layout, warm), so that
   warm / baseline says what 8 layouts cost over one; with ``--jobs`` on J cores
   the ideal is 8 / J.

``--layouts N`` and ``--size N`` shrink the run; ``--smallest`` is 2 layouts at
size 1, warm only (the smoke test's run: its figures mean nothing).

Usage: ``.venv/bin/python benchmarks/bench_compare_layouts.py [--warm-only] [--jobs N]
[--layouts N] [--size N] [--smallest]``
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import parse_args

REPO = Path(__file__).resolve().parent.parent
LAYOUTS = 8
TARGET = 300.0          # seconds, warm


def timed(cache: str | None, out: str, *extra: str) -> float:
    env = dict(os.environ, **({"KISIM_CACHE": cache} if cache else {}))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kisim.cli", "compare", "--out", out, "--json",
                    *extra], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-only", action="store_true")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--layouts", type=int, default=LAYOUTS)
    parser.add_argument("--size", type=int, default=None, help="workload size")
    args = parse_args(parser, layouts=2, size=1, warm_only=True)
    common = (["--jobs", str(args.jobs)] if args.jobs else []) + \
        ([] if args.size is None else ["--size", str(args.size)])
    layouts = ["--layouts", str(args.layouts), *common]
    with tempfile.TemporaryDirectory(prefix="kisim-bench-") as tmp:
        cache = None if args.warm_only else os.path.join(tmp, "cache")
        out = os.path.join(tmp, "out")
        cold = None if args.warm_only else timed(cache, out, *layouts)
        warm = timed(cache, out, *layouts)
        base = timed(cache, out, *common)
    cores = len(os.sched_getaffinity(0))
    print(f"kisim compare --layouts {args.layouts}, 3 arches, default options, {cores} cores"
          + (f", --jobs {args.jobs}" if args.jobs else "") + ":")
    if cold is not None:
        print(f"  cold cache (compiles every layout's kernels): {cold:7.1f} s")
    print(f"  warm cache:                                   {warm:7.1f} s   target <= "
          f"{TARGET:.0f} s: {'ok' if warm <= TARGET else 'MISSED'}")
    print(f"  baseline, one plain compare (warm):           {base:7.1f} s   "
          f"warm / baseline = {warm / base:.1f}x ({args.layouts} layouts)")


if __name__ == "__main__":
    main()
