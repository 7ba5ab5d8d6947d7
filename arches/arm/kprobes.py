"""ARM kprobes: the arch half of probes/kprobes.py, after Linux v5.10.

arch/arm/probes/kprobes/core.c and arch/arm/probes/decode-arm.c: there is
no hardware single-step, so ``arch_prepare_kprobe`` decodes the probed
instruction into a class the guest runs inside the undefined-instruction
handler (``arches/arm/include/asm/kprobes-core.h``): simulated in C
(branches, ``ldr rt, [pc]``, ``pop {..., pc}``, nops) or emulated by
running a copy with the probed registers loaded. Instructions that change
the CPU mode, or use PC in other ways, are refused, as the decode tables
refuse them. The copy is followed by a fixed tail that stores the
registers back and returns to ``kprobe_emulate_slot``; each CPU has its
own copy, so the tail's data words are per CPU.
"""
from __future__ import annotations

from typing import Callable

import struct

import capstone
import keystone
from capstone import arm_const

from arches.arm import encode_jump
from arches.base import Kprobes, Optprobes, TrapFrame
from arches.kprobe import KprobeRefused, Prepared

SLOT = 64                            # KPROBE_ARM_SLOT in asm/kprobes.h
COPIES = 8                           # KPROBE_ARM_COPIES
SLOT_BYTES = SLOT * COPIES
#: struct pt_regs uregs[]: r0-r12, sp, lr, pc, cpsr, ORIG_r0 (arch/arm/include/uapi/asm/ptrace.h).
PT_REGS = tuple(f"r{i}" for i in range(13)) + ("sp", "lr", "pc", "cpsr", None)
EXTRA_REGS: dict[str, int] = {}
BP_PC_ADVANCE = 0                    # the undefined-instruction entry points at it
SINGLESTEP_INTNO = None              # "We do not have hardware single-stepping on ARM"
KRETPROBE_TRAMPOLINE_KPROBE = False  # the kretprobe trampoline returns through a kprobe
STACK_HEADROOM = 0
PUBLISHED = "none published (Documentation/trace/kprobes.rst: 0.5-1.0 us per hit in general)"

EMULATE, SIM_BBL, SIM_BLX2BX, SIM_LDR_LIT, SIM_LDM_PC, SIM_NOP = range(6)
_KINDS = {EMULATE: "emulated", SIM_BBL: "simulated b/bl", SIM_BLX2BX: "simulated bx/blx",
          SIM_LDR_LIT: "simulated ldr literal", SIM_LDM_PC: "simulated pop {pc}",
          SIM_NOP: "simulated nop"}

# After the copy (word 0): save the copy's r0, reload regs from word 12,
# store r1-r14, the flags and r0 into it, restore the helper's sp from
# word 14 and return (pop {r4-r11, pc}). Words 12-14 are written by
# kprobe_emulate_slot on each use.
_TAIL = (0xE58F0028,     # str   r0, [pc, #40]      -> word 13
         0xE59F0020,     # ldr   r0, [pc, #32]      <- word 12 (regs)
         0xE9807FFE,     # stmib r0, {r1-r14}
         0xE10F1000,     # mrs   r1, apsr
         0xE5801040,     # str   r1, [r0, #64]      (ARM_cpsr)
         0xE59F1014,     # ldr   r1, [pc, #20]      <- word 13
         0xE5801000,     # str   r1, [r0]           (ARM_r0)
         0xE59FD010,     # ldr   sp, [pc, #16]      <- word 14
         0xE8BD8FF0)     # pop   {r4-r11, pc}

_MD = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_ARM)
_MD.detail = True


def _uses_pc(insn: int, addr: int) -> bool:
    found = next(_MD.disasm(struct.pack("<I", insn), addr, 1), None)
    if found is None:
        return True
    read, written = found.regs_access()
    return arm_const.ARM_REG_PC in read or arm_const.ARM_REG_PC in written


def classify(insn: int, addr: int) -> int:
    """The decode class of ``insn``, or KprobeRefused as the kernel's tables refuse it."""
    if insn >> 28 == 0xF:
        raise KprobeRefused("unconditional-space instruction (BLX imm, PLD, CPS, SRS, RFE)")
    body = insn & 0x0FFFFFFF
    if body & 0x0F000000 == 0x0F000000:
        raise KprobeRefused("svc is the kisim hypercall instruction")
    if body & 0x0FF000F0 == 0x07F000F0:
        raise KprobeRefused("an undefined instruction (udf, or another kprobe's breakpoint)")
    if body & 0x0FF000F0 in (0x01200070, 0x01600070):
        raise KprobeRefused("bkpt/smc change the CPU mode")
    if (body & 0x0FB000F0 == 0x01200000
            or (body & 0x0FB00000 == 0x03200000 and body & 0x0FFFFF00 != 0x0320F000)):
        raise KprobeRefused("msr writes the CPU mode or flags")
    if body & 0x0E400000 == 0x08400000:
        raise KprobeRefused("ldm/stm of user-mode registers (^) change the CPU mode")
    if body & 0x0C000000 == 0x0C000000:
        raise KprobeRefused("coprocessor instruction")
    if body in (0x0320F000, 0x01A00000):
        return SIM_NOP
    if body & 0x0E000000 == 0x0A000000:
        return SIM_BBL
    if body & 0x0FFFFFD0 == 0x012FFF10:
        if body & 15 == 15:
            raise KprobeRefused("bx/blx pc is unpredictable")
        return SIM_BLX2BX
    if body & 0x0F7F0000 == 0x051F0000:
        if (body >> 12) & 15 == 15:
            raise KprobeRefused("ldr pc, [pc, #imm] is not simulated")
        return SIM_LDR_LIT
    if body & 0x0FFF0000 == 0x08BD0000 and body & 0x8000:
        if body & 0x2000:
            raise KprobeRefused("pop of sp and pc together is not simulated")
        return SIM_LDM_PC
    if _uses_pc(insn, addr):
        raise KprobeRefused("uses PC in a way the decoder does not simulate (REG_TYPE_NOPC)")
    return EMULATE


