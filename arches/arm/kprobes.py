"""ARM kprobes: the arch half of probes/kprobes.py, after Linux v5.10.

arch/arm/probes/kprobes/core.c: "We do not have hardware single-stepping
on ARM", so ``arch_prepare_kprobe`` decodes the probed instruction with
the kernel's tables (:mod:`arches.arm.probes_decode`, a port of
decode-arm.c and its checkers) into one of the kernel's handlers, which
the guest runs inside the undefined-instruction handler
(``arches/arm/include/asm/kprobes-actions.h``, a port of actions-arm.c
and actions-common.c): simulated in C (branches, ``mrs``, ``mov ip, sp``,
LDM/STM the renaming cannot cover, the nops) or emulated by calling the
slot, which holds the instruction with its registers renamed onto
r0-r3 (or r0-r12 for LDM/STM) followed by ``mov pc, lr``; a PC operand is
read as the probed address + 8, as the handlers give it. Instructions the
tables reject, and stores using more than MAX_STACK_SIZE bytes of stack
or a register offset from sp, are refused with the entry's reason.
"""
from __future__ import annotations

from typing import Callable

import struct

from arches.arm import PSR_T_BIT, encode_call, encode_jump
from arches.arm.probes_decode import arm_prepare
from arches.base import Kprobes, Optprobes, PublishedHit, TrapFrame
from arches.kprobe import Prepared

MAX_INSN_SIZE = 2                    # arch/arm/include/asm/probes.h: insn + mov pc, lr
SLOT_BYTES = MAX_INSN_SIZE * 4       # KPROBE_SLOT_BYTES in asm/kprobes.h
KPROBE_RETURN_INSTRUCTION = 0xE1A0F00E   # mov pc, lr (decode.c prepare_emulated_insn)
#: struct pt_regs uregs[]: r0-r12, sp, lr, pc, cpsr, ORIG_r0 (arch/arm/include/uapi/asm/ptrace.h).
PT_REGS = tuple(f"r{i}" for i in range(13)) + ("sp", "lr", "pc", "cpsr", None)
EXTRA_REGS: dict[str, int] = {}
#: v5.10 arch/arm/kernel/ptrace.c regoffset_table, in pt_regs (uregs[]) order;
#: arch/arm/Kconfig has no HAVE_FUNCTION_ARG_ACCESS_API, so no $argN.
REGS_OFFSET_NAMES = tuple(f"r{i}" for i in range(11)) + ("fp", "ip", "sp", "lr", "pc", "cpsr",
                                                         "ORIG_r0")
BP_PC_ADVANCE = 0                    # the undefined-instruction entry points at it
SINGLESTEP_INTNO = None              # "We do not have hardware single-stepping on ARM"
KRETPROBE_TRAMPOLINE_KPROBE = False  # the kretprobe trampoline is plain code, not a kprobe
KPROBES_ON_FTRACE = False            # arch/arm/Kconfig has no HAVE_KPROBES_ON_FTRACE (v5.10)
STACK_HEADROOM = 0
#: kprobes.rst times no ARM machine (only "0.5 to 1.0 microseconds" on "a typical CPU in
#: use in 2005").
PUBLISHED: tuple[PublishedHit, ...] = ()

#: The kernel's handlers, numbered as KPROBE_ARM_H_* in asm/kprobes.h (the
#: guest's switch in asm/kprobes-actions.h runs them).
HANDLERS = ("probes_simulate_nop", "probes_emulate_none", "simulate_bbl", "simulate_blx1",
            "simulate_blx2bx", "simulate_mrs", "simulate_mov_ipsp", "emulate_ldrdstrd",
            "emulate_ldr", "emulate_str", "emulate_rd12rn16rm0rs8_rwflags",
            "emulate_rd12rn16rm0_rwflags_nopc", "emulate_rd16rn12rm0rs8_rwflags_nopc",
            "emulate_rd12rm0_noflags_nopc", "emulate_rdlo12rdhi16rn0rm8_rwflags_nopc",
            "emulate_generic_r0_12_noflags", "emulate_generic_r2_14_noflags",
            "emulate_ldm_r3_15", "simulate_ldm1stm1", "simulate_stm1_pc", "simulate_ldm1_pc")
