"""Errors raised by the machine layer."""
from __future__ import annotations

from dataclasses import dataclass, field


class ConfigError(ValueError):
    """A machine parameter out of range (CPU count, quantum, address)."""


class UnmappedAccess(ConfigError):
    """A host read or write of guest memory that is not mapped (a wild pointer)."""


class AsmError(ValueError):
    """Assembly text that Keystone cannot assemble."""


def check_int(what: str, value: object) -> None:
    """An API argument that must be an int (not a bool): TypeError, one line."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")


#: Instructions a fault report replays at most to find the faulting turn's last
#: blocks (a second or two on the scratch engine): a longer turn's has none.
REPLAY_LIMIT = 10_000_000


@dataclass
class GuestFault(Exception):
    """The guest did something that ends the run.

    Carries everything needed to read the crash without a debugger: which
    CPU, where, the disassembled instruction, the registers and the basic
    blocks that led there.
    """

    reason: str
    arch: str
    cpu: int
    pc: int
    insn: str
    registers: dict[str, int] = field(default_factory=dict)
    #: the faulting turn's last blocks; None: the turn was too long to replay
    last_blocks: list[int] | None = field(default_factory=list)
    instructions: int = 0

    def __post_init__(self) -> None:
        super().__init__(self.reason)

    def __str__(self) -> str:
        return f"{self.reason} on {self.arch} CPU {self.cpu} at {self.pc:#x}: {self.insn}"

    def report(self) -> str:
        """A multi-line, human-readable crash report."""
        width = max((len(name) for name in self.registers), default=0)
        regs = [f"{name:>{width}} = {value:#0{18 if value >> 32 else 10}x}"
                for name, value in self.registers.items()]
        rows = ["   ".join(regs[i:i + 4]) for i in range(0, len(regs), 4)]
        blocks = (f"(not replayed: the turn ran over {REPLAY_LIMIT:,} instructions; a "
                  "smaller --quantum keeps them)" if self.last_blocks is None
                  else " ".join(f"{b:#x}" for b in self.last_blocks) or "(none)")
        return "\n".join([
            f"kisim: guest fault: {self.reason}",
            f"  arch {self.arch}, CPU {self.cpu}, PC {self.pc:#x}: {self.insn}",
            f"  {self.instructions} instructions retired on this CPU before the faulting turn",
            "  registers:",
            *(f"    {row}" for row in rows),
            f"  last blocks (oldest first): {blocks}",
        ])

    def to_json(self) -> dict:
        return {"reason": self.reason, "arch": self.arch, "cpu": self.cpu,
                "pc": self.pc, "insn": self.insn, "registers": self.registers,
                "last_blocks": self.last_blocks, "instructions": self.instructions}
