// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/llist.c (llist.c beside it, reached through
 * <linux/llist.h>): size entries with pseudo-random values are added one
 * by one (llist_add: whether the list was empty), a third taken back with
 * llist_del_first (newest first), the rest with llist_del_all and put in
 * the order of addition with llist_reverse_order. Returns every value and
 * flag in the order seen, mixed (FNV-1a).
 */
#include <linux/llist.h>
#include <linux/module.h>

struct item {
	u32 value;
	struct llist_node node;
};

static struct item items[512];

static u32 mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

u32 test_llist_run(u32 size)
{
	u32 i, x = 2463534242u, h = 2166136261u;
	struct llist_node *first;
	struct item *it;
	LLIST_HEAD(head);

	if (size > ARRAY_SIZE(items))
		return 0;
	h = mix(h, llist_empty(&head));
	for (i = 0; i < size; i++) {		/* xorshift32 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		items[i].value = x;
		h = mix(h, llist_add(&items[i].node, &head));
	}
	for (i = 0; i < size / 3; i++)
		h = mix(h, llist_entry(llist_del_first(&head), struct item, node)->value);
	first = llist_reverse_order(llist_del_all(&head));
	llist_for_each_entry(it, first, node)
		h = mix(h, it->value);
	h = mix(h, llist_empty(&head));
	h = mix(h, llist_del_first(&head) == NULL);
	return h;
}
