/* SPDX-License-Identifier: GPL-2.0 */
/* PowerPC static branch: `ori 0,0,0` (PPC_RAW_NOP), patched to `b`. */
#ifndef _ASM_JUMP_LABEL_H
#define _ASM_JUMP_LABEL_H

static __always_inline bool arch_static_branch(void *key)
{
	__asm__ goto("1:\n\t"
		     "nop\n\t"
		     ".pushsection __jump_table, \"aw\"\n\t"
		     ".balign 4\n\t"
		     ".long 1b, %l[l_yes], %0\n\t"
		     ".popsection\n\t"
		     : : "i" (key) : : l_yes);
	return false;
l_yes:
	return true;
}

#endif
