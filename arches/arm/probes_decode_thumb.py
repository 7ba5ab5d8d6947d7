"""The Thumb (T16 and T32) kprobes instruction decoder, after Linux v5.10.

What ``arch_prepare_kprobe`` (``arch/arm/probes/kprobes/core.c``) does in a
Thumb-2 kernel: a first halfword >= 0xe800 starts a 32-bit instruction
(``is_wide_instruction``, ``asm/ptrace.h``), decoded as ``first << 16 |
second`` (``__opcode_thumb32_compose``, ``asm/opcodes.h``). The tables of
``arch/arm/probes/decode-thumb.c`` are data for the walker of
:mod:`arches.arm.probes_decode` (``decode.c``); handlers and custom decoders
follow ``kprobes/actions-thumb.c`` (T32 LDM/STM: ``kprobe_decode_ldmstm`` of
``actions-common.c``), stack checks ``kprobes/checkers-thumb.c`` (Thumb has no
register-use checker: ``register_usage_flags`` stays ~0). T32 register fields
sit where A32's do, so ``decode_regs`` renames them alike (Rn -> r2, Rt/RdLo
-> r0, Rd/RdHi -> r1, Rm -> r3); T16 entries rename nothing. The slot holds
halfwords, first one first, then ``bx lr``. ``what`` is the kernel's comment
of an entry, shortened: the reason a refusal gives.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from arches.arm.probes_decode import (ANY, NOPC, NOPCWB, NOPCX, NOSP, NOSPPC, NOSPPCX, PC,
                                      REGS, SAMEAS16, SP, STACK_CHECK_ACTIONS, Actions,
                                      Decoded, Item, Table, _custom, _emu, _or, _rej, _sim,
                                      _t, check_stack_use, kprobe_decode_ldmstm,
                                      probes_decode_insn)
from arches.arm.thumb2 import is_wide_instruction

_ = None
THUMB_BX_LR = 0x4770          # the slot's return (decode.c prepare_emulated_insn, thumb)
SLOT_HALFWORDS = 3            # halfwords the kernel writes; the slot's 4th is left as it was


def _table(name: str, items: tuple[Item, ...], end: str) -> Table:
    return Table(name, items, end, "decode-thumb.c")


# -- decode-thumb.c: 32-bit encodings ---------------------------------------------

T32_LDMSTM = _table("t32_table_1110_100x_x0xx", (
    _rej(0xFE4F0000, 0xE80F0000, "LDM/STM with Rn = pc"),
    _rej(0xFFC00000, 0xE8000000, "SRS/RFE (DB)"),
    _rej(0xFFC00000, 0xE9800000, "SRS/RFE (IA)"),
    _rej(0xFE508000, 0xE8008000, "STM Rn, {...pc}"),
    _rej(0xFE50C000, 0xE810C000, "LDM Rn, {...lr, pc}"),
    _rej(0xFE402000, 0xE8002000, "LDM/STM Rn, {...sp}"),
    _custom(0xFE400000, 0xE8000000, "PROBES_T32_LDMSTM", "STMIA/LDMIA/STMDB/LDMDB"),
), "unallocated load/store multiple")

T32_DUAL = _table("t32_table_1110_100x_x1xx", (
    _or(0xFF600000, 0xE8600000, "STRD/LDRD (immediate, post-indexed)"),
    _emu(0xFF400000, 0xE9400000, "PROBES_T32_LDRDSTRD", "STRD/LDRD (immediate)",
         REGS(NOPCWB, NOSPPC, NOSPPC, _, _)),
    _sim(0xFFF000E0, 0xE8D00000, "PROBES_T32_TABLE_BRANCH", "TBB/TBH",
         REGS(NOSP, _, _, _, NOSPPC)),
), "STREX/LDREX{,B,H,D} (exclusive access) or unallocated: not decoded")

T32_DP_SHIFTED = _table("t32_table_1110_101x", (
    _emu(0xFF700F00, 0xEA100F00, "PROBES_T32_TST", "TST/TEQ (register)",
         REGS(NOSPPC, _, _, _, NOSPPC)),
    _or(0xFFF00F00, 0xEB100F00, "CMN (register)"),
    _emu(0xFFF00F00, 0xEBB00F00, "PROBES_T32_TST", "CMP (register)",
         REGS(NOPC, _, _, _, NOSPPC)),
    _emu(0xFFCF0000, 0xEA4F0000, "PROBES_T32_MOV", "MOV/MVN (register)",
         REGS(_, _, NOSPPC, _, NOSPPC)),
    _rej(0xFFA00000, 0xEAA00000, "unallocated (1110 1010 1x1x)"),
    _rej(0xFFE00000, 0xEB200000, "unallocated (1110 1011 001x)"),
    _rej(0xFFE00000, 0xEB800000, "unallocated (1110 1011 100x)"),
    _rej(0xFFE00000, 0xEBE00000, "unallocated (1110 1011 111x)"),
    _emu(0xFF4F7F30, 0xEB0D0D00, "PROBES_T32_ADDSUB", "ADD/SUB SP, SP, Rm, LSL #0..3",
         REGS(SP, _, SP, _, NOSPPC)),
    _rej(0xFF4F0F00, 0xEB0D0D00, "ADD/SUB SP, SP, Rm with any other shift"),
    _emu(0xFF4F0000, 0xEB0D0000, "PROBES_T32_ADDSUB", "ADD/SUB Rd, SP, Rm, shift",
         REGS(SP, _, NOPC, _, NOSPPC)),
    _emu(0xFE000000, 0xEA000000, "PROBES_T32_LOGICAL",
         "AND/BIC/ORR/ORN/EOR/PKH/ADD/ADC/SBC/SUB/RSB (shifted register)",
         REGS(NOSPPC, _, NOSPPC, _, NOSPPC)),
), "unallocated data processing (shifted register)")

T32_DP_MODIMM = _table("t32_table_1111_0x0x___0", (
    _emu(0xFB708F00, 0xF0100F00, "PROBES_T32_TST", "TST/TEQ (immediate)",
         REGS(NOSPPC, _, _, _, _)),
    _or(0xFBF08F00, 0xF1100F00, "CMN (immediate)"),
    _emu(0xFBF08F00, 0xF1B00F00, "PROBES_T32_CMP", "CMP (immediate)", REGS(NOPC, _, _, _, _)),
    _emu(0xFBCF8000, 0xF04F0000, "PROBES_T32_MOV", "MOV/MVN (immediate)",
         REGS(_, _, NOSPPC, _, _)),
    _rej(0xFBE08000, 0xF0A00000, "unallocated (1111 0x00 101x)"),
    _rej(0xFBC08000, 0xF0C00000, "unallocated (1111 0x00 11xx)"),
    _rej(0xFBE08000, 0xF1200000, "unallocated (1111 0x01 001x)"),
    _rej(0xFBE08000, 0xF1800000, "unallocated (1111 0x01 100x)"),
    _rej(0xFBE08000, 0xF1E00000, "unallocated (1111 0x01 111x)"),
    _emu(0xFB4F8000, 0xF10D0000, "PROBES_T32_ADDSUB", "ADD/SUB Rd, SP, #imm",
         REGS(SP, _, NOPC, _, _)),
    _emu(0xFA008000, 0xF0000000, "PROBES_T32_LOGICAL",
         "AND/BIC/ORR/ORN/EOR/ADD/ADC/SBC/SUB/RSB (modified immediate)",
         REGS(NOSPPC, _, NOSPPC, _, _)),
), "unallocated data processing (modified immediate)")

T32_DP_PLAINIMM = _table("t32_table_1111_0x1x___0", (
    _or(0xFBFF8000, 0xF20F0000, "ADDW Rd, PC, #imm"),
    _emu(0xFBFF8000, 0xF2AF0000, "PROBES_T32_ADDWSUBW_PC", "SUBW Rd, PC, #imm",
         REGS(PC, _, NOSPPC, _, _)),
    _or(0xFBFF8F00, 0xF20D0D00, "ADDW SP, SP, #imm"),
    _emu(0xFBFF8F00, 0xF2AD0D00, "PROBES_T32_ADDWSUBW", "SUBW SP, SP, #imm",
         REGS(SP, _, SP, _, _)),
    _or(0xFBF08000, 0xF2000000, "ADDW"),
    _emu(0xFBF08000, 0xF2A00000, "PROBES_T32_ADDWSUBW", "SUBW", REGS(NOPCX, _, NOSPPC, _, _)),
    _emu(0xFB708000, 0xF2400000, "PROBES_T32_MOVW", "MOVW/MOVT", REGS(_, _, NOSPPC, _, _)),
    _emu(0xFB508000, 0xF3000000, "PROBES_T32_SAT", "SSAT/SSAT16/USAT/USAT16",
         REGS(NOSPPC, _, NOSPPC, _, _)),
    _emu(0xFB708000, 0xF3400000, "PROBES_T32_BITFIELD", "SBFX/UBFX",
         REGS(NOSPPC, _, NOSPPC, _, _)),
    _emu(0xFBFF8000, 0xF36F0000, "PROBES_T32_BITFIELD", "BFC", REGS(_, _, NOSPPC, _, _)),
    _emu(0xFBF08000, 0xF3600000, "PROBES_T32_BITFIELD", "BFI", REGS(NOSPPCX, _, NOSPPC, _, _)),
), "unallocated data processing (plain binary immediate)")

T32_BRANCH_MISC = _table("t32_table_1111_0xxx___1", (
    _or(0xFFF0D7FF, 0xF3A08001, "YIELD"),
    _emu(0xFFF0D7FF, 0xF3A08004, "PROBES_T32_SEV", "SEV"),
    _sim(0xFFF0D7FC, 0xF3A08000, "PROBES_T32_WFE", "NOP/WFE/WFI"),
    _sim(0xFFF0D000, 0xF3E08000, "PROBES_T32_MRS", "MRS Rd, CPSR", REGS(_, _, NOSPPC, _, _)),
    _rej(0xFB80D000, 0xF3808000, "MSR, DBG, unallocated hints, CPS, CLREX/DSB/DMB/ISB, BXJ, "
                                 "SUBS PC, LR, MRS spsr, SMC, UNDEFINED"),
    _custom(0xF800D000, 0xF0008000, "PROBES_T32_BRANCH_COND", "B<cond>"),
    _or(0xF800D001, 0xF000C000, "BLX (immediate)"),
    _sim(0xF8009000, 0xF0009000, "PROBES_T32_BRANCH", "B/BL"),
), "unallocated branch or miscellaneous control")

T32_HINTS = _table("t32_table_1111_100x_x0x1__1111", (
    _sim(0xFE7FF000, 0xF81FF000, "PROBES_T32_PLDI", "PLD/PLI (literal)"),
    _or(0xFFD0F000, 0xF890F000, "PLD{W} (immediate, imm12)"),
    _or(0xFFD0FF00, 0xF810FC00, "PLD{W} (immediate, negative imm8)"),
    _or(0xFFF0F000, 0xF990F000, "PLI (immediate, imm12)"),
    _sim(0xFFF0FF00, 0xF910FC00, "PROBES_T32_PLDI", "PLI (immediate, negative imm8)",
         REGS(NOPCX, _, _, _, _)),
    _or(0xFFD0FFC0, 0xF810F000, "PLD{W} (register)"),
    _sim(0xFFF0FFC0, 0xF910F000, "PROBES_T32_PLDI", "PLI (register)",
         REGS(NOPCX, _, _, _, NOSPPC)),
), "unallocated memory hint")

T32_LS_SINGLE = _table("t32_table_1111_100x", (
    _rej(0xFE600000, 0xF8600000, "unallocated (1111 100x x11x)"),
    _rej(0xFFF00000, 0xF9500000, "unallocated (1111 1001 0101)"),
    _rej(0xFE800D00, 0xF8000800, "unallocated (1111 100x 0xxx ... 10x0)"),
    _rej(0xFE800F00, 0xF8000E00, "STRT/STRBT/STRHT/LDRT/LDRBT/LDRSBT/LDRHT/LDRSHT "
                                 "(unprivileged access)"),
    _rej(0xFF1F0000, 0xF80F0000, "STR{,B,H} Rt, [PC, ...]"),
    _rej(0xFF10F000, 0xF800F000, "STR{,B,H} PC, [Rn, ...]"),
    _sim(0xFF7F0000, 0xF85F0000, "PROBES_T32_LDR_LIT", "LDR (literal)", REGS(PC, ANY, _, _, _)),
    _or(0xFFE00800, 0xF8400800, "STR/LDR (immediate, imm8)"),
    _emu(0xFFE00000, 0xF8C00000, "PROBES_T32_LDRSTR", "STR/LDR (immediate, imm12)",
         REGS(NOPCX, ANY, _, _, _)),
    _emu(0xFFE00FC0, 0xF8400000, "PROBES_T32_LDRSTR", "STR/LDR (register)",
         REGS(NOPCX, ANY, _, _, NOSPPC)),
    _sim(0xFE5F0000, 0xF81F0000, "PROBES_T32_LDR_LIT", "LDRB/LDRSB/LDRH/LDRSH (literal)",
         REGS(PC, NOSPPCX, _, _, _)),
    _or(0xFEC00800, 0xF8000800, "STRB/STRH/LDRB/LDRSB/LDRH/LDRSH (immediate, imm8)"),
    _emu(0xFEC00000, 0xF8800000, "PROBES_T32_LDRSTR",
         "STRB/STRH/LDRB/LDRSB/LDRH/LDRSH (immediate, imm12)", REGS(NOPCX, NOSPPCX, _, _, _)),
    _emu(0xFE800FC0, 0xF8000000, "PROBES_T32_LDRSTR",
         "STRB/STRH/LDRB/LDRSB/LDRH/LDRSH (register)", REGS(NOPCX, NOSPPCX, _, _, NOSPPC)),
), "unallocated load/store single")

T32_DP_REG = _table("t32_table_1111_1010___1111", (
    _rej(0xFFE0F080, 0xFA60F080, "unallocated (1111 1010 011x ... 1xxx)"),
    _emu(0xFF8FF080, 0xFA0FF080, "PROBES_T32_SIGN_EXTEND", "SXTH/UXTH/SXTB16/UXTB16/SXTB/UXTB",
         REGS(_, _, NOSPPC, _, NOSPPC)),
    _rej(0xFF80F0B0, 0xFA80F030, "unallocated (1111 1010 1xxx ... 0x11)"),
    _rej(0xFFB0F080, 0xFAB0F000, "unallocated (1111 1010 1x11 ... 0xxx)"),
    _or(0xFF80F080, 0xFA80F000, "parallel add/subtract (SADD16 ... UHSUB8)"),
    _or(0xFF80F080, 0xFA00F080, "SXTAH/UXTAH/SXTAB16/UXTAB16/SXTAB/UXTAB"),
    _or(0xFFF0F0C0, 0xFA80F080, "QADD/QDADD/QSUB/QDSUB"),
    _or(0xFFF0F0F0, 0xFAA0F080, "SEL"),
    _emu(0xFF80F0F0, 0xFA00F000, "PROBES_T32_MEDIA", "LSL/LSR/ASR/ROR (register)",
         REGS(NOSPPC, _, NOSPPC, _, NOSPPC)),
    _or(0xFFF0F0F0, 0xFAB0F080, "CLZ"),
    _emu(0xFFF0F0C0, 0xFA90F080, "PROBES_T32_REVERSE", "REV/REV16/RBIT/REVSH",
         REGS(NOSPPC, _, NOSPPC, _, SAMEAS16)),
), "unallocated data processing (register)")

T32_MUL = _table("t32_table_1111_1011_0", (
    _rej(0xFFF0F0F0, 0xFB00F010, "unallocated (1111 1011 0000 ... 1111 ... 0001)"),
    _rej(0xFFF0F0F0, 0xFB70F010, "unallocated (1111 1011 0111 ... 1111 ... 0001)"),
    _or(0xFFF0F0C0, 0xFB10F000, "SMULxy"),
    _emu(0xFF80F0E0, 0xFB00F000, "PROBES_T32_MUL_ADD", "MUL/SMUAD/SMULWy/SMUSD/SMMUL/USAD8",
         REGS(NOSPPC, _, NOSPPC, _, NOSPPC)),
    _rej(0xFFF000F0, 0xFB700010, "unallocated (1111 1011 0111 ... 0001)"),
    _or(0xFFF000C0, 0xFB100000, "SMLAxy"),
    _emu(0xFF8000C0, 0xFB000000, "PROBES_T32_MUL_ADD2",
         "MLA/MLS/SMLAD/SMLAWy/SMLSD/SMMLA/SMMLS/USADA8",
         REGS(NOSPPC, NOSPPCX, NOSPPC, _, NOSPPC)),
), "unallocated multiply")

T32_LONG_MUL = _table("t32_table_1111_1011_1", (
    _or(0xFFF000F0, 0xFBE00060, "UMAAL"),
    _or(0xFFF000C0, 0xFBC00080, "SMLALxy"),
    _or(0xFFE000E0, 0xFBC000C0, "SMLALD/SMLSLD"),
    _emu(0xFF9000F0, 0xFB800000, "PROBES_T32_MUL_ADD_LONG", "SMULL/UMULL/SMLAL/UMLAL",
         REGS(NOSPPC, NOSPPC, NOSPPC, _, NOSPPC)),
), "SDIV/UDIV or unallocated long multiply: not decoded")

T32_TABLE = _table("probes_decode_thumb32_table", (
    _t(0xFE400000, 0xE8000000, T32_LDMSTM),
    _t(0xFE400000, 0xE8400000, T32_DUAL),
    _t(0xFE000000, 0xEA000000, T32_DP_SHIFTED),
    _rej(0xFC000000, 0xEC000000, "coprocessor instruction (1110 11xx)"),
    _t(0xFA008000, 0xF0000000, T32_DP_MODIMM),
    _t(0xFA008000, 0xF2000000, T32_DP_PLAINIMM),
    _t(0xF8008000, 0xF0008000, T32_BRANCH_MISC),
    _rej(0xFF100000, 0xF9000000, "Advanced SIMD element or structure load/store"),
    _t(0xFE50F000, 0xF810F000, T32_HINTS),
    _t(0xFE000000, 0xF8000000, T32_LS_SINGLE),
    _t(0xFF00F000, 0xFA00F000, T32_DP_REG),
    _t(0xFF800000, 0xFB000000, T32_MUL),
    _t(0xFF800000, 0xFB800000, T32_LONG_MUL),
), "coprocessor instruction (1111 11xx) or unallocated 32-bit encoding: no decode entry")

# -- decode-thumb.c: 16-bit encodings ---------------------------------------------

T16_MISC = _table("t16_table_1011", (
    _sim(0xFF00, 0xB000, "PROBES_T16_ADD_SP", "ADD/SUB SP, SP, #imm"),
    _sim(0xF500, 0xB100, "PROBES_T16_CBZ", "CBZ/CBNZ"),
    _rej(0xFFC0, 0xBA80, "unallocated (1011 1010 10xx)"),
    _emu(0xF500, 0xB000, "PROBES_T16_SIGN_EXTEND", "SXTH/SXTB/UXTH/UXTB/REV/REV16/REVSH"),
    _custom(0xFE00, 0xB400, "PROBES_T16_PUSH", "PUSH"),
    _custom(0xFE00, 0xBC00, "PROBES_T16_POP", "POP"),
    _or(0xFFFF, 0xBF10, "YIELD"),
    _emu(0xFFFF, 0xBF40, "PROBES_T16_SEV", "SEV"),
    _sim(0xFFCF, 0xBF00, "PROBES_T16_WFE", "NOP/WFE/WFI"),
    _rej(0xFF0F, 0xBF00, "unassigned hint"),
    _custom(0xFF00, 0xBF00, "PROBES_T16_IT", "IT"),
), "SETEND, CPS, BKPT or unallocated miscellaneous 16-bit instruction: not decoded")

T16_TABLE = _table("probes_decode_thumb16_table", (
    _emu(0xF800, 0x2800, "PROBES_T16_CMP", "CMP (immediate)"),
    _emu(0xC000, 0x0000, "PROBES_T16_ADDSUB",
         "LSL/LSR/ASR (immediate), ADD/SUB (register, immediate), MOV (immediate)"),
    _emu(0xFFC0, 0x4200, "PROBES_T16_CMP", "TST (register)"),
    _emu(0xFF80, 0x4280, "PROBES_T16_CMP", "CMP/CMN (register)"),
    _emu(0xFC00, 0x4000, "PROBES_T16_LOGICAL",
         "AND/EOR/LSL/LSR/ASR/ADC/SBC/ROR/RSB/ORR/MUL/BIC/MVN (register)"),
    _rej(0xFFF8, 0x47F8, "BLX pc"),
    _sim(0xFF00, 0x4700, "PROBES_T16_BLX", "BX/BLX (register)"),
    _rej(0xFFFF, 0x44FF, "ADD pc, pc"),
    _custom(0xFC00, 0x4400, "PROBES_T16_HIREGOPS", "ADD/CMP/MOV (high registers)"),
    _sim(0xF800, 0x4800, "PROBES_T16_LDR_LIT", "LDR (literal)"),
    _emu(0xC000, 0x4000, "PROBES_T16_LDRHSTRH",
         "load/store (register), STR/LDR/STRB/LDRB (immediate)"),
    _emu(0xF000, 0x8000, "PROBES_T16_LDRHSTRH", "STRH/LDRH (immediate)"),
    _sim(0xF000, 0x9000, "PROBES_T16_LDRSTR", "STR/LDR (SP-relative)"),
    _sim(0xF000, 0xA000, "PROBES_T16_ADR", "ADR, ADD Rd, SP, #imm"),
    _t(0xF000, 0xB000, T16_MISC),
    _emu(0xF000, 0xC000, "PROBES_T16_LDMSTM", "STM/LDM"),
    _rej(0xFE00, 0xDE00, "permanently UNDEFINED (udf), SVC"),
    _custom(0xF000, 0xD000, "PROBES_T16_BRANCH_COND", "B<cond>"),
    _sim(0xF800, 0xE000, "PROBES_T16_BRANCH", "B (unconditional)"),
), "no 16-bit Thumb decode entry")

# -- checkers-thumb.c: t32_check_stack's table --------------------------------------

T32_STACK_TABLE = Table("t32_check_stack", (
    _custom(0x00100000, 0x00100000, "STACK_USE_NONE", "a load (bit 20 set)"),
    _or(0xFF9F0FC0, 0xF80D0000, "STR{,B,H} Rt, [sp, Rm]"),
    _custom(0xFF900FCF, 0xF800000D, "STACK_USE_UNKNOWN", "STR{,B,H} Rt, [Rn, sp]"),
    _custom(0xFF9F0E00, 0xF80D0C00, "STACK_USE_FIXED_0XX", "STR{,B,H} Rt, [sp, #-imm8]"),
    _custom(0xFFDF0000, 0xE94D0000, "STACK_USE_T32STRD", "STRD Rt, Rt2, [sp, #-imm8*4]"),
    _custom(0xFFDF0000, 0xE90D0000, "STACK_USE_STMDX", "STMDB sp"),
    _custom(0, 0, "STACK_USE_NONE", "no store below sp"),
), "", "checkers-thumb.c")

# -- actions-thumb.c ---------------------------------------------------------------

#: kprobes_t16_actions: the handler of each simulated/emulated T16 action.
T16_HANDLER_OF = {
    "PROBES_T16_ADD_SP": "t16_simulate_add_sp_imm", "PROBES_T16_CBZ": "t16_simulate_cbz",
    "PROBES_T16_SIGN_EXTEND": "t16_emulate_loregs_rwflags",
    "PROBES_T16_SEV": "probes_emulate_none", "PROBES_T16_WFE": "probes_simulate_nop",
    "PROBES_T16_CMP": "t16_emulate_loregs_rwflags",
    "PROBES_T16_ADDSUB": "t16_emulate_loregs_noitrwflags",
    "PROBES_T16_LOGICAL": "t16_emulate_loregs_noitrwflags",
    "PROBES_T16_LDR_LIT": "t16_simulate_ldr_literal", "PROBES_T16_BLX": "t16_simulate_bxblx",
    "PROBES_T16_LDRHSTRH": "t16_emulate_loregs_rwflags",
    "PROBES_T16_LDRSTR": "t16_simulate_ldrstr_sp_relative",
    "PROBES_T16_ADR": "t16_simulate_reladr", "PROBES_T16_LDMSTM": "t16_emulate_loregs_rwflags",
    "PROBES_T16_BRANCH": "t16_simulate_branch",
}

#: kprobes_t32_actions. MUL_ADD2's t32_emulate_rd8rn16rm0ra12_noflags is a
#: #define of t32_emulate_rdlo12rdhi8rn16rm0_noflags: one function, named once.
T32_HANDLER_OF = {
    "PROBES_T32_LDRDSTRD": "t32_emulate_ldrdstrd",
    "PROBES_T32_TABLE_BRANCH": "t32_simulate_table_branch",
    **dict.fromkeys(("PROBES_T32_TST", "PROBES_T32_MOV", "PROBES_T32_ADDSUB",
                     "PROBES_T32_LOGICAL", "PROBES_T32_CMP", "PROBES_T32_SAT",
                     "PROBES_T32_SIGN_EXTEND", "PROBES_T32_MEDIA", "PROBES_T32_MUL_ADD"),
                    "t32_emulate_rd8rn16rm0_rwflags"),
    "PROBES_T32_ADDWSUBW_PC": "t32_emulate_rd8pc16_noflags",
    **dict.fromkeys(("PROBES_T32_ADDWSUBW", "PROBES_T32_MOVW", "PROBES_T32_BITFIELD",
                     "PROBES_T32_REVERSE"), "t32_emulate_rd8rn16_noflags"),
    "PROBES_T32_SEV": "probes_emulate_none", "PROBES_T32_WFE": "probes_simulate_nop",
    "PROBES_T32_MRS": "t32_simulate_mrs", "PROBES_T32_BRANCH": "t32_simulate_branch",
    "PROBES_T32_PLDI": "probes_simulate_nop", "PROBES_T32_LDR_LIT": "t32_simulate_ldr_literal",
    "PROBES_T32_LDRSTR": "t32_emulate_ldrstr",
    **dict.fromkeys(("PROBES_T32_MUL_ADD2", "PROBES_T32_MUL_ADD_LONG"),
                    "t32_emulate_rdlo12rdhi8rn16rm0_noflags"),
}

#: probes_condition_checks (decode.c), indexed by a condition field.
CONDITION_CHECKS = ("__check_eq", "__check_ne", "__check_cs", "__check_cc", "__check_mi",
                    "__check_pl", "__check_vs", "__check_vc", "__check_hi", "__check_ls",
                    "__check_ge", "__check_lt", "__check_gt", "__check_le", "__check_al",
                    "__check_al")

#: Every handler the Thumb tables can choose, numbered by position for the guest.
#: (simulate_stm1_pc of kprobe_decode_ldmstm is not among them: the T32 table
#: rejects STM with PC in the list before it gets there.)
THUMB_HANDLERS = (
    "probes_simulate_nop", "probes_emulate_none",
    # 16-bit
    "t16_simulate_add_sp_imm", "t16_simulate_cbz", "t16_emulate_loregs_rwflags",
    "t16_emulate_loregs_noitrwflags", "t16_emulate_push", "t16_emulate_pop_nopc",
    "t16_emulate_pop_pc", "t16_simulate_it", "t16_simulate_bxblx", "t16_emulate_hiregs",
    "t16_simulate_ldr_literal", "t16_simulate_ldrstr_sp_relative", "t16_simulate_reladr",
    "t16_simulate_cond_branch", "t16_simulate_branch",
    # 32-bit
    "t32_simulate_table_branch", "t32_simulate_mrs", "t32_simulate_cond_branch",
    "t32_simulate_branch", "t32_simulate_ldr_literal", "t32_emulate_ldrdstrd",
    "t32_emulate_ldrstr", "t32_emulate_rd8rn16rm0_rwflags", "t32_emulate_rd8pc16_noflags",
    "t32_emulate_rd8rn16_noflags", "t32_emulate_rdlo12rdhi8rn16rm0_noflags",
    # T32 LDM/STM through kprobe_decode_ldmstm (actions-common.c)
    "emulate_generic_r0_12_noflags", "emulate_generic_r2_14_noflags", "emulate_ldm_r3_15",
    "simulate_ldm1stm1", "simulate_ldm1_pc",
)


@dataclass
class ThumbDecoded(Decoded):
    """``struct arch_probes_insn`` after a Thumb decode.

    ``insn`` is the (renamed) instruction the slot holds, a wide one composed
    as ``first << 16 | second``; ``slot`` is what the kernel writes there,
    halfword by halfword. ``singlestep`` and ``check_cc`` name the functions
    ``thumb16/32_probes_decode_insn`` and the custom decoders install.
    """

    slot: tuple[int, ...] = ()
    singlestep: str = ""
    check_cc: str = "thumb_check_cc"


def slot_halfwords(insn: int) -> tuple[int, ...]:
    """prepare_emulated_insn + set_emulated_insn (thumb): the instruction's halfwords,
    the first at the lower address, then ``bx lr`` up to SLOT_HALFWORDS."""
    halves = (insn >> 16, insn & 0xFFFF) if is_wide_instruction(insn) else (insn,)
    return halves + (THUMB_BX_LR,) * (SLOT_HALFWORDS - len(halves))


def slot_bytes(slot: tuple[int, ...], size: int = 8) -> bytes:
    """The slot in memory (little-endian halfwords); the unwritten rest is zero."""
    return b"".join(h.to_bytes(2, "little") for h in slot).ljust(size, b"\0")


def _t16_decode_hiregs(insn: int, asi: Decoded, item: Item) -> Decoded:
    """Rdn (bits 7, 2:0) -> r1, Rm (bits 6:3) -> r0; t16_emulate_hiregs loads them."""
    asi.insn, asi.handler = (insn & ~0xFF) | 0x01, "t16_emulate_hiregs"
    return asi


def _t16_decode_push(insn: int, asi: Decoded, item: Item) -> Decoded:
    """PUSH as T32 ``STMDB r9!, {list}``: r9 stands for sp, r8 (bit 8) for lr."""
    asi.insn, asi.handler = 0xE9290000 | insn & 0x1FF, "t16_emulate_push"
    return asi


def _t16_decode_pop(insn: int, asi: Decoded, item: Item) -> Decoded:
    """POP as T32 ``LDMIA r9!, {list}``: r9 stands for sp, r8 (bit 8) for pc."""
    asi.insn = 0xE8B90000 | insn & 0x1FF
    asi.handler = "t16_emulate_pop_pc" if insn & 0x100 else "t16_emulate_pop_nopc"
    return asi


def _t16_decode_it(insn: int, asi: Decoded, item: Item) -> Decoded:
    """IT replaces the single-step itself (no it_advance after it); no slot."""
    assert isinstance(asi, ThumbDecoded)
    asi.handler, asi.singlestep = "t16_simulate_it", "t16_singlestep_it"
    return asi


def _cond_branch(shift: int, handler: str) -> Callable[[int, Decoded, Item], Decoded]:
    def decoder(insn: int, asi: Decoded, item: Item) -> Decoded:
        """t16/t32_decode_cond_branch: the branch's own condition replaces the IT check."""
        assert isinstance(asi, ThumbDecoded)
        asi.check_cc, asi.handler = CONDITION_CHECKS[(insn >> shift) & 0xF], handler
        return asi
    return decoder


