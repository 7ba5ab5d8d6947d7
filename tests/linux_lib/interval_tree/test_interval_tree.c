// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/interval_tree.c (interval_tree.c beside it,
 * reached through <linux/interval_tree.h>): size pseudo-random intervals
 * [s, s + 0..49] with s < 1000 are inserted, every fourth removed, then
 * size / 4 + 1 pseudo-random windows [q, q + 0..29] queried with
 * interval_tree_iter_first/_next. Returns the index of every interval
 * found, in the order found, each window's list ended by ~0, mixed (FNV-1a).
 */
#include <linux/interval_tree.h>
#include <linux/module.h>
#include <kisim/testdata.h>

static struct interval_tree_node nodes[512];

u32 test_interval_tree_run(u32 size)
{
	struct rb_root_cached root = RB_ROOT_CACHED;
	struct interval_tree_node *n;
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;

	if (size > ARRAY_SIZE(nodes))
		return 0;
	for (i = 0; i < size; i++) {
		nodes[i].start = xorshift32(&x) % 1000;
		nodes[i].last = nodes[i].start + xorshift32(&x) % 50;
		interval_tree_insert(&nodes[i], &root);
	}
	for (i = 0; i < size; i += 4)
		interval_tree_remove(&nodes[i], &root);
	for (i = 0; i < size / 4 + 1; i++) {
		unsigned long start = xorshift32(&x) % 1000;
		unsigned long last = start + xorshift32(&x) % 30;

		for (n = interval_tree_iter_first(&root, start, last); n;
		     n = interval_tree_iter_next(n, start, last))
			h = fnv_mix(h, n - nodes);
		h = fnv_mix(h, ~0u);
	}
	return h;
}
