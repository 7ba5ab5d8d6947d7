"""The ARM (A32) kprobes instruction decoder, after Linux v5.10.

A port of the kernel's table-driven decoder: ``arch/arm/probes/decode.c``
(``probes_decode_insn``, ``decode_regs``, ``prepare_emulated_insn``),
the A32 tables of ``arch/arm/probes/decode-arm.c``, the handler choice
of ``arch/arm/probes/kprobes/actions-arm.c`` and ``actions-common.c``
(``kprobes_arm_actions``, ``kprobe_decode_ldmstm``) and the checkers of
``arch/arm/probes/kprobes/checkers-arm.c`` / ``checkers-common.c`` (stack
use, register use). "Uses PC", "writes back" and the rest are read from
the encoding bits, as the tables read them; nothing comes from a
disassembler.

The tables are data: each entry matches ``insn & mask == value`` and
then checks and renames the register fields its ``REGS(...)`` names
(``decode_regs``: Rn -> r2, Rd -> r0, Rs -> r1, Rm -> r3, the
``INSN_NEW_BITS`` layout). The kernel's comment of each entry is kept
(shortened) as ``what``: it is the reason given when the entry refuses.
The walker also runs the Thumb tables (:mod:`arches.arm.probes_decode_thumb`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from arches.kprobe import KprobeRefused

# enum decode_reg_type (arch/arm/probes/decode.h)
ANY, SAMEAS16, SP, PC, NOSP, NOSPPC, NOPC, NOPCWB, NOPCX, NOSPPCX = (
    "ANY", "SAMEAS16", "SP", "PC", "NOSP", "NOSPPC", "NOPC", "NOPCWB", "NOPCX", "NOSPPCX")
INSN_NEW_BITS = 0x00020103        # bit 16 -> r2, 12 -> r0, 8 -> r1, 0 -> r3 (decode.c)
INSN_SAMEAS16_BITS = 0x22222222
MAX_STACK_SIZE = 64               # arch/arm/probes/kprobes/core.h
_FIELDS = {16: "the register at bits 19:16", 12: "the register at bits 15:12",
           8: "the register at bits 11:8", 4: "the register at bits 7:4",
           0: "the register at bits 3:0"}


@dataclass(frozen=True)
class Item:
    """One ``union decode_item`` entry: DECODE_TABLE/CUSTOM/SIMULATE/EMULATE/OR/REJECT."""

    kind: str                         # "table", "custom", "simulate", "emulate", "or", "reject"
    mask: int
    value: int
    what: str                         # the kernel's comment on the entry
    target: object = None             # sub-table (Table) or action name
    regs: tuple = ()                  # REGS(r16, r12, r8, r4, r0); None = not a register


@dataclass(frozen=True)
class Table:
    name: str
    items: tuple[Item, ...]
    end: str                          # what falls off the end (DECODE_END): refused
    source: str = "decode-arm.c"      # the kernel file named in its refusals


def _t(mask: int, value: int, table: Table) -> Item:
    return Item("table", mask, value, table.name, table)


def _sim(mask: int, value: int, action: str, what: str, regs: tuple = ()) -> Item:
    return Item("simulate", mask, value, what, action, regs)


def _emu(mask: int, value: int, action: str, what: str, regs: tuple = ()) -> Item:
    return Item("emulate", mask, value, what, action, regs)


def _or(mask: int, value: int, what: str) -> Item:
    return Item("or", mask, value, what)


def _rej(mask: int, value: int, what: str) -> Item:
    return Item("reject", mask, value, what)


def _custom(mask: int, value: int, action: str, what: str) -> Item:
    return Item("custom", mask, value, what, action)


def REGS(r16: str | None, r12: str | None, r8: str | None, r4: str | None,
         r0: str | None) -> tuple:
    return (r16, r12, r8, r4, r0)


_ = None

# -- decode-arm.c ------------------------------------------------------------

ARM_1111 = Table("arm_1111_table", (
    _sim(0xFE300000, 0xF4100000, "PROBES_PRELOAD_IMM", "PLD/PLDW/PLI (immediate)"),
    _sim(0xFE300010, 0xF6100000, "PROBES_PRELOAD_REG", "PLD/PLDW/PLI (register)"),
    _sim(0xFE000000, 0xFA000000, "PROBES_BRANCH_IMM", "BLX (immediate)"),
), "unconditional instruction other than PLD/PLI/BLX (CPS, SETEND, SRS, RFE, "
   "barriers, coprocessor): not decoded")

ARM_MISC = Table("arm_cccc_0001_0xx0____0xxx_table", (
    _sim(0x0FF000F0, 0x01000000, "PROBES_MRS", "MRS cpsr", REGS(_, NOPC, _, _, _)),
    _sim(0x0FF000F0, 0x01200010, "PROBES_BRANCH_REG", "BX"),
    _sim(0x0FF000F0, 0x01200030, "PROBES_BRANCH_REG", "BLX (register)",
         REGS(_, _, _, _, NOPC)),
    _emu(0x0FF000F0, 0x01600010, "PROBES_CLZ", "CLZ", REGS(_, NOPC, _, _, NOPC)),
    _emu(0x0F9000F0, 0x01000050, "PROBES_SATURATING_ARITHMETIC", "QADD/QSUB/QDADD/QDSUB",
         REGS(NOPC, NOPC, _, _, NOPC)),
), "BXJ, MSR, MRS spsr, BKPT, SMC (they change the CPU mode or state): not decoded")

ARM_HALFMUL = Table("arm_cccc_0001_0xx0____1xx0_table", (
    _emu(0x0FF00090, 0x01400080, "PROBES_MUL1", "SMLALxy", REGS(NOPC, NOPC, NOPC, _, NOPC)),
    _or(0x0FF000B0, 0x012000A0, "SMULWy"),
    _emu(0x0FF00090, 0x01600080, "PROBES_MUL2", "SMULxy", REGS(NOPC, _, NOPC, _, NOPC)),
    _or(0x0FF00090, 0x01000080, "SMLAxy"),
    _emu(0x0FF000B0, 0x01200080, "PROBES_MUL2", "SMLAWy", REGS(NOPC, NOPC, NOPC, _, NOPC)),
), "unallocated halfword multiply")

ARM_MUL = Table("arm_cccc_0000_____1001_table", (
    _emu(0x0FE000F0, 0x00000090, "PROBES_MUL2", "MUL/MULS", REGS(NOPC, _, NOPC, _, NOPC)),
    _or(0x0FE000F0, 0x00200090, "MLA/MLAS"),
    _emu(0x0FF000F0, 0x00600090, "PROBES_MUL2", "MLS", REGS(NOPC, NOPC, NOPC, _, NOPC)),
    _or(0x0FF000F0, 0x00400090, "UMAAL"),
    _emu(0x0F8000F0, 0x00800090, "PROBES_MUL1", "UMULL/UMLAL/SMULL/SMLAL",
         REGS(NOPC, NOPC, NOPC, _, NOPC)),
), "unallocated multiply")

# SWP/SWPB are decoded only for __LINUX_ARM_ARCH__ < 6; kisim's guest is ARMv7.
ARM_SYNC = Table("arm_cccc_0001_____1001_table", (),
                 "SWP/SWPB (ARMv7 kernel), LDREX/STREX{,D,B,H}: not decoded")

ARM_EXTRA_LS = Table("arm_cccc_000x_____1xx1_table", (
    _rej(0x0F200090, 0x00200090, "STRHT/LDRHT/LDRSBT/LDRSHT (unprivileged access)"),
    _rej(0x0E10E0D0, 0x0000E0D0, "LDRD/STRD of lr, pc"),
    _emu(0x0E5000D0, 0x000000D0, "PROBES_LDRSTRD", "LDRD/STRD (register)",
         REGS(NOPCWB, NOPCX, _, _, NOPC)),
    _emu(0x0E5000D0, 0x004000D0, "PROBES_LDRSTRD", "LDRD/STRD (immediate)",
         REGS(NOPCWB, NOPCX, _, _, _)),
    _emu(0x0E5000F0, 0x000000B0, "PROBES_STORE_EXTRA", "STRH (register)",
         REGS(NOPCWB, NOPC, _, _, NOPC)),
    _emu(0x0E500090, 0x00100090, "PROBES_LOAD_EXTRA", "LDRH/LDRSB/LDRSH (register)",
         REGS(NOPCWB, NOPC, _, _, NOPC)),
    _emu(0x0E5000F0, 0x004000B0, "PROBES_STORE_EXTRA", "STRH (immediate)",
         REGS(NOPCWB, NOPC, _, _, _)),
    _emu(0x0E500090, 0x00500090, "PROBES_LOAD_EXTRA", "LDRH/LDRSB/LDRSH (immediate)",
         REGS(NOPCWB, NOPC, _, _, _)),
), "unallocated extra load/store")

ARM_DP_REG = Table("arm_cccc_000x_table", (
    _rej(0x0E10F000, 0x0010F000, "<op>S PC, ... (data processing writing PC and CPSR)"),
    _sim(0xFFFFFFFF, 0xE1A0C00D, "PROBES_MOV_IP_SP", "MOV IP, SP"),
    _emu(0x0F900010, 0x01100000, "PROBES_DATA_PROCESSING_REG", "TST/TEQ/CMP/CMN (register)",
         REGS(ANY, _, _, _, ANY)),
    _emu(0x0FA00010, 0x01A00000, "PROBES_DATA_PROCESSING_REG", "MOV/MVN (register)",
         REGS(_, ANY, _, _, ANY)),
    _emu(0x0E000010, 0x00000000, "PROBES_DATA_PROCESSING_REG",
         "AND/EOR/SUB/RSB/ADD/ADC/SBC/RSC/ORR/BIC (register)", REGS(ANY, ANY, _, _, ANY)),
    _emu(0x0F900090, 0x01100010, "PROBES_DATA_PROCESSING_REG",
         "TST/TEQ/CMP/CMN (register-shifted register)", REGS(NOPC, _, NOPC, _, NOPC)),
    _emu(0x0FA00090, 0x01A00010, "PROBES_DATA_PROCESSING_REG",
         "MOV/MVN (register-shifted register)", REGS(_, NOPC, NOPC, _, NOPC)),
    _emu(0x0E000090, 0x00000010, "PROBES_DATA_PROCESSING_REG",
         "AND/.../BIC (register-shifted register)", REGS(NOPC, NOPC, NOPC, _, NOPC)),
), "unallocated data processing")

ARM_DP_IMM = Table("arm_cccc_001x_table", (
    _emu(0x0FB00000, 0x03000000, "PROBES_MOV_HALFWORD", "MOVW/MOVT", REGS(_, NOPC, _, _, _)),
    _or(0x0FFF00FF, 0x03200001, "YIELD"),
    _emu(0x0FFF00FF, 0x03200004, "PROBES_SEV", "SEV"),
    _sim(0x0FFF00FC, 0x03200000, "PROBES_WFE", "NOP/WFE/WFI"),
    _rej(0x0FB00000, 0x03200000, "DBG, unallocated hints, MSR (immediate)"),
    _rej(0x0E10F000, 0x0210F000, "<op>S PC, ... (data processing writing PC and CPSR)"),
    _emu(0x0F900000, 0x03100000, "PROBES_DATA_PROCESSING_IMM", "TST/TEQ/CMP/CMN (immediate)",
         REGS(ANY, _, _, _, _)),
    _emu(0x0FA00000, 0x03A00000, "PROBES_DATA_PROCESSING_IMM", "MOV/MVN (immediate)",
         REGS(_, ANY, _, _, _)),
    _emu(0x0E000000, 0x02000000, "PROBES_DATA_PROCESSING_IMM",
         "AND/EOR/SUB/RSB/ADD/ADC/SBC/RSC/ORR/BIC (immediate)", REGS(ANY, ANY, _, _, _)),
), "unallocated data processing (immediate)")

ARM_MEDIA_0110 = Table("arm_cccc_0110_____xxx1_table", (
    _emu(0x0FF000F0, 0x068000B0, "PROBES_SATURATE", "SEL", REGS(NOPC, NOPC, _, _, NOPC)),
    _or(0x0FA00030, 0x06A00010, "SSAT/USAT"),
    _emu(0x0FB000F0, 0x06A00030, "PROBES_SATURATE", "SSAT16/USAT16",
         REGS(_, NOPC, _, _, NOPC)),
    _emu(0x0FB00070, 0x06B00030, "PROBES_REV", "REV/REV16/RBIT/REVSH",
         REGS(_, NOPC, _, _, NOPC)),
    _rej(0x0FB00010, 0x06000010, "unallocated media (cccc 0110 0x00 ... xxx1)"),
    _rej(0x0F8000F0, 0x060000B0, "unallocated media (cccc 0110 0xxx ... 1011)"),
    _rej(0x0F8000F0, 0x060000D0, "unallocated media (cccc 0110 0xxx ... 1101)"),
    _emu(0x0F800010, 0x06000010, "PROBES_MMI", "parallel add/subtract (SADD16 ... UHSUB8)",
         REGS(NOPC, NOPC, _, _, NOPC)),
    _emu(0x0FF00030, 0x06800010, "PROBES_PACK", "PKHBT/PKHTB", REGS(NOPC, NOPC, _, _, NOPC)),
    _rej(0x0FB000F0, 0x06900070, "unallocated media (cccc 0110 1x01 ... 0111)"),
    _emu(0x0F8F00F0, 0x068F0070, "PROBES_EXTEND", "SXTB16/SXTB/SXTH/UXTB16/UXTB/UXTH",
         REGS(_, NOPC, _, _, NOPC)),
    _emu(0x0F8000F0, 0x06800070, "PROBES_EXTEND_ADD", "SXTAB16/SXTAB/SXTAH/UXTAB16/UXTAB/UXTAH",
         REGS(NOPCX, NOPC, _, _, NOPC)),
), "unallocated media instruction")

ARM_MEDIA_0111 = Table("arm_cccc_0111_____xxx1_table", (
    _rej(0x0FF000F0, 0x07F000F0, "UNDEFINED (udf; the kprobe breakpoint itself)"),
    _emu(0x0FF00090, 0x07400010, "PROBES_MUL_ADD_LONG", "SMLALD/SMLSLD",
         REGS(NOPC, NOPC, NOPC, _, NOPC)),
    _or(0x0FF0F090, 0x0700F010, "SMUAD/SMUSD"),
    _or(0x0FF0F0D0, 0x0750F010, "SMMUL"),
    _emu(0x0FF0F0F0, 0x0780F010, "PROBES_MUL_ADD", "USAD8", REGS(NOPC, _, NOPC, _, NOPC)),
    _or(0x0FF00090, 0x07000010, "SMLAD/SMLSD"),
    _or(0x0FF000D0, 0x07500010, "SMMLA"),
    _emu(0x0FF000F0, 0x07800010, "PROBES_MUL_ADD", "USADA8", REGS(NOPC, NOPCX, NOPC, _, NOPC)),
    _emu(0x0FF000D0, 0x075000D0, "PROBES_MUL_ADD", "SMMLS", REGS(NOPC, NOPC, NOPC, _, NOPC)),
    _emu(0x0FA00070, 0x07A00050, "PROBES_BITFIELD", "SBFX/UBFX", REGS(_, NOPC, _, _, NOPC)),
    _emu(0x0FE0007F, 0x07C0001F, "PROBES_BITFIELD", "BFC", REGS(_, NOPC, _, _, _)),
    _emu(0x0FE00070, 0x07C00010, "PROBES_BITFIELD", "BFI", REGS(_, NOPC, _, _, NOPCX)),
), "unallocated media instruction")

ARM_LS = Table("arm_cccc_01xx_table", (
    _rej(0x0C40F000, 0x0440F000, "LDRB/STRB pc, [...]"),
    _rej(0x0D200000, 0x04200000, "STRT/LDRT/STRBT/LDRBT (unprivileged access)"),
    _emu(0x0E100000, 0x04000000, "PROBES_STORE", "STR/STRB (immediate)",
         REGS(NOPCWB, ANY, _, _, _)),
    _emu(0x0E100000, 0x04100000, "PROBES_LOAD", "LDR/LDRB (immediate)",
         REGS(NOPCWB, ANY, _, _, _)),
    _emu(0x0E100000, 0x06000000, "PROBES_STORE", "STR/STRB (register)",
         REGS(NOPCWB, ANY, _, _, NOPC)),
    _emu(0x0E100000, 0x06100000, "PROBES_LOAD", "LDR/LDRB (register)",
         REGS(NOPCWB, ANY, _, _, NOPC)),
), "unallocated load/store")

ARM_BLOCK = Table("arm_cccc_100x_table", (
    _custom(0x0E400000, 0x08000000, "PROBES_LDMSTM", "LDM/STM"),
), "STM/LDM with ^ (user registers, exception return): they change the CPU mode")

ARM_TABLE = Table("probes_decode_arm_table", (
    _t(0xF0000000, 0xF0000000, ARM_1111),
    _t(0x0F900080, 0x01000000, ARM_MISC),
    _t(0x0F900090, 0x01000080, ARM_HALFMUL),
    _t(0x0F0000F0, 0x00000090, ARM_MUL),
    _t(0x0F0000F0, 0x01000090, ARM_SYNC),
    _t(0x0E000090, 0x00000090, ARM_EXTRA_LS),
    _t(0x0E000000, 0x00000000, ARM_DP_REG),
    _t(0x0E000000, 0x02000000, ARM_DP_IMM),
    _t(0x0F000010, 0x06000010, ARM_MEDIA_0110),
    _t(0x0F000010, 0x07000010, ARM_MEDIA_0111),
    _t(0x0C000000, 0x04000000, ARM_LS),
    _t(0x0E000000, 0x08000000, ARM_BLOCK),
    _sim(0x0E000000, 0x0A000000, "PROBES_BRANCH", "B/BL"),
    _rej(0x0C000000, 0x0C000000, "SVC and coprocessor instructions (svc is also kisim's "
                                 "hypercall)"),
), "no A32 decode entry")

# -- checkers-arm.c: arm_check_stack's table ----------------------------------

STACK_TABLE = Table("arm_check_stack", (
    _or(0x0E10000F, 0x0600000D, "STR/STRB with Rm = sp"),
    _or(0x0E1F0000, 0x060D0000, "STR/STRB (register) with Rn = sp"),
    _or(0x0E5000BF, 0x000000BD, "STRD/STRH with Rm = sp"),
    _custom(0x0E5F00B0, 0x000D00B0, "STACK_USE_UNKNOWN",
            "a store with a register offset from sp"),
    _custom(0x0EDF0000, 0x080D0000, "STACK_USE_STMDX", "STMDA/STMDB sp"),
    _custom(0x0F9F0000, 0x050D0000, "STACK_USE_FIXED_XXX", "STR/STRB rt, [sp, #-imm12]"),
    _custom(0x0FDF00B0, 0x014D00B0, "STACK_USE_FIXED_X0X", "STRD/STRH rt, [sp, #-imm8]"),
    _custom(0, 0, "STACK_USE_NONE", "no store below sp"),
), "")

#: kprobes_arm_actions (actions-arm.c): the handler of each action.
HANDLER_OF = {
    "PROBES_PRELOAD_IMM": "probes_simulate_nop", "PROBES_PRELOAD_REG": "probes_simulate_nop",
    "PROBES_BRANCH_IMM": "simulate_blx1", "PROBES_MRS": "simulate_mrs",
    "PROBES_BRANCH_REG": "simulate_blx2bx",
    "PROBES_CLZ": "emulate_rd12rm0_noflags_nopc",
    "PROBES_SATURATING_ARITHMETIC": "emulate_rd12rn16rm0_rwflags_nopc",
    "PROBES_MUL1": "emulate_rdlo12rdhi16rn0rm8_rwflags_nopc",
    "PROBES_MUL2": "emulate_rd16rn12rm0rs8_rwflags_nopc",
    "PROBES_LDRSTRD": "emulate_ldrdstrd",
    "PROBES_LOAD_EXTRA": "emulate_ldr", "PROBES_LOAD": "emulate_ldr",
    "PROBES_STORE_EXTRA": "emulate_str", "PROBES_STORE": "emulate_str",
    "PROBES_MOV_IP_SP": "simulate_mov_ipsp",
    "PROBES_DATA_PROCESSING_REG": "emulate_rd12rn16rm0rs8_rwflags",
    "PROBES_DATA_PROCESSING_IMM": "emulate_rd12rn16rm0rs8_rwflags",
    "PROBES_MOV_HALFWORD": "emulate_rd12rm0_noflags_nopc",
    "PROBES_SEV": "probes_emulate_none", "PROBES_WFE": "probes_simulate_nop",
    "PROBES_SATURATE": "emulate_rd12rn16rm0_rwflags_nopc",
    "PROBES_REV": "emulate_rd12rm0_noflags_nopc",
    "PROBES_MMI": "emulate_rd12rn16rm0_rwflags_nopc",
    "PROBES_PACK": "emulate_rd12rn16rm0_rwflags_nopc",
    "PROBES_EXTEND": "emulate_rd12rm0_noflags_nopc",
    "PROBES_EXTEND_ADD": "emulate_rd12rn16rm0_rwflags_nopc",
    "PROBES_MUL_ADD_LONG": "emulate_rdlo12rdhi16rn0rm8_rwflags_nopc",
    "PROBES_MUL_ADD": "emulate_rd16rn12rm0rs8_rwflags_nopc",
    "PROBES_BITFIELD": "emulate_rd12rm0_noflags_nopc",
    "PROBES_BRANCH": "simulate_bbl",
}

#: arm_stack_checker (checkers-arm.c): the actions whose stack use is checked.
_STACK_CHECKED = {"PROBES_LDRSTRD", "PROBES_STORE_EXTRA", "PROBES_STORE", "PROBES_LDMSTM"}
#: arm_regs_checker's arm_check_regs_nouse and the special ones; the rest of
#: the checked actions use arm_check_regs_normal; unlisted ones keep ~0.
_REGS_NOUSE = {"PROBES_SEV", "PROBES_WFE"}
_REGS_NORMAL = {"PROBES_MRS", "PROBES_SATURATING_ARITHMETIC", "PROBES_MUL1", "PROBES_MUL2",
                "PROBES_MUL_ADD_LONG", "PROBES_MUL_ADD", "PROBES_LOAD", "PROBES_LOAD_EXTRA",
                "PROBES_STORE", "PROBES_STORE_EXTRA", "PROBES_DATA_PROCESSING_REG",
                "PROBES_DATA_PROCESSING_IMM", "PROBES_SATURATE", "PROBES_REV", "PROBES_MMI",
                "PROBES_PACK", "PROBES_EXTEND", "PROBES_EXTEND_ADD", "PROBES_BITFIELD"}


@dataclass
class Decoded:
    """What arm_probes_decode_insn leaves in ``struct arch_probes_insn``."""

    handler: str = ""
    insn: int | None = None           # slot word 0 (None: INSN_GOOD_NO_SLOT)
    stack_space: int = 0
    register_usage_flags: int = 0xFFFFFFFF
    entry: str = ""                   # the matching entry's comment
    stack_entry: str = ""             # the stack checker's matching entry


def is_writeback(insn: int) -> bool:
    """decode.h is_writeback: P (bit 24) clear or W (bit 21) set."""
    return (insn & 0x01200000) != 0x01000000


def _decode_regs(insn: int, regs: tuple, modify: bool, what: str,
                 source: str = "decode-arm.c") -> int:
    """decode_regs: check each register field against its type; rename it if ``modify``."""
    out = insn
    for position, kind in zip((16, 12, 8, 4, 0), regs):
        if kind is None:
            continue
        reg = (insn >> position) & 15
        new = (INSN_SAMEAS16_BITS if kind == SAMEAS16 else INSN_NEW_BITS) >> position & 15
        bad = {SP: reg != 13, PC: reg != 15, NOSP: reg == 13,
               NOSPPC: reg in (13, 15), NOSPPCX: reg in (13, 15),
               NOPC: reg == 15, NOPCX: reg == 15,
               NOPCWB: reg == 15 and is_writeback(insn)}.get(kind, False)
        if bad:
            raise KprobeRefused(f"{what}: {_FIELDS[position]} may not be "
                                f"{'PC with writeback' if kind == NOPCWB else _RULE[kind]} "
                                f"(REG_TYPE_{kind}, {source})")
        out = (out & ~(15 << position)) | (new << position)
    return out if modify else insn


_RULE = {SP: "other than sp", PC: "other than PC", NOSP: "sp", NOSPPC: "sp or PC",
         NOSPPCX: "sp or PC", NOPC: "PC", NOPCX: "PC"}


def prepare_emulated_insn(insn: int, thumb: bool = False) -> int:
    """decode.c: a conditional A32 instruction is made unconditional (cond 1110);
    a Thumb one is left as it is (its slot's ``bx lr`` is the caller's to add)."""
    if thumb:
        return insn
    return (insn | 0xE0000000) & ~0x10000000 if insn < 0xE0000000 else insn


@dataclass(frozen=True)
class Actions:
    """A ``union decode_action`` array and its ``decode_checker`` list: what a walk
    hands a matched entry's action to."""

    handlers: Mapping[str, str]                               # simulate/emulate -> handler
    decoders: Mapping[str, Callable[[int, Decoded, Item], Decoded]]   # custom -> decoder
    checkers: Callable[[str, int, Item, Decoded], None] | None = None   # run_checkers


