/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_CACHEFLUSH_H
#define _ASM_CACHEFLUSH_H

/*
 * Write back and invalidate the data cache line holding p, in every level
 * and every CPU: clflush, as clflush() in arch/x86/include/asm/special_insns.h.
 */
static inline void dcache_clean_inval_line(const volatile void *p)
{
	__asm__ __volatile__("clflush %0" : "+m" (*(volatile char *)p) : : "memory");
}

#endif
