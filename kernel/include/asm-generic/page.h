/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pages (include/asm-generic/page.h, v5.10), for the three arches' 4 KiB
 * pages. kisim's guest runs without an MMU: a kernel address is its
 * physical address (__pa and __va are the identity).
 */
#ifndef _ASM_GENERIC_PAGE_H
#define _ASM_GENERIC_PAGE_H

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))

#define __pa(x)		((unsigned long)(x))
#define __va(x)		((void *)(unsigned long)(x))

#define PFN_PHYS(pfn)	((unsigned long)(pfn) << PAGE_SHIFT)
#define PHYS_PFN(x)	((unsigned long)((x) >> PAGE_SHIFT))

#endif
