"""``kisim symbols``: a module's functions, where they are and whether a kprobe may go there.

``kisim symbols --arch A --module m.c [MOD ...]`` lists each function the
modules (default: every ``--module``) define: address, size, and whether
``register_kprobe`` accepts its entry, or the kernel's reason it refuses.
Name one of them as ``MOD:FUNC`` where two modules define the same name
(``--at``, ``--handler``, ``--workload``, ``--every-instruction``).
"""
from __future__ import annotations

import argparse

from kbuild import build
from kisim.commands.common import add_arch, add_json, add_modules, print_json
from kisim.errors import UsageError
from lab.symbols import list_functions


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("symbols", help="list a module's functions: address, size, "
                                              "probe-able or why not",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arch(p)
    add_modules(p, expect=False)
    p.add_argument("names", nargs="*", metavar="MOD", help="modules to list (default: all)")
    add_json(p)
    p.set_defaults(func=cmd_symbols)


def cmd_symbols(args: argparse.Namespace) -> int:
    if not args.modules:
        raise UsageError("symbols lists modules' functions: give --module FILE.c")
    rows = list_functions(build(args.arch, modules=args.modules), args.names or None)
    if args.json:
        print_json({"arch": args.arch, "functions": [r.to_json() for r in rows]})
        return 0
    width = max((len(r.module) + len(r.name) + 1 for r in rows), default=8)
    print(f"{'function':{width}} {'address':>10} {'size':>6}  kprobe at entry")
    for r in rows:
        print(f"{r.module + ':' + r.name:{width}} {r.address:#10x} {r.size:>6}  "
              f"{'yes' if r.probeable else 'no: ' + str(r.reason)}")
    return 0
