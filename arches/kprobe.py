"""What every arch's ``kprobes`` module returns: a prepared slot, or a refusal.

Each ``arches/<arch>/kprobes.py`` defines, under the kernel's names,
``arch_prepare_kprobe(addr, code, slot) -> Prepared`` (raising
:class:`KprobeRefused`) and ``arch_trap_entry(cpu)``, plus the layout of
the guest's ``struct pt_regs`` (``PT_REGS``) and the trap facts the
generic layer (``probes/kprobes.py``) needs.
"""
from __future__ import annotations

from dataclasses import dataclass


class KprobeRefused(ValueError):
    """The instruction cannot be probed; the message is the one-line reason."""


@dataclass(frozen=True)
class Prepared:
    """arch_prepare_kprobe's result: slot contents and struct arch_specific_insn."""

    opcode: int                       # struct kprobe.opcode
    slot: bytes                       # written at the slot address
    ainsn: tuple[int, int, int, int]  # struct arch_specific_insn, one word each
    boostable: bool                   # known at prepare time to skip the second trap
    kind: str                         # the decoder's choice (ARM's handler), for tests and errors
