// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/sort.c (sort.c beside it, its own translation
 * unit, reached through <linux/sort.h> as a kernel caller would): sort
 * size pseudo-random u32s, return the weighted sum sum((i + 1) * a[i]).
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

u32 test_sort_run(u32 size)
{
	u32 *a = kmalloc_array(size, sizeof(*a), GFP_KERNEL);
	u32 i, x = 2463534242u, sum = 0;

	if (!a)
		return 0;
	for (i = 0; i < size; i++) {		/* xorshift32 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		a[i] = x % 1000;
	}
	sort(a, size, sizeof(*a), cmp_u32, NULL);
	for (i = 0; i < size; i++)
		sum += (i + 1) * a[i];
	kfree(a);
	return sum;
}
