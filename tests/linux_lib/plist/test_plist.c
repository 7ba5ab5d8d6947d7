// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/plist.c (plist.c beside it, reached through
 * <linux/plist.h>): size nodes of pseudo-random priority 0..15 are added
 * in order, every third (i % 3 == 0) deleted, then those with i % 5 == 1
 * requeued behind the others of their priority. Returns the priority and
 * index of each node in list order, then the first's and the last's
 * priority, mixed (FNV-1a).
 */
#include <linux/plist.h>
#include <linux/module.h>
#include <kisim/testdata.h>

struct item {
	u32 index;
	struct plist_node node;
};

static struct item items[512];

u32 test_plist_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;
	struct item *it;
	PLIST_HEAD(head);

	if (size > ARRAY_SIZE(items) || size < 2)
		return 0;
	for (i = 0; i < size; i++) {
		xorshift32(&x);
		items[i].index = i;
		plist_node_init(&items[i].node, x % 16);
		plist_add(&items[i].node, &head);
	}
	for (i = 0; i < size; i += 3)
		plist_del(&items[i].node, &head);
	for (i = 1; i < size; i += 5)
		if (i % 3)
			plist_requeue(&items[i].node, &head);
	plist_for_each_entry(it, &head, node) {
		h = fnv_mix(h, it->node.prio);
		h = fnv_mix(h, it->index);
	}
	h = fnv_mix(h, plist_first(&head)->prio);
	h = fnv_mix(h, plist_last(&head)->prio);
	return h;
}
