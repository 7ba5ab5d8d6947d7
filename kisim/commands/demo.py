"""``kisim demo``: what instrumentation costs, on every arch.

1. A loop passes through one instrumentation site per iteration, dormant:
   the kernel's nop (a disarmed jump label or marker), one instruction.
2. A registered kprobe (empty guest pre_handler) on the guest kernel's
   ``sys_getppid``, run through the real kprobe path (lab/kprobe.py:
   breakpoint written by the patcher, trap, the guest's kprobe_handler,
   the probed instruction run out of line or emulated, exception return),
   under the getppid workload: its exact cost per hit beside the nop's.
3. The guest kernel (defconfig) runs hackbench on 2 CPUs with every marker
   dormant, then with every marker armed to the no-op guest probe: the
   difference is the active cost of the marker path.
"""
from __future__ import annotations

import argparse

from arches import ARCHES
from kisim.commands.common import add_cycles, add_json, print_json, timing
from kisim.errors import UsageError
from kisim.progress import progress
from lab.demo import KPROBE_AT, MAX_ITERATIONS, kernel_markers, kprobe_row, site_loop


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.iterations <= MAX_ITERATIONS:
        raise UsageError(f"--iterations must be 1..{MAX_ITERATIONS}, not {args.iterations}")
    steps = 4 * len(ARCHES)
    with progress("demo", total=steps, enabled=not args.json) as advance:
        rows, kprobes = [], []
        for arch in ARCHES.values():
            rows.append(site_loop(arch, args.iterations, timing(args)))
            advance(description=f"{arch.name}: site loop")
            kprobes.append(kprobe_row(arch, args.iterations, timing(args)))
            advance(description=f"{arch.name}: kprobe on {KPROBE_AT}")
        kernel = []
        for arch in ARCHES.values():
            for armed in (False, True):
                advance(0, description=f"{arch.name}: hackbench, markers "
                                       f"{'armed' if armed else 'dormant'}")
                kernel.append(kernel_markers(arch, armed, timing(args)))
                advance()
    if args.json:
        print_json({"site_loop": rows, "kprobe": kprobes, "hackbench_markers": kernel})
        return 0 if all(r["checksum_ok"] for r in kernel + kprobes) else 1
    print(f"One dormant site per loop iteration, {args.iterations} iterations, one CPU.\n")
    print(f"{'arch':8} {'site':15} {'instructions':>12} {'modeled cycles':>15} "
          f"{'per iteration':>14}")
    for r in rows:
        print(f"{r['arch']:8} {r['site']:15} {r['instructions']:>12,} "
              f"{r['modeled_cycles']:>15,.1f} {r['modeled_cycles_per_iteration']:>14.1f}")
    print(f"\nA registered kprobe (empty guest pre_handler) on {KPROBE_AT}, getppid workload "
          f"({args.iterations} calls per task), one CPU; cost per hit over the run without it:\n")
    how = max(len("how the instruction runs"), *(len(r["kind"]) for r in kprobes))
    print(f"{'arch':8} {'how the instruction runs':{how}} {'hits':>6} {'instructions':>12} "
          f"{'modeled cycles':>15} {'traps':>6} {'checksum':>9}")
    for r in kprobes:
        print(f"{r['arch']:8} {r['kind']:{how}} {r['hits']:>6,} "
              f"{r['instructions_per_hit']:>12.1f} "
              f"{r['modeled_cycles_per_hit']:>15,.1f} {r['traps_per_hit']:>6.1f} "
              f"{'ok' if r['checksum_ok'] else 'MISMATCH':>9}")
    queued = [r["arch"] for r in kprobes if r["optimizer"] == "queued"]
    if queued:
        print(f"\nOn {' and '.join(queued)}, register_kprobe also queued the probe for the "
              "kprobe optimizer, which\nwrites its jump 5 jiffies later, after this run "
              "(kisim kprobe --opt runs it first).")
    print("\nGuest kernel (defconfig), hackbench on 2 CPUs, every marker dormant vs armed "
          "to the no-op guest probe:\n")
    print(f"{'arch':8} {'markers':8} {'instructions':>12} {'modeled cycles':>15} {'checksum':>9}")
    for r in kernel:
        print(f"{r['arch']:8} {r['markers']:8} {r['instructions']:>12,} "
              f"{r['modeled_cycles']:>15,.0f} {'ok' if r['checksum_ok'] else 'MISMATCH':>9}")
    print("\nModeled cycles come from:")
    for r in rows:
        print(f"  {r['arch']:8} {r['cycles']}")
    print("Instruction counts are exact; modeled cycles are not measurements (docs/timing.md; "
          "`kisim arches --json` lists every constant and its source).")
    return 0 if all(r["checksum_ok"] for r in kernel + kprobes) else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="dormant site vs a registered kprobe, and markers, on "
                                    "every arch", description=__doc__)
    p.add_argument("--iterations", type=int, default=1000, metavar="N",
                   help=f"loop iterations and getppid calls per task, 1..{MAX_ITERATIONS} "
                        "(default 1000)")
    add_cycles(p, "timing")
    add_json(p)
    p.set_defaults(func=run)
