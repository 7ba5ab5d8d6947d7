/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page helpers of include/linux/mm.h (v5.10) that code handing pages
 * around needs (scatterlists). kisim keeps no struct page for memory at
 * large (the slab has its own for its heap pages, kernel/slab.c): here a
 * struct page pointer is the page's own address, an opaque name that is
 * never dereferenced, so virt_to_page/page_to_phys/page_address are
 * consistent with each other and with __pa/__va. And get_cmdline().
 */
#ifndef _LINUX_MM_H
#define _LINUX_MM_H

#include <asm/page.h>

struct page;

#define pfn_to_page(pfn)	((struct page *)PFN_PHYS(pfn))
#define page_to_pfn(page)	PHYS_PFN((unsigned long)(page))
#define virt_to_page(kaddr)	pfn_to_page(PHYS_PFN(__pa(kaddr)))
#define page_to_phys(page)	PFN_PHYS(page_to_pfn(page))
#define page_address(page)	__va(page_to_phys(page))

/* The offset of p within its page. */
#define offset_in_page(p)	((unsigned long)(p) & ~PAGE_MASK)

struct task_struct;

/* mm/util.c (kernel/util.c): the task's command line, NUL-separated; its length. */
int get_cmdline(struct task_struct *task, char *buffer, int buflen);

#endif
