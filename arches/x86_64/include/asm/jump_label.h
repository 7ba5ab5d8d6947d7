/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 static branch: a 5-byte P6 nop (P6_NOP5_ATOMIC), patched to `jmp rel32`;
 * a site that starts taken is built as that jump (arch_static_branch_jump).
 */
#ifndef _ASM_JUMP_LABEL_H
#define _ASM_JUMP_LABEL_H

#define JUMP_LABEL_NOP		".byte 0x0f,0x1f,0x44,0x00,0x00"
#define JUMP_LABEL_JMP		".byte 0xe9\n\t.long %l[l_yes] - 2f\n2:"
#define JUMP_LABEL_ENTRY	".balign 8\n\t.quad 1b, %l[l_yes], %c0"

#endif
