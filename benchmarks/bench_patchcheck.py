"""Patch-checker sweep speed: interleavings per second, serial and with --jobs.

For each arch, the arch's own protocol over ``--seeds`` interleavings
(2 CPUs, the per-CPU fetch model of sim/fetch.py): once serially in this
process and once in ``--jobs`` worker processes, with the speed-up as the
ratio of the two wall times measured in the same run. Both runs must give
the same result (checked). Also the peak RSS growth of a serial sweep of
``--seeds`` and of 5x as many, to show memory stays flat in the seed count.

Per site kind (``--kind-seeds`` interleavings each, serial, 2 CPUs): the
arch's protocol on a loop of that one kind, its interleavings per second
and its wall time as a ratio to the default ``jump,call`` loop timed in
the same run, and its findings (none but the arch's concurrent-modification rule's). Kinds the arch lacks are
skipped. Run:

    .venv/bin/python benchmarks/bench_patchcheck.py [--seeds 10000] [--jobs 2]
        [--kind-seeds 2000] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from arches import NAMES, get_arch
from benchlib import parse_args, run_main
from patchcheck.sites import DEFAULT_SITES, SITE_KINDS, CheckerError
from patchcheck.sweep import CheckSpec, sweep


def _timed(spec: CheckSpec, seeds: int, jobs: int) -> tuple[float, dict]:
    begin = time.perf_counter()
    result = sweep(spec, range(seeds), jobs=jobs)
    seconds = time.perf_counter() - begin
    out = result.to_json()
    for volatile in ("seconds", "executed"):
        out.pop(volatile)
    return seconds, out


def _peak_mb(arch: str, seeds: int) -> float:
    """Peak RSS (MB) of a fresh interpreter that runs a serial naive sweep of ``seeds``."""
    # VmHWM belongs to the new process image (ru_maxrss would carry the parent's over).
    code = ("from patchcheck.sweep import CheckSpec, sweep; "
            f"sweep(CheckSpec({arch!r}, 2, naive=True), range({seeds})); "
            "print(next(l.split()[1] for l in open('/proc/self/status') "
            "if l.startswith('VmHWM')))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return round(int(out) / 1024, 1)


def _kinds(arch: str, seeds: int) -> list[dict]:
    """One row per site kind the arch has: speed relative to the default loop."""
    rows, base = [], None
    for sites in [",".join(DEFAULT_SITES)] + [k for k in SITE_KINDS if k not in DEFAULT_SITES]:
        try:
            spec = CheckSpec(arch, 2, sites=sites)
            spec.checker()
        except CheckerError:
            continue
        seconds, out = _timed(spec, seeds, 1)
        base = base or seconds
        rows.append({"arch": arch, "sites": sites, "seeds": seeds,
                     "serial_s": round(seconds, 2),
                     "interleavings_per_s": round(seeds / seconds),
                     "time_vs_jump_call": round(seconds / base, 2),
                     "findings": out["findings_total"]})
        # The one kind of finding v5.10's own protocol may give: a pair outside the
        # arch's concurrent-modification rule (ppc32's kprobe, docs/patchcheck.md).
        rule = get_arch(arch).cmodx_safe is not None
        assert set(out["by_kind"]) <= ({"unpredictable"} if rule else set()), \
            f"{arch} {sites}: the real protocol has findings {out['by_kind']}"
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kind-seeds", type=int, default=2_000)
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, seeds=10, kind_seeds=5)
    rows = []
    for arch in NAMES:
        spec = CheckSpec(arch, 2)
        serial, a = _timed(spec, args.seeds, 1)
        parallel, b = _timed(spec, args.seeds, args.jobs)
        assert a == b, f"{arch}: --jobs {args.jobs} differs from the serial run"
        rows.append({"arch": arch, "seeds": args.seeds, "serial_s": round(serial, 2),
                     "jobs": args.jobs, "jobs_s": round(parallel, 2),
                     "speedup": round(serial / parallel, 2),
                     "findings": a["findings_total"],
                     "naive_peak_rss_mb": {str(n): _peak_mb(arch, n)
                                           for n in (args.seeds // 5, args.seeds)}})
        if not args.json:
            _print_sweep(rows[-1])
    for arch in NAMES:
        for row in _kinds(arch, args.kind_seeds):
            rows.append(row)
            if not args.json:
                _print_kind(row)
    if args.json:
        print(json.dumps(rows, indent=2))


def _print_sweep(row: dict) -> None:
    """One arch's default loop: serial and parallel times, speed-up, peak RSS."""
    if row["arch"] == NAMES[0]:
        print(f"{'arch':8} {'seeds':>7} {'serial s':>9} {'--jobs':>6} {'s':>8} {'speedup':>7} "
              f"{'findings':>8}  peak RSS MB (naive sweep of N seeds)")
    rss = ", ".join(f"{n}: {mb}" for n, mb in row["naive_peak_rss_mb"].items())
    print(f"{row['arch']:8} {row['seeds']:>7} {row['serial_s']:>9.2f} {row['jobs']:>6} "
          f"{row['jobs_s']:>8.2f} {row['speedup']:>6.2f}x {row['findings']:>8}  {rss}", flush=True)


def _print_kind(row: dict) -> None:
    """One site kind's serial sweep, against the default loop's in the same run."""
    if row["arch"] == NAMES[0] and row["sites"] == ",".join(DEFAULT_SITES):
        print(f"\n{'arch':8} {'sites':14} {'seeds':>6} {'serial s':>9} {'per s':>7} "
              f"{'vs default':>10} {'findings':>8}")
    print(f"{row['arch']:8} {row['sites']:14} {row['seeds']:>6} {row['serial_s']:>9.2f} "
          f"{row['interleavings_per_s']:>7} {row['time_vs_jump_call']:>9.2f}x "
          f"{row['findings']:>8}", flush=True)


if __name__ == "__main__":
    run_main(main)
