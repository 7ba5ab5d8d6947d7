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
#include <kisim/testdata.h>

struct item {
	u32 value;
	struct llist_node node;
};

static struct item items[512];

u32 test_llist_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;
	struct llist_node *first;
	struct item *it;
	LLIST_HEAD(head);

	if (size > ARRAY_SIZE(items))
		return 0;
	h = fnv_mix(h, llist_empty(&head));
	for (i = 0; i < size; i++) {
		xorshift32(&x);
		items[i].value = x;
		h = fnv_mix(h, llist_add(&items[i].node, &head));
	}
	for (i = 0; i < size / 3; i++)
		h = fnv_mix(h, llist_entry(llist_del_first(&head), struct item, node)->value);
	first = llist_reverse_order(llist_del_all(&head));
	llist_for_each_entry(it, first, node)
		h = fnv_mix(h, it->value);
	h = fnv_mix(h, llist_empty(&head));
	h = fnv_mix(h, llist_del_first(&head) == NULL);
	return h;
}
