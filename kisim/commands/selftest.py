"""``kisim selftest``: run the kernel's own self-tests, ported as guest modules.

Each suite (selftests/: lib/test_kprobes.c, ...) is built into the guest
kernel as a module whose init runs its cases and prints KTAP; this prints,
per suite, the cases run, passed, failed and refused (with the kernel's
reason), and each case that did not pass. Exit 1 if any case failed.
"""
from __future__ import annotations

import argparse

from kisim.commands.common import add_arch, add_json, add_set, overrides, print_json
from kisim.errors import UsageError
from selftests import Status
from selftests.run import config_clash, run_suite, suites_for


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("selftest", help="run the kernel's ported self-tests (KTAP)",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arch(p)
    p.add_argument("--suite", default=None, metavar="S",
                   help="run only this suite (default: every suite that applies to the arch)")
    add_set(p)
    add_json(p)
    p.set_defaults(func=cmd_selftest)


def cmd_selftest(args: argparse.Namespace) -> int:
    sets = overrides(args)
    try:
        suites = suites_for(args.arch, args.suite, sets)
    except KeyError as err:
        raise UsageError(err.args[0]) from None
    if not suites:
        raise UsageError(f"no selftest suite applies to {args.arch}"
                         + (f" (--suite {args.suite})" if args.suite else ""))
    clash = next(filter(None, (config_clash(s, sets) for s in suites)), None)
    if clash:
        raise UsageError(clash)
    results = [run_suite(suite, args.arch, sets) for suite in suites]
    failed = any(not r.ok for r in results)
    if args.json:
        print_json({"arch": args.arch, "ok": not failed,
                    "suites": [r.to_json() for r in results]})
        return 1 if failed else 0
    for r in results:
        print(f"{r.suite} ({r.kernel_file}, {r.version}) on {r.arch}: {len(r.cases)} run, "
              f"{r.count(Status.PASSED)} passed, {r.count(Status.FAILED)} failed, "
              f"{r.count(Status.REFUSED)} refused")
        for case in r.cases:
            if case.status is not Status.PASSED:
                detail = f": {case.detail}" if case.detail else ""
                print(f"  {case.status.value:8} {case.number:3} {case.name}{detail}")
        if not r.ok:
            print("  console:")
            print("\n".join(f"    {line}" for line in r.console.splitlines()))
    return 1 if failed else 0
