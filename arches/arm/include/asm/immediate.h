/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM immediate values. A32: `mov rX, #imm8` with rotation 0; in a
 * little-endian instruction the imm8 field is its first byte, so the
 * immediate's address is the instruction's. CONFIG_THUMB2_KERNEL: `mov.w
 * rX, #imm8` (T2, i:imm3 = 0); imm8 is the low byte of the second halfword,
 * two bytes in. The size is 1 either way.
 * (linux/immediate.h wraps these in the one-instruction imv_read.)
 */
#ifndef _ASM_IMMEDIATE_H
#define _ASM_IMMEDIATE_H

#ifdef CONFIG_THUMB2_KERNEL
#define IMV_INSN	"mov.w %0, #0"
#define IMV_ENTRY	".balign 4\n\t.word %c1, 1b + 2, 1b, 1"
#else
#define IMV_INSN	"mov %0, #0"
#define IMV_ENTRY	".balign 4\n\t.word %c1, 1b, 1b, 1"
#endif

#endif
