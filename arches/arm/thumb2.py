"""The ARM arch as a CONFIG_THUMB2_KERNEL kernel runs it (Linux v5.10).

Everything the kernel is compiled to runs in Thumb state: 16- and 32-bit
instructions, halfword aligned. The text-patching encodings follow v5.10:

- arch/arm/include/asm/insn.h ``arm_gen_nop()``: ``nop.w`` (0xf3af8000), so
  a jump-label site is always 4 bytes;
- arch/arm/kernel/insn.c ``__arm_gen_branch_thumb2()``: ``b.w``/``bl``
  (encoding T4/T1, offset from pc + 4, +-16 MiB);
- arch/arm/kernel/ftrace.c: an idle mcount site holds ``pop.w {lr}``
  (0xf85deb04), undoing the ``push {lr}`` before it;
- arch/arm/probes/kprobes/core.h: the 16-bit breakpoint 0xde18 and the
  32-bit one 0xf7f0a018, chosen by the probed instruction's width;
- arch/arm/kernel/patch.c ``__patch_text_real()``: a 32-bit instruction at
  an address that is 2 mod 4 is written as two halfword stores, which is
  one reason ``patch_text()`` runs under ``stop_machine()``.

A 32-bit Thumb instruction is a pair of halfwords, the first (bits 31:16
of the kernel's ``__opcode_thumb32_compose``) at the lower address, each
little-endian (``__opcode_to_mem_thumb32``).
"""
from __future__ import annotations

from typing import Sequence

from arches.base import TextPort, check_reach, patch_words

BRANCH_REACH = (-0x1000000, 0xFFFFFE)            # +-16 MiB (insn.c __arm_gen_branch_thumb2)
NOP_W = 0xF3AF8000                               # nop.w (asm/insn.h arm_gen_nop)
NOP_N = 0xBF00                                   # nop (T1)
POP_W_LR = 0xF85DEB04                            # pop.w {lr}: ldr.w lr, [sp], #4 (ftrace.c)
KPROBE_THUMB16_BREAKPOINT_INSTRUCTION = 0xDE18   # probes/kprobes/core.h
KPROBE_THUMB32_BREAKPOINT_INSTRUCTION = 0xF7F0A018
#: ``push {lr}`` (T1) or ``str.w lr, [sp, #-4]!`` before ``bl __gnu_mcount_nc``.
PUSH_LR = (bytes.fromhex("00b5"), bytes.fromhex("4df804ed"))


def is_wide_instruction(first: int) -> bool:
    """asm/opcodes.h __opcode_is_thumb16's complement: a first halfword of
    0xe800 or more begins a 32-bit instruction (ARM ARM A6.1)."""
    return first >= 0xE800


def thumb32(insn: int) -> bytes:
    """The 32-bit instruction ``insn`` (first halfword in bits 31:16) as memory."""
    return (insn >> 16).to_bytes(2, "little") + (insn & 0xFFFF).to_bytes(2, "little")


def thumb16(insn: int) -> bytes:
    return insn.to_bytes(2, "little")


def opcode(code: bytes) -> tuple[int, int]:
    """``(insn, length)`` of the instruction at the start of ``code``: a
    halfword, or two composed as ``__opcode_thumb32_compose`` does."""
    first = int.from_bytes(code[:2], "little")
    if not is_wide_instruction(first):
        return first, 2
    return first << 16 | int.from_bytes(code[2:4], "little"), 4


def _branch(src: int, dst: int, link: bool) -> bytes:
    """insn.c __arm_gen_branch_thumb2: B.W (T4) or BL (T1)."""
    disp = dst - (src + 4)
    check_reach("arm (Thumb-2)", src, dst, disp, BRANCH_REACH, align=2)
    s = disp >> 24 & 1
    j1 = (~disp >> 23 & 1) ^ s
    j2 = (~disp >> 22 & 1) ^ s
    first = 0xF000 | s << 10 | (disp >> 12 & 0x3FF)
    second = 0x9000 | (0x4000 if link else 0) | j1 << 13 | j2 << 11 | (disp >> 1 & 0x7FF)
    return thumb32(first << 16 | second)


def encode_jump(src: int, dst: int) -> bytes:
    """``b.w dst``."""
    return _branch(src, dst, link=False)


def encode_call(src: int, dst: int) -> bytes:
    """``bl dst`` (to Thumb code: the kernel's functions all are)."""
    return _branch(src, dst, link=True)


def kprobe_breakpoint(orig: bytes) -> bytes:
    """core.c arch_arm_kprobe: the breakpoint as wide as the probed instruction."""
    _, length = opcode(orig)
    if length == 2:
        return thumb16(KPROBE_THUMB16_BREAKPOINT_INSTRUCTION)
    return thumb32(KPROBE_THUMB32_BREAKPOINT_INSTRUCTION)


#: ARMv7 ARM (DDI 0406C) A3.5.4 for Thumb state. The Thumb list there is
#: narrower than ARM state's, and kisim could not check its exact 32-bit
#: conditions, so only 16-bit B, NOP, BKPT and SVC pairs count as safe (a
#: conservative reading: every 32-bit change is a finding outside
#: stop_machine(), which v5.10 always uses on a Thumb-2 kernel).
_CMODX_SAFE16 = ((0xF000, 0xD000),               # B<c> (T1); 0xde/0xdf are UDF/SVC
                 (0xF800, 0xE000),               # B (T2)
                 (0xFFFF, 0xBF00),               # NOP
                 (0xFF00, 0xBE00),               # BKPT
                 (0xFF00, 0xDF00))               # SVC


def _cmodx_ok(word: bytes) -> bool:
    insn, length = opcode(word)
    return (length == 2 and insn >> 8 != 0xDE          # UDF sits in B<c>'s space
            and any(insn & mask == value for mask, value in _CMODX_SAFE16))


def cmodx_safe(old: bytes, new: bytes) -> bool:
    """Both are 16-bit instructions ARMv7 lets another CPU change under execution."""
    return _cmodx_ok(old) and _cmodx_ok(new)


def imv_load_of_zero(insn: bytes, address: int, imv: int, size: int) -> bool:
    """``mov.w rX, #0`` (T2, S=0): its imm8 is the low byte of the second
    halfword, the instruction's third byte in memory."""
    word, length = opcode(insn)
    return (length == 4 and word & 0xFFFF8000 == 0xF04F0000 and word & 0x70FF == 0
            and size == 1 and imv == address + 2)


def _one_instruction(addr: int, insn: bytes) -> bool:
    return addr % 2 == 0 and len(insn) in (2, 4) and len(insn) == opcode(insn)[1]


def patch_text_batch(port: TextPort, sites: Sequence[tuple[int, bytes]], line: int) -> None:
    """patch.c patch_text for many sites in one stop_machine(): each site one
    store, or two halfword stores for a 32-bit instruction at 2 mod 4 (not
    single-copy atomic), then flush_icache_range; every CPU serializes on the
    way out of stop_machine() (:func:`arches.base.patch_words`)."""
    patch_words("arm (Thumb-2)", port, sites, line, stop_machine=True, valid=_one_instruction,
                what="one halfword-aligned Thumb instruction")