def probes_decode_insn(insn: int, table: Table, emulate: bool, checkers: bool, *,
                       thumb: bool = False, asi: Decoded | None = None,
                       actions: Actions | None = None) -> Decoded:
    """decode.c probes_decode_insn: walk ``table``; KprobeRefused where it rejects.

    ``actions`` defaults to the A32 ones (kprobes_arm_actions and checkers);
    ``asi`` is filled in (a new Decoded by default), as the kernel's is.
    """
    actions = ARM_ACTIONS if actions is None else actions
    asi = Decoded() if asi is None else asi
    asi.stack_space, asi.register_usage_flags = 0, 0xFFFFFFFF
    origin = insn
    if emulate:
        insn = prepare_emulated_insn(insn, thumb)
    items, i, matched = table.items, 0, ""
    while True:
        if i == len(items):
            raise KprobeRefused(f"{table.end} ({table.name}, {table.source})")
        item = items[i]
        i += 1
        if not matched and insn & item.mask != item.value:
            continue
        what = matched or item.what       # an OR chain is named by its matching entry
        insn = _decode_regs(insn, item.regs, emulate, what, table.source)
        if item.kind == "table":
            table, items, i = item.target, item.target.items, 0
            continue
        if item.kind == "or":
            matched = matched or item.what
            continue
        if item.kind == "reject":
            raise KprobeRefused(f"{what}: rejected ({table.name}, {table.source})")
        asi.entry = what
        if checkers and actions.checkers is not None:
            actions.checkers(item.target, origin, item, asi)
        if item.kind == "custom":
            return actions.decoders[item.target](insn, asi, item)
        asi.handler = actions.handlers[item.target]
        if item.kind == "emulate" and emulate:
            asi.insn = insn
        return asi


