/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arch/arm/include/asm/div64.h (v5.10) calls the assembly __do_div64
 * (arch/arm/lib/div64.S) for what the generic do_div gives __div64_32;
 * kisim uses the generic do_div and kernel/div64.c's __div64_32, the same
 * quotient and remainder.
 */
#ifndef _ASM_DIV64_H
#define _ASM_DIV64_H

#include <asm-generic/div64.h>

#endif
