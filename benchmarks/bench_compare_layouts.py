"""Benchmark: ``kisim compare --layouts 8`` on every arch (target: <= 5 minutes warm, 2 cores).

Timings, each a separate ``kisim`` process, each as wall seconds and as CPU
seconds (user + system of the process and its workers, ``getrusage``), since
a shared machine stretches the wall time but hardly the CPU time; on C idle
cores the wall time is at least CPU / C:

1. cold: a fresh build cache (``KISIM_CACHE`` in a temporary directory), so every
   layout's kernels are compiled (reported apart from the target); skipped with
   ``--warm-only``, which uses ``$KISIM_CACHE`` as it is (warm it first);
2. warm: the same command again, every build from the cache;
3. baseline: one plain ``kisim compare`` (the default layout, warm), so that
   warm / baseline says what 8 layouts cost over one; with ``--jobs`` on J cores
   the ideal is 8 / J.

``--base REV`` also runs the warm command and the baseline in the tree of git
revision REV (extracted with ``git archive``, same build cache) and checks that
both print the same JSON, byte for byte: a speed-up must not move a figure.
It prints this tree's CPU time over REV's (below 1 is faster); exit 1 if the
documents differ.

``--layouts N``, ``--size N`` and ``--arch A`` shrink the run; ``--smallest`` is
2 layouts at size 1 on one arch, warm only (the smoke test's run: its figures
mean nothing).

Usage: ``.venv/bin/python benchmarks/bench_compare_layouts.py [--warm-only] [--jobs N]
[--layouts N] [--size N] [--arch A ...] [--base REV] [--smallest]``
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchlib import parse_args, run_main

REPO = Path(__file__).resolve().parent.parent
LAYOUTS = 8
TARGET = 300.0          # seconds, warm
CORES_TARGETED = 2      # the target's machine


@dataclass
class Timed:
    """One ``kisim compare`` process: what it printed and what it took."""

    wall: float
    cpu: float
    stdout: bytes

    def line(self) -> str:
        return f"{self.wall:7.1f} s wall, {self.cpu:7.1f} s CPU"


def timed(tree: Path, cache: str | None, out: str, *extra: str) -> Timed:
    env = dict(os.environ, PYTHONPATH=str(tree), **({"KISIM_CACHE": cache} if cache else {}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "kisim.cli", "compare", "--out", out, "--json",
                           *extra], cwd=tree, env=env, check=True, stdout=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(wall, cpu, proc.stdout)


def extract(rev: str, where: Path) -> Path:
    """The tree of git revision ``rev`` in ``where`` (``git archive``: no worktree made)."""
    where.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True,
                             stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def first_difference(a: bytes, b: bytes) -> str:
    """Where two documents part: the first differing line of each."""
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}: {x.decode()[:120]!r} vs {y.decode()[:120]!r}"
    return f"one document is longer ({len(a)} vs {len(b)} bytes)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-only", action="store_true")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--layouts", type=int, default=LAYOUTS)
    parser.add_argument("--size", type=int, default=None, help="workload size")
    parser.add_argument("--arch", action="append", default=None, help="only this arch")
    parser.add_argument("--base", metavar="REV",
                        help="also run REV's tree: same JSON required, CPU time compared")
    args = parse_args(parser, layouts=2, size=1, warm_only=True, arch=["arm"])
    common = (["--jobs", str(args.jobs)] if args.jobs else []) + \
        ([] if args.size is None else ["--size", str(args.size)]) + \
        [opt for a in args.arch or () for opt in ("--arch", a)]
    layouts = ["--layouts", str(args.layouts), *common]
    with tempfile.TemporaryDirectory(prefix="kisim-bench-") as tmp:
        cache = None if args.warm_only else os.path.join(tmp, "cache")
        out = os.path.join(tmp, "out")
        cold = None if args.warm_only else timed(REPO, cache, out, *layouts)
        warm = timed(REPO, cache, out, *layouts)
        single = timed(REPO, cache, out, *common)
        if args.base:
            base_tree = extract(args.base, Path(tmp) / "base")
            base_warm = timed(base_tree, cache, out, *layouts)
            base_single = timed(base_tree, cache, out, *common)
    cores = len(os.sched_getaffinity(0))
    arches = ", ".join(args.arch) if args.arch else "3 arches"
    print(f"kisim compare --layouts {args.layouts}, {arches}, default options, {cores} cores"
          + (f", --jobs {args.jobs}" if args.jobs else "") + ":")
    if cold is not None:
        print(f"  cold cache (compiles every layout's kernels): {cold.line()}")
    idle = warm.cpu / CORES_TARGETED
    print(f"  warm cache:                                   {warm.line()}   target <= "
          f"{TARGET:.0f} s: {'ok' if warm.wall <= TARGET else 'MISSED'} here (wall); on "
          f"{CORES_TARGETED} idle cores about CPU / {CORES_TARGETED} = {idle:.0f} s: "
          f"{'ok' if idle <= TARGET else 'MISSED'}")
    print(f"  baseline, one plain compare (warm):           {single.line()}   "
          f"warm / baseline = {warm.cpu / single.cpu:.1f}x CPU ({args.layouts} layouts)")
    if not args.base:
        return 0
    print(f"  at {args.base}, warm:{'':>30}{base_warm.line()}   this / base = "
          f"{warm.cpu / base_warm.cpu:.2f}x CPU")
    print(f"  at {args.base}, one plain compare:{'':>17}{base_single.line()}   this / base = "
          f"{single.cpu / base_single.cpu:.2f}x CPU")
    same = True
    for what, here, there in (("--layouts", warm, base_warm), ("plain", single, base_single)):
        if here.stdout == there.stdout:
            print(f"  JSON of the {what} compare: identical to {args.base}'s "
                  f"({len(here.stdout):,} bytes)")
        else:
            same = False
            print(f"  JSON of the {what} compare DIFFERS from {args.base}'s: "
                  f"{first_difference(here.stdout, there.stdout)}")
    return 0 if same else 1


if __name__ == "__main__":
    run_main(main)
