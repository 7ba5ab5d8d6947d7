"""Accounting overhead: the same guest loop under raw Unicorn and under Machine.

Raw: one ``emu_start`` to the loop's end, no hooks, no counting, with
Unicorn's default TLB and with the identity TLB fill every Machine CPU uses
(``sim.native.use_virtual_tlb``: stores stay on QEMU's fast path).
Machine: turns of ``count=quantum`` instructions with exact retired counts,
modeled cycles and trap dispatch (sim/machine.py). Ratios are the Machine's
time over each raw time.

Two loops per arch: "kernel" (loads, stores, a call and a return per
iteration, like the guest kernel's code) and "alu" (four register-only
instructions, the worst case for a per-instruction counter). Run:

    .venv/bin/python benchmarks/bench_accounting.py [--iterations N] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import json
import time

import unicorn

from arches import ARCHES, Arch
from benchlib import parse_args, run_main
from sim.asm import assemble
from sim.native import use_virtual_tlb
from sim.snippet import SNIPPET_BASE, load_snippet

DATA = 0x200000

#: Loop kinds, each an assembly snippet every arch declares (``bench_<kind>``).
LOOPS = ("kernel", "alu")


def loop_text(kind: str, arch: Arch, n: int) -> str:
    return arch.snippet(f"bench_{kind}", n=n, nlo=n & 0xFFFF, nhi=n >> 16,
                        data=DATA, dlo=DATA & 0xFFFF, dhi=DATA >> 16)


def raw_seconds(arch: Arch, code: bytes, tlb_fill: bool) -> float:
    uc = unicorn.Uc(*arch.uc_mode)
    if tlb_fill:
        use_virtual_tlb(uc)
    uc.mem_map(SNIPPET_BASE, 0x10000)
    uc.mem_map(DATA, 0x10000)
    uc.mem_map(0x100000, 0x10000)
    uc.mem_write(SNIPPET_BASE, code)
    uc.reg_write(arch.uc_regs[arch.sp], 0x108000)
    start = time.perf_counter()
    uc.emu_start(SNIPPET_BASE, SNIPPET_BASE + len(code))
    return time.perf_counter() - start


def machine_run(arch: Arch, text: str, quantum: int) -> tuple[float, int]:
    run = load_snippet(arch, text, quantum=quantum)
    run.machine.map(DATA, 0x10000)
    start = time.perf_counter()
    run.machine.run()
    return time.perf_counter() - start, run.per_cpu()[0]["instructions"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=2_000_000)
    parser.add_argument("--quantum", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, iterations=1000, quantum=1000)
    rows = []
    for kind in LOOPS:
        for arch in ARCHES.values():
            text = loop_text(kind, arch, args.iterations)
            code = assemble(arch, text, SNIPPET_BASE)
            raw = min(raw_seconds(arch, code, False) for _ in range(3))
            raw_tlb = min(raw_seconds(arch, code, True) for _ in range(3))
            acc, insns = min(machine_run(arch, text, args.quantum) for _ in range(3))
            rows.append({"loop": kind, "arch": arch.name, "instructions": insns,
                         "raw_s": round(raw, 4), "raw_tlb_fill_s": round(raw_tlb, 4),
                         "machine_s": round(acc, 4), "ratio": round(acc / raw, 2),
                         "ratio_tlb_fill": round(acc / raw_tlb, 2)})
            if not args.json:
                print(f"{kind:6} {arch.name:7} {insns:>11,} insns  raw {raw:7.3f} s  "
                      f"raw+TLB fill {raw_tlb:7.3f} s  machine {acc:7.3f} s  ratios "
                      f"{acc / raw:5.2f}x / {acc / raw_tlb:5.2f}x", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    run_main(main)
