/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/interval_tree.h (v5.10): closed intervals [start, last] of
 * unsigned longs in an augmented rbtree, ordered by start; lib/interval_tree.c
 * instantiates <linux/interval_tree_generic.h> for them (brought by a module).
 */
#ifndef _LINUX_INTERVAL_TREE_H
#define _LINUX_INTERVAL_TREE_H

#include <linux/rbtree.h>

struct interval_tree_node {
	struct rb_node rb;
	unsigned long start;		/* the first value in the interval */
	unsigned long last;		/* the last value in the interval */
	unsigned long __subtree_last;	/* the largest last below this node */
};

extern void
interval_tree_insert(struct interval_tree_node *node, struct rb_root_cached *root);

extern void
interval_tree_remove(struct interval_tree_node *node, struct rb_root_cached *root);

/* The first node (by start) overlapping [start, last], or NULL. */
extern struct interval_tree_node *
interval_tree_iter_first(struct rb_root_cached *root,
			 unsigned long start, unsigned long last);

/* The node after node (by start) overlapping [start, last], or NULL. */
extern struct interval_tree_node *
interval_tree_iter_next(struct interval_tree_node *node,
			unsigned long start, unsigned long last);

#endif
