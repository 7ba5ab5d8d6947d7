"""What one kprobe hit costs, per arch, beside a marker hit and the published figures.

For each arch, on one CPU, the rows of ``kisim compare`` that hold the
kprobe family and the marker (:func:`lab.compare.compare_arch`, kmalloc
workload, probes at the entries of ``kmalloc()`` and ``schedule()``, the
marker at the sites in them, every handler empty), so the figures and
ratios here are the ones ``kisim compare --mechanism kprobe kprobe_boosted
optprobe kretprobe marker_imv`` prints:

- *dormant site*: a disarmed jump-label/marker site is one nop per pass
  (1 instruction, the arch's per-instruction cost; `kisim demo` measures it);
- *kprobe*: empty guest pre and post handlers (x86: int3, TF single-step,
  #DB; ARM: one trap, emulated; PowerPC: one trap, emulate_step);
- *boosted*: the same probe with only a pre_handler (x86: the slot jumps
  back, one trap);
- *optprobe*: the boosted probe after the kprobe optimizer ran (x86-64
  and ARM; no kernel has 32-bit PowerPC optprobes);
- *kretprobe*: a return probe with an empty handler, per call (entry
  probe, trampoline, handler; PowerPC's trampoline is a kprobe);
- *marker*: the immediate-value marker armed to the empty guest probe
  ``__mark_empty_function``, per probe call.

Goals checked: a kprobe hit costs at least 10x a marker hit in modeled
cycles; an optprobe hit at most 2x.
Published (Documentation/trace/kprobes.rst): kprobe 0.49 us (x86-64 Opteron
2 GHz), 0.77 us (ppc64 POWER5 1.66 GHz), 0.99 / boosted 0.43 / optprobe 0.06 us
(x86-64 Xeon E5410 2.33 GHz); no ARM figure. Run:

    .venv/bin/python benchmarks/bench_kprobes.py [--arch A] [--size N] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import json

from arches import ARCHES, get_arch
from benchlib import parse_args, run_main
from kbuild import build
from kisim.progress import progress
from lab.compare import compare_arch
from lab.transparency import every_instruction
from probes.kprobes import arch_kprobes


#: CONFIG_KPROBE_POOL for --transparency: a probe on each of a kernel's 6,000-9,000
#: probe-able instructions, and its aggr_kprobe where the optimizer could take it.
TRANSPARENCY_POOL = 32768


def transparency(arch: str, workload: str, size: int, post: bool,
                 overrides: dict[str, str]) -> dict:
    """A kprobe on every instruction of every kernel function, all at once
    (:func:`lab.transparency.every_instruction`), on the kernel ``overrides``
    configure."""
    found = every_instruction(build(arch, overrides=overrides), workload=workload, size=size,
                              mode="post" if post else "pre")
    return {"arch": arch, "config": overrides, "workload": workload, "size": size, "post": post,
            "probes": found.probed, "refused": len(found.refused),
            "checksum_ok": found.checksum_ok, "hits": found.hits, "counted": found.counted,
            "mismatches": len(found.mismatches), "nmissed": found.nmissed}


#: The comparison rows this benchmark reads (and the names it prints them under).
ROWS = {"kprobe": "kprobe", "kprobe_boosted": "boosted", "optprobe": "optprobe",
        "kretprobe": "kretprobe", "marker_imv": "marker"}


def measure(arch: str, size: int | None = None) -> dict:
    """The kprobe family and the marker on ``arch``, from one comparison."""
    spec = get_arch(arch)
    doc = compare_arch(arch, mechanisms=tuple(ROWS), size=size)
    ns = 1e9 / spec.clock_hz
    row: dict = {"arch": arch,
                 "dormant": {"instructions": 1, "modeled_cycles": spec.cost("insn")},
                 "published": [f"{p.path} {p.microseconds:g} us ({p.machine})"
                               for p in arch_kprobes(spec).PUBLISHED],
                 "checksums_ok": doc["checksums_ok"]}
    for r in doc["rows"]:
        a = r["active"]
        row[ROWS[r["mechanism"]]] = None if a is None else {
            "instructions": a["per_hit_instructions"],
            "modeled_cycles": a["per_hit_modeled_cycles"],
            "traps": a["per_hit_events"].get("trap", 0), "hits": r["hits"],
            "path": r["detail"], "us": a["per_hit_modeled_cycles"] * ns / 1000}
    ratio = {o["rows"][0]: o.get("ratio") for o in doc["orderings"]
             if o["rows"][1:] == ["marker_imv"]}
    row["kprobe_over_marker"] = ratio["kprobe"]
    row["optprobe_over_marker"] = ratio["optprobe"]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", choices=list(ARCHES), default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--transparency", action="store_true",
                        help="instead: a kprobe on every instruction of every function, "
                             "kmalloc and hackbench, hits checked against a code-hook count")
    parser.add_argument("--size", type=int, default=None,
                        help="workload size (default: the workload's; --transparency: 50)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="for --transparency: build the kernel with this option, e.g. "
                             f"--set THUMB2_KERNEL=y (repeatable; default: KPROBE_POOL="
                             f"{TRANSPARENCY_POOL}, room for a probe on every instruction)")
    args = parse_args(parser, size=2)
    overrides = {"KPROBE_POOL": str(TRANSPARENCY_POOL)} | dict(
        item.partition("=")[::2] for item in args.set)
    arches = [args.arch] if args.arch else list(ARCHES)
    if args.transparency:
        rows = [transparency(arch, workload, args.size or 50, post, overrides)
                for arch in arches for workload in ("kmalloc", "hackbench")
                for post in (False, True)]
        print(json.dumps(rows, indent=2) if args.json else "\n".join(
            f"{r['arch']:7} {r['workload']:9} post={r['post']!s:5} probes {r['probes']:5} "
            f"({r['refused']:,} refused) "
            f"hits {r['hits']:>9,} counted {r['counted']:>9,} mismatches {r['mismatches']} "
            f"nmissed {r['nmissed']} checksum {'ok' if r['checksum_ok'] else 'WRONG'}"
            for r in rows))
        return 0 if all(r["checksum_ok"] and not r["mismatches"] for r in rows) else 1
    rows = []
    with progress("kprobe costs", total=len(arches), enabled=not args.json) as advance:
        for arch in arches:
            rows.append(measure(arch, args.size))
            advance()
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'arch':7} {'site':9} {'instructions':>12} {'traps':>5} {'modeled cycles':>14} "
              f"{'modeled us':>10}  path")
        for r in rows:
            ns = 1e9 / get_arch(r["arch"]).clock_hz
            print(f"{r['arch']:7} {'dormant':9} {1:>12} {0:>5} "
                  f"{r['dormant']['modeled_cycles']:>14.1f} {r['dormant']['modeled_cycles'] * ns / 1000:>10.4f}  nop")
            for name in ROWS.values():
                c = r[name]
                if c is None:
                    print(f"{r['arch']:7} {name:9} {'none':>12}  (no optprobes on this arch)")
                    continue
                print(f"{r['arch']:7} {name:9} {c['instructions']:>12.1f} {c['traps']:>5.3g} "
                      f"{c['modeled_cycles']:>14.1f} {c['us']:>10.4f}  "
                      f"{c['path'] or 'armed to the empty probe'} ({c['hits']:,} hits)")
            print(f"{'':7} kprobe / marker = {r['kprobe_over_marker']:.1f}x (goal >= 10x: "
                  f"{'met' if r['kprobe_over_marker'] >= 10 else 'NOT met'})" + (
                      "" if r["optprobe_over_marker"] is None else
                      f"; optprobe / marker = {r['optprobe_over_marker']:.1f}x (goal <= 2x: "
                      f"{'met' if r['optprobe_over_marker'] <= 2 else 'NOT met'})") + "; published "
                  "(kisim validate --experiment kprobes): "
                  f"{'; '.join(r['published']) or 'none'}\n")
    return 0 if all(r["checksums_ok"] for r in rows) else 1


if __name__ == "__main__":
    run_main(main)
