// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/klist.c (klist.c beside it, reached through
 * <linux/klist.h>): size entries (8..64) with pseudo-random values are
 * added, every third at the head and the others at the tail, then two more
 * behind and before entry 1. The list is walked forward (klist_next) and
 * backward (klist_prev); walked again deleting each entry with i % 4 == 2
 * as the iterator stands on it (still attached while held, detached once
 * the iterator moves on); entry 5 is klist_remove()d; and a walk starts
 * after entry 7 (klist_iter_init_node). Returns the values seen, the
 * attached flags and the get/put calls, mixed (FNV-1a).
 */
#include <linux/klist.h>
#include <linux/module.h>
#include <kisim/testdata.h>

struct item {
	u32 value;
	struct klist_node kn;
};

static struct item items[64], extra[2];
static u32 gets, puts;

static void item_get(struct klist_node *n)
{
	gets++;
}

static void item_put(struct klist_node *n)
{
	puts++;
}

static u32 value_of(struct klist_node *n)
{
	return container_of(n, struct item, kn)->value;
}

u32 test_klist_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;
	struct klist_node *n;
	struct klist_iter it;
	struct klist k;

	if (size < 8 || size > ARRAY_SIZE(items))
		return 0;
	gets = puts = 0;
	klist_init(&k, item_get, item_put);
	for (i = 0; i < size; i++) {
		xorshift32(&x);
		items[i].value = x;
		if (i % 3 == 0)
			klist_add_head(&items[i].kn, &k);
		else
			klist_add_tail(&items[i].kn, &k);
	}
	extra[0].value = 1000001;
	extra[1].value = 1000002;
	klist_add_behind(&extra[0].kn, &items[1].kn);
	klist_add_before(&extra[1].kn, &items[1].kn);

	klist_iter_init(&k, &it);
	while ((n = klist_next(&it)))
		h = fnv_mix(h, value_of(n));
	klist_iter_exit(&it);
	klist_iter_init(&k, &it);
	while ((n = klist_prev(&it)))
		h = fnv_mix(h, value_of(n));
	klist_iter_exit(&it);

	klist_iter_init(&k, &it);
	while ((n = klist_next(&it))) {
		struct item *e = container_of(n, struct item, kn);

		if (e >= items && e < items + size && (e - items) % 4 == 2) {
			klist_del(n);
			h = fnv_mix(h, klist_node_attached(n));
		}
	}
	klist_iter_exit(&it);
	for (i = 2; i < size; i += 4)
		h = fnv_mix(h, klist_node_attached(&items[i].kn));

	klist_remove(&items[5].kn);
	h = fnv_mix(h, klist_node_attached(&items[5].kn));

	klist_iter_init_node(&k, &it, &items[7].kn);
	while ((n = klist_next(&it)))
		h = fnv_mix(h, value_of(n));
	klist_iter_exit(&it);
	h = fnv_mix(h, gets);
	h = fnv_mix(h, puts);
	return h;
}
