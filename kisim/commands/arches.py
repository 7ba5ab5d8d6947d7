"""``kisim arches``: the registered architectures and their key facts."""
from __future__ import annotations

import argparse
from dataclasses import asdict

from arches import ARCHES, Arch
from kisim.commands.common import add_json, print_json


def facts(arch: Arch) -> dict:
    lo, hi = arch.branch_reach
    return {
        "name": arch.name,
        "summary": arch.summary,
        "bits": arch.bits,
        "endian": arch.endian,
        "insn_align": arch.insn_align,
        "max_insn_len": arch.max_insn_len,
        "registers": {"pc": arch.pc, "sp": arch.sp, "ra": arch.ra,
                      "args": list(arch.args), "ret": arch.ret},
        "kprobe_breakpoint": arch.kprobe_breakpoint(arch.nop(arch.insn_align)).hex(),
        "nops": {str(size): nop.hex() for size, nop in arch.nops.items()},
        "branch_reach": [lo, hi],
        "costs": {name: {"modeled_cycles": c.cycles, "source": c.source}
                  for name, c in arch.costs.items()},
        "cc_target": arch.cc_target,
        "reference_core": None if arch.core is None else asdict(arch.core),
    }


def run(args: argparse.Namespace) -> int:
    rows = [facts(arch) for arch in ARCHES.values()]
    if args.json:
        print_json(rows)
        return 0
    header = ("arch", "bits", "endian", "align", "max len", "pc/sp/ra", "breakpoint",
              "site nop", "branch reach", "trap cycles")
    table = [header]
    for arch, f in zip(ARCHES.values(), rows):
        site_nop = arch.site_nop.hex(" ")
        reach = f"{f['branch_reach'][0] // 2**20:+d}..{(f['branch_reach'][1] + 1) // 2**20:+d} MiB"
        table.append((arch.name, str(arch.bits), arch.endian, str(arch.insn_align),
                      str(arch.max_insn_len), f"{arch.pc}/{arch.sp}/{arch.ra or '[stack]'}",
                      f["kprobe_breakpoint"], site_nop, reach, f"{arch.cost('trap'):g}"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print("\nmodeled cycles: every cost-table constant and its source is in `kisim arches --json`")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("arches", help="list the architectures and their key facts",
                       description="List the registered architectures: encodings, "
                                   "registers, branch reach and modeled trap cost.")
    add_json(p)
    p.set_defaults(func=run)