def _run_checkers(action: str, insn: int, item: Item, asi: Decoded) -> None:
    """kprobes_arm_checkers: arm_stack_checker, then arm_regs_checker."""
    if action in _STACK_CHECKED:
        stack = probes_decode_insn(insn, STACK_TABLE, False, False)
        asi.stack_space, asi.stack_entry = stack.stack_space, stack.entry
        asi.register_usage_flags = 0xFFFFFFFF     # the nested decode resets it
    if action in _REGS_NOUSE:
        asi.register_usage_flags = 0
    elif action in _REGS_NORMAL or action == "PROBES_LDRSTRD":
        flags = 0
        for position, kind in zip((16, 12, 8, 4, 0), item.regs):
            if kind is not None:
                flags |= 1 << ((insn >> position) & 15)
        if action == "PROBES_LDRSTRD":
            flags |= 1 << (((insn >> 12) & 15) + 1)
        asi.register_usage_flags = flags
    elif action == "PROBES_LDMSTM":
        asi.register_usage_flags = (insn & 0xFFFF) | 1 << ((insn >> 16) & 15)
    elif action == "PROBES_MOV_IP_SP":
        asi.register_usage_flags = (1 << 12) | (1 << 13)


def _stack_use(kind: str) -> object:
    def decoder(insn: int, asi: Decoded, item: Item) -> Decoded:
        asi.stack_space = {
            "STACK_USE_NONE": lambda: 0,
            "STACK_USE_UNKNOWN": lambda: -1,
            "STACK_USE_FIXED_XXX": lambda: insn & 0xFFF,
            "STACK_USE_FIXED_X0X": lambda: ((insn & 0xF00) >> 4) + (insn & 0xF),
            "STACK_USE_FIXED_0XX": lambda: insn & 0xFF,           # Thumb-2 kernel only
            "STACK_USE_T32STRD": lambda: (insn & 0xFF) << 2,      # T32 STRD: imm8 * 4
            "STACK_USE_STMDX": lambda: (bin(insn & 0xFFFF).count("1")
                                        - (0 if insn & (1 << 24) else 1)) * 4,
        }[kind]()
        return asi
    return decoder


