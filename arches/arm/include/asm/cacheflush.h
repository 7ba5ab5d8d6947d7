/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_CACHEFLUSH_H
#define _ASM_CACHEFLUSH_H

/*
 * Clean and invalidate the data cache line holding p to the point of
 * coherency: DCCIMVAC (mcr p15, 0, Rt, c7, c14, 1), the operation
 * v7_dma_flush_range loops over in arch/arm/mm/cache-v7.S, then dsb.
 */
static inline void dcache_clean_inval_line(const volatile void *p)
{
	__asm__ __volatile__("mcr p15, 0, %0, c7, c14, 1\n\tdsb" : : "r" (p) : "memory");
}

#endif
