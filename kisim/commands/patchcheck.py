"""``kisim patchcheck``: the SMP patch-safety checker (patchcheck/checker.py).

Exit status: 0 when no interleaving produced a finding (``--ablate``: every
removed step was caught and the protocol as written was clean), 1
otherwise, 2 on bad input (a user protocol that raises or never returns
too), 130 on Ctrl-C (after printing what was found), 143 on SIGTERM.
Each finding prints its seed and the command that replays it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

import fsio
from kisim.commands.common import (add_arch, add_cpus, add_jobs, add_json, add_modules, add_set,
                                   arch_of, cpus_text, jobs, only_with, overrides, print_json)
from kisim.errors import INTERRUPTED, UsageError
from kisim.progress import progress
from patchcheck.checker import KINDS, Finding
from patchcheck.guard import DEFAULT_PROTOCOL_TIMEOUT, MAX_PROTOCOL_TIMEOUT
from patchcheck.sites import DEFAULT_SITES, SITE_KINDS
from patchcheck.sweep import (MAX_SEED, MAX_SEEDS, ON_HANG, CheckerError, CheckResult, CheckSpec,
                              ablate, load_protocol, sweep)

DEFAULT_SEEDS = 10_000
ABLATE_SEEDS = 1_000
KERNEL_SEEDS = 20          # each one boots the guest kernel and runs hackbench


def _print(result: CheckResult, show: int) -> None:
    spec = result.spec
    print(f"patchcheck {spec.label}: {result.protocol}, {cpus_text(spec.cpus)}, sites "
          f"{','.join(spec.sites)}: "
          f"{result.interleavings} interleavings in {result.seconds:.1f} s, "
          f"{result.total} findings in {result.seeds_with_findings} interleavings"
          + (" (interrupted)" if result.interrupted else ""))
    if not result.total:
        return
    print("  by kind: " + ", ".join(f"{k} {result.counts[k]} (first seed "
                                    f"{result.first[k][0].seed})"
                                    for k in KINDS if result.counts[k]))
    for f in result.findings[:show]:
        print("  " + f.line())
        print("    replay: " + spec.replay_command(f.seed))
    if result.total > show:
        print(f"  ... {result.total - show} more (--show N, --findings-out FILE)")


def _spec(args: argparse.Namespace) -> CheckSpec:
    arch = arch_of(args)
    if args.show < 0:
        raise UsageError(f"--show {args.show}: the number of findings to list is at least 0")
    # --guest-protocol and --patching-source imply --guest
    guest = args.guest or args.guest_protocol is not None or args.patching_source is not None
    if guest and args.protocol is not None:
        raise UsageError("--guest-protocol checks your C; --protocol a Python protocol: "
                         "choose one")
    if args.modules and not (args.kernel or guest):
        raise UsageError("--module builds into the guest kernel (--kernel) or the guest's "
                         "patching code (--guest)")
    only_with("--guest", [(f"--on-hang {args.on_hang}", args.on_hang != "stop" and not guest)],
              "a --protocol that does not return is stopped by --protocol-timeout")
    if args.guest_protocol is not None and not args.modules:
        raise UsageError("--guest-protocol NAME checks a C function of a --module file: it "
                         "needs --module")
    only_with("--protocol", [("--protocol-timeout", args.protocol_timeout
                              != DEFAULT_PROTOCOL_TIMEOUT and not args.protocol)],
              "the kisim protocols and the guest's code are not timed by it")
    if not 0 < args.protocol_timeout <= MAX_PROTOCOL_TIMEOUT:   # also refuses nan
        raise UsageError(f"--protocol-timeout {args.protocol_timeout:g}: seconds in "
                         f"(0, {MAX_PROTOCOL_TIMEOUT:g}]")
    protocol, path = None, None
    if args.protocol is not None:
        if args.naive:
            raise UsageError("--naive and --protocol exclude each other")
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        _, path = load_protocol(args.protocol, args.protocol_timeout)
        protocol = args.protocol
    return CheckSpec(arch.name, args.cpus, protocol, args.naive, args.without, path,
                     args.kernel, args.site, protocol_timeout=args.protocol_timeout,
                     modules=tuple(args.modules), overrides=overrides(args),
                     guest=guest, guest_protocol=args.guest_protocol,
                     patching_source=args.patching_source, on_hang=args.on_hang)


def _seeds(args: argparse.Namespace, default: int) -> range:
    count = default if args.seeds is None else args.seeds
    if args.replay is not None:
        if args.seeds is not None or args.first_seed != 0:
            raise UsageError("--replay SEED runs that one interleaving: drop --seeds and "
                             "--first-seed")
        first, count = args.replay, 1
    else:
        first = args.first_seed
    if not 1 <= count <= MAX_SEEDS:
        raise UsageError(f"--seeds {count} out of range 1..{MAX_SEEDS}")
    if not 0 <= first <= MAX_SEED - count:
        raise UsageError(f"seed {first} out of range 0..{MAX_SEED - count}")
    return range(first, first + count)


def _ablate(args: argparse.Namespace, spec: CheckSpec, seeds: range, **kw: object) -> int:
    if args.without is not None:
        raise UsageError("--ablate removes each step in turn; drop --without")
    done = ablate(spec, seeds, **kw)
    rows = done.rows
    if args.json:
        print_json(done.to_json())
    else:
        print(f"patchcheck {spec.label} --ablate: {done.protocol}, {cpus_text(spec.cpus)}, "
              f"sites {','.join(spec.sites)}, each step removed in turn, up to {len(seeds)} "
              "seeds each" + (" (interrupted)" if done.interrupted else ""))
        step = max([22] + [len(r.step) + 1 for r in rows])
        kind = max([12] + [len(r.kind or "") + 1 for r in rows])
        print(f"  {'step removed':<{step}} {'caught':<7} {'seeds run':<10} {'first seed':<11} "
              f"{'kind':<{kind}} replay")
        for r in rows:
            seed = "-" if r.first_seed is None else str(r.first_seed)
            print(f"  {r.step:<{step}} {'yes' if r.caught else 'no':<7} {r.seeds_run:<10} "
                  f"{seed:<11} {r.kind or '-':<{kind}} {r.replay or ''}".rstrip())
    if done.interrupted:
        return INTERRUPTED
    return 0 if done.ok else 1


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CheckerError as err:
        raise UsageError(str(err)) from None


def _run(args: argparse.Namespace) -> int:
    spec = _spec(args)
    seeds = _seeds(args, KERNEL_SEEDS if args.kernel else
                   ABLATE_SEEDS if args.ablate else DEFAULT_SEEDS)
    if args.findings_out is not None:
        if args.ablate:
            raise UsageError("--findings-out lists a sweep's findings; --ablate has none")
        fsio.check_writable(args.findings_out)        # refused before the run, not after
    workers = jobs(args)
    # Findings stream to an anonymous file; --findings-out FILE is replaced by
    # it only when the sweep completes, so a failed or cut-short run leaves FILE as it was.
    with tempfile.TemporaryFile("w+") as spool, \
            progress(f"patchcheck {spec.label}", total=None if args.ablate else len(seeds),
                     enabled=not args.json) as advance:
        kw = {"jobs": workers, "scheduler": args.scheduler, "progress": advance}
        if args.ablate:
            return _ablate(args, spec, seeds, **kw)

        def stream(f: Finding) -> None:
            spool.write(json.dumps(f.to_json()) + "\n")
        result = sweep(spec, seeds, on_finding=stream if args.findings_out else None, **kw)
        if args.findings_out is not None and not result.interrupted:
            spool.seek(0)
            with fsio.atomic_open(args.findings_out) as out:
                shutil.copyfileobj(spool, out)
    if args.json:
        print_json(result.to_json())
    else:
        _print(result, args.show)
    if result.interrupted:
        return INTERRUPTED
    return 1 if result.total else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "patchcheck", help="check a text-patching protocol against CPUs running through it",
        description="Run seeded interleavings of live text patching: the host enables and "
                    "disables patchable sites (default: a jump-label site, nop <-> jmp, and a "
                    "call site, nop <-> call; --site adds ftrace, kprobe and optprobe sites) "
                    "while every CPU loops through them. Each CPU fetches from its own view "
                    "of text: stores reach it piece by piece (x86 bytes, ARM/PPC aligned "
                    "words) at seeded times; a sync delivers what the arch guarantees (ARM/"
                    "PPC: only flushed lines). Reports torn, stale, wild-branch and fault "
                    "executions, each with the seed and command that replay it. "
                    "--set configures the kernel checked: --set THUMB2_KERNEL=y runs the "
                    "loop in Thumb state with Thumb-2 encodings (--kernel: boots that build). "
                    "Exit 0: no findings; 1: findings; 2: bad input (also a --protocol that "
                    "raises, has the wrong signature or does not return); 130: interrupted "
                    "(SIGINT; partial results printed); 143: SIGTERM. Worker processes are "
                    "stopped with the command, whatever ends it.")
    add_arch(p)
    add_set(p)          # the kernel's configuration: THUMB2_KERNEL=y checks the Thumb-2 build
    add_cpus(p, default=2)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--naive", action="store_true",
                       help="check a deliberately broken patcher (plain stores, one sync)")
    which.add_argument("--protocol", metavar="MODULE:FUNCTION",
                       help="check your own protocol(port, sites) (see docs/patchcheck.md)")
    which.add_argument("--guest", action="store_true",
                       help="check the kernel's own patching C (v5.10 text_poke_bp_batch, "
                            "patch_text under stop_machine, patch_instruction) run by CPU 0, "
                            "with real IPIs and interrupt entries; --without/--ablate "
                            "compile its steps out")
    p.add_argument("--guest-protocol", metavar="NAME",
                   help="with --module FILE.c: check your C function "
                        "NAME(const struct pc_site *sites, int nr) on the CPUs as --guest "
                        "checks the kernel's (implies --guest; see docs/patchcheck.md)")
    p.add_argument("--patching-source", metavar="FILE.c",
                   help="build the guest with your version of the arch's patching file "
                        "(arches/<arch>/patching.c, the same entry points) in its place: "
                        "checks an edited text_poke_bp_batch() (implies --guest)")
    p.add_argument("--on-hang", choices=ON_HANG, default="stop",
                   help="with --guest: when the patching code does not return (a 'hang' "
                        "finding, reported once): stop the sweep there (default) or continue "
                        "with the next seeds")
    p.add_argument("--site", default=",".join(DEFAULT_SITES), metavar="KIND[,KIND...]",
                   help="site kinds in the loop (default %(default)s): "
                        + "; ".join(f"{k.name}: {k.summary}" for k in SITE_KINDS.values()))
    p.add_argument("--without", metavar="STEP",
                   help="remove one step of the protocol (names: see --ablate)")
    p.add_argument("--ablate", action="store_true",
                   help="remove each step of the protocol in turn and tabulate what catches it")
    p.add_argument("--kernel", action="store_true",
                   help="patch the guest kernel's marker sites (jump labels, immediate "
                        "values; with --site ftrace its mcount sites) while its CPUs run "
                        "hackbench; checks the checksum too")
    p.add_argument("--seeds", type=int, default=None, metavar="N",
                   help=f"interleavings to run, 1..{MAX_SEEDS} (default {DEFAULT_SEEDS}; "
                        f"with --ablate: at most {ABLATE_SEEDS} per variant; with --kernel: "
                        f"{KERNEL_SEEDS} boots)")
    p.add_argument("--first-seed", type=int, default=0, metavar="S",
                   help="seed of the first interleaving (default 0)")
    p.add_argument("--replay", type=int, default=None, metavar="SEED",
                   help="run only the interleaving SEED (no --seeds, --first-seed)")
    add_jobs(p)
    p.add_argument("--protocol-timeout", type=float, default=DEFAULT_PROTOCOL_TIMEOUT,
                   metavar="S",
                   help=f"stop a --protocol whose one run takes over S seconds (default "
                        f"{DEFAULT_PROTOCOL_TIMEOUT:g}; exit 2); not enforced on Dask workers")
    p.add_argument("--show", type=int, default=10, metavar="N",
                   help="findings to list (default 10)")
    p.add_argument("--findings-out", metavar="FILE",
                   help="write every finding to FILE as JSON lines, when the run completes "
                        "(FILE is left as it was on error or Ctrl-C)")
    add_modules(p, expect=False)
    add_json(p)
    p.set_defaults(func=run)
