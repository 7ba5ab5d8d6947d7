/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Immediate values (Desnoyers, "Immediate Values" patchset, 2007-2008).
 *
 * imv_read(var) reads `var`. With CONFIG_IMMEDIATE the value is instead an
 * instruction's immediate operand -- x86-64 `mov $imm,%reg` (the
 * immediate naturally aligned by nop padding before the instruction),
 * ARM `mov rX,#imm8`, PowerPC `li rX,imm16` -- and each site is recorded
 * in the section __imv as
 *
 *	struct __imv { unsigned long var, imv, insn, size; };
 *
 * (absolute, word-sized, the guest's byte order): `var` is the variable
 * whose value the immediate mirrors, `imv` the address of the immediate
 * field, `insn` the address of the instruction holding it and `size` the
 * immediate field's width in bytes (x86-64: the variable's size; ARM: 1,
 * the imm8 byte at the instruction's address, rotation 0; PowerPC: 2, the
 * low halfword at insn+2). The updater stores the new value, truncated to
 * `size` bytes in the guest's byte order, at `imv`.
 */
#ifndef _LINUX_IMMEDIATE_H
#define _LINUX_IMMEDIATE_H

#include <linux/types.h>

struct __imv {
	unsigned long var;
	unsigned long imv;
	unsigned long insn;
	unsigned long size;
};

#ifdef CONFIG_IMMEDIATE
#include <asm/immediate.h>

#ifndef arch_imv_read
/*
 * Arches whose immediate load is one fixed-size instruction give just
 * that instruction (IMV_INSN, output operand 0) and their __imv entry
 * directive (IMV_ENTRY, &var is operand 1); x86-64 defines its own.
 */
#define arch_imv_read(name)						\
	({								\
		unsigned long __v;					\
		BUILD_BUG_ON(sizeof(name) > sizeof(long));		\
		__asm__("1: " IMV_INSN "\n\t"				\
			".pushsection __imv, \"aw\"\n\t"		\
			IMV_ENTRY "\n\t"				\
			".popsection\n\t"				\
			: "=r" (__v) : "i" (&(name)));			\
		(__typeof__(name))__v;					\
	})
#endif

#define imv_read(var)	arch_imv_read(var)
#else
#define imv_read(var)	READ_ONCE(var)
#endif

#endif
