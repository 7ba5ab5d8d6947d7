"""Run a snippet of assembly on every CPU of a machine.

The snippet is followed by the arch's syscall instruction as a terminator:
a CPU that reaches it halts. Traps inside the snippet are logged and
stepped over, so the snippet shows what each trap costs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from arches import Arch, TrapKind
from sim.asm import assemble
from sim.machine import Cpu, Machine, Trap

SNIPPET_BASE = 0x10000


@dataclass
class SnippetRun:
    machine: Machine
    code: bytes
    base: int
    end: int
    traps: list[Trap] = field(default_factory=list)


def load_snippet(arch: Arch, text: str, cpus: int = 1, *, quantum: int = 10_000,
                 seed: int | None = None, base: int = SNIPPET_BASE) -> SnippetRun:
    code = assemble(arch, text, base)
    machine = Machine(arch, cpus, quantum=quantum, seed=seed)
    end = machine.load_code(code + arch.syscall_insn, base) - len(arch.syscall_insn)
    run = SnippetRun(machine, code, base, end)

    def on_trap(cpu: Cpu, trap: Trap) -> None:
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
