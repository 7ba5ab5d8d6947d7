"""ARM kprobes on a Thumb-2 kernel (CONFIG_THUMB2_KERNEL), after Linux v5.10.

arch/arm/probes/kprobes/core.c ``arch_prepare_kprobe`` on a Thumb-2 kernel:
the first halfword says whether the instruction is 16 or 32 bits wide
(``is_wide_instruction``), and the Thumb tables decode it
(:mod:`arches.arm.probes_decode_thumb`, a port of decode-thumb.c and its
checkers) into one of actions-thumb.c's handlers, which the guest runs
inside the undefined-instruction handler
(``arches/arm/include/asm/kprobes-actions-thumb.h``). The breakpoint is
0xde18 or 0xf7f0a018, as wide as the instruction
(:func:`arches.arm.thumb2.kprobe_breakpoint`). There are no optprobes:
Linux selects HAVE_OPTPROBES only ``if !THUMB2_KERNEL``.

The pt_regs layout, slot size and trap constants are the A32 kernel's
(:mod:`arches.arm.kprobes`), imported here so that this module's names
declare the capability.
"""
from __future__ import annotations

from arches.arm import PSR_T_BIT
from arches.arm.kprobes import (BP_PC_ADVANCE, EXTRA_REGS, FAULT_TRAPS,  # noqa: F401
                                KPROBES_ON_FTRACE, KRETPROBE_TRAMPOLINE_KPROBE, PT_REGS,
                                PUBLISHED, SINGLESTEP_INTNO, SLOT_BYTES, STACK_HEADROOM,
                                arm_cond_passes)
from arches.arm.probes_decode_thumb import (THUMB_HANDLERS, slot_bytes, thumb16_prepare,
                                            thumb32_prepare)
from arches.arm.thumb2 import opcode
from arches.base import Kprobes, TrapFrame
from arches.kprobe import Prepared

PSR_IT_MASK = 0x0600FC00             # ITSTATE, CPSR bits 26:25 and 15:10 (asm/ptrace.h)


def arch_prepare_kprobe(addr: int, code: bytes, slot: int) -> Prepared:
    """core.c arch_prepare_kprobe, Thumb branch: decode by width; an emulated
    instruction gets the slot (its halfwords, then ``bx lr``)."""
    insn, length = opcode(code)
    asi = thumb32_prepare(insn) if length == 4 else thumb16_prepare(insn)
    copy = slot_bytes(asi.slot, SLOT_BYTES) if asi.insn is not None else b""
    return Prepared(opcode=insn, slot=copy.ljust(SLOT_BYTES, b"\0"),
                    ainsn=(slot if copy else 0, THUMB_HANDLERS.index(asi.handler), 0,
                           asi.stack_space),
                    boostable=True, kind=asi.handler)


def _branch_condition(insn: int, length: int) -> int | None:
    """The condition field of B<c> (T1: 1101 cond imm8; T3: 11110 S cond imm6, 10 J1 0 J2),
    the only Thumb instructions that carry one outside an IT block."""
    if length == 2 and insn >> 12 == 0xD and (insn >> 9) & 7 != 7:
        return (insn >> 8) & 0xF
    if length == 4 and insn & 0xF800D000 == 0xF0008000 and (insn >> 23) & 7 != 7:
        return (insn >> 22) & 0xF
    return None


def condition_passes(addr: int, code: bytes, cpu: TrapFrame) -> bool:
    """Whether the instruction at ``addr`` runs when a code hook sees it.

    Inside an IT block, Unicorn's code hook (like a kprobe's breakpoint, an
    unconditional UDF that QEMU skips with its IT condition) fires only when
    the condition passes; a B<c>'s own condition is checked by the kernel's
    handler (``t16/t32_decode_cond_branch`` install it as ``insn_check_cc``),
    which skips the hit when it fails.
    """
    insn, length = opcode(code)
    cond = _branch_condition(insn, length)
    return cond is None or arm_cond_passes(cond, cpu.reg("cpsr"))


def arch_trap_entry(cpu: TrapFrame) -> None:
    """The undefined-instruction entry on a Thumb-2 kernel (SCTLR.TE set, ARM ARM
    B1.8.3): the handler runs in Thumb state with ITSTATE cleared; pt_regs,
    saved before, keeps the interrupted T and IT bits."""
    cpu.set_reg("cpsr", (cpu.reg("cpsr") | PSR_T_BIT) & ~PSR_IT_MASK)


def describe_ainsn(ainsn: tuple[int, ...], post_handler: bool) -> str:
    """How a hit runs: the kernel handler the decoder chose."""
    return THUMB_HANDLERS[ainsn[1]]


class Thumb2Kprobes(Kprobes, names=globals()):
    """HAVE_KPROBES on a Thumb-2 arm kernel: this module's hooks and constants."""
