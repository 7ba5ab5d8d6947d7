/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Jump labels (static branches).
 *
 * static_branch(&flag) is false until the site is patched. With
 * CONFIG_JUMP_LABEL each site is an `asm goto` whose first instruction is
 * the arch's kernel nop (x86-64 5-byte `0f 1f 44 00 00`, ARM `e1a00000`,
 * PowerPC `60000000`), recorded in the section __jump_table as
 *
 *	struct jump_entry { unsigned long code, target, key; };
 *
 * with ABSOLUTE addresses (word-sized, the guest's byte order): `code` is
 * the nop, `target` the enabled branch's destination, `key` the address of
 * the flag the site tests (a marker's or a tracepoint's `state`).
 * arch_jump_label_transform() turns the nop into a jump to `target`.
 * Without CONFIG_JUMP_LABEL it is a plain load of the flag.
 */
#ifndef _LINUX_JUMP_LABEL_H
#define _LINUX_JUMP_LABEL_H

#include <linux/types.h>

struct jump_entry {
	unsigned long code;
	unsigned long target;
	unsigned long key;
};

#ifdef CONFIG_JUMP_LABEL
/* The arch gives its nop and the entry directive (key is operand 0). */
#include <asm/jump_label.h>

static __always_inline bool arch_static_branch(void *key)
{
	__asm__ goto("1:\n\t"
		     JUMP_LABEL_NOP "\n\t"
		     ".pushsection __jump_table, \"aw\"\n\t"
		     JUMP_LABEL_ENTRY "\n\t"
		     ".popsection\n\t"
		     : : "i" (key) : : l_yes);
	return false;
l_yes:
	return true;
}

#define static_branch(key)	arch_static_branch(key)
#else
#define static_branch(key)	unlikely(READ_ONCE(*(key)) != 0)
#endif

#endif
