"""``kisim``: the command-line entry point.

Every subcommand lives in its own module under :mod:`kisim.commands` and
exposes ``register(subparsers)``, which adds its parser and sets ``func``.
Bad input ends with one line on stderr and exit 2; a guest fault prints its
report and exits 1. Neither ever shows a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from kisim import commands
from kisim.errors import user_errors


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kisim",
        description="Emulated multi-architecture kernel instrumentation simulator: "
                    "x86-64, ARM and PowerPC guests under Unicorn, with markers, "
                    "immediate values, jump labels, tracepoints, ftrace and kprobes.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"kisim.commands.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from sim.errors import GuestFault
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except GuestFault as fault:
        print(fault.report(), file=sys.stderr)
        return 1
    except user_errors() as err:
        print(f"kisim: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        sys.stderr.close()   # reader went away (e.g. `| head`): not an error
        return 0
    except KeyboardInterrupt:
        print("kisim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
