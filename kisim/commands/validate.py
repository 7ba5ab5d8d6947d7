"""``kisim validate``: the timing model beside the published microbenchmarks.

Runs Documentation/immediate.txt's loop, LTTng's marker microbenchmark, seed
002's hackbench (the mcount tracing utility) and the probe hits of
Documentation/trace/kprobes.rst on each arch's reference core
(lab/microbench.py) and prints each modeled figure beside the published one,
with the ratio: of the overheads for a total over a baseline, of the values
otherwise. Extrapolated figures are shown, never judged. With ``--layouts
N`` every figure is the median over N randomized text layouts, with its
range. It ends with how many judged figures are within 2x on each arch.
"""
from __future__ import annotations

import argparse

from arches import NAMES
from kisim.commands.common import (add_jobs, add_json, add_layouts, check_arches, jobs,
                                   layout_sweep, print_json)
from kisim.errors import UsageError
from kisim.progress import progress
from lab.microbench import EXPERIMENTS, figures_over_samples, within_2x_by_arch
from lab.samples import SampleError, run_samples, tasks
from lab.verdict import FAILS, HOLDS

NOTE = ("Modeled cycles of each arch's reference core (docs/timing.md); the published "
        "figures were measured on other machines (a 3 GHz Pentium 4 for immediate.txt and "
        "LTTng's markers microbenchmark; kprobes.rst's machines, in microseconds, set "
        "beside the model's at its core's clock), "
        "so a ratio compares a model with a measurement, never a fit. A total over a "
        "baseline is judged on its overhead, (model - 1) / (published - 1); an "
        "extrapolation is shown, not judged.")


def _within(f: dict) -> str:
    if f["within_2x"] is None:
        return "extrapolated, not judged"
    if "n" not in f:
        return "yes" if f["within_2x"] else "no"
    said = {HOLDS: "yes", FAILS: "no"}.get(f["verdict"], f["verdict"])
    return f"{said} (in {f['within_2x_samples']}/{f['n']})"


def _number(value: float, unit: str) -> str:
    """A figure's value as printed: microseconds to the nanosecond, the rest to 1/100."""
    return f"{value:>z10.3f}" if unit == "us" else f"{value:>z10.2f}"


def print_doc(doc: dict) -> None:
    over = f", median over {doc['n']} layouts [min, max]" if "n" in doc else ""
    print(f"\n{doc['experiment']} on {doc['arch']} ({doc['core']}, timing model{over})")
    w = max([58] + [len(f["figure"]) for f in doc["figures"]])     # the labels' column
    print(f"  {'figure':{w}} {'published':>10} {'model':>10} {'ratio':>7}  within 2x")
    for f in doc["figures"]:
        print(f"  {f['figure']:{w}} {_number(f['published'], f['unit'])} "
              f"{_number(f['model'], f['unit'])} {f['ratio']:>z7.2f}  {_within(f)}")
        if "model_spread" in f:
            s = f["model_spread"]
            low, high = (_number(s[k], f["unit"]).strip() for k in ("min", "max"))
            print(f"  {'':{w}} model range [{low}, {high}]")
        if f["overhead"]:
            print(f"  {'':{w}} ratio of the overheads: model {f['model'] - 1:+.2%}, "
                  f"published {f['published'] - 1:+.2%}")
        if f["detail"]:
            print(f"  {'':{w}} {f['detail']}")
    for n in doc.get("not_compared", ()):
        print(f"  not compared: {n['published']}: {n['why']}")


def run(args: argparse.Namespace) -> int:
    arches = args.arch or list(NAMES)
    check_arches(arches)
    chosen = args.experiment or list(EXPERIMENTS)
    seeds = layout_sweep(args) or [None]
    try:
        todo = [t for key in chosen
                for t in tasks(EXPERIMENTS[key], arches, seeds, vary=args.vary_assumptions)]
        samples: dict[tuple[str, str], list[dict]] = {}
        with progress("kisim validate", total=len(todo), enabled=not args.json) as advance:
            for task, doc in zip(todo, run_samples(todo, jobs=jobs(args),
                                                   scheduler=args.scheduler)):
                samples.setdefault((doc["experiment"], task.arch), []).append(doc)
                advance(description=f"{task.arch}: {doc['experiment']}")
    except SampleError as err:
        raise UsageError(str(err)) from None
    docs = [d[0] if args.layouts is None else figures_over_samples(d) for d in samples.values()]
    summary = within_2x_by_arch(docs)
    if args.json:
        print_json({"kind": "kisim-validate", "modeled": True, "note": NOTE,
                    "experiments": docs, "within_2x": summary})
        return 0
    for doc in docs:
        print_doc(doc)
    print("\nwithin 2x of the published figure, of the figures judged:")
    for arch, n in summary.items():
        undecided = f", {n['undecided']} undecided by the model" if n["undecided"] else ""
        print(f"  {arch:8} {n['yes']} of {n['judged']} ({', '.join(chosen)}){undecided}")
    print(f"\n{NOTE}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="the timing model beside published microbenchmarks",
                       description="Run Documentation/immediate.txt's loop and LTTng's "
                                   "marker microbenchmark (guest modules), seed 002's "
                                   "hackbench with mcount live and with every function "
                                   "traced, and a kprobe, boosted kprobe, optprobe and "
                                   "kretprobe on kmalloc (Documentation/trace/kprobes.rst), "
                                   "on each arch's reference core, and print each modeled "
                                   "figure beside the published one.")
    p.add_argument("--arch", action="extend", nargs="+", metavar="ARCH",
                   help=f"arches to run (default all: {', '.join(NAMES)})")
    p.add_argument("--experiment", action="extend", nargs="+", choices=list(EXPERIMENTS),
                   help="experiments to run (default all)")
    add_layouts(p)
    add_jobs(p)
    add_json(p)
    p.set_defaults(func=run)
