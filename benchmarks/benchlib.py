"""What the benchmarks share: ``--smallest``, the run the smoke test makes.

Every script in benchmarks/ parses its options through :func:`parse_args`,
so every one takes ``--smallest``: each size option at the value the script
names (a few interleavings, sites or iterations), which checks that the
script still runs end to end without measuring anything worth printing
(tests/test_benchmarks.py runs each one so).
"""
from __future__ import annotations

import argparse


def parse_args(parser: argparse.ArgumentParser, **smallest: object) -> argparse.Namespace:
    """``parser``'s options, with ``--smallest`` setting each of ``smallest`` (option
    dest -> value) over what the command line gave."""
    shown = ", ".join(f"--{dest.replace('_', '-')} {value}" for dest, value in smallest.items())
    parser.add_argument("--smallest", action="store_true",
                        help=f"the smallest run, to check the script runs ({shown})")
    args = parser.parse_args()
    if args.smallest:
        for dest, value in smallest.items():
            setattr(args, dest, value)
    return args
