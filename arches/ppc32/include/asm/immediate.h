/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerPC immediate values: `li rX, imm16` (addi rX, 0, imm16). The
 * immediate is the low halfword of the big-endian instruction: at
 * insn + 2, size 2 (Desnoyers' patchset stores it the same way).
 */
#ifndef _ASM_IMMEDIATE_H
#define _ASM_IMMEDIATE_H

#define arch_imv_read(name)						\
	({								\
		unsigned long __v;					\
		BUILD_BUG_ON(sizeof(name) > 4);				\
		__asm__("1: li %0, 0\n\t"				\
			".pushsection __imv, \"aw\"\n\t"		\
			".balign 4\n\t"					\
			".long %1, 1b + 2, 1b, 2\n\t"			\
			".popsection\n\t"				\
			: "=r" (__v) : "i" (&(name)));			\
		(__typeof__(name))__v;					\
	})

#endif
