"""``kisim patchcheck``: the SMP patch-safety checker (patcher/checker.py).

Exit status: 0 when no interleaving produced a finding, 1 when at least one
did (each is listed with the seed that replays it: ``--replay SEED``), 2 on
bad input.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Callable

from kisim.commands.common import MAX_CPUS, add_arch, add_cpus, add_json, arch_of, print_json
from kisim.errors import UsageError
from patcher.checker import CheckResult, PatchChecker
from patcher.ftrace_check import FtracePatchChecker

DEFAULT_SEEDS = 10_000


def _progress(total: int) -> Callable[[int, int], None]:
    """Progress on stderr: one updated line on a terminal, a line every ~5 s otherwise."""
    tty = sys.stderr.isatty()
    calls = Counter()

    def show(done: int, findings: int) -> None:
        calls["n"] += 1
        text = f"patchcheck: {done}/{total} interleavings, {findings} findings"
        if tty:
            print("\r" + text, end="", file=sys.stderr, flush=True)
        elif calls["n"] % 10 == 0:
            print(text, file=sys.stderr, flush=True)
    return show


def _print(result: CheckResult, show: int, site: str = "loop") -> None:
    what = "naive patcher" if result.naive else "protocol"
    print(f"patchcheck {result.arch}: {what} {result.protocol}, {result.cpus} CPUs: "
          f"{result.interleavings} interleavings in {result.seconds:.1f} s, "
          f"{len(result.findings)} findings in {len(result.seeds_with_findings)} interleavings")
    if not result.findings:
        return
    kinds = Counter(f.kind for f in result.findings)
    print("  by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    for f in result.findings[:show]:
        print("  " + f.line())
    if len(result.findings) > show:
        print(f"  ... {len(result.findings) - show} more (--show N, or --json)")
    print(f"  replay one: kisim patchcheck --arch {result.arch}"
          f"{' --naive' if result.naive else ''}"
          f"{'' if site == 'loop' else ' --site ' + site} --cpus {result.cpus} "
          f"--replay {result.findings[0].seed}")


def run(args: argparse.Namespace) -> int:
    arch = arch_of(args)
    if not 1 <= args.cpus <= MAX_CPUS:
        raise UsageError(f"--cpus {args.cpus} out of range 1..{MAX_CPUS}")
    if args.seeds < 1:
        raise UsageError(f"--seeds {args.seeds} must be at least 1")
    kind = FtracePatchChecker if args.site == "ftrace" else PatchChecker
    checker = kind(arch, args.cpus, naive=args.naive)
    if args.replay is not None:
        seeds = range(args.replay, args.replay + 1)
    else:
        seeds = range(args.first_seed, args.first_seed + args.seeds)
    progress = None if args.json else _progress(len(seeds))
    result = checker.run(seeds, progress)
    if progress is not None and sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    if args.json:
        out = result.to_json()
        out["executed"] = dict(checker.executed)
        print_json(out)
    else:
        _print(result, args.show, args.site)
    return 1 if result.findings else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "patchcheck", help="check a text-patching protocol against CPUs running through it",
        description="Run seeded interleavings of live text patching: the host enables and "
                    "disables a jump-label site (nop <-> jmp) and a call site (nop <-> call) "
                    "while every CPU loops through them; CPUs run a seeded number of "
                    "instructions between every store and every sync of the protocol. "
                    "x86 stores tear byte by byte; every arch fetches stale text until "
                    "synced. Reports each CPU that executed a torn or unexpected "
                    "instruction, with the seed to replay it. Exit 0: no findings; "
                    "1: findings; 2: bad input.")
    add_arch(p)
    add_cpus(p, default=2)
    p.add_argument("--naive", action="store_true",
                   help="check a deliberately broken patcher instead (x86: plain multi-byte "
                        "store; ARM/PPC: no icache flush or sync)")
    p.add_argument("--site", choices=("loop", "ftrace"), default="loop",
                   help="loop: a jump-label and a call site (default); ftrace: one mcount "
                        "site, ftrace nop <-> call, with the arch's -pg prefix")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, metavar="N",
                   help=f"interleavings to run (default {DEFAULT_SEEDS})")
    p.add_argument("--first-seed", type=int, default=0, metavar="S",
                   help="seed of the first interleaving (default 0)")
    p.add_argument("--replay", type=int, default=None, metavar="SEED",
                   help="run only the interleaving SEED")
    p.add_argument("--show", type=int, default=10, metavar="N",
                   help="findings to list (default 10)")
    add_json(p)
    p.set_defaults(func=run)