def _t32_decode_ldmstm(insn: int, asi: Decoded, item: Item) -> Decoded:
    """kprobe_decode_ldmstm on the composed word; the halfword order is the slot's."""
    return kprobe_decode_ldmstm(insn, asi, item)


_T32_STACK_CHECKED = frozenset({"PROBES_T32_LDMSTM", "PROBES_T32_LDRDSTRD",
                                "PROBES_T32_LDRSTR"})


def _t32_checkers(action: str, insn: int, item: Item, asi: Decoded) -> None:
    """kprobes_t32_checkers: t32_check_stack for LDM/STM, LDRD/STRD, LDR/STR."""
    if action in _T32_STACK_CHECKED:
        stack = probes_decode_insn(insn, T32_STACK_TABLE, False, False,
                                   actions=STACK_CHECK_ACTIONS)
        asi.stack_space, asi.stack_entry = stack.stack_space, stack.entry


def _t16_checkers(action: str, insn: int, item: Item, asi: Decoded) -> None:
    """kprobes_t16_checkers: only PUSH can store below sp (4 bytes a register)."""
    if action == "PROBES_T16_PUSH":
        asi.stack_space = bin(insn & 0x1FF).count("1") * 4
        asi.stack_entry = "PUSH (t16_check_stack)"


T16_ACTIONS = Actions(T16_HANDLER_OF, {
    "PROBES_T16_PUSH": _t16_decode_push, "PROBES_T16_POP": _t16_decode_pop,
    "PROBES_T16_IT": _t16_decode_it, "PROBES_T16_HIREGOPS": _t16_decode_hiregs,
    "PROBES_T16_BRANCH_COND": _cond_branch(8, "t16_simulate_cond_branch"),
}, _t16_checkers)
T32_ACTIONS = Actions(T32_HANDLER_OF, {
    "PROBES_T32_LDMSTM": _t32_decode_ldmstm,
    "PROBES_T32_BRANCH_COND": _cond_branch(22, "t32_simulate_cond_branch"),
}, _t32_checkers)


