/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerPC static branch: `ori 0,0,0` (PPC_RAW_NOP), patched to `b`; a site that
 * starts taken is built as the `b` (arch_static_branch_jump).
 */
#ifndef _ASM_JUMP_LABEL_H
#define _ASM_JUMP_LABEL_H

#define JUMP_LABEL_NOP		"nop"
#define JUMP_LABEL_JMP		"b %l[l_yes]"
#define JUMP_LABEL_ENTRY	".balign 4\n\t.long 1b, %l[l_yes], %0"

#endif
