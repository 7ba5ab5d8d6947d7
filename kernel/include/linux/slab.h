/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slab allocator: caches of equal-sized objects carved from 4 KiB
 * pages of a heap in .bss. kmalloc() serves power-of-two size classes
 * 8..4096 ("size-8" .. "size-4096"), so bytes_alloc >= bytes_req.
 */
#ifndef _LINUX_SLAB_H
#define _LINUX_SLAB_H

#include <linux/types.h>
#include <linux/gfp.h>
#include <linux/string.h>
#include <asm/page.h>

#define HEAP_PAGES		256	/* 1 MiB */

#define KMALLOC_MIN_SHIFT	3
#define KMALLOC_MAX_SHIFT	12
#define KMALLOC_MAX_SIZE	(1UL << KMALLOC_MAX_SHIFT)

/* kmemtrace event types (include/linux/kmemtrace.h) */
#define KMEMTRACE_TYPE_KMALLOC	0
#define KMEMTRACE_TYPE_CACHE	1
#define KMEMTRACE_TYPE_PAGES	2

struct kmem_cache;

void kmem_cache_init(void);
struct kmem_cache *kmem_cache_create(const char *name, size_t size, size_t align,
				     unsigned long flags, void (*ctor)(void *));
void *kmem_cache_alloc(struct kmem_cache *cachep, gfp_t flags);
void kmem_cache_free(struct kmem_cache *cachep, void *objp);
size_t kmem_cache_size(struct kmem_cache *cachep);
void *kmalloc(size_t size, gfp_t flags);
void kfree(const void *objp);
size_t ksize(const void *objp);

/* include/linux/slab.h (v5.10): zeroing and array allocations over kmalloc(). */
static inline void *kzalloc(size_t size, gfp_t flags)
{
	void *p = kmalloc(size, flags);

	if (p)
		memset(p, 0, size);
	return p;
}

/*
 * An array of n elements of size bytes; NULL if n * size overflows. With
 * __GFP_ZERO it comes zeroed (as kcalloc), as v5.10's slab zeroes any
 * object asked for with that flag; kisim's out-of-line kmalloc() does not
 * act on it (its code is the one docs/lineprobes.md reads line by line).
 */
static inline void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	if (flags & __GFP_ZERO)
		return kzalloc(bytes, flags & ~__GFP_ZERO);
	return kmalloc(bytes, flags);
}

static inline void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return kzalloc(bytes, flags);
}

#endif