ARM_REG_PC = 15


def arch_prepare_kprobe(addr: int, code: bytes, slot: int) -> Prepared:
    """core.c arch_prepare_kprobe: decode; an emulated instruction gets its slot.

    ``ainsn`` is (slot, handler number, kprobe_direct_exec, stack_space):
    an optimized probe runs the instruction in its detour when the
    register-use checker found no PC (opt-arm.c can_kprobe_direct_exec).
    """
    insn = int.from_bytes(code[:4], "little")
    asi = arm_prepare(insn)
    copy = b""
    if asi.insn is not None:
        copy = struct.pack("<2I", asi.insn, KPROBE_RETURN_INSTRUCTION)
    direct = not asi.register_usage_flags >> ARM_REG_PC & 1
    return Prepared(opcode=insn, slot=copy.ljust(SLOT_BYTES, b"\0"),
                    ainsn=(slot if copy else 0, HANDLERS.index(asi.handler), int(direct),
                           asi.stack_space),
                    boostable=True, kind=asi.handler)


def condition_passes(addr: int, code: bytes, cpu: TrapFrame) -> bool:
    """Whether the instruction at ``addr`` executes now (ARM ARM A8.3 conditions).

    A failing condition makes the instruction, and the kprobe breakpoint
    carrying its condition, a no-op: no hit.
    """
    return arm_cond_passes(int.from_bytes(code[:4], "little") >> 28, cpu.reg("cpsr"))


def arm_cond_passes(cond: int, cpsr: int) -> bool:
    """Condition ``cond`` against the flags of ``cpsr`` (decode.c probes_condition_checks)."""
    n, z, c, v = (cpsr >> 31) & 1, (cpsr >> 30) & 1, (cpsr >> 29) & 1, (cpsr >> 28) & 1
    base = [z, c, n, v, c and not z, n == v, not z and n == v, True][cond >> 1]
    return bool(base) != bool(cond & 1 and cond != 15)


def arch_trap_entry(cpu: TrapFrame) -> None:
    """The undefined-instruction entry: the handler runs in ARM state (an
    exception entry sets CPSR.T from SCTLR.TE, clear in an ARM kernel; ARM
    ARM B1.8.3); pt_regs, saved before, keeps the interrupted T bit."""
    cpsr = cpu.reg("cpsr")
    if cpsr & PSR_T_BIT:
        cpu.set_reg("cpsr", cpsr & ~PSR_T_BIT)


def describe_ainsn(ainsn: tuple[int, ...], post_handler: bool) -> str:
    """How a hit runs: the kernel handler the decoder chose."""
    return HANDLERS[ainsn[1]]


# -- optprobes (arch/arm/probes/kprobes/opt-arm.c, v5.10) ---------------------

OPTPROBE_BUFFER_BYTES = 128          # asm/kprobes-core.h
MAX_OPTIMIZED_LENGTH = 4             # asm/kprobes.h: the probed word
# The template's fixed words, A32 encodings (ARM ARM A8.8): opt-arm.c
# assembles its template into the kernel and copies its bytes, so kisim
# writes the bytes too; a test checks each against an assembler.
_SUB_SP_136 = 0xE24DD088                       # sub sp, sp, #136 (sizeof pt_regs + 64)
_STM_SP_NO_PC = 0xE88D7FFF                     # stm sp, {r0-r14}
_SAVE_SP_AND_FLAGS = (0xE28D3088,              # add r3, sp, #136
                      0xE58D3034,              # str r3, [sp, #52]: regs->ARM_sp
                      0xE10F4000,              # mrs r4, apsr
                      0xE58D4040,              # str r4, [sp, #64]: regs->ARM_cpsr
                      0xE1A0100D)              # mov r1, sp: regs
_ALIGN_SP = (0xE20D4004,                       # and r4, sp, #4 (kept across the call)
             0xE04DD004)                       # sub sp, sp, r4
