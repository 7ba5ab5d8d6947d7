// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/list_sort.c (its own translation unit): sort
 * size list entries with pseudo-random keys, stably; return
 * sum((i + 1) * (key * 1024 + serial)) over the sorted list.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/list.h>
#include <linux/list_sort.h>

struct item {
	struct list_head list;
	u32 key, serial;
};

static int cmp_key(void *priv, struct list_head *a, struct list_head *b)
{
	u32 x = list_entry(a, struct item, list)->key;
	u32 y = list_entry(b, struct item, list)->key;

	return x < y ? -1 : x > y;
}

u32 test_list_sort_run(u32 size)
{
	struct item *it, *next;
	u32 i, x = 2463534242u, sum = 0;
	LIST_HEAD(head);

	for (i = 0; i < size; i++) {		/* xorshift32 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		it = kzalloc(sizeof(*it), GFP_KERNEL);
		if (!it)
			break;
		it->key = x % 97;		/* many equal keys: stability shows */
		it->serial = i;
		list_add_tail(&it->list, &head);
	}
	list_sort(NULL, &head, cmp_key);
	i = 0;
	list_for_each_entry_safe(it, next, &head, list) {
		sum += ++i * (it->key * 1024 + it->serial);
		list_del(&it->list);
		kfree(it);
	}
	return sum;
}
