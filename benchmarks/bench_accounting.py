"""Accounting overhead: the same guest loop under raw Unicorn and under Machine.

Raw: one ``emu_start`` to the loop's end, no hooks, no counting.
Machine: turns of ``count=quantum`` instructions with exact retired counts,
modeled cycles and trap dispatch (sim/machine.py).

Two loops per arch: "kernel" (loads, stores, a call and a return per
iteration, like the guest kernel's code) and "alu" (four register-only
instructions, the worst case for a per-instruction counter). Run:

    .venv/bin/python benchmarks/bench_accounting.py [--iterations N] [--json]
"""
from __future__ import annotations

import argparse
import json
import time

import unicorn

from arches import ARCHES, Arch
from sim.asm import assemble
from sim.snippet import SNIPPET_BASE, load_snippet

DATA = 0x200000

LOOPS = {
    "kernel": {
        "x86_64": "mov rcx, {n}; mov rsi, {data}; l: mov rdx, rcx; and rdx, 0xff8; "
                  "mov rax, [rsi + rdx]; add rax, rcx; mov [rsi + rdx], rax; call f; "
                  "dec rcx; jnz l; jmp e; f: add rbx, 1; ret; e: nop",
        "arm": "movw r1, #{nlo}; movt r1, #{nhi}; movw r4, #{dlo}; movt r4, #{dhi}; "
               "l: and r2, r1, #0xff0; ldr r0, [r4, r2]; add r0, r0, r1; str r0, [r4, r2]; "
               "bl f; subs r1, r1, #1; bne l; b e; f: add r5, r5, #1; bx lr; e: nop",
        "ppc32": "lis 4, {nhi}; ori 4, 4, {nlo}; lis 6, {dhi}; ori 6, 6, {dlo}; "
                 "l: andi. 5, 4, 0xff0; lwzx 3, 6, 5; add 3, 3, 4; stwx 3, 6, 5; bl f; "
                 "addi 4, 4, -1; cmpwi 4, 0; bne l; b e; f: addi 7, 7, 1; blr; e: nop",
    },
    "alu": {
        "x86_64": "mov rcx, {n}; l: add rax, rcx; xor rax, 3; dec rcx; jnz l",
        "arm": "movw r1, #{nlo}; movt r1, #{nhi}; l: add r0, r0, r1; eor r0, r0, #3; "
               "subs r1, r1, #1; bne l",
        "ppc32": "lis 4, {nhi}; ori 4, 4, {nlo}; l: add 3, 3, 4; xori 3, 3, 3; "
                 "addi 4, 4, -1; cmpwi 4, 0; bne l",
    },
}


def loop_text(kind: str, arch: Arch, n: int) -> str:
    return LOOPS[kind][arch.name].format(n=n, nlo=n & 0xFFFF, nhi=n >> 16,
                                         data=DATA, dlo=DATA & 0xFFFF, dhi=DATA >> 16)


def raw_seconds(arch: Arch, code: bytes) -> float:
    uc = unicorn.Uc(*arch.uc_mode)
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
    args = parser.parse_args()
    rows = []
    for kind in LOOPS:
        for arch in ARCHES.values():
            text = loop_text(kind, arch, args.iterations)
            code = assemble(arch, text, SNIPPET_BASE)
            raw = min(raw_seconds(arch, code) for _ in range(3))
            acc, insns = min(machine_run(arch, text, args.quantum) for _ in range(3))
            rows.append({"loop": kind, "arch": arch.name, "instructions": insns,
                         "raw_s": round(raw, 4), "machine_s": round(acc, 4),
                         "ratio": round(acc / raw, 2)})
            if not args.json:
                print(f"{kind:6} {arch.name:7} {insns:>11,} insns  raw {raw:7.3f} s  "
                      f"machine {acc:7.3f} s  ratio {acc / raw:5.2f}x", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
