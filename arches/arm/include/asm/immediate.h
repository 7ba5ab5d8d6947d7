/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM immediate values: `mov rX, #imm8` with rotation 0. In a
 * little-endian A32 instruction the imm8 field is the instruction's first
 * byte, so the immediate's address is the instruction's and its size 1.
 */
#ifndef _ASM_IMMEDIATE_H
#define _ASM_IMMEDIATE_H

#define arch_imv_read(name)						\
	({								\
		unsigned long __v;					\
		BUILD_BUG_ON(sizeof(name) > 4);				\
		__asm__("1: mov %0, #0\n\t"				\
			".pushsection __imv, \"aw\"\n\t"		\
			".balign 4\n\t"					\
			".word %c1, 1b, 1b, 1\n\t"			\
			".popsection\n\t"				\
			: "=r" (__v) : "i" (&(name)));			\
		(__typeof__(name))__v;					\
	})

#endif
