"""The Thumb kprobes decoder (arches/arm/probes_decode_thumb.py) against Linux v5.10.

The cases follow arch/arm/probes/kprobes/test-thumb.c (its TEST_GROUP names
are given per case): what it tests as supported must decode to the handler
of kprobes_t16_actions / kprobes_t32_actions (actions-thumb.c) with the slot
decode.c writes (registers renamed Rn -> r2, Rt -> r0, Rd -> r1, Rm -> r3
for T32; halfwords, then ``bx lr``), and what it lists as TEST_UNSUPPORTED
must be refused with the table entry's reason. Encodings come from keystone
(Thumb mode) where it assembles the text, else from test-thumb.c's
``__inst_thumb32(...)`` or by hand (checked against capstone when written).
"""
from __future__ import annotations

import keystone
import pytest

from arches.arm import probes_decode_thumb as thumb
from arches.arm.probes_decode import MAX_STACK_SIZE, Table, arm_prepare
from arches.arm.probes_decode_thumb import (THUMB_HANDLERS, is_wide_instruction, slot_bytes,
                                            thumb16_prepare, thumb32_prepare)
from arches.kprobe import KprobeRefused

BASE = 0x1000                       # where keystone assembles (branch targets are absolute)
BX_LR = 0x4770
SAME = "same"                       # the slot holds the instruction unchanged
_KS = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_THUMB)


def encode(insn: str | int) -> int:
    """A 16-bit encoding, or a 32-bit one composed as first halfword << 16 | second."""
    if isinstance(insn, int):
        return insn
    code = bytes(_KS.asm(insn, BASE)[0])
    first = int.from_bytes(code[:2], "little")
    if len(code) == 2:
        return first
    assert len(code) == 4, insn
    return first << 16 | int.from_bytes(code[2:4], "little")


def prepare(insn: str | int) -> thumb.ThumbDecoded:
    word = encode(insn)
    return thumb32_prepare(word) if word > 0xFFFF else thumb16_prepare(word)


def expected_slot(word: int) -> tuple[int, ...]:
    """decode.c with thumb: the instruction's halfwords, first one first, then bx lr."""
    if word > 0xFFFF:
        return (word >> 16, word & 0xFFFF, BX_LR)
    return (word, BX_LR, BX_LR)


# -- supported: (test-thumb.c group, text, encoding or None, handler, slot) -------------

