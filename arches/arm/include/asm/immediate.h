/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM immediate values: `mov rX, #imm8` with rotation 0. In a
 * little-endian A32 instruction the imm8 field is the instruction's first
 * byte, so the immediate's address is the instruction's and its size 1.
 * (linux/immediate.h wraps these in the one-instruction imv_read.)
 */
#ifndef _ASM_IMMEDIATE_H
#define _ASM_IMMEDIATE_H

#define IMV_INSN	"mov %0, #0"
#define IMV_ENTRY	".balign 4\n\t.word %c1, 1b, 1b, 1"

#endif
