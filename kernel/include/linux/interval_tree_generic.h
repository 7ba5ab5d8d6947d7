/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Interval trees of any node type (include/linux/interval_tree_generic.h,
 * v5.10), after Cormen, Leiserson, Rivest and Stein, "Introduction to
 * Algorithms", section 14.3: an rbtree ordered by each node's ITSTART,
 * every node also keeping ITSUBTREE, the largest ITLAST in its subtree.
 *
 * INTERVAL_TREE_DEFINE(ITSTRUCT, ITRB, ITTYPE, ITSUBTREE, ITSTART, ITLAST,
 *                      ITSTATIC, ITPREFIX) defines, each ITSTATIC:
 *   ITPREFIX_insert(node, root), ITPREFIX_remove(node, root),
 *   ITPREFIX_iter_first(root, start, last), ITPREFIX_iter_next(node, start, last)
 * where ITSTRUCT holds the struct rb_node ITRB and the ITTYPE ITSUBTREE, and
 * ITSTART(n)/ITLAST(n) give a node's closed interval. Intervals overlap
 * [start, last] when ITSTART(n) <= last and start <= ITLAST(n); the
 * iterators return them in ascending ITSTART, equal starts in the order
 * they were inserted.
 */
#include <linux/rbtree_augmented.h>

#define INTERVAL_TREE_DEFINE(ITSTRUCT, ITRB, ITTYPE, ITSUBTREE,		      \
			     ITSTART, ITLAST, ITSTATIC, ITPREFIX)	      \
									      \
RB_DECLARE_CALLBACKS_MAX(static, ITPREFIX ## _augment,			      \
			 ITSTRUCT, ITRB, ITTYPE, ITSUBTREE, ITLAST)	      \
									      \
/* Insert: the largest last grows on the way down, then rebalance. */	      \
ITSTATIC void ITPREFIX ## _insert(ITSTRUCT *node,			      \
				  struct rb_root_cached *root)		      \
{									      \
	struct rb_node **link = &root->rb_root.rb_node, *rb_parent = NULL;    \
	ITTYPE start = ITSTART(node), last = ITLAST(node);		      \
	bool leftmost = true;						      \
									      \
	while (*link) {							      \
		ITSTRUCT *parent = rb_entry(*link, ITSTRUCT, ITRB);	      \
									      \
		rb_parent = *link;					      \
		if (parent->ITSUBTREE < last)				      \
			parent->ITSUBTREE = last;			      \
		if (start < ITSTART(parent)) {				      \
			link = &parent->ITRB.rb_left;			      \
		} else {						      \
			link = &parent->ITRB.rb_right;			      \
			leftmost = false;				      \
		}							      \
	}								      \
	node->ITSUBTREE = last;						      \
	rb_link_node(&node->ITRB, rb_parent, link);			      \
	rb_insert_augmented_cached(&node->ITRB, root, leftmost,		      \
				   &ITPREFIX ## _augment);		      \
}									      \
									      \
ITSTATIC void ITPREFIX ## _remove(ITSTRUCT *node,			      \
				  struct rb_root_cached *root)		      \
{									      \
	rb_erase_augmented_cached(&node->ITRB, root, &ITPREFIX ## _augment);  \
}									      \
									      \
/*									      \
 * The first node by start, in node's subtree, overlapping [start, last],    \
 * given that some node of the subtree ends at or after start. Going left     \
 * whenever the left subtree reaches start finds the leftmost node that       \
 * does: it overlaps unless it begins after last, and then so does every      \
 * node to its right.							      \
 */									      \
static ITSTRUCT *							      \
ITPREFIX ## _subtree_search(ITSTRUCT *node, ITTYPE start, ITTYPE last)	      \
{									      \
	for (;;) {							      \
		struct rb_node *left = node->ITRB.rb_left;		      \
		struct rb_node *right = node->ITRB.rb_right;		      \
									      \
		if (left && start <= rb_entry(left, ITSTRUCT, ITRB)->ITSUBTREE) { \
			node = rb_entry(left, ITSTRUCT, ITRB);		      \
			continue;					      \
		}							      \
		if (ITSTART(node) > last)				      \
			return NULL;					      \
		if (start <= ITLAST(node))				      \
			return node;					      \
		if (!right || rb_entry(right, ITSTRUCT, ITRB)->ITSUBTREE < start) \
			return NULL;					      \
		node = rb_entry(right, ITSTRUCT, ITRB);			      \
	}								      \
}									      \
									      \
ITSTATIC ITSTRUCT *							      \
ITPREFIX ## _iter_first(struct rb_root_cached *root,			      \
			ITTYPE start, ITTYPE last)			      \
{									      \
	ITSTRUCT *node, *leftmost;					      \
									      \
	if (!root->rb_root.rb_node)					      \
		return NULL;						      \
	node = rb_entry(root->rb_root.rb_node, ITSTRUCT, ITRB);		      \
	if (node->ITSUBTREE < start)	/* everything ends before start */    \
		return NULL;						      \
	leftmost = rb_entry(root->rb_leftmost, ITSTRUCT, ITRB);		      \
	if (ITSTART(leftmost) > last)	/* everything begins after last */    \
		return NULL;						      \
	return ITPREFIX ## _subtree_search(node, start, last);		      \
}									      \
									      \
/*									      \
 * The next overlapping node after node, which overlaps: first in node's     \
 * right subtree, else in the right subtree of the nearest ancestor that     \
 * node is left of, the ancestor itself first.				      \
 */									      \
ITSTATIC ITSTRUCT *							      \
ITPREFIX ## _iter_next(ITSTRUCT *node, ITTYPE start, ITTYPE last)	      \
{									      \
	struct rb_node *rb = node->ITRB.rb_right, *from;		      \
									      \
	for (;;) {							      \
		if (rb) {						      \
			ITSTRUCT *right = rb_entry(rb, ITSTRUCT, ITRB);	      \
									      \
			if (start <= right->ITSUBTREE)			      \
				return ITPREFIX ## _subtree_search(right,     \
								start, last); \
		}							      \
		do {		/* climb until we come up from a left child */ \
			from = &node->ITRB;				      \
			rb = rb_parent(&node->ITRB);			      \
			if (!rb)					      \
				return NULL;				      \
			node = rb_entry(rb, ITSTRUCT, ITRB);		      \
			rb = node->ITRB.rb_right;			      \
		} while (rb == from);					      \
		if (last < ITSTART(node))				      \
			return NULL;					      \
		if (start <= ITLAST(node))				      \
			return node;					      \
	}								      \
}