def kprobe_decode_ldmstm(insn: int, asi: Decoded, item: Item) -> Decoded:
    """actions-common.c: emulate LDM/STM on r0-r12 (renamed) or simulate it."""
    reglist, is_ldm, rn = insn & 0xFFFF, insn & 0x100000, (insn >> 16) & 15
    handler = ""
    if rn <= 12 and reglist & 0xE000 == 0:
        handler = "emulate_generic_r0_12_noflags"
    elif rn >= 2 and reglist & 0x8003 == 0:
        rn, reglist, handler = rn - 2, reglist >> 2, "emulate_generic_r2_14_noflags"
    elif rn >= 3 and reglist & 0x0007 == 0 and is_ldm and reglist & 0x8000:
        rn, reglist, handler = rn - 3, reglist >> 3, "emulate_ldm_r3_15"
    if handler:
        asi.handler, asi.insn = handler, (insn & 0xFFF00000) | (rn << 16) | reglist
        return asi
    asi.handler = ("simulate_ldm1stm1" if not reglist & 0x8000 else
                   "simulate_ldm1_pc" if is_ldm else "simulate_stm1_pc")
    return asi


#: stack_check_actions (checkers-common.c): the decoders the stack tables end in.
STACK_CHECK_ACTIONS = Actions({}, {k: _stack_use(k) for k in (
    "STACK_USE_NONE", "STACK_USE_UNKNOWN", "STACK_USE_FIXED_XXX", "STACK_USE_FIXED_X0X",
    "STACK_USE_FIXED_0XX", "STACK_USE_T32STRD", "STACK_USE_STMDX")})
