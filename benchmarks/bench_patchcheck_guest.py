"""The guest's own patching C under the patch checker, against the Python protocol.

For each arch with the ``guest_patching`` capability: ``--seeds``
interleavings of the loop's jump and call sites (2 CPUs), once with the
arch's Python protocol (``kisim patchcheck``) and once with the kernel's
own C run by CPU 0 (``kisim patchcheck --guest``), each in ``--jobs``
worker processes, timed in the same run; the guest's time as a ratio to
the Python protocol's (issues 27 and 36 ask at most 3), in wall time and in
CPU time (this process's and its reaped workers': on a machine shared with
other jobs the wall time measures the load as much as the sweep). Both must
be clean. The guest is built (into the cache) before the clock starts. The
baseline is the Python protocol over the same seeds in the same run; the
figure for the bound is ``guest_vs_python_cpu`` (docs/patchcheck.md, "Speed
against the Python protocol", records the runs). The seeds are cut into
``--rounds`` consecutive ranges, and each range runs on both sides in turn,
so that both see the host alike: on a virtual machine the same seeds' time
moves by a fifth from one minute to the next. Run:

    .venv/bin/python benchmarks/bench_patchcheck_guest.py [--seeds 10000] [--rounds 10] [--jobs 2] [--arch A] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import json
import resource
import time

from arches import NAMES, get_arch
from benchlib import parse_args, run_main
from patchcheck.sweep import CheckSpec, sweep


def _cpu() -> float:
    """CPU seconds of this process and of its workers (counted once reaped: the
    sweep's pool is shut down before it returns)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _timed(specs: tuple[CheckSpec, ...], seeds: int, rounds: int,
           jobs: int) -> list[tuple[float, float, int]]:
    """Wall seconds, CPU seconds and findings of each spec over ``range(seeds)``, in
    ``rounds`` consecutive ranges, each run by every spec in turn."""
    for spec in specs:
        spec.checker()                   # builds the guest into the cache first
    totals = [[0.0, 0.0, 0] for _ in specs]
    bounds = [seeds * k // rounds for k in range(rounds + 1)]
    for first, end in zip(bounds, bounds[1:]):
        for spec, total in zip(specs, totals):
            begin, cpu = time.perf_counter(), _cpu()
            result = sweep(spec, range(first, end), jobs=jobs)
            total[0] += time.perf_counter() - begin
            total[1] += _cpu() - cpu
            total[2] += result.total
    return [tuple(total) for total in totals]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=10,
                        help="consecutive seed ranges, each run by both sides in turn")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--arch", action="append", choices=NAMES,
                        help="only this arch (repeatable; default: every arch with the "
                             "capability)")
    args = parse_args(parser, seeds=4, rounds=2)
    if not 1 <= args.rounds <= args.seeds:
        parser.error(f"--rounds {args.rounds}: 1 to --seeds ({args.seeds})")
    rows = []
    for arch in args.arch or NAMES:
        if "guest_patching" not in get_arch(arch).capabilities:
            continue
        (python, python_cpu, found), (guest, guest_cpu, found_guest) = _timed(
            (CheckSpec(arch, 2), CheckSpec(arch, 2, guest=True)), args.seeds, args.rounds,
            args.jobs)
        assert found == found_guest == 0, f"{arch}: findings on a reference protocol"
        rows.append({"arch": arch, "sites": "jump,call", "seeds": args.seeds,
                     "rounds": args.rounds, "jobs": args.jobs, "python_s": round(python, 2),
                     "guest_s": round(guest, 2), "guest_vs_python": round(guest / python, 2),
                     "python_cpu_s": round(python_cpu, 2), "guest_cpu_s": round(guest_cpu, 2),
                     "guest_vs_python_cpu": round(guest_cpu / python_cpu, 2)})
        if not args.json:
            print(rows[-1], flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    run_main(main)
