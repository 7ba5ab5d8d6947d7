/* SPDX-License-Identifier: GPL-2.0 */
/* arch/x86/include/asm/div64.h (v5.10), 64-bit: the generic do_div, C's / and %. */
#ifndef _ASM_DIV64_H
#define _ASM_DIV64_H

#include <asm-generic/div64.h>

#endif
