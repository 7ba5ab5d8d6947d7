"""``kisim demo``: what instrumentation costs, on every arch.

1. A loop passes through one instrumentation site per iteration, dormant:
   the kernel's nop (a disarmed jump label or marker), one instruction.
2. A registered kprobe (empty guest pre_handler) on the guest kernel's
   ``sys_getppid``, run through the real kprobe path (probes/measure.py:
   breakpoint written by the patcher, trap, the guest's kprobe_handler,
   the probed instruction run out of line or emulated, exception return),
   under the getppid workload: its exact cost per hit beside the nop's.
3. The guest kernel (defconfig) runs hackbench on 2 CPUs with every marker
   dormant, then with every marker armed to the no-op guest probe: the
   difference is the active cost of the marker path.
"""
from __future__ import annotations

import argparse

from arches import ARCHES, Arch, TrapKind
from probes.measure import measure_kprobe
from kbuild import build
from kisim.commands.common import add_json, print_json
from kisim.errors import UsageError
from kisim.progress import progress
from patcher.instrument import attach
from sim.guest import Guest
from sim import UNHANDLED, Machine
from sim.asm import assemble

BASE = 0x10000


def site_loop(arch: Arch, iterations: int) -> dict:
    """Run the loop with its site dormant (the kernel's nop); return the counts."""
    setup, body = arch.snippet("demo_setup", n=iterations), arch.snippet("demo_body")
    spelled = "; ".join(f".byte {b:#x}" for b in arch.site_nop)
    code = assemble(arch, f"{setup}; l: {spelled}; {body}", BASE)
    machine = Machine(arch)
    end = machine.load_code(code + arch.syscall_insn, BASE) - len(arch.syscall_insn)

    def on_trap(cpu, trap):
        if trap.kind is TrapKind.SYSCALL and trap.address == end:
            cpu.halt()
            return None
        return UNHANDLED

    machine.on_trap = on_trap
    machine.run()
    cpu = machine.cpus[0]
    # The terminating syscall is the harness's: not billed to the loop.
    instructions = cpu.instructions - 1
    cycles = cpu.modeled_cycles - arch.cost("insn") - arch.cost("trap")
    return {"arch": arch.name, "site": "dormant nop", "instructions": instructions,
            "modeled_cycles": cycles, "modeled_cycles_per_iteration": cycles / iterations}


#: Where the demo's kprobe sits: the getppid system call, once per getppid() call.
KPROBE_AT = "sys_getppid"


def kprobe_row(arch: Arch, iterations: int) -> dict:
    """A registered kprobe with an empty guest pre_handler on ``sys_getppid``,
    getppid workload (``iterations`` calls per task), one CPU: cost per hit."""
    return measure_kprobe(arch.name, KPROBE_AT, workload="getppid", size=iterations).to_json()


MAX_ITERATIONS = 32767        # the loop counter is a 16-bit signed immediate on PPC


def kernel_markers(arch: Arch, armed: bool) -> dict:
    """hackbench on 2 CPUs with every marker dormant or armed to a no-op probe."""
    guest = Guest(build(arch.name), cpus=2, workload="hackbench")
    if armed:
        inst = attach(guest)
        empty = inst.tables.image.symbols["__mark_empty_function"]
        for name in inst.tables.marker_names():
            inst.markers.marker_probe_register(name, inst.tables.markers_named(name)[0].format,
                                               empty)
            inst.markers.marker_arm(name)
    result = guest.run()
    return {"arch": arch.name, "markers": "armed" if armed else "dormant",
            "instructions": result.instructions, "modeled_cycles": result.modeled_cycles,
            "checksum_ok": result.ok}


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.iterations <= MAX_ITERATIONS:
        raise UsageError(f"--iterations must be 1..{MAX_ITERATIONS}, not {args.iterations}")
    steps = 4 * len(ARCHES)
    with progress("demo", total=steps, enabled=not args.json) as advance:
        rows, kprobes = [], []
        for arch in ARCHES.values():
            rows.append(site_loop(arch, args.iterations))
            advance(description=f"{arch.name}: site loop")
            kprobes.append(kprobe_row(arch, args.iterations))
            advance(description=f"{arch.name}: kprobe on {KPROBE_AT}")
        kernel = []
        for arch in ARCHES.values():
            for armed in (False, True):
                advance(0, description=f"{arch.name}: hackbench, markers "
                                       f"{'armed' if armed else 'dormant'}")
                kernel.append(kernel_markers(arch, armed))
                advance()
    if args.json:
        print_json({"site_loop": rows, "kprobe": kprobes, "hackbench_markers": kernel})
        return 0 if all(r["checksum_ok"] for r in kernel + kprobes) else 1
    print(f"One dormant site per loop iteration, {args.iterations} iterations, one CPU.\n")
    print(f"{'arch':8} {'site':15} {'instructions':>12} {'modeled cycles':>15} {'per iteration':>14}")
    for r in rows:
        print(f"{r['arch']:8} {r['site']:15} {r['instructions']:>12} "
              f"{r['modeled_cycles']:>15g} {r['modeled_cycles_per_iteration']:>14.1f}")
    print(f"\nA registered kprobe (empty guest pre_handler) on {KPROBE_AT}, getppid workload "
          f"({args.iterations} calls per task), one CPU; cost per hit over the run without it:\n")
    print(f"{'arch':8} {'how the instruction runs':24} {'hits':>6} {'instructions':>12} "
          f"{'modeled cycles':>15} {'traps':>6} {'checksum':>9}")
    for r in kprobes:
        print(f"{r['arch']:8} {r['kind']:24} {r['hits']:>6} {r['instructions_per_hit']:>12.1f} "
              f"{r['modeled_cycles_per_hit']:>15.1f} {r['traps_per_hit']:>6.1f} "
              f"{'ok' if r['checksum_ok'] else 'WRONG':>9}")
    print("\nGuest kernel (defconfig), hackbench on 2 CPUs, every marker dormant vs armed "
          "to the no-op guest probe:\n")
    print(f"{'arch':8} {'markers':8} {'instructions':>12} {'modeled cycles':>15} {'checksum':>9}")
    for r in kernel:
        print(f"{r['arch']:8} {r['markers']:8} {r['instructions']:>12,} "
              f"{r['modeled_cycles']:>15,.0f} {'ok' if r['checksum_ok'] else 'WRONG':>9}")
    print("\nInstruction counts are exact; modeled cycles use each arch's cost table "
          "(`kisim arches --json` lists every constant and its source).")
    return 0 if all(r["checksum_ok"] for r in kernel + kprobes) else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="dormant site vs a registered kprobe, and markers, on every arch",
                       description=__doc__)
    p.add_argument("--iterations", type=int, default=1000, metavar="N",
                   help=f"loop iterations and getppid calls per task, 1..{MAX_ITERATIONS} "
                        "(default 1000)")
    add_json(p)
    p.set_defaults(func=run)
