/* SPDX-License-Identifier: GPL-2.0 */
/* x86-64 static branch: a 5-byte P6 nop, patched to `jmp rel32`. */
#ifndef _ASM_JUMP_LABEL_H
#define _ASM_JUMP_LABEL_H

static __always_inline bool arch_static_branch(void *key)
{
	__asm__ goto("1: .byte 0x0f,0x1f,0x44,0x00,0x00\n\t"
		     ".pushsection __jump_table, \"aw\"\n\t"
		     ".balign 8\n\t"
		     ".quad 1b, %l[l_yes], %c0\n\t"
		     ".popsection\n\t"
		     : : "i" (key) : : l_yes);
	return false;
l_yes:
	return true;
}

#endif
