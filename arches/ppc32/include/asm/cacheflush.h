/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_CACHEFLUSH_H
#define _ASM_CACHEFLUSH_H

/*
 * Write back and invalidate the data cache block holding p: dcbf, as
 * dcbf() in arch/powerpc/include/asm/cache.h, then sync.
 */
static inline void dcache_clean_inval_line(const volatile void *p)
{
	__asm__ __volatile__("dcbf 0, %0\n\tsync" : : "r" (p) : "memory");
}

#endif
