// SPDX-License-Identifier: GPL-2.0
/*
 * kmalloc: an allocation storm of mixed sizes. KMALLOC_TASKS tasks each
 * run `iterations` steps over a ring of KMALLOC_RING live objects:
 *
 *	r = xorshift32(state)            state = 0x9e3779b9 ^ (i * 0x85ebca6b)
 *	slot k % RING: if occupied, check and free it:
 *	    acc = mix32(acc ^ (load32le(p) + (p[len-1] << 8)) ^ len)
 *	if (r >> 4) & 3 == 0:  p = kmem_cache_alloc(storm cache of 40-byte objects)
 *	else:                  p = kmalloc(kmalloc_sizes[r & 15])
 *	tag = mix32(r ^ k); store tag little-endian at p[0..3], (u8)tag at p[len-1]
 *	acc = mix32(acc + len + (bytes_alloc << 12))
 *	yield every 32 steps; at the end free the ring in slot order.
 *	checksum = fold_results(acc[0..KMALLOC_TASKS-1])
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <kisim/workload.h>

#define KMALLOC_TASKS	4
#define KMALLOC_RING	8
#define STORM_OBJECT	40

static const u16 kmalloc_sizes[16] = {
	8, 13, 16, 24, 32, 50, 64, 96, 128, 200, 256, 384, 512, 700, 1024, 2000,
};

struct slot {
	u8 *ptr;
	u32 len;
	bool cached;
};

static u32 kmalloc_iterations;
static u32 kmalloc_results[KMALLOC_TASKS];
static struct kmem_cache *storm_cachep;

static u32 check_and_free(struct slot *s, u32 acc)
{
	u8 *p = s->ptr;
	u32 v = (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;

	acc = mix32(acc ^ (v + ((u32)p[s->len - 1] << 8)) ^ s->len);
	if (s->cached)
		kmem_cache_free(storm_cachep, p);
	else
		kfree(p);
	s->ptr = NULL;
	return acc;
}

static int kmalloc_task(void *arg)
{
	u32 i = (u32)(unsigned long)arg, acc = 0, k, j;
	u32 state = 0x9e3779b9U ^ (i * 0x85ebca6bU);
	struct slot ring[KMALLOC_RING] = { { 0 } };

	for (k = 0; k < kmalloc_iterations; k++) {
		struct slot *s = &ring[k % KMALLOC_RING];
		u32 r = xorshift32(&state), tag, alloc;

		memory_pressure_walk();
		if (s->ptr)
			acc = check_and_free(s, acc);
		s->cached = ((r >> 4) & 3) == 0;
		if (s->cached) {
			s->len = STORM_OBJECT;
			s->ptr = kmem_cache_alloc(storm_cachep, GFP_KERNEL);
			alloc = kmem_cache_size(storm_cachep);
		} else {
			s->len = kmalloc_sizes[r & 15];
			s->ptr = kmalloc(s->len, GFP_KERNEL);
			alloc = ksize(s->ptr);
		}
		if (!s->ptr)
			panic("kmalloc storm: out of memory at step %u", k);
		tag = mix32(r ^ k);
		s->ptr[0] = (u8)tag;
		s->ptr[1] = (u8)(tag >> 8);
		s->ptr[2] = (u8)(tag >> 16);
		s->ptr[3] = (u8)(tag >> 24);
		s->ptr[s->len - 1] = (u8)tag;
		acc = mix32(acc + s->len + (alloc << 12));
		if ((k & 31) == 31)
			schedule();
	}
	for (j = 0; j < KMALLOC_RING; j++)
		if (ring[j].ptr)
			acc = check_and_free(&ring[j], acc);
	kmalloc_results[i] = acc;
	return 0;
}

u32 kmalloc_run(u32 iterations)
{
	kmalloc_iterations = iterations;
	if (!storm_cachep)
		storm_cachep = kmem_cache_create("kmalloc_storm", STORM_OBJECT, 8, 0, NULL);
	return run_tasks(kmalloc_task, "kmalloc", kmalloc_results, KMALLOC_TASKS);
}
