"""What the benchmarks share: ``--smallest``, the run the smoke test makes,
and bad input reported as ``kisim`` reports it.

Every script in benchmarks/ parses its options through :func:`parse_args`,
so every one takes ``--smallest``: each size option at the value the script
names (a few interleavings, sites or iterations), which checks that the
script still runs end to end without measuring anything worth printing
(tests/test_benchmarks.py runs each one so). Every script runs its
``main`` through :func:`run_main`, so that a bad option value or environment
(``KISIM_HOST_MARCH``, a workload size) is one line and exit 2, never a
traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, NoReturn


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


def run_main(main: Callable[[], int | None]) -> NoReturn:
    """Exit with ``main()``'s status; an error of bad input (kisim.errors.user_errors)
    is one line on stderr and exit 2."""
    from kisim.errors import one_line, user_errors
    try:
        status = main()
    except user_errors() as err:
        print(f"{Path(sys.argv[0]).stem}: error: {one_line(err)}", file=sys.stderr)
        sys.exit(2)
    sys.exit(status or 0)
