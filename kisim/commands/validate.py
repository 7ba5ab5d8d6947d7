"""``kisim validate``: the timing model beside the published microbenchmarks.

Runs Documentation/immediate.txt's loop and seed 002's hackbench (the mcount
tracing utility) on each arch's reference core (lab/microbench.py) and
prints each modeled figure beside the published one, with the ratio.
"""
from __future__ import annotations

import argparse

from arches import NAMES
from kisim.commands.common import add_json, check_arches, print_json
from kisim.progress import progress
from lab.microbench import EXPERIMENTS

NOTE = ("Modeled cycles of each arch's reference core (docs/timing.md); the published "
        "figures were measured on other machines (a 3 GHz Pentium 4 for immediate.txt), "
        "so a ratio compares a model with a measurement, never a fit.")


def print_doc(doc: dict) -> None:
    print(f"\n{doc['experiment']} on {doc['arch']} ({doc['core']}, timing model)")
    print(f"  {'figure':58} {'published':>10} {'model':>10} {'ratio':>7}  within 2x")
    for f in doc["figures"]:
        print(f"  {f['figure']:58} {f['published']:>10.2f} {f['model']:>10.2f} "
              f"{f['ratio']:>7.2f}  {'yes' if f['within_2x'] else 'no'}")
        if f["detail"]:
            print(f"  {'':58} {f['detail']}")


def run(args: argparse.Namespace) -> int:
    arches = args.arch or list(NAMES)
    check_arches(arches)
    chosen = args.experiment or list(EXPERIMENTS)
    docs = []
    with progress("kisim validate", total=len(arches) * len(chosen),
                  enabled=not args.json) as advance:
        for name in arches:
            for key in chosen:
                docs.append(EXPERIMENTS[key](name))
                advance(description=f"{name}: {key}")
    if args.json:
        print_json({"kind": "kisim-validate", "modeled": True, "note": NOTE,
                    "experiments": docs})
        return 0
    for doc in docs:
        print_doc(doc)
    print(f"\n{NOTE}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="the timing model beside published microbenchmarks",
                       description="Run Documentation/immediate.txt's loop (a guest module) "
                                   "and seed 002's hackbench with mcount live and with every "
                                   "function traced, on each arch's reference core, and "
                                   "print each modeled figure beside the published one.")
    p.add_argument("--arch", action="extend", nargs="+", metavar="ARCH",
                   help=f"arches to run (default all: {', '.join(NAMES)})")
    p.add_argument("--experiment", action="extend", nargs="+", choices=list(EXPERIMENTS),
                   help="experiments to run (default all)")
    add_json(p)
    p.set_defaults(func=run)