T16_SUPPORTED = [
    ("Shift (immediate), add, subtract, move, and compare", "lsls r7, r0, #5", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("Shift (immediate), add, subtract, move, and compare", "asrs r0, r7, #11", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("Shift (immediate), add, subtract, move, and compare", "adds r2, r0, r7", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("Shift (immediate), add, subtract, move, and compare", "subs r0, r7, #2", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("Shift (immediate), add, subtract, move, and compare", "movs r7, #0xa0", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("Shift (immediate), add, subtract, move, and compare", "cmp r5, #0x5f", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("Shift (immediate), add, subtract, move, and compare", "adds r7, #0xa0", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("16-bit Thumb data-processing instructions", "ands r0, r7", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("16-bit Thumb data-processing instructions", "tst r0, r7", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb data-processing instructions", "rsbs r7, r7, #0", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("16-bit Thumb data-processing instructions", "cmp r7, r0", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb data-processing instructions", "cmn r0, r7", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb data-processing instructions", "muls r7, r0, r7", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    ("16-bit Thumb data-processing instructions", "mvns r7, r0", None,
     "t16_emulate_loregs_noitrwflags", SAME),
    # hiregs: Rdn -> r1, Rm -> r0 (t16_decode_hiregs)
    ("Special data instructions and branch and exchange", "add r3, r8", None,
     "t16_emulate_hiregs", 0x4401),
    ("Special data instructions and branch and exchange", "add r8, r0", None,
     "t16_emulate_hiregs", 0x4401),
    ("Special data instructions and branch and exchange", "add sp, r8", None,
     "t16_emulate_hiregs", 0x4401),
    ("Special data instructions and branch and exchange", "add r14, pc", None,
     "t16_emulate_hiregs", 0x4401),
    ("Special data instructions and branch and exchange", "add pc, r0", None,
     "t16_emulate_hiregs", 0x4401),
    ("Special data instructions and branch and exchange", "cmp r3, r8", None,
     "t16_emulate_hiregs", 0x4501),
    ("Special data instructions and branch and exchange", "cmp sp, r8", None,
     "t16_emulate_hiregs", 0x4501),
    ("Special data instructions and branch and exchange", "mov r0, r7", 0x4638,
     "t16_emulate_hiregs", 0x4601),
    ("Special data instructions and branch and exchange", "mov sp, r8", None,
     "t16_emulate_hiregs", 0x4601),
    ("Special data instructions and branch and exchange", "mov lr, pc", None,
     "t16_emulate_hiregs", 0x4601),
    ("Special data instructions and branch and exchange", "mov pc, r0", None,
     "t16_emulate_hiregs", 0x4601),
    ("Special data instructions and branch and exchange", "bx r0", None,
     "t16_simulate_bxblx", None),
    ("Special data instructions and branch and exchange", "bx pc", None,
     "t16_simulate_bxblx", None),
    ("Special data instructions and branch and exchange", "blx r14", None,
     "t16_simulate_bxblx", None),
    ("Load from Literal Pool", "ldr r7, [pc, #128]", None, "t16_simulate_ldr_literal", None),
    ("16-bit Thumb Load/store instructions", "str r0, [r1, r2]", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb Load/store instructions", "ldrsh r7, [r6, r5]", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb Load/store instructions", "ldrb r7, [r6, #30]", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb Load/store instructions", "strh r0, [r1, #60]", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb Load/store instructions", "ldrh r7, [r6, #60]", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("16-bit Thumb Load/store instructions", "str r7, [sp, #160]", None,
     "t16_simulate_ldrstr_sp_relative", None),
    ("16-bit Thumb Load/store instructions", "ldr r0, [sp, #0]", None,
     "t16_simulate_ldrstr_sp_relative", None),
    # add r7, pc, #1020: 1010 0 111 11111111 (keystone reads the constant as a target)
    ("Generate PC-/SP-relative address", "add r7, pc, #1020", 0xA7FF,
     "t16_simulate_reladr", None),
    ("Generate PC-/SP-relative address", "add r7, sp, #1020", None,
     "t16_simulate_reladr", None),
    ("Miscellaneous 16-bit instructions", "add sp, #256", None,
     "t16_simulate_add_sp_imm", None),
    ("Miscellaneous 16-bit instructions", "sub sp, #0x1fc", None,
     "t16_simulate_add_sp_imm", None),
    ("Miscellaneous 16-bit instructions", "cbnz r0, #0x1010", None, "t16_simulate_cbz", None),
    ("Miscellaneous 16-bit instructions", "cbz r7, #0x1040", None, "t16_simulate_cbz", None),
    ("Miscellaneous 16-bit instructions", "sxth r0, r7", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("Miscellaneous 16-bit instructions", "uxtb r7, r0", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("Miscellaneous 16-bit instructions", "rev16 r7, r0", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("Miscellaneous 16-bit instructions", "revsh r0, r7", None,
     "t16_emulate_loregs_rwflags", SAME),
    # push/pop become T32 STMDB/LDMIA r9!, with r8 standing for lr/pc
    ("Miscellaneous 16-bit instructions", "push {r0}", None, "t16_emulate_push", 0xE9290001),
    ("Miscellaneous 16-bit instructions", "push {r14}", None, "t16_emulate_push", 0xE9290100),
    ("Miscellaneous 16-bit instructions", "push {r0-r7, r14}", None, "t16_emulate_push",
     0xE92901FF),
    ("Miscellaneous 16-bit instructions", "push {r1, r3, r5, r7}", None, "t16_emulate_push",
     0xE92900AA),
    ("Miscellaneous 16-bit instructions", "pop {r0}", None, "t16_emulate_pop_nopc",
     0xE8B90001),
    ("Miscellaneous 16-bit instructions", "pop {r0, r2, r4, r6}", None, "t16_emulate_pop_nopc",
     0xE8B90055),
    ("Miscellaneous 16-bit instructions", "pop {pc}", None, "t16_emulate_pop_pc", 0xE8B90100),
    ("Miscellaneous 16-bit instructions", "pop {r0-r7, pc}", None, "t16_emulate_pop_pc",
     0xE8B901FF),
    ("Miscellaneous 16-bit instructions", "yield", None, "probes_emulate_none", SAME),
    ("Miscellaneous 16-bit instructions", "sev", None, "probes_emulate_none", SAME),
    ("Miscellaneous 16-bit instructions", "nop", None, "probes_simulate_nop", None),
    ("Miscellaneous 16-bit instructions", "wfi", None, "probes_simulate_nop", None),
    ("Miscellaneous 16-bit instructions", "wfe", None, "probes_simulate_nop", None),
    ("Miscellaneous 16-bit instructions", "it eq", None, "t16_simulate_it", None),
    ("Miscellaneous 16-bit instructions", "itttt le", None, "t16_simulate_it", None),
    ("Load and store multiple", "ldmia r4!, {r0, r7}", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("Load and store multiple", "stmia r0!, {r0-r7}", None,
     "t16_emulate_loregs_rwflags", SAME),
    ("Conditional branch and Supervisor Call instructions", "beq #0x1010", None,
     "t16_simulate_cond_branch", None),
    ("Conditional branch and Supervisor Call instructions", "blt #0xff0", None,
     "t16_simulate_cond_branch", None),
    ("Unconditional branch", "b #0x1400", None, "t16_simulate_branch", None),
]

T32_SUPPORTED = [
    # LDM/STM through kprobe_decode_ldmstm: r0-r12 as is, else shifted down by 2 or 3
    ("Load/store multiple", "stmia r0, {r0, r8}", None,
     "emulate_generic_r0_12_noflags", SAME),
    ("Load/store multiple", "stmia r4, {r0-r12, r14}", None, "simulate_ldm1stm1", None),
    ("Load/store multiple", "stmia r7!, {r8-r12, r14}", None,
     "emulate_generic_r2_14_noflags", 0xE8A517C0),
    ("Load/store multiple", "ldmia r5!, {r6-r12, pc}", None, "emulate_ldm_r3_15", 0xE8B213F8),
    ("Load/store multiple", "ldmia r14!, {r4, pc}", None, "emulate_ldm_r3_15", 0xE8BB1002),
    ("Load/store multiple", "stmdb r13!, {r3-r12, lr}", None,
     "emulate_generic_r2_14_noflags", 0xE92B17FE),
    ("Load/store multiple", "ldmia r13!, {r2-r12, pc}", None, "simulate_ldm1_pc", None),
    ("Load/store multiple", "ldmia r0, {r0-r12, lr}", None, "simulate_ldm1stm1", None),
    ("Load/store double or exclusive, table branch", "ldrd r0, r1, [r1, #-16]", None,
     "t32_emulate_ldrdstrd", 0xE9520104),
    ("Load/store double or exclusive, table branch", "ldrd r12, r14, [sp, #16]", None,
     "t32_emulate_ldrdstrd", 0xE9D20104),
    ("Load/store double or exclusive, table branch", "ldrd r1, r0, [r7], #16", None,
     "t32_emulate_ldrdstrd", 0xE8F20104),
    ("Load/store double or exclusive, table branch", "ldrd r12, r14, [pc, #8]", None,
     "t32_emulate_ldrdstrd", 0xE9D20102),
    ("Load/store double or exclusive, table branch", "strd r0, r1, [r1, #-16]", None,
     "t32_emulate_ldrdstrd", 0xE9420104),
    ("Load/store double or exclusive, table branch", "tbb [pc, r0]", None,
     "t32_simulate_table_branch", None),
    ("Load/store double or exclusive, table branch", "tbh [r1, r14, lsl #1]", None,
     "t32_simulate_table_branch", None),
    ("Data-processing (shifted register) and (modified immediate)", "and.w r0, r1, r2", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEA020103),
    ("Data-processing (shifted register) and (modified immediate)", "ands r8, r9, r10, rrx",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xEA120133),
    ("Data-processing (shifted register) and (modified immediate)", "orn r0, r1, r2", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEA620103),
    ("Data-processing (shifted register) and (modified immediate)", "tst.w r1, r2", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEA120F03),
    ("Data-processing (shifted register) and (modified immediate)", "teq.w r1, r2", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEA920F03),
    ("Data-processing (shifted register) and (modified immediate)", "cmn.w sp, r7", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEB120F03),
    ("Data-processing (shifted register) and (modified immediate)", "cmp.w sp, r7", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEBB20F03),
    ("Data-processing (shifted register) and (modified immediate)", "mov.w r0, r14", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEA4F0103),
    ("Data-processing (shifted register) and (modified immediate)", "mvns r5, r8, ror #7",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xEA7F11F3),
    # PKHBT/PKHTB: 1110 1010 1100 Rn 0 imm3 Rd imm2 tb 0 Rm
    ("Data-processing (shifted register) and (modified immediate)", "pkhbt r0, r0, r1",
     0xEAC00001, "t32_emulate_rd8rn16rm0_rwflags", 0xEAC20103),
    ("Data-processing (shifted register) and (modified immediate)",
     "pkhtb r14, r12, r10, asr #2", 0xEACC0EAA, "t32_emulate_rd8rn16rm0_rwflags", 0xEAC201A3),
    ("Data-processing (shifted register) and (modified immediate)", "add.w r0, sp, r1", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEB020103),
    ("Data-processing (shifted register) and (modified immediate)", "add r1, sp, r3",
     0xEB0D0103, "t32_emulate_rd8rn16rm0_rwflags", 0xEB020103),
    ("Data-processing (shifted register) and (modified immediate)", "add sp, sp, r1, lsl #3",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xEB0201C3),
    ("Data-processing (shifted register) and (modified immediate)", "sub.w sp, sp, r1", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xEBA20103),
    ("Data-processing (shifted register) and (modified immediate)",
     "and r0, r11, #0x00010001", None, "t32_emulate_rd8rn16rm0_rwflags", 0xF0021101),
    ("Data-processing (shifted register) and (modified immediate)", "tst r0, #0xf5000000",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xF0124F75),
    ("Data-processing (shifted register) and (modified immediate)", "cmn sp, #0x00080008",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xF1121F08),
    ("Data-processing (shifted register) and (modified immediate)", "cmp sp, #0x00080008",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xF1B21F08),
    ("Data-processing (shifted register) and (modified immediate)", "movs r4, #0x5a00", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xF45F41B4),
    ("Data-processing (shifted register) and (modified immediate)", "mvn r0, #0x00010001",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xF06F1101),
    ("Data-processing (shifted register) and (modified immediate)", "add.w r0, sp, #24", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xF1020118),
    ("Data-processing (shifted register) and (modified immediate)", "sub.w sp, sp, #24", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xF1A20118),
    ("Data-processing (plain binary immediate)", "addw r0, r1, #0x123", None,
     "t32_emulate_rd8rn16_noflags", 0xF2021123),
    ("Data-processing (plain binary immediate)", "addw r14, sp, #0xf5a", None,
     "t32_emulate_rd8rn16_noflags", 0xF602715A),
    ("Data-processing (plain binary immediate)", "addw sp, sp, #0x20", None,
     "t32_emulate_rd8rn16_noflags", 0xF2020120),
    ("Data-processing (plain binary immediate)", "subw sp, sp, #0x20", None,
     "t32_emulate_rd8rn16_noflags", 0xF2A20120),
    # addw/subw r7, pc, #0x888: 1111 0 1 10 x0x0 1111 | 0 000 0111 10001000
    ("Data-processing (plain binary immediate)", "addw r7, pc, #0x888", 0xF60F0788,
     "t32_emulate_rd8pc16_noflags", 0xF6020188),
    ("Data-processing (plain binary immediate)", "subw r7, pc, #0x888", 0xF6AF0788,
     "t32_emulate_rd8pc16_noflags", 0xF6A20188),
    ("Data-processing (plain binary immediate)", "subw r0, r1, #0x123", None,
     "t32_emulate_rd8rn16_noflags", 0xF2A21123),
    ("Data-processing (plain binary immediate)", "movw lr, #0xffff", None,
     "t32_emulate_rd8rn16_noflags", 0xF64F71FF),
    ("Data-processing (plain binary immediate)", "movt r14, #0xffff", None,
     "t32_emulate_rd8rn16_noflags", 0xF6CF71FF),
    ("Data-processing (plain binary immediate)", "ssat r14, #24, r12, asr #8", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xF3222117),
    ("Data-processing (plain binary immediate)", "ssat16 r0, #12, r0", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xF322010B),
    ("Data-processing (plain binary immediate)", "usat16 r0, #12, r0", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xF3A2010C),
    ("Data-processing (plain binary immediate)", "sbfx r14, r12, #8, #16", None,
     "t32_emulate_rd8rn16_noflags", 0xF342210F),
    ("Data-processing (plain binary immediate)", "ubfx r4, r10, #16, #15", None,
     "t32_emulate_rd8rn16_noflags", 0xF3C2410E),
    ("Data-processing (plain binary immediate)", "bfc r14, #4, #20", None,
     "t32_emulate_rd8rn16_noflags", 0xF36F1117),
    ("Data-processing (plain binary immediate)", "bfi r12, r14, #4, #20", None,
     "t32_emulate_rd8rn16_noflags", 0xF3621117),
    ("Branches and miscellaneous control", "beq.w #0x1100", None,
     "t32_simulate_cond_branch", None),
    ("Branches and miscellaneous control", "bpl.w #0x3000", None,
     "t32_simulate_cond_branch", None),
    ("Branches and miscellaneous control", "yield.w", None, "probes_emulate_none", SAME),
    ("Branches and miscellaneous control", "sev.w", None, "probes_emulate_none", SAME),
    ("Branches and miscellaneous control", "nop.w", None, "probes_simulate_nop", None),
    ("Branches and miscellaneous control", "wfi.w", None, "probes_simulate_nop", None),
    ("Branches and miscellaneous control", "mrs r14, apsr", None, "t32_simulate_mrs", None),
    ("Branches and miscellaneous control", "b.w #0x2000", None, "t32_simulate_branch", None),
    ("Branches and miscellaneous control", "bl #0x800", None, "t32_simulate_branch", None),
    ("Branches and miscellaneous control", "blx #0x2000", None, "t32_simulate_branch", None),
    ("Store single data item", "str r0, [r11, #1024]", None,
     "t32_emulate_ldrstr", 0xF8C20400),
    ("Store single data item", "strb r14, [r1, #-128]", None,
     "t32_emulate_ldrstr", 0xF8020C80),
    ("Store single data item", "strh r0, [r11], #120", None, "t32_emulate_ldrstr", 0xF8220B78),
    ("Store single data item", "str r0, [r11, #120]!", None, "t32_emulate_ldrstr", 0xF8420F78),
    ("Store single data item", "str.w r0, [r1, r2]", None, "t32_emulate_ldrstr", 0xF8420003),
    ("Store single data item", "strh r14, [r10, r11, lsl #1]", None,
     "t32_emulate_ldrstr", 0xF8220013),
    ("Store single data item", "strb.w r0, [r1, #4095]", None,
     "t32_emulate_ldrstr", 0xF8820FFF),
    ("Store single data item", "str.w r7, [sp, #24]", None, "t32_emulate_ldrstr", 0xF8C20018),
    ("Store single data item", "str sp, [sp]", None, "t32_emulate_ldrstr", 0xF8C20000),
    ("Load single data item and memory hints", "ldr r0, [r11, #1024]", None,
     "t32_emulate_ldrstr", 0xF8D20400),
    ("Load single data item and memory hints", "ldrsb r14, [r1, #-128]", None,
     "t32_emulate_ldrstr", 0xF9120C80),
    ("Load single data item and memory hints", "ldrh.w r0, [r1, r2]", None,
     "t32_emulate_ldrstr", 0xF8320003),
    ("Load single data item and memory hints", "ldr pc, [r14]", None,
     "t32_emulate_ldrstr", 0xF8D20000),
    ("Load single data item and memory hints", "ldr pc, [sp, r14]", None,
     "t32_emulate_ldrstr", 0xF8520003),
    ("Load single data item and memory hints", "ldr.w r0, [pc, #8]", None,
     "t32_simulate_ldr_literal", None),
    ("Load single data item and memory hints", "ldrsh.w r0, [pc, #-8]", None,
     "t32_simulate_ldr_literal", None),
    ("Load single data item and memory hints", "pli [pc, #4]", None,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pld [pc, #-4]", None,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pld [r0, #1024]", None,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pldw [r0, #1024]", 0xF8B0F400,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pli [r4, #1024]", None,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pld [r7, #-120]", None,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pli [r11, #-120]", None,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pld [r8, r12, lsl #3]", None,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pldw [r7, r0]", 0xF837F000,
     "probes_simulate_nop", None),
    ("Load single data item and memory hints", "pli [r12, r0]", None,
     "probes_simulate_nop", None),
    ("Data-processing (register)", "lsl.w r0, r1, r2", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA02F103),
    ("Data-processing (register)", "rors.w r14, r12, r11", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA72F103),
    ("Data-processing (register)", "sxth.w r8, r7", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA0FF183),
    # UXTB16 1111 1010 0011 1111 1111 Rd 10rr Rm; SXTAH 1111 1010 0000 Rn 1111 Rd 10rr Rm
    ("Data-processing (register)", "uxtb16 r8, r7", 0xFA3FF887,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA3FF183),
    ("Data-processing (register)", "sxtah r0, r0, r1", 0xFA00F081,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA02F183),
    ("Parallel addition and subtraction, signed", "sadd16 r0, r0, r1", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA92F103),
    ("Parallel addition and subtraction, unsigned", "uhsub8 r14, r12, r10", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFAC2F163),
    ("Miscellaneous operations", "qadd r0, r1, r2", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA82F183),
    ("Miscellaneous operations", "qdsub lr, r9, r8", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFA82F1B3),
    ("Miscellaneous operations", "sel r0, r0, r1", None,
     "t32_emulate_rd8rn16rm0_rwflags", 0xFAA2F183),
    # REV & co. name Rm twice (bits 19:16 and 3:0): both become r2 (SAMEAS16)
    ("Miscellaneous operations", "rev.w r0, r0", None,
     "t32_emulate_rd8rn16_noflags", 0xFA92F182),
    ("Miscellaneous operations", "rbit r14, r12", None,
     "t32_emulate_rd8rn16_noflags", 0xFA92F1A2),
    ("Miscellaneous operations", "revsh.w r0, r0", None,
     "t32_emulate_rd8rn16_noflags", 0xFA92F1B2),
    ("Miscellaneous operations", "clz lr, r7", None,
     "t32_emulate_rd8rn16_noflags", 0xFAB2F182),
    ("Multiply, multiply accumulate, and absolute difference operations", "mul r7, r8, r9",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xFB02F103),
    ("Multiply, multiply accumulate, and absolute difference operations", "smulbb r0, r1, r2",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xFB12F103),
    ("Multiply, multiply accumulate, and absolute difference operations", "smuad r0, r0, r1",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xFB22F103),
    ("Multiply, multiply accumulate, and absolute difference operations", "smulwb r0, r1, r2",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xFB32F103),
    ("Multiply, multiply accumulate, and absolute difference operations", "usad8 r0, r0, r1",
     None, "t32_emulate_rd8rn16rm0_rwflags", 0xFB72F103),
    ("Multiply, multiply accumulate, and absolute difference operations",
     "mla r7, r8, r9, r10", None, "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFB020103),
    ("Multiply, multiply accumulate, and absolute difference operations",
     "mls r0, r1, r2, r3", None, "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFB020113),
    ("Multiply, multiply accumulate, and absolute difference operations",
     "smlabb r0, r1, r2, r3", None, "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFB120103),
    ("Multiply, multiply accumulate, and absolute difference operations",
     "smmls r0, r0, r1, r2", None, "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFB620103),
    ("Multiply, multiply accumulate, and absolute difference operations",
     "usada8 r0, r0, r1, r2", None, "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFB720103),
    ("Long multiply, long multiply accumulate, and divide", "smull r7, r8, r9, r10", None,
     "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFB820103),
    ("Long multiply, long multiply accumulate, and divide", "umlal r0, r1, r2, r3", None,
     "t32_emulate_rdlo12rdhi8rn16rm0_noflags", SAME),
    # SMLALBB 1111 1011 1100 Rn RdLo RdHi 10NM Rm
    ("Long multiply, long multiply accumulate, and divide", "smlalbb r8, r9, r10, r11",
     0xFBCA898B, "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFBC20183),
    ("Long multiply, long multiply accumulate, and divide", "smlald r0, r1, r0, r1", None,
     "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFBC201C3),
    ("Long multiply, long multiply accumulate, and divide", "umaal r8, r9, r10, r11", None,
     "t32_emulate_rdlo12rdhi8rn16rm0_noflags", 0xFBE20163),
]


def _ids(cases: list[tuple]) -> list[str]:
    return [case[1] for case in cases]


def _check_supported(decoded: thumb.ThumbDecoded, word: int, handler: str,
                     slot: str | int | None) -> None:
    assert decoded.handler == handler
    if slot is None:
        assert decoded.insn is None and decoded.slot == ()
    else:
        renamed = word if slot == SAME else slot
        assert decoded.insn == renamed, f"{decoded.insn:#x} != {renamed:#x}"
        assert decoded.slot == expected_slot(renamed)
    assert decoded.register_usage_flags == 0xFFFFFFFF    # no Thumb register-use checker


@pytest.mark.parametrize("group, text, word, handler, slot", T16_SUPPORTED,
                         ids=_ids(T16_SUPPORTED))
def test_t16_supported_instructions_get_the_kernels_handler_and_slot(
        group: str, text: str, word: int | None, handler: str, slot: str | int | None) -> None:
    word = encode(text if word is None else word)
    assert not is_wide_instruction(word), "a 16-bit case assembled wide"
    decoded = thumb16_prepare(word)
    _check_supported(decoded, word, handler, slot)
    assert decoded.singlestep == ("t16_singlestep_it" if text.startswith("it")
                                  else "thumb16_singlestep")


@pytest.mark.parametrize("group, text, word, handler, slot", T32_SUPPORTED,
                         ids=_ids(T32_SUPPORTED))
def test_t32_supported_instructions_get_the_kernels_handler_and_slot(
        group: str, text: str, word: int | None, handler: str, slot: str | int | None) -> None:
    word = encode(text if word is None else word)
    assert is_wide_instruction(word >> 16), "a 32-bit case assembled narrow"
    decoded = thumb32_prepare(word)
    _check_supported(decoded, word, handler, slot)
    assert decoded.singlestep == "thumb32_singlestep"


# -- TEST_UNSUPPORTED in test-thumb.c (and a few table entries it does not list) --------

UNSUPPORTED = [
    ("Special data instructions and branch and exchange", "add pc, pc", 0x44FF, "ADD pc, pc"),
    ("Special data instructions and branch and exchange", "blx pc", 0x47F8, "BLX pc"),
    ("Miscellaneous 16-bit instructions", "cpsie i", None, "CPS"),
    ("Miscellaneous 16-bit instructions", "cpsid i", None, "CPS"),
    ("Miscellaneous 16-bit instructions", "setend le", None, "SETEND"),
    ("Miscellaneous 16-bit instructions", "setend be", None, "SETEND"),
    ("Miscellaneous 16-bit instructions", "0xba80", 0xBA80, "unallocated (1011 1010 10xx)"),
    ("Miscellaneous 16-bit instructions", "0xbabf", 0xBABF, "unallocated (1011 1010 10xx)"),
    ("Miscellaneous 16-bit instructions", "bkpt #0", None, "BKPT"),
    ("Miscellaneous 16-bit instructions", "bkpt #255", None, "BKPT"),
    ("Miscellaneous 16-bit instructions", "0xbf50", 0xBF50, "unassigned hint"),
    ("Miscellaneous 16-bit instructions", "0xbff0", 0xBFF0, "unassigned hint"),
    ("Conditional branch and Supervisor Call instructions", "udf #0", 0xDE00, "UNDEFINED"),
    ("Conditional branch and Supervisor Call instructions", "udf #255", 0xDEFF, "UNDEFINED"),
    ("Conditional branch and Supervisor Call instructions", "svc #0", None, "SVC"),
    ("Conditional branch and Supervisor Call instructions", "svc #0xff", None, "SVC"),
    ("Load/store multiple", "rfedb sp", None, "SRS/RFE (DB)"),
    ("Load/store multiple", "rfeia sp!", None, "SRS/RFE (IA)"),
    ("Load/store multiple", "stmia pc, {r0, r8}", 0xE88F0101, "LDM/STM with Rn = pc"),
    ("Load/store multiple", "stmdb pc!, {r8-r12, r14}", 0xE92F5F00, "LDM/STM with Rn = pc"),
    ("Load/store multiple", "ldmia r13!, {r14, pc}", 0xE8BDC000, "LDM Rn, {...lr, pc}"),
    ("Load/store multiple", "ldmdb r14!, {r14, pc}", 0xE93EC000, "LDM Rn, {...lr, pc}"),
    ("Load/store multiple", "stmia r7!, {r8-r12, sp}", 0xE8A73F00, "LDM/STM Rn, {...sp}"),
    ("Load/store multiple", "stmia r7!, {r8-r12, pc}", 0xE8A79F00, "STM Rn, {...pc}"),
    ("Load/store multiple", "ldmdb r14!, {r4, sp}", 0xE93E2010, "LDM/STM Rn, {...sp}"),
    ("Load/store double or exclusive, table branch", "ldrd r14, r12, [pc, #16]!", 0xE9FFEC04,
     "STRD/LDRD (immediate): the register at bits 19:16 may not be PC with writeback"),
    ("Load/store double or exclusive, table branch", "ldrd r14, r12, [pc], #16", 0xE8FFEC04,
     "STRD/LDRD (immediate, post-indexed): the register at bits 19:16 may not be PC with "
     "writeback"),
    ("Load/store double or exclusive, table branch", "ldrd sp, r8, [r4]", 0xE9D4D800,
     "bits 15:12 may not be sp or PC"),
    ("Load/store double or exclusive, table branch", "ldrd pc, r8, [r4]", 0xE9D4F800,
     "bits 15:12 may not be sp or PC"),
    ("Load/store double or exclusive, table branch", "ldrd r7, sp, [r4]", 0xE9D47D00,
     "bits 11:8 may not be sp or PC"),
    ("Load/store double or exclusive, table branch", "ldrd r7, pc, [r4]", 0xE9D47F00,
     "bits 11:8 may not be sp or PC"),
    ("Load/store double or exclusive, table branch", "strd r6, r7, [r13, #-72]!", None,
     "STRD Rt, Rt2, [sp, #-imm8*4]: uses 72 bytes below sp"),
    ("Load/store double or exclusive, table branch", "strd r14, r12, [pc, #16]!", 0xE9EFEC04,
     "may not be PC with writeback"),
    ("Load/store double or exclusive, table branch", "strd r14, r12, [pc], #16", 0xE8EFEC04,
     "may not be PC with writeback"),
    ("Load/store double or exclusive, table branch", "tbh [r1, pc]", 0xE8D1F01F,
     "TBB/TBH: the register at bits 3:0 may not be sp or PC"),
    ("Load/store double or exclusive, table branch", "tbh [r1, sp]", 0xE8D1F01D,
     "TBB/TBH: the register at bits 3:0 may not be sp or PC"),
    ("Load/store double or exclusive, table branch", "tbh [sp, r2]", 0xE8DDF012,
     "TBB/TBH: the register at bits 19:16 may not be sp"),
    ("Load/store double or exclusive, table branch", "strexb r0, r1, [r2]", None, "STREX"),
    ("Load/store double or exclusive, table branch", "strexd r0, r1, r2, [r2]", None, "STREX"),
    ("Load/store double or exclusive, table branch", "ldrexb r0, [r1]", None, "LDREX"),
    ("Load/store double or exclusive, table branch", "ldrexd r0, r1, [r1]", None, "LDREX"),
    ("Data-processing (shifted register) and (modified immediate)", "tst.w r7, sp",
     0xEA170F0D, "TST/TEQ (register): the register at bits 3:0 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "tst.w pc, r7",
     0xEA1F0F07, "TST/TEQ (register): the register at bits 19:16 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "teq.w r7, pc",
     0xEA970F0F, "TST/TEQ (register)"),
    ("Data-processing (shifted register) and (modified immediate)", "tst sp, #0x00080008",
     0xF01D1F08, "TST/TEQ (immediate): the register at bits 19:16 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "cmn.w r7, sp",
     0xEB170F0D, "CMN (register): the register at bits 3:0 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "cmn.w pc, r7",
     0xEB1F0F07, "CMN (register): the register at bits 19:16 may not be PC"),
    ("Data-processing (shifted register) and (modified immediate)", "cmn pc, #0x00080008",
     0xF11F1F08, "CMN (immediate): the register at bits 19:16 may not be PC"),
    ("Data-processing (shifted register) and (modified immediate)", "cmp.w pc, r7",
     0xEBBF0F07, "CMP (register): the register at bits 19:16 may not be PC"),
    ("Data-processing (shifted register) and (modified immediate)", "cmp pc, #0x00080008",
     0xF1BF1F08, "CMP (immediate)"),
    ("Data-processing (shifted register) and (modified immediate)", "movs.w r7, sp",
     0xEA5F070D, "MOV/MVN (register): the register at bits 3:0 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "mov.w pc, r7",
     0xEA4F0F07, "MOV/MVN (register): the register at bits 11:8 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "mov sp, #0x00080008",
     0xF04F1D08, "MOV/MVN (immediate)"),
    ("Data-processing (shifted register) and (modified immediate)", "add sp, sp, r1, asl #4",
     0xEB0D1D01, "ADD/SUB SP, SP, Rm with any other shift"),
    ("Data-processing (shifted register) and (modified immediate)", "sub sp, sp, r1, ror #1",
     0xEBAD0D71, "ADD/SUB SP, SP, Rm with any other shift"),
    ("Data-processing (shifted register) and (modified immediate)", "add pc, sp, r1",
     0xEB0D0F01, "ADD/SUB Rd, SP, Rm, shift: the register at bits 11:8 may not be PC"),
    ("Data-processing (shifted register) and (modified immediate)", "add r0, sp, sp",
     0xEB0D000D, "ADD/SUB Rd, SP, Rm, shift: the register at bits 3:0 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "add sp, sp, pc",
     0xEB0D0D0F, "ADD/SUB SP, SP, Rm, LSL #0..3: the register at bits 3:0"),
    ("Data-processing (shifted register) and (modified immediate)", "and r1, r2, pc",
     0xEA02010F, "AND/BIC/ORR/ORN/EOR/PKH/ADD/ADC/SBC/SUB/RSB (shifted register)"),
    ("Data-processing (shifted register) and (modified immediate)", "and sp, r2, r3",
     0xEA020D03, "bits 11:8 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "and r1, sp, #0x00080008",
     0xF00D1108, "(modified immediate): the register at bits 19:16 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "add pc, sp, #0x00080008",
     0xF10D1F08, "ADD/SUB Rd, SP, #imm: the register at bits 11:8 may not be PC"),
    ("Data-processing (shifted register) and (modified immediate)", "add r1, pc, #0x00080008",
     0xF10F1108, "the register at bits 19:16 may not be sp or PC"),
    ("Data-processing (shifted register) and (modified immediate)", "0xeaa00000", 0xEAA00000,
     "unallocated (1110 1010 1x1x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xeaf00000", 0xEAF00000,
     "unallocated (1110 1010 1x1x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xeb200000", 0xEB200000,
     "unallocated (1110 1011 001x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xeb800000", 0xEB800000,
     "unallocated (1110 1011 100x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xebe00000", 0xEBE00000,
     "unallocated (1110 1011 111x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xf0a00000", 0xF0A00000,
     "unallocated (1111 0x00 101x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xf0c00000", 0xF0C00000,
     "unallocated (1111 0x00 11xx)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xf1200000", 0xF1200000,
     "unallocated (1111 0x01 001x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xf1800000", 0xF1800000,
     "unallocated (1111 0x01 100x)"),
    ("Data-processing (shifted register) and (modified immediate)", "0xf1e00000", 0xF1E00000,
     "unallocated (1111 0x01 111x)"),
    ("Coprocessor instructions", "0xec000000", 0xEC000000, "coprocessor instruction (1110 11xx)"),
    ("Coprocessor instructions", "0xeff00000", 0xEFF00000, "coprocessor instruction (1110 11xx)"),
    ("Coprocessor instructions", "0xfc000000", 0xFC000000, "coprocessor instruction (1111 11xx)"),
    ("Coprocessor instructions", "0xffffffff", 0xFFFFFFFF, "coprocessor instruction (1111 11xx)"),
    ("Data-processing (plain binary immediate)", "addw pc, pc, #0x120", 0xF20F1F20,
     "ADDW Rd, PC, #imm: the register at bits 11:8 may not be sp or PC"),
    ("Data-processing (plain binary immediate)", "addw pc, sp, #0x120", 0xF20D1F20,
     "ADDW: the register at bits 11:8 may not be sp or PC"),
    ("Data-processing (plain binary immediate)", "subw sp, pc, #0x120", 0xF2AF1D20,
     "SUBW Rd, PC, #imm: the register at bits 11:8"),
    ("Data-processing (plain binary immediate)", "subw sp, r0, #0x120", 0xF2A01D20,
     "SUBW: the register at bits 11:8"),
    ("Data-processing (plain binary immediate)", "movw sp, #0", 0xF2400D00, "MOVW/MOVT"),
    ("Data-processing (plain binary immediate)", "movt pc, #0", 0xF2C00F00, "MOVW/MOVT"),
    ("Data-processing (plain binary immediate)", "ssat pc, #24, r12", 0xF30C0F17,
     "SSAT/SSAT16/USAT/USAT16: the register at bits 11:8"),
    ("Data-processing (plain binary immediate)", "usat r12, #24, sp", 0xF38D0C17,
     "SSAT/SSAT16/USAT/USAT16: the register at bits 19:16"),
    ("Data-processing (plain binary immediate)", "ssat16 r12, #12, pc", 0xF32F0C0B,
     "SSAT/SSAT16/USAT/USAT16: the register at bits 19:16"),
    ("Data-processing (plain binary immediate)", "sbfx sp, r12, #8, #16", 0xF34C2D0F,
     "SBFX/UBFX: the register at bits 11:8"),
    ("Data-processing (plain binary immediate)", "ubfx r12, pc, #8, #16", 0xF3CF2C0F,
     "SBFX/UBFX: the register at bits 19:16"),
    ("Data-processing (plain binary immediate)", "bfc pc, #0, #31", 0xF36F0F1E,
     "BFC: the register at bits 11:8"),
    ("Data-processing (plain binary immediate)", "bfi pc, r14, #4, #20", 0xF36E1F17,
     "BFI: the register at bits 11:8"),
    ("Data-processing (plain binary immediate)", "bfi r14, sp, #4, #20", 0xF36D1E17,
     "BFI: the register at bits 19:16 may not be sp or PC (REG_TYPE_NOSPPCX"),
    ("Branches and miscellaneous control", "msr cpsr_fc, r0", None, "MSR"),
    ("Branches and miscellaneous control", "cpsid.w i", None, "CPS"),
    ("Branches and miscellaneous control", "cps #0x13", None, "CPS"),
    ("Branches and miscellaneous control", "dbg #0", None, "DBG"),
    ("Branches and miscellaneous control", "clrex", None, "CLREX/DSB/DMB/ISB"),
    ("Branches and miscellaneous control", "dsb", None, "CLREX/DSB/DMB/ISB"),
    ("Branches and miscellaneous control", "isb", None, "CLREX/DSB/DMB/ISB"),
    ("Branches and miscellaneous control", "bxj r0", None, "BXJ"),
    ("Branches and miscellaneous control", "subs pc, lr, #4", None, "SUBS PC, LR"),
    ("Branches and miscellaneous control", "mrs sp, apsr", 0xF3EF8D00,
     "MRS Rd, CPSR: the register at bits 11:8 may not be sp or PC"),
    ("Branches and miscellaneous control", "mrs r0, spsr", None, "MRS spsr"),
    ("Branches and miscellaneous control", "smc #0", 0xF7F08000, "SMC"),
    ("Branches and miscellaneous control", "udf.w (1111 0111 1111 xxxx 1010)", 0xF7F0A000,
     "UNDEFINED"),
    ("Store single data item", "str r6, [r13, #-72]!", None,
     "STR{,B,H} Rt, [sp, #-imm8]: uses 72 bytes below sp"),
    ("Store single data item", "strb r6, [r13, #-72]!", None, "uses 72 bytes below sp"),
    ("Store single data item", "strh r6, [r13, #-72]!", None, "uses 72 bytes below sp"),
    ("Store single data item", "strt r0, [r1, #4]", None, "unprivileged access"),
    ("Store single data item", "strbt r0, [r1, #4]", None, "unprivileged access"),
    ("Store single data item", "strht r0, [r1, #4]", None, "unprivileged access"),
    ("Store single data item", "str r0, [r13, r1]", None,
     "STR{,B,H} Rt, [sp, Rm]: stack use unknown"),
    ("Store single data item", "strh r0, [r13, r1]", None, "stack use unknown"),
    ("Store single data item", "strb r0, [r1, r13]", 0xF801000D,
     "the register at bits 3:0 may not be sp or PC"),
    ("Store single data item", "str r0, [r1, r13]", 0xF841000D,
     "STR/LDR (register): the register at bits 3:0 may not be sp or PC"),
    ("Store single data item", "str r14, [pc]", 0xF8CFE000, "STR{,B,H} Rt, [PC, ...]"),
    ("Store single data item", "str pc, [r14]", 0xF8CEF000, "STR{,B,H} PC, [Rn, ...]"),
    ("Advanced SIMD element or structure load/store instructions", "0xf9000000", 0xF9000000,
     "Advanced SIMD element or structure load/store"),
    ("Advanced SIMD element or structure load/store instructions", "0xf9efffff", 0xF9EFFFFF,
     "Advanced SIMD element or structure load/store"),
    ("Load single data item and memory hints", "ldrt r0, [r1, #4]", None,
     "unprivileged access"),
    ("Load single data item and memory hints", "ldrsht r0, [r1, #4]", None,
     "unprivileged access"),
    ("Load single data item and memory hints", "ldr r7, [r4, sp]", 0xF854700D,
     "STR/LDR (register): the register at bits 3:0 may not be sp or PC"),
    ("Load single data item and memory hints", "ldrb r7, [r4, pc]", 0xF814700F,
     "the register at bits 3:0 may not be sp or PC"),
    ("Load single data item and memory hints", "ldrb sp, 99f", 0xF89FD004,
     "LDRB/LDRSB/LDRH/LDRSH (literal): the register at bits 15:12 may not be sp or PC"),
    ("Load single data item and memory hints", "ldrb sp, [r4, r8]", 0xF814D008,
     "(register): the register at bits 15:12 may not be sp or PC"),
    ("Load single data item and memory hints", "ldrb sp, [r4]", 0xF894D000,
     "(immediate, imm12): the register at bits 15:12 may not be sp or PC"),
    ("Load single data item and memory hints", "0xf8600000", 0xF8600000,
     "unallocated (1111 100x x11x)"),
    ("Load single data item and memory hints", "0xf9ffffff", 0xF9FFFFFF,
     "unallocated (1111 100x x11x)"),
    ("Load single data item and memory hints", "0xf95fffff", 0xF95FFFFF,
     "unallocated (1111 1001 0101)"),
    ("Load single data item and memory hints", "0xf8000800", 0xF8000800,
     "unallocated (1111 100x 0xxx ... 10x0)"),
    ("Load single data item and memory hints", "pld [r7, sp]", 0xF817F00D,
     "PLD{W} (register): the register at bits 3:0 may not be sp or PC"),
    ("Load single data item and memory hints", "pld [r7, pc]", 0xF817F00F,
     "PLD{W} (register)"),
    ("Data-processing (register)", "lsl pc, r1, r2", 0xFA01FF02,
     "LSL/LSR/ASR/ROR (register): the register at bits 11:8 may not be sp or PC"),
    ("Data-processing (register)", "lsl r0, sp, r2", 0xFA0DF002,
     "LSL/LSR/ASR/ROR (register): the register at bits 19:16"),
    ("Data-processing (register)", "lsl r0, r1, pc", 0xFA01F00F,
     "LSL/LSR/ASR/ROR (register): the register at bits 3:0"),
    ("Data-processing (register)", "sxth pc, r7", 0xFA0FFF87,
     "SXTH/UXTH/SXTB16/UXTB16/SXTB/UXTB: the register at bits 11:8"),
    ("Data-processing (register)", "sxth r8, sp", 0xFA0FF88D,
     "SXTH/UXTH/SXTB16/UXTB16/SXTB/UXTB: the register at bits 3:0"),
    ("Data-processing (register)", "0xfa6000f0", 0xFA6000F0, "no decode entry"),
    ("Data-processing (register)", "0xfa7fffff", 0xFA7FFFFF,
     "unallocated (1111 1010 011x ... 1xxx)"),
    ("Miscellaneous operations", "rev pc, r12", 0xFA9CFF8C,
     "REV/REV16/RBIT/REVSH: the register at bits 11:8"),
    ("Miscellaneous operations", "rev r14, sp", 0xFA9DFE8D,
     "REV/REV16/RBIT/REVSH: the register at bits 19:16"),
    ("Miscellaneous operations", "0xfa80f030", 0xFA80F030,
     "unallocated (1111 1010 1xxx ... 0x11)"),
    ("Miscellaneous operations", "0xfaffff7f", 0xFAFFFF7F,
     "unallocated (1111 1010 1xxx ... 0x11)"),
    ("Miscellaneous operations", "0xfab0f000", 0xFAB0F000,
     "unallocated (1111 1010 1x11 ... 0xxx)"),
    ("Multiply, multiply accumulate, and absolute difference operations", "mul pc, r8, r9",
     0xFB08FF09, "MUL/SMUAD/SMULWy/SMUSD/SMMUL/USAD8: the register at bits 11:8"),
    ("Multiply, multiply accumulate, and absolute difference operations", "mul r7, sp, r9",
     0xFB0DF709, "the register at bits 19:16 may not be sp or PC"),
    ("Multiply, multiply accumulate, and absolute difference operations", "mla sp, r8, r9, r10",
     0xFB08AD09, "MLA/MLS/SMLAD/SMLAWy/SMLSD/SMMLA/SMMLS/USADA8: the register at bits 11:8"),
    ("Multiply, multiply accumulate, and absolute difference operations", "mla r7, r8, r9, sp",
     0xFB08D709, "the register at bits 15:12 may not be sp or PC (REG_TYPE_NOSPPCX"),
    ("Multiply, multiply accumulate, and absolute difference operations", "0xfb00f010",
     0xFB00F010, "unallocated (1111 1011 0000 ... 1111 ... 0001)"),
    ("Multiply, multiply accumulate, and absolute difference operations", "0xfb7fff1f",
     0xFB7FFF1F, "unallocated (1111 1011 0111 ... 1111 ... 0001)"),
    ("Multiply, multiply accumulate, and absolute difference operations", "0xfb700010",
     0xFB700010, "unallocated (1111 1011 0111 ... 0001)"),
    ("Long multiply, long multiply accumulate, and divide", "smull pc, r8, r9, r10",
     0xFB89F80A, "SMULL/UMULL/SMLAL/UMLAL: the register at bits 15:12"),
    ("Long multiply, long multiply accumulate, and divide", "smull r7, sp, r9, r10",
     0xFB897D0A, "SMULL/UMULL/SMLAL/UMLAL: the register at bits 11:8"),
    ("Long multiply, long multiply accumulate, and divide", "smull r7, r8, pc, r10",
     0xFB8F780A, "SMULL/UMULL/SMLAL/UMLAL: the register at bits 19:16"),
    ("Long multiply, long multiply accumulate, and divide", "smull r7, r8, r9, sp",
     0xFB89780D, "SMULL/UMULL/SMLAL/UMLAL: the register at bits 3:0"),
    # not in test-thumb.c: the table's own comments
    ("(decode-thumb.c) Long multiply, and divide", "sdiv r0, r1, r2", 0xFB91F0F2,
     "SDIV/UDIV"),
    ("(decode-thumb.c) Branches", "blx with imm bit 0 set", 0xF000C001,
     "unallocated branch or miscellaneous control"),
    ("(decode-thumb.c) Memory hints", "pld with P/U/W 1001", 0xF810F900,
     "unallocated memory hint"),
    ("(decode-thumb.c) Store single", "str with bits 11:6 = 000100", 0xF8410100,
     "unallocated load/store single"),
    ("(decode-thumb.c) Plain binary immediate", "0xf2200000", 0xF2200000,
     "unallocated data processing (plain binary immediate)"),
    ("(decode-thumb.c) Multiply", "0xfb000040", 0xFB000040, "unallocated multiply"),
]


@pytest.mark.parametrize("group, text, word, reason", UNSUPPORTED, ids=_ids(UNSUPPORTED))
def test_unsupported_instructions_are_refused_with_the_entrys_reason(
        group: str, text: str, word: int | None, reason: str) -> None:
    with pytest.raises(KprobeRefused) as err:
        prepare(text if word is None else word)
    assert reason in str(err.value)


def test_refusals_name_the_table_and_file() -> None:
    with pytest.raises(KprobeRefused, match=r"BLX pc: rejected \(probes_decode_thumb16_table, "
                                            r"decode-thumb\.c\)"):
        thumb16_prepare(0x47F8)
    with pytest.raises(KprobeRefused, match=r"\(REG_TYPE_NOSPPC, decode-thumb\.c\)"):
        thumb32_prepare(0xE8D1F01F)             # tbh [r1, pc]
    with pytest.raises(KprobeRefused, match=r"\(t32_table_1110_100x_x1xx, decode-thumb\.c\)"):
        prepare("ldrexh r0, [r1]")


# -- stack use (checkers-thumb.c, core.c MAX_STACK_SIZE) --------------------------------

@pytest.mark.parametrize("text, word, space", [
    ("strd r6, r7, [r13, #-64]!", None, 64),         # test-thumb.c: the largest accepted
    ("strd r0, r1, [sp, #-16]", None, 16),
    ("str r6, [r13, #-64]!", None, 64),
    ("strb r6, [r13, #-64]!", None, 64),
    ("strh r6, [r13, #-64]!", None, 64),
    ("str r0, [sp, #-4]", None, 4),
    ("str r0, [sp], #-4", None, 0),                  # post-indexed: stores at sp itself
    ("str.w r7, [sp, #24]", None, 0),                # imm12: always above sp
    ("ldr r0, [sp, #-128]", None, 0),                # a load
    ("strd r4, r5, [r14, #-72]!", None, 0),          # not sp
    ("stmdb sp!, {r0-r12, lr}", None, 56),
    ("push.w {r4-r11, lr}", None, 36),
    ("stmdb sp, {r0, r1}", None, 8),
    ("stmia sp, {r0, r1}", None, 0),
    ("ldmdb sp, {r0, r1}", None, 0),
    ("push {r0-r7, lr}", None, 36),                  # T16: 4 bytes a register
    ("push {r0}", None, 4),
    ("str r7, [sp, #160]", None, 0),
])
def test_stack_use_is_measured_as_the_checkers_do(text: str, word: int | None,
                                                   space: int) -> None:
    assert prepare(text if word is None else word).stack_space == space


def test_the_stack_limit_is_the_kernels() -> None:
    assert MAX_STACK_SIZE == 64
    assert prepare("str r6, [r13, #-64]!").stack_space == MAX_STACK_SIZE
    with pytest.raises(KprobeRefused, match="uses 68 bytes below sp, more than MAX_STACK_SIZE"):
        prepare("str r6, [r13, #-68]!")


# -- conditions, IT, the slot in memory --------------------------------------------------

@pytest.mark.parametrize("text, check", [
    ("beq #0x1010", "__check_eq"), ("bne #0xff0", "__check_ne"),
    ("bgt #0x1010", "__check_gt"), ("blt #0xff0", "__check_lt"),
    ("beq.w #0x1100", "__check_eq"), ("bne.w #0x800", "__check_ne"),
    ("bgt.w #0x1100", "__check_gt"), ("bpl.w #0x3000", "__check_pl"),
    ("b #0x1400", "thumb_check_cc"), ("b.w #0x2000", "thumb_check_cc"),
    ("adds r2, r0, r7", "thumb_check_cc"), ("ldr.w r0, [r1, r2]", "thumb_check_cc"),
])
def test_a_conditional_branch_checks_its_own_condition(text: str, check: str) -> None:
    """t16/t32_decode_cond_branch install probes_condition_checks[cc]; everything
    else keeps thumb_check_cc (the IT block's condition)."""
    assert prepare(text).check_cc == check


def test_it_replaces_the_single_step_and_keeps_no_slot() -> None:
    decoded = prepare("ite eq")
    assert (decoded.handler, decoded.singlestep, decoded.insn) == (
        "t16_simulate_it", "t16_singlestep_it", None)


def test_the_slot_holds_halfwords_first_one_first_then_bx_lr() -> None:
    """set_emulated_insn writes a wide instruction as two halfwords (not one
    little-endian word); prepare_emulated_insn has put bx lr after it."""
    wide = prepare("ldrd r0, r1, [r1, #-16]")
    assert slot_bytes(wide.slot) == bytes.fromhex("52e9 0401 7047 0000")
    narrow = prepare("add r3, r8")
    assert slot_bytes(narrow.slot) == bytes.fromhex("0144 7047 7047 0000")


def test_thumb_emulation_keeps_the_instruction_as_it_is() -> None:
    """decode.c makes only A32 instructions unconditional: T16 0x19c2 (adds r2, r0, r7)
    would otherwise read as an A32 word with cond 0000 and gain 0xe0000000."""
    assert prepare(0x19C2).insn == 0x19C2
    assert arm_prepare(0x00820003).insn == 0xE0820003     # the A32 rule, unchanged


def test_is_wide_instruction() -> None:
    assert [is_wide_instruction(h) for h in (0x0000, 0x4770, 0xE7FF, 0xE800, 0xF000, 0xFFFF)] \
        == [False, False, False, True, True, True]
    assert is_wide_instruction(0xE92D4FF0)                # composed, as core.c uses it
    with pytest.raises(ValueError):
        thumb16_prepare(0xE92D)
    with pytest.raises(ValueError):
        thumb32_prepare(0x4770)


# -- the tables as a whole ------------------------------------------------------------

def _items(table: Table, seen: set[str] | None = None) -> list:
    seen = set() if seen is None else seen
    if table.name in seen:
        return []
    seen.add(table.name)
    out = []
    for item in table.items:
        if item.kind == "table":
            out += _items(item.target, seen)
        else:
            out.append((table.name, item))
    return out


def _supported_decodes() -> list[thumb.ThumbDecoded]:
    return [prepare(text if word is None else word)
            for _, text, word, _, _ in T16_SUPPORTED + T32_SUPPORTED]


def test_every_decoding_entry_is_exercised_and_every_reject_is_seen() -> None:
    """One case at least per entry of decode-thumb.c's tables (OR entries included:
    a match is named by the OR that matched), and each DECODE_REJECT's reason met."""
    entries = {d.entry for d in _supported_decodes()}
    refusals = []
    for _, text, word, _ in UNSUPPORTED:
        try:
            prepare(text if word is None else word)
        except KprobeRefused as err:
            refusals.append(str(err))
    missing = []
    for table, item in _items(thumb.T16_TABLE) + _items(thumb.T32_TABLE):
        if item.kind == "reject":
            if not any(item.what in r for r in refusals):
                missing.append(f"{table}: reject {item.what!r}")
        elif item.what not in entries:
            missing.append(f"{table}: {item.kind} {item.what!r}")
    assert not missing, "\n".join(missing)


def test_thumb_handlers_are_exactly_the_handlers_the_tables_choose() -> None:
    assert len(set(THUMB_HANDLERS)) == len(THUMB_HANDLERS)
    chosen = {d.handler for d in _supported_decodes()}
    assert chosen == set(THUMB_HANDLERS)
    table_handlers = set(thumb.T16_HANDLER_OF.values()) | set(thumb.T32_HANDLER_OF.values())
    assert table_handlers <= set(THUMB_HANDLERS)
    assert "simulate_stm1_pc" not in THUMB_HANDLERS      # STM {..pc} is rejected first


def test_a32_decoding_is_untouched_by_the_thumb_tables() -> None:
    """probes_decode.py's walker now takes thumb/asi/actions; A32 keeps its messages."""
    with pytest.raises(KprobeRefused, match=r"\(arm_cccc_0001_0xx0____0xxx_table, "
                                            r"decode-arm\.c\)"):
        arm_prepare(0xE14F0000)                           # mrs r0, spsr
    with pytest.raises(KprobeRefused, match=r"\(REG_TYPE_NOPC, decode-arm\.c\)"):
        arm_prepare(0xE16F0F1F)                           # clz r0, pc
    assert arm_prepare(0xE92D4010).handler == "emulate_generic_r2_14_noflags"