def _prepare(insn: int, table: Table, actions: Actions, singlestep: str) -> ThumbDecoded:
    asi = ThumbDecoded(singlestep=singlestep)
    probes_decode_insn(insn, table, True, True, thumb=True, asi=asi, actions=actions)
    if asi.insn is not None:
        asi.slot = slot_halfwords(asi.insn)
    check_stack_use(asi)
    return asi


def thumb16_prepare(insn: int) -> ThumbDecoded:
    """arch_prepare_kprobe for a 16-bit Thumb instruction (thumb16_probes_decode_insn)."""
    if not 0 <= insn <= 0xFFFF or is_wide_instruction(insn):
        raise ValueError(f"{insn:#x} is not a 16-bit Thumb instruction")
    return _prepare(insn, T16_TABLE, T16_ACTIONS, "thumb16_singlestep")


def thumb32_prepare(insn: int) -> ThumbDecoded:
    """arch_prepare_kprobe for a 32-bit one, ``insn`` = first halfword << 16 | second."""
    if not 0 <= insn <= 0xFFFFFFFF or not is_wide_instruction(insn >> 16):
        raise ValueError(f"{insn:#x} is not a composed 32-bit Thumb instruction")
    return _prepare(insn, T32_TABLE, T32_ACTIONS, "thumb32_singlestep")
