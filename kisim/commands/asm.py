"""``kisim asm``: assemble, show and optionally run a snippet."""
from __future__ import annotations

import argparse
import sys

import fsio
from kisim.commands.common import (MAX_BUDGET, MAX_QUANTUM, add_arch, add_cpus, add_json, arch_of,
                                   int_in, only_with, print_json)
from kisim.errors import UsageError
from sim.asm import MAX_CODE, MAX_SOURCE, assemble
from sim.asm import listing as decode_all
from sim.errors import GuestFault
from sim.snippet import SNIPPET_BASE, run_snippet

#: Seconds Keystone may take on a user's text (it never returns on some
#: malformed directives); a snippet within the limits takes well under one.
KEYSTONE_SECONDS = 10.0
QUANTUM = 10_000                    # --quantum's default
BUDGET = 10_000_000                 # --max-instructions' default


def _check_run_options(args: argparse.Namespace) -> None:
    """The options that shape a run, refused without --run rather than ignored."""
    if not args.run:
        only_with("--run", (("--cpus", args.cpus != 1), ("--quantum", args.quantum != QUANTUM),
                            ("--seed", args.seed is not None),
                            ("--max-instructions", args.max_instructions != BUDGET)))


def _source(args: argparse.Namespace) -> str:
    if args.file and args.text:
        raise UsageError("give assembly text or -f FILE, not both")
    if args.file:
        name = "<stdin>" if args.file == "-" else args.file
        if args.file == "-":
            if sys.stdin is None:
                raise UsageError("<stdin>: standard input is closed")
            raw = sys.stdin.buffer.read(MAX_SOURCE + 1)
            if len(raw) > MAX_SOURCE:
                raise UsageError(f"<stdin>: over the {MAX_SOURCE}-byte limit of assembly")
        else:
            raw = fsio.read_regular(args.file, limit=MAX_SOURCE, what="assembly source")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw[:err.start].count(b"\n") + 1
            raise UsageError(f"{name}:{line}: not UTF-8 text "
                             f"(byte {raw[err.start]:#04x} at offset {err.start})") from None
    if not args.text:
        raise UsageError("no assembly given (text argument or -f FILE)")
    return args.text


def run(args: argparse.Namespace) -> int:
    arch = arch_of(args)
    _check_run_options(args)
    text = _source(args)
    source = None if not args.file else ("<stdin>" if args.file == "-" else args.file)
    code = assemble(arch, text, SNIPPET_BASE, source=source, timeout=KEYSTONE_SECONDS)
    listing = decode_all(arch, code, SNIPPET_BASE)
    undecodable = [i for i in listing if i.mnemonic == ".byte"]
    if args.run and undecodable:
        raise UsageError(f"{arch.name}: bytes at {undecodable[0].address:#x} "
                         f"({undecodable[0].bytes.hex(' ')}) do not decode as {arch.name} "
                         "instructions; not running them (drop --run to see the listing)")
    out: dict = {"arch": arch.name, "cpus": args.cpus, "base": SNIPPET_BASE,
                 "bytes": code.hex(),
                 "disassembly": [{"address": i.address, "bytes": i.bytes.hex(), "text": i.text}
                                 for i in listing]}
    snippet = None
    if args.run:
        try:
            snippet = run_snippet(arch, text, args.cpus, quantum=args.quantum, seed=args.seed,
                                  max_instructions=args.max_instructions)
        except GuestFault as fault:
            if not args.json:
                raise
            out["fault"] = fault.to_json()
            print_json(out)
            print(f"kisim: guest fault: {fault}", file=sys.stderr)
            return 1
        out.update(per_cpu=snippet.per_cpu(), quantum=args.quantum, seed=args.seed,
                   traps=[{"cpu": t.cpu, "kind": t.kind.value, "address": t.address}
                          for t in snippet.traps])
    if args.json:
        print_json(out)
        return 0
    print(f"{arch.name}: {len(code)} bytes at {SNIPPET_BASE:#x}")
    width = max(len(i.bytes) for i in listing) * 3
    for i in listing:
        print(f"  {i.address:#8x}:  {i.bytes.hex(' '):<{width}} {i.text}")
    if snippet is not None:
        for cpu, entry in zip(snippet.machine.cpus, out["per_cpu"]):
            print(f"\nCPU {cpu.index}: {entry['instructions']} instructions, "
                  f"{entry['modeled_cycles']:g} modeled cycles"
                  + (f", events {entry['events']}" if entry["events"] else ""))
            regs = [f"{k}={v:#x}" for k, v in entry["registers"].items()]
            for j in range(0, len(regs), 6):
                print("  " + "  ".join(regs[j:j + 6]))
        if snippet.traps:
            print(f"\ntraps: {len(snippet.traps)} "
                  f"(first: {snippet.traps[0].kind.value} at {snippet.traps[0].address:#x})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("asm", help="assemble a snippet, disassemble it, optionally run it",
                       description="Assemble TEXT (Keystone), show bytes and disassembly "
                                   "(Capstone); with --run, execute it on every CPU until it "
                                   "falls off its end, and show registers, exact instruction "
                                   "counts and modeled cycles. Statements are separated by "
                                   f"';' or newlines. Limits: {MAX_SOURCE} bytes of source, "
                                   f"{MAX_CODE} bytes of code (.fill/.space/.org/.align/.rept "
                                   "sizes are checked before assembling); .incbin and .macro "
                                   "are refused.")
    add_arch(p)
    add_cpus(p)
    p.add_argument("text", nargs="?", help="assembly text, e.g. 'mov rax, 1; int3'")
    p.add_argument("-f", "--file", metavar="FILE", help="read assembly from FILE ('-': stdin)")
    p.add_argument("--run", action="store_true", help="execute the snippet")
    p.add_argument("--quantum", type=int_in(1, MAX_QUANTUM), default=QUANTUM, metavar="Q",
                   help=f"with --run: instructions per CPU turn, 1..{MAX_QUANTUM} "
                        f"(default {QUANTUM})")
    p.add_argument("--seed", type=int, default=None,
                   help="with --run: randomize turn lengths in 1..Q with this seed")
    p.add_argument("--max-instructions", type=int_in(1, MAX_BUDGET), default=BUDGET,
                   metavar="N", help=f"with --run: instruction budget for the whole run, "
                                     f"1..{MAX_BUDGET} (default {BUDGET})")
    add_json(p)
    p.set_defaults(func=run)
