"""Untraced host speed against an earlier revision: does a change slow plain runs?

Runs the untraced kmalloc workload on one CPU (the baseline of
``bench_trace.py``) in this tree and in a git worktree of ``--base``,
alternating fresh processes so that both see the same machine load: each
child process keeps each arch's best of its runs, each round pairs the two
trees' children, and it prints the median over the rounds of each arch's
time in each tree and of the rounds' ratios (this tree / base; below 1 is
faster). Both trees use this tree's build cache, so the
guest kernels are the same files whenever their sources are. Times are CPU
seconds of the child process (``time.process_time``).

    .venv/bin/python benchmarks/bench_untraced.py --base REV [--size N] [--rounds R] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import parse_args, run_main

REPO = Path(__file__).resolve().parents[1]
ARCHES = ("arm", "ppc32", "x86_64")
REPEATS = 3                      # runs per arch in one child; the best is kept


def child(size: int) -> None:
    """The best untraced time of each arch, as JSON, in the tree on ``PYTHONPATH``."""
    from kbuild import build
    from sim.guest import Guest
    best = {}
    for arch in ARCHES:
        times = []
        for _ in range(REPEATS):
            guest = Guest(build(arch), cpus=1, workload="kmalloc", size=size, quantum=1000)
            started = time.process_time()
            ok = guest.run().ok
            times.append(time.process_time() - started)
            assert ok, f"{arch}: checksum mismatch"
        best[arch] = min(times)
    print(json.dumps(best))


def measure(tree: Path, size: int, cache: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree), KISIM_CACHE=cache)
    proc = subprocess.run([sys.executable, __file__, "--child", str(size)], cwd=tree, env=env,
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"bench_untraced: the run in {tree} failed:\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", required=True, help="the git revision to compare with")
    p.add_argument("--size", type=int, default=25_000, help="kmalloc iterations (default 25000)")
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating rounds of both trees (default 3)")
    p.add_argument("--json", action="store_true")
    args = parse_args(p, size=10, rounds=1)
    from kbuild import default_cache_dir
    cache = str(default_cache_dir())
    times: dict[str, dict[str, list[float]]] = {"this": {}, "base": {}}
    with tempfile.TemporaryDirectory(prefix="kisim-base-") as tmp:
        base = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(base),
                        args.base], check=True)
        try:
            for _ in range(args.rounds):
                for name, tree in (("base", base), ("this", REPO)):
                    for arch, seconds in measure(tree, args.size, cache).items():
                        times[name].setdefault(arch, []).append(seconds)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)],
                           check=False)
    out = {arch: {"this_s": round(statistics.median(times["this"][arch]), 3),
                  "base_s": round(statistics.median(times["base"][arch]), 3),
                  "ratio": round(statistics.median(
                      t / b for t, b in zip(times["this"][arch], times["base"][arch])), 3)}
           for arch in ARCHES}
    if args.json:
        json.dump({"base": args.base, "size": args.size, "arches": out}, sys.stdout, indent=2)
        print()
    else:
        for arch, row in out.items():
            print(f"{arch:>7}: untraced kmalloc {args.size}: {row['this_s']} s here, "
                  f"{row['base_s']} s at {args.base} ({row['ratio']}x)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(int(sys.argv[2]))       # in the tree on PYTHONPATH: none of this tree's kisim
        sys.exit(0)
    run_main(main)
