/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM static branch: the arch's nop (arm_gen_nop, asm/insn.h), patched to a
 * branch. A32: `mov r0, r0` and `b`. CONFIG_THUMB2_KERNEL: the 32-bit
 * `nop.w`, so a site always has room for `b.w`. A site that starts taken is
 * built as the branch (arch_static_branch_jump).
 */
#ifndef _ASM_JUMP_LABEL_H
#define _ASM_JUMP_LABEL_H

#ifdef CONFIG_THUMB2_KERNEL
#define JUMP_LABEL_NOP		"nop.w"
#define JUMP_LABEL_JMP		"b.w %l[l_yes]"
#else
#define JUMP_LABEL_NOP		".inst 0xe1a00000"
#define JUMP_LABEL_JMP		"b %l[l_yes]"
#endif
#define JUMP_LABEL_ENTRY	".balign 4\n\t.word 1b, %l[l_yes], %c0"

#endif