_RESTORE_FLAGS = (0xE08DD004,                  # add sp, sp, r4
                  0xE59D1040,                  # ldr r1, [sp, #64]
                  0xE128F001)                  # msr APSR_nzcvq, r1
_LDM_SP_ALL = 0xE89DFFFF                       # ldm sp, {r0-r15}: clang refuses to write it
_LDM_SP_NO_PC = 0xE89D7FFF                     # ldm sp, {r0-r14}: the direct-exec restore


def _words(*words: int) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def _movw_movt(rd: int, value: int) -> bytes:
    """``movw rd, #lo; movt rd, #hi`` (A8.8.102, A8.8.106: imm4:imm12 split)."""
    def mov(opcode: int, half: int) -> int:
        return opcode | (half >> 12) << 16 | rd << 12 | half & 0xFFF
    return _words(mov(0xE3000000, value & 0xFFFF), mov(0xE3400000, value >> 16))


def arch_prepare_optimized_kprobe(addr: int, function: tuple[int, bytes], buffer: int,
                                  callback: int, struct_addr: int) -> tuple[bytes, int]:
    """The detour buffer (opt-arm.c optprobe_template_entry); the region is the probed word.

    The template saves r0-r14 and the flags as ``pt_regs`` below sp (64
    spare bytes under it for the stack stores an emulated step makes),
    aligns sp to 8 bytes for the call (AEABI), calls
    ``optimized_callback(p, regs)`` and restores. An instruction whose
    register-use checker found no PC (``can_kprobe_direct_exec``) is then run
    by the detour itself after ``ldm sp, {r0-r14}`` and followed by a
    branch back (``kprobe_direct_exec``); any other is stepped by the
    callback in C and the detour ends with ``ldm sp, {r0-r15}``.
    A conditional instruction is optimized too: the branch into the detour
    carries its condition (:func:`arch_optimize_kprobe`), so the detour
    runs only when the instruction would; opt-arm.c refuses only what
    ``can_optimize`` does, a stack use the template cannot hold, which the
    decoder has refused already (``stack_space`` at most MAX_STACK_SIZE).
    """
    start, code = function
    asi = arm_prepare(int.from_bytes(code[addr - start:addr - start + 4], "little"))
    # r0-r14 as stored, then regs->ARM_sp and ARM_cpsr; r4 keeps the AEABI
    # alignment pad across the call.
    detour = _words(_SUB_SP_136, _STM_SP_NO_PC, *_SAVE_SP_AND_FLAGS) + _movw_movt(0, struct_addr)
    detour += _words(*_ALIGN_SP)
    detour += encode_call(buffer + len(detour), callback) + _words(*_RESTORE_FLAGS)
    if not asi.register_usage_flags >> ARM_REG_PC & 1:
        tail = buffer + len(detour) + 8
        return detour + _words(_LDM_SP_NO_PC) + code[addr - start:addr - start + 4] + encode_jump(
            tail, addr + 4), 4
    return detour + _words(_LDM_SP_ALL), 4


def arch_optimize_kprobe(addr: int, buffer: int, breakpoint: bytes) -> bytes:
    """``b buffer`` with the breakpoint word's condition, which is the probed
    instruction's (``al`` from ``0xe0000000`` up): opt-arm.c
    arch_optimize_kprobes makes the branch conditional "if replaced insn is
    conditional", so a failed condition falls through to the next
    instruction as the instruction and its breakpoint would."""
    cond = int.from_bytes(breakpoint, "little") & 0xF0000000
    jump = int.from_bytes(encode_jump(addr, buffer), "little")
    return (cond | jump & 0x0FFFFFFF).to_bytes(4, "little")


#: Fault traps the machine delivers to the guest (Unicorn interrupt -> guest handler,
#: trap entry):
#: none: v5.10 calls kprobe_fault_handler from the page-fault path
#: (arch/arm/mm/fault.c), which kisim cannot deliver (docs/kprobes.md).
FAULT_TRAPS: dict[int, tuple[str, Callable[[TrapFrame], None]]] = {}


class ArmKprobes(Kprobes, Optprobes, names=globals()):
    """HAVE_KPROBES, HAVE_OPTPROBES on arm: this module's hooks and constants."""
