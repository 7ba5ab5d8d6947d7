/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lock-less NULL-terminated singly linked lists (include/linux/llist.h,
 * v5.10): any number of adders with cmpxchg; llist_del_all() by any
 * number of consumers; llist_del_first() by one consumer at a time (or
 * under a lock). lib/llist.c holds the out-of-line functions, brought by
 * a module. Newest entries come first; llist_reverse_order() restores
 * the order of addition.
 */
#ifndef _LINUX_LLIST_H
#define _LINUX_LLIST_H

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/spinlock.h>

struct llist_head {
	struct llist_node *first;
};

struct llist_node {
	struct llist_node *next;
};

#define LLIST_HEAD_INIT(name)	{ NULL }
#define LLIST_HEAD(name)	struct llist_head name = LLIST_HEAD_INIT(name)

static inline void init_llist_head(struct llist_head *list)
{
	list->first = NULL;
}

#define llist_entry(ptr, type, member)	container_of(ptr, type, member)

/*
 * Whether &ptr->member is not NULL: the end test of the entry walks, where
 * ptr came from container_of() of a NULL node (so ptr itself is not NULL).
 */
#define member_address_is_nonnull(ptr, member)	\
	((uintptr_t)(ptr) + offsetof(typeof(*(ptr)), member) != 0)

/* Walk from node (llist_del_all()'s result): not safe against removal. */
#define llist_for_each(pos, node)			\
	for ((pos) = (node); pos; (pos) = (pos)->next)

/* The same, n keeping the next node so pos may be freed or re-added. */
#define llist_for_each_safe(pos, n, node)			\
	for ((pos) = (node); (pos) && ((n) = (pos)->next, true); (pos) = (n))

#define llist_for_each_entry(pos, node, member)				\
	for ((pos) = llist_entry((node), typeof(*(pos)), member);	\
	     member_address_is_nonnull(pos, member);			\
	     (pos) = llist_entry((pos)->member.next, typeof(*(pos)), member))

#define llist_for_each_entry_safe(pos, n, node, member)			\
	for (pos = llist_entry((node), typeof(*pos), member);		\
	     member_address_is_nonnull(pos, member) &&			\
		(n = llist_entry(pos->member.next, typeof(*n), member), true); \
	     pos = n)

/* Not a snapshot: another CPU may add or delete right after. */
static inline bool llist_empty(const struct llist_head *head)
{
	return READ_ONCE(head->first) == NULL;
}

static inline struct llist_node *llist_next(struct llist_node *node)
{
	return node->next;
}

extern bool llist_add_batch(struct llist_node *new_first,
			    struct llist_node *new_last,
			    struct llist_head *head);

/* Add one entry; true when the list was empty before. */
static inline bool llist_add(struct llist_node *new, struct llist_head *head)
{
	return llist_add_batch(new, new, head);
}

/* Take the whole list (newest first), leaving it empty. */
static inline struct llist_node *llist_del_all(struct llist_head *head)
{
	return xchg(&head->first, NULL);
}

extern struct llist_node *llist_del_first(struct llist_head *head);

struct llist_node *llist_reverse_order(struct llist_node *head);

#endif
