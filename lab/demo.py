"""What ``kisim demo`` measures: a dormant site, a kprobe, and every marker armed.

1. :func:`site_loop`: a loop passes through one instrumentation site per
   iteration, dormant: the kernel's nop (a disarmed jump label or marker),
   one instruction.
2. :func:`kprobe_row`: a registered kprobe (empty guest pre_handler) on the
   guest kernel's ``sys_getppid`` under the getppid workload, through
   :func:`lab.kprobe.measure_kprobe`: its exact cost per hit.
3. :func:`kernel_markers`: the defconfig kernel runs hackbench on 2 CPUs
   with every marker dormant, then armed to the no-op guest probe.
"""
from __future__ import annotations

from arches import Arch, TrapKind
from kbuild import build
from lab.kprobe import measure_kprobe
from patcher.instrument import attach
from sim import UNHANDLED, Machine
from sim.asm import assemble
from sim.guest import Guest

BASE = 0x10000


def site_loop(arch: Arch, iterations: int, timing: bool = True) -> dict:
    """Run the loop with its site dormant (the kernel's nop); return the counts."""
    setup, body = arch.snippet("demo_setup", n=iterations), arch.snippet("demo_body")
    spelled = "; ".join(f".byte {b:#x}" for b in arch.site_nop)
    code = assemble(arch, f"{setup}; l: {spelled}; {body}", BASE)
    machine = Machine(arch, timing=timing)
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
            "modeled_cycles": cycles, "modeled_cycles_per_iteration": cycles / iterations,
            "cycles": machine.cycles_from,
            **({"breakdown": machine.timing.total().to_json()} if timing else {})}


#: Where the demo's kprobe sits: the getppid system call, once per getppid() call.
KPROBE_AT = "sys_getppid"


def kprobe_row(arch: Arch, iterations: int, timing: bool = True) -> dict:
    """A registered kprobe with an empty guest pre_handler on ``sys_getppid``,
    getppid workload (``iterations`` calls per task), one CPU: cost per hit."""
    return measure_kprobe(arch.name, KPROBE_AT, workload="getppid", size=iterations,
                          timing=timing).to_json()


#: The most every arch's demo_setup snippet loads (the smallest reach of their immediates:
#: a 16-bit signed one; tests/test_cli_core.py checks it).
MAX_ITERATIONS = 32767


def kernel_markers(arch: Arch, armed: bool, timing: bool = True) -> dict:
    """hackbench on 2 CPUs with every marker dormant or armed to a no-op probe."""
    guest = Guest(build(arch.name), cpus=2, workload="hackbench", timing=timing)
    if armed:
        inst = attach(guest)
        empty = inst.tables.image.symbols.pointer("__mark_empty_function")
        for name in inst.tables.marker_names():
            inst.markers.marker_probe_register(name, inst.tables.markers_named(name)[0].format,
                                               empty)
            inst.markers.marker_arm(name)
    result = guest.run()
    return {"arch": arch.name, "markers": "armed" if armed else "dormant",
            "instructions": result.instructions, "modeled_cycles": result.modeled_cycles,
            "checksum_ok": result.ok, "cycles": result.cycles}


__all__ = ["KPROBE_AT", "MAX_ITERATIONS", "kernel_markers", "kprobe_row", "site_loop"]
