/* SPDX-License-Identifier: GPL-2.0 */
/* ARM static branch: `mov r0, r0` (arm_gen_nop), patched to `b`. */
#ifndef _ASM_JUMP_LABEL_H
#define _ASM_JUMP_LABEL_H

static __always_inline bool arch_static_branch(void *key)
{
	__asm__ goto("1:\n\t"
		     ".inst 0xe1a00000\n\t"
		     ".pushsection __jump_table, \"aw\"\n\t"
		     ".balign 4\n\t"
		     ".word 1b, %l[l_yes], %c0\n\t"
		     ".popsection\n\t"
		     : : "i" (key) : : l_yes);
	return false;
l_yes:
	return true;
}

#endif
