/* SPDX-License-Identifier: GPL-2.0 */
/* ARM static branch: `mov r0, r0` (arm_gen_nop), patched to `b`. */
#ifndef _ASM_JUMP_LABEL_H
#define _ASM_JUMP_LABEL_H

#define JUMP_LABEL_NOP		".inst 0xe1a00000"
#define JUMP_LABEL_ENTRY	".balign 4\n\t.word 1b, %l[l_yes], %c0"

#endif
