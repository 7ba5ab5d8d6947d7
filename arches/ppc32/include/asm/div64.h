/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arch/powerpc/include/asm/div64.h (v5.10): the generic do_div; its
 * __div64_32 is arch/powerpc/lib/div64.S there, kernel/div64.c's C here.
 */
#ifndef _ASM_DIV64_H
#define _ASM_DIV64_H

#include <asm-generic/div64.h>

#endif
