// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/rbtree.c (rbtree.c beside it, its own
 * translation unit, reached through <linux/rbtree_augmented.h> as a kernel
 * caller would). size nodes with pseudo-random keys go into a leftmost-cached
 * tree augmented with the subtree maximum of each node's value
 * (RB_DECLARE_CALLBACKS_MAX, as lib/rbtree_test.c); every other node is then
 * erased (at most 1000 nodes; 0 otherwise). The checksum mixes the in-order walk (rb_next), the reverse walk
 * (rb_prev), the root's augmented maximum, the cached leftmost key and
 * whether the red-black rules hold, before and after the erasures.
 */
#include <linux/module.h>
#include <linux/rbtree_augmented.h>

struct test_node {
	u32 key;
	u32 val;
	u32 max;		/* the largest val of the subtree */
	struct rb_node rb;
};

#define NODE_VAL(node) ((node)->val)

RB_DECLARE_CALLBACKS_MAX(static, test_augment, struct test_node, rb, u32, max, NODE_VAL)

static void insert(struct test_node *node, struct rb_root_cached *root)
{
	struct rb_node **link = &root->rb_root.rb_node, *rb_parent = NULL;
	bool leftmost = true;
	struct test_node *parent;

	node->max = node->val;
	while (*link) {
		rb_parent = *link;
		parent = rb_entry(rb_parent, struct test_node, rb);
		if (parent->max < node->val)
			parent->max = node->val;
		if (node->key < parent->key) {
			link = &parent->rb.rb_left;
		} else {
			link = &parent->rb.rb_right;
			leftmost = false;
		}
	}
	rb_link_node(&node->rb, rb_parent, link);
	rb_insert_augmented_cached(&node->rb, root, leftmost, &test_augment);
}

/* The black height of the subtree, or -1 if a rule is broken below it. */
static int black_height(struct rb_node *rb, u32 *count)
{
	int left, right;

	if (!rb)
		return 1;
	++*count;
	if (rb_is_red(rb) && ((rb->rb_left && rb_is_red(rb->rb_left)) ||
			      (rb->rb_right && rb_is_red(rb->rb_right))))
		return -1;
	left = black_height(rb->rb_left, count);
	right = black_height(rb->rb_right, count);
	if (left < 0 || left != right)
		return -1;
	return left + rb_is_black(rb);
}

static struct test_node nodes[1000];	/* kmalloc's limit is 4 KiB */

static u32 mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

static u32 check(u32 h, struct rb_root_cached *root, u32 expected)
{
	struct rb_node *rb;
	u32 i, forward = 0, backward = 0, count = 0;

	i = 1;
	for (rb = rb_first(&root->rb_root); rb; rb = rb_next(rb))
		forward += i++ * rb_entry(rb, struct test_node, rb)->key;
	i = 1;
	for (rb = rb_last(&root->rb_root); rb; rb = rb_prev(rb))
		backward += i++ * rb_entry(rb, struct test_node, rb)->key;
	h = mix(h, forward);
	h = mix(h, backward);
	h = mix(h, rb_entry(root->rb_root.rb_node, struct test_node, rb)->max);
	h = mix(h, rb_entry(rb_first_cached(root), struct test_node, rb)->key);
	h = mix(h, rb_is_black(root->rb_root.rb_node) &&
		   black_height(root->rb_root.rb_node, &count) > 0 && count == expected);
	return h;
}

u32 test_rbtree_run(u32 size)
{
	struct rb_root_cached root = RB_ROOT_CACHED;
	u32 i, x = 2463534242u, h = 2166136261u;

	if (size < 2 || size > ARRAY_SIZE(nodes))
		return 0;
	for (i = 0; i < size; i++) {		/* xorshift32 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		nodes[i].key = x % 1000;
		nodes[i].val = x >> 20;
		insert(&nodes[i], &root);
	}
	h = check(h, &root, size);
	for (i = 1; i < size; i += 2)
		rb_erase_augmented_cached(&nodes[i].rb, &root, &test_augment);
	h = check(h, &root, (size + 1) / 2);
	return h;
}