_CUSTOM = {"PROBES_LDMSTM": kprobe_decode_ldmstm, **STACK_CHECK_ACTIONS.decoders}
#: kprobes_arm_actions with kprobes_arm_checkers.
ARM_ACTIONS = Actions(HANDLER_OF, _CUSTOM, _run_checkers)


def arm_prepare(insn: int) -> Decoded:
    """core.c arch_prepare_kprobe (A32): decode, then the stack-use rule."""
    return check_stack_use(probes_decode_insn(insn, ARM_TABLE, True, True))


def check_stack_use(asi: Decoded) -> Decoded:
    """core.c arch_prepare_kprobe's last rule, for every instruction set.

    "Never instrument" a store whose stack use is unknown (a register offset
    from sp) or more than MAX_STACK_SIZE bytes below sp: the handler's own
    frame (``__und_svc``) lies there.
    """
    if asi.stack_space < 0:
        raise KprobeRefused(f"{asi.stack_entry}: stack use unknown "
                            "(stack_space < 0, arch_prepare_kprobe in core.c)")
    if asi.stack_space > MAX_STACK_SIZE:
        raise KprobeRefused(f"{asi.stack_entry}: uses {asi.stack_space} bytes below sp, more "
                            f"than MAX_STACK_SIZE ({MAX_STACK_SIZE}) (arch_prepare_kprobe in "
                            "core.c)")
    return asi
