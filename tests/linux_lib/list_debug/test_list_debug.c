// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/list_debug.c (list_debug.c beside it), built
 * with CONFIG_DEBUG_LIST=y so that <linux/list.h> and <linux/rculist.h>
 * call its checks. size entries (at most 64) with pseudo-random values are
 * added at the tail (every fourth with list_add_tail_rcu), every third
 * deleted (with list_del_rcu when odd), and the rest walked with
 * list_for_each_entry_rcu. Then each corruption the checks catch is made
 * and the operation must be refused, the list unchanged: adding the first
 * entry again, adding where the next entry's prev is wrong, deleting an
 * entry twice (list_del's poison, list_del_rcu's poison) and deleting an
 * entry whose prev's next is wrong. Without the checks the double deletes
 * would write through the poison pointers and fault. Returns the values
 * walked, the checks' answers and the list's length after each, mixed.
 */
#include <linux/list.h>
#include <linux/rculist.h>
#include <linux/module.h>
#include <kisim/testdata.h>

struct item {
	u32 value;
	struct list_head node;
};

static struct item items[64], extra;

static u32 length(struct list_head *head)
{
	struct list_head *pos;
	u32 n = 0;

	list_for_each(pos, head)
		n++;
	return n;
}

u32 test_list_debug_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;
	struct list_head bogus, *saved;
	struct item *it, *first, *second;
	LIST_HEAD(head);

	if (size < 8 || size > ARRAY_SIZE(items))
		return 0;
	for (i = 0; i < size; i++) {
		xorshift32(&x);
		items[i].value = x;
		if (i % 4 == 0)
			list_add_tail_rcu(&items[i].node, &head);
		else
			list_add_tail(&items[i].node, &head);
	}
	for (i = 0; i < size; i += 3) {
		if (i % 2)
			list_del_rcu(&items[i].node);
		else
			list_del(&items[i].node);
	}
	rcu_read_lock();
	list_for_each_entry_rcu(it, &head, node)
		h = fnv_mix(h, it->value);
	rcu_read_unlock();
	h = fnv_mix(h, length(&head));

	first = list_first_entry(&head, struct item, node);
	second = list_next_entry(first, node);
	h = fnv_mix(h, __list_add_valid(&extra.node, &head, head.next));

	/* the first entry added again: new == next */
	h = fnv_mix(h, __list_add_valid(&first->node, &head, head.next));
	list_add(&first->node, &head);
	h = fnv_mix(h, length(&head));

	/* the next entry's prev does not point back */
	saved = first->node.prev;
	first->node.prev = &bogus;
	list_add(&extra.node, &head);
	first->node.prev = saved;
	h = fnv_mix(h, length(&head));
	h = fnv_mix(h, extra.node.next == NULL);

	/* deleted twice: list_del's LIST_POISON1, list_del_rcu's LIST_POISON2 */
	h = fnv_mix(h, __list_del_entry_valid(&items[0].node));
	list_del(&items[0].node);
	h = fnv_mix(h, __list_del_entry_valid(&items[3].node));
	list_del_rcu(&items[3].node);
	h = fnv_mix(h, length(&head));

	/* the previous entry's next does not point here (list_del would poison
	 * the entry even when refused, as v5.10's does: unlink it without) */
	first->node.next = &bogus;
	h = fnv_mix(h, __list_del_entry_valid(&second->node));
	__list_del_entry(&second->node);
	first->node.next = &second->node;
	h = fnv_mix(h, length(&head));
	h = fnv_mix(h, __list_del_entry_valid(&second->node));
	return h;
}
