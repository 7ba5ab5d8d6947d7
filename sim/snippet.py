"""Run a snippet of assembly on every CPU of a machine.

The snippet is followed by the arch's syscall instruction as a terminator:
a CPU that reaches it halts. The terminator belongs to the harness, so its
instruction and trap are not billed to the snippet (:meth:`SnippetRun.per_cpu`).
Traps inside the snippet are logged and stepped over, so the snippet shows
what each trap costs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from arches import Arch, TrapKind
from sim.asm import assemble
from sim.machine import UNHANDLED, Cpu, Machine, Trap

SNIPPET_BASE = 0x10000


@dataclass
class SnippetRun:
    machine: Machine
    code: bytes
    base: int
    end: int
    traps: list[Trap] = field(default_factory=list)

    def per_cpu(self) -> list[dict]:
        """Each CPU's counts for the snippet alone, registers included."""
        arch = self.machine.arch
        rows = []
        for cpu in self.machine.cpus:
            done = int(cpu.halted)            # the terminator retired once
            events = dict(cpu.events)
            events["trap"] = events.get("trap", 0) - done
            rows.append({"instructions": cpu.instructions - done,
                         "modeled_cycles": cpu.modeled_cycles
                         - done * (arch.cost("insn") + arch.cost("trap")),
                         "pc": cpu.pc,
                         "events": {k: v for k, v in events.items() if v},
                         "halted": cpu.halted,
                         "registers": cpu.registers()})
        return rows


def load_snippet(arch: Arch, text: str, cpus: int = 1, *, quantum: int = 10_000,
                 seed: int | None = None, base: int = SNIPPET_BASE) -> SnippetRun:
    code = assemble(arch, text, base)
    machine = Machine(arch, cpus, quantum=quantum, seed=seed)
    end = machine.load_code(code + arch.syscall_insn, base) - len(arch.syscall_insn)
    run = SnippetRun(machine, code, base, end)

    def on_trap(cpu: Cpu, trap: Trap) -> object:
        if trap.kind is TrapKind.UNDEFINED:
            return UNHANDLED                  # an invalid instruction faults
        if trap.kind is TrapKind.SYSCALL and trap.address == end:
            cpu.halt()
            return None
        run.traps.append(trap)
        return None

    machine.on_trap = on_trap
    return run


def run_snippet(arch: Arch, text: str, cpus: int = 1, *, quantum: int = 10_000,
                seed: int | None = None, max_instructions: int = 10_000_000) -> SnippetRun:
    """Assemble, load and run ``text`` on ``cpus`` CPUs until each halts."""
    run = load_snippet(arch, text, cpus, quantum=quantum, seed=seed)
    run.machine.run(max_instructions=max_instructions)
    return run
