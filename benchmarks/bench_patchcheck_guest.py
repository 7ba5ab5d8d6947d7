"""The guest's own patching C under the patch checker, against the Python protocol.

For each arch with the ``guest_patching`` capability: ``--seeds``
interleavings of the loop's jump and call sites (2 CPUs), once with the
arch's Python protocol (``kisim patchcheck``) and once with the kernel's
own C run by CPU 0 (``kisim patchcheck --guest``), each in ``--jobs``
worker processes, timed in the same run; the guest's wall time as a ratio
to the Python protocol's (issue 27 asks at most 3). Both must be clean.
The guest is built (into the cache) before the clock starts. Run:

    .venv/bin/python benchmarks/bench_patchcheck_guest.py [--seeds 10000] [--jobs 2] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import json
import time

from arches import NAMES, get_arch
from benchlib import parse_args
from patchcheck.sweep import CheckSpec, sweep


def _timed(spec: CheckSpec, seeds: int, jobs: int) -> tuple[float, int]:
    spec.checker()                       # builds the guest into the cache first
    begin = time.perf_counter()
    result = sweep(spec, range(seeds), jobs=jobs)
    return time.perf_counter() - begin, result.total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, seeds=4)
    rows = []
    for arch in NAMES:
        if "guest_patching" not in get_arch(arch).capabilities:
            continue
        python, found = _timed(CheckSpec(arch, 2), args.seeds, args.jobs)
        guest, found_guest = _timed(CheckSpec(arch, 2, guest=True), args.seeds, args.jobs)
        assert found == found_guest == 0, f"{arch}: findings on a reference protocol"
        rows.append({"arch": arch, "sites": "jump,call", "seeds": args.seeds,
                     "jobs": args.jobs, "python_s": round(python, 2),
                     "guest_s": round(guest, 2), "guest_vs_python": round(guest / python, 2)})
        if not args.json:
            print(rows[-1], flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
