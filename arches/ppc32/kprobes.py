"""PowerPC (32-bit) kprobes: the arch half of probes/kprobes.py, after Linux v5.10.

arch/powerpc/kernel/kprobes.c: ``arch_prepare_kprobe`` refuses
``mtmsr``/``mtmsrd``/``rfi`` and copies the instruction to a slot; a hit
tries ``emulate_step`` in the guest (counted as boosted), else sets MSR_SE
and single-steps the copy; the trace interrupt arrives after that one
instruction. Any interrupt clears MSR_SE and MSR_EE in the live MSR
(Power ISA v2.07 Book III-S §6.5: "MSR bits set on interrupt").

XER is saved and restored by the guest (``kprobe_exc_entry`` /
``kprobe_exc_return`` in asm/kprobes-core.h, with mfxer/mtxer): Unicorn
2.1.4's XER register omits SO, OV and CA, which QEMU keeps in separate
fields, so a host read would lose them and a host write would not reach them.
"""
from __future__ import annotations

from typing import Callable

from arches.base import Kprobes, PublishedHit, TrapFrame
from arches.kprobe import KprobeRefused, Prepared

SLOT_BYTES = 8                       # KPROBE_SLOT_BYTES in asm/kprobes.h
MSR_SE, MSR_EE = 1 << 10, 1 << 15
#: struct pt_regs: gpr[32], nip, msr, orig_gpr3, ctr, link, xer, ccr (uapi/asm/ptrace.h).
PT_REGS = tuple(f"r{i}" for i in range(32)) + ("pc", "msr", None, "ctr", "lr", "xer", "cr")
EXTRA_REGS: dict[str, int] = {}
#: v5.10 arch/powerpc/kernel/ptrace regoffset_table (PPC32: mq, not softe), in
#: pt_regs order (orig_gpr3 is not named); kisim's pt_regs stops at ccr, so
#: mq, trap, dar and dsisr parse but name no saved word. No
#: HAVE_FUNCTION_ARG_ACCESS_API in v5.10 powerpc, so no $argN.
#: v5.10 arch/powerpc/kernel/ptrace/ptrace-view.c GPR_OFFSET_NAME names each
#: GPR twice, r<N> first, then gpr<N>.
REGS_OFFSET_ALIASES = {f"r{i}": f"gpr{i}" for i in range(32)}
REGS_OFFSET_NAMES = tuple(f"gpr{i}" for i in range(32)) + (
    "nip", "msr", "", "ctr", "link", "xer", "ccr", "mq", "trap", "dar", "dsisr")
TRAP_ENTRY = "kprobe_exc_entry"      # the guest's exception prologue: mfxer
GUEST_SAVED_REGS = ("xer",)          # saved by kprobe_exc_entry, restored by kprobe_exc_return
BP_PC_ADVANCE = 0                    # SRR0 is the trap itself
SINGLESTEP_INTNO = 68                # the trace interrupt, as Unicorn numbers it
KRETPROBE_TRAMPOLINE_KPROBE = True  # the kretprobe trampoline returns through a kprobe
#: v5.10 KPROBES_ON_FTRACE needs DYNAMIC_FTRACE_WITH_REGS, which powerpc selects
#: only with MPROFILE_KERNEL (64-bit): none on 32-bit.
KPROBES_ON_FTRACE = False
_POWER5 = "POWER5 1656 MHz (ppc64)"
_RST = "Documentation/trace/kprobes.rst, 'Probe Overhead'"
#: The PowerPC hits kprobes.rst times: on a 64-bit POWER5 (no 32-bit figure is published).
PUBLISHED = (PublishedHit("k", 0.77, _POWER5, 1656, _RST),
             PublishedHit("r", 1.26, _POWER5, 1656, _RST),
             PublishedHit("kr", 1.45, _POWER5, 1656, _RST))
STACK_HEADROOM = 16                  # the callee saves LR at 4(r1) of this frame
#: The frame STACK_HEADROOM leaves is a STACK_FRAME_OVERHEAD header (back chain, LR
#: save word: arch/powerpc/include/asm/ptrace.h): the trap entry zeroes its back chain
#: word, the end of the chain (the ABI's stack frame).
BACK_CHAIN = True


def arch_prepare_kprobe(addr: int, code: bytes, slot: int) -> Prepared:
    """Refuse what the kernel refuses, else copy the word to the slot."""
    insn = int.from_bytes(code[:4], "big")
    op, xo = insn >> 26, (insn >> 1) & 0x3FF
    if op == 31 and xo in (146, 178):
        raise KprobeRefused("mtmsr/mtmsrd change the MSR")
    if op == 19 and xo in (50, 18):
        raise KprobeRefused("rfi/rfid return from interrupt")
    if op == 17:
        raise KprobeRefused("sc is the kisim hypercall instruction")
    if op == 3 or (op == 31 and xo == 4):
        raise KprobeRefused("a trap (another debugger's breakpoint)")
    return Prepared(opcode=insn, slot=code[:4] + bytes(4), ainsn=(slot, 0, 0, 0),
                    boostable=False, kind="emulate_step, else single-step")


def condition_passes(addr: int, code: bytes, cpu: TrapFrame) -> bool:
    """Every instruction executes when reached (no predication)."""
    return True


def arch_trap_entry(cpu: TrapFrame) -> None:
    """The interrupt clears MSR_SE and MSR_EE."""
    cpu.set_reg("msr", cpu.reg("msr") & ~(MSR_SE | MSR_EE))


def describe_ainsn(ainsn: tuple[int, ...], post_handler: bool) -> str:
    """How a hit runs: decided by the first hit (kprobe_handler's try_to_emulate)."""
    boostable = ainsn[1] - (1 << 32) if ainsn[1] >> 31 else ainsn[1]
    return {1: "emulate_step (boosted)", -1: "single-step (MSR_SE)"}.get(boostable, "not hit yet")


#: Fault traps the machine delivers to the guest (Unicorn interrupt -> guest handler,
#: trap entry):
#: none: v5.10 calls kprobe_fault_handler from the page-fault path
#: (arch/powerpc/mm/fault.c), which kisim cannot deliver (docs/kprobes.md).
FAULT_TRAPS: dict[int, tuple[str, Callable[[TrapFrame], None]]] = {}


class Ppc32Kprobes(Kprobes, names=globals()):
    """HAVE_KPROBES on ppc32: this module's hooks and constants."""