def arch_prepare_kprobe(addr: int, code: bytes, slot: int) -> Prepared:
    """Decode the instruction and write one copy plus the return tail per CPU."""
    insn = int.from_bytes(code[:4], "little")
    kind = classify(insn, addr)
    copy = struct.pack("<10I", insn, *_TAIL).ljust(SLOT, b"\0")
    return Prepared(length=4, opcode=insn, slot=copy * COPIES, ainsn=(slot, kind, 0, 0),
                    boostable=True, kind=_KINDS[kind])


def condition_passes(addr: int, code: bytes, cpu: TrapFrame) -> bool:
    """Whether the instruction at ``addr`` executes now (ARM ARM A8.3 conditions).

    A failing condition makes the instruction, and the kprobe breakpoint
    carrying its condition, a no-op: no hit.
    """
    cond, cpsr = int.from_bytes(code[:4], "little") >> 28, cpu.reg("cpsr")
    n, z, c, v = (cpsr >> 31) & 1, (cpsr >> 30) & 1, (cpsr >> 29) & 1, (cpsr >> 28) & 1
    base = [z, c, n, v, c and not z, n == v, not z and n == v, True][cond >> 1]
    return bool(base) != bool(cond & 1 and cond != 15)


def arch_trap_entry(cpu: TrapFrame) -> None:
    """The undefined-instruction entry changes nothing the guest handler sees."""


def describe_ainsn(ainsn: tuple[int, ...], post_handler: bool) -> str:
    """How a hit runs: the decode class."""
    return _KINDS[ainsn[1]]


# -- optprobes (arch/arm/probes/kprobes/opt-arm.c, v5.10) ---------------------

OPTPROBE_BUFFER_BYTES = 128          # asm/kprobes-core.h
_LDM_SP_ALL = struct.pack("<I", 0xE89DFFFF)    # ldm sp, {r0-r15}: clang and keystone refuse it
_LDM_SP_NO_PC = struct.pack("<I", 0xE89D7FFF)  # ldm sp, {r0-r14}: the direct-exec restore
_STM_SP_NO_PC = 0xE88D7FFF                     # stm sp, {r0-r14}


def _movw_movt(reg: str, value: int) -> str:
    return f"movw {reg}, #{value & 0xFFFF}; movt {reg}, #{value >> 16}"


def arch_prepare_optimized_kprobe(addr: int, function: tuple[int, bytes], buffer: int,
                                  callback: int, struct_addr: int) -> tuple[bytes, int]:
    """The detour buffer (opt-arm.c optprobe_template_entry); the region is the probed word.

    The template saves r0-r14 and the flags as ``pt_regs`` below sp (64
    spare bytes under it for the stack stores an emulated step makes),
    aligns sp to 8 bytes for the call (AEABI), calls
    ``optimized_callback(p, regs)`` and restores. An instruction that does
    not use PC (the emulated class, ``can_kprobe_direct_exec``) is then run
    by the detour itself after ``ldm sp, {r0-r14}`` and followed by a
    branch back (``kprobe_direct_exec``); any other is stepped by the
    callback in C and the detour ends with ``ldm sp, {r0-r15}``.
    kisim optimizes unconditional instructions only: the branch that
    replaces the breakpoint is unconditional, so a conditional one would
    need its condition checked in the detour.
    """
    start, code = function
    insn = int.from_bytes(code[addr - start:addr - start + 4], "little")
    kind = classify(insn, addr)
    if insn >> 28 != 0xE:
        raise KprobeRefused("a conditional instruction is not optimized")
    ks = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_ARM)
    sub, _ = ks.asm("sub sp, sp, #136", buffer)
    # r0-r14 as stored, then regs->ARM_sp and ARM_cpsr; r4 keeps the AEABI
    # alignment pad across the call.
    body, _ = ks.asm("add r3, sp, #136; str r3, [sp, #52]; mrs r4, apsr; str r4, [sp, #64]; "
                     f"mov r1, sp; {_movw_movt('r0', struct_addr)}; "
                     f"and r4, sp, #4; sub sp, sp, r4; bl {callback:#x}; add sp, sp, r4; "
                     "ldr r1, [sp, #64]; msr APSR_nzcvq, r1", buffer + 8)
    detour = bytes(sub) + struct.pack("<I", _STM_SP_NO_PC) + bytes(body)
    if kind == EMULATE:
        tail = buffer + len(detour) + 8
        return detour + _LDM_SP_NO_PC + code[addr - start:addr - start + 4] + encode_jump(
            tail, addr + 4), 4
    return detour + _LDM_SP_ALL, 4


def arch_optimize_kprobe(addr: int, buffer: int) -> bytes:
    """``b buffer``, which replaces the breakpoint word."""
    return encode_jump(addr, buffer)


#: Fault traps the machine delivers to the guest (Unicorn interrupt -> guest handler,
#: trap entry):
#: none: v5.10 calls kprobe_fault_handler from the page-fault path
#: (arch/arm/mm/fault.c), which kisim cannot deliver (docs/kprobes.md).
FAULT_TRAPS: dict[int, tuple[str, Callable[[TrapFrame], None]]] = {}


class ArmKprobes(Kprobes, Optprobes, names=globals()):
    """HAVE_KPROBES, HAVE_OPTPROBES on arm: this module's hooks and constants."""
