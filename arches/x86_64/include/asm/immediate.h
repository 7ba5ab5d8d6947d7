/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 immediate values: `mov $imm,%reg`. A 1-byte immediate is always
 * aligned; for 2 and 4 bytes, single-byte nops (0x90) before the
 * instruction align the immediate to its size so that it can be written
 * atomically (Desnoyers' patchset pads the same way). The 2- and 4-byte
 * forms use eax so that the opcode before the immediate has a known
 * length (`66 b8 iw`, `b8 id`).
 */
#ifndef _ASM_IMMEDIATE_H
#define _ASM_IMMEDIATE_H

#define __imv_entry(size)						\
	".pushsection __imv, \"aw\"\n\t"				\
	".balign 8\n\t"							\
	".quad %c1, 2f - " #size ", 1f, " #size "\n\t"			\
	".popsection\n\t"

#define __imv_read1(name)						\
	({								\
		unsigned char __b;					\
		__asm__(__imv_entry(1)					\
			"1: movb $0, %0\n\t"				\
			"2:\n\t"					\
			: "=q" (__b) : "i" (&(name)));			\
		__b;							\
	})

#define __imv_read2(name)						\
	({								\
		unsigned short __h;					\
		__asm__(__imv_entry(2)					\
			".balign 2, 0x90\n\t"				\
			"1: movw $0, %0\n\t"				\
			"2:\n\t"					\
			: "=a" (__h) : "i" (&(name)));			\
		__h;							\
	})

#define __imv_read4(name)						\
	({								\
		unsigned int __w;					\
		__asm__(__imv_entry(4)					\
			".balign 4, 0x90\n\t"				\
			".skip 3, 0x90\n\t"				\
			"1: movl $0, %0\n\t"				\
			"2:\n\t"					\
			: "=a" (__w) : "i" (&(name)));			\
		__w;							\
	})

#define arch_imv_read(name)						\
	((__typeof__(name))						\
	 __builtin_choose_expr(sizeof(name) == 1, __imv_read1(name),	\
	 __builtin_choose_expr(sizeof(name) == 2, __imv_read2(name),	\
	 __builtin_choose_expr(sizeof(name) == 4, __imv_read4(name),	\
			       (void)0))))

#endif
