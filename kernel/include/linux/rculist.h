/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RCU-protected lists (include/linux/rculist.h, v5.10): updaters (under
 * their own lock) publish an entry with rcu_assign_pointer() once it is
 * fully linked, so that readers walking with the _rcu iterators under
 * rcu_read_lock() see either the old list or the new one. A deleted entry
 * keeps its ->next for readers still on it (only ->prev is poisoned); it
 * may be freed after a grace period, which kisim's non-preemptible,
 * callback-free RCU (<linux/rcupdate.h>) leaves to the caller.
 */
#ifndef _LINUX_RCULIST_H
#define _LINUX_RCULIST_H

#include <linux/list.h>
#include <linux/rcupdate.h>

/* Initialize a list head that readers may already see. */
static inline void INIT_LIST_HEAD_RCU(struct list_head *list)
{
	WRITE_ONCE(list->next, list);
	WRITE_ONCE(list->prev, list);
}

/* The ->next pointer as RCU publishes it. */
#define list_next_rcu(list)	(*((struct list_head __rcu **)(&(list)->next)))
#define list_tail_rcu(head)	(*((struct list_head __rcu **)(&(head)->prev)))

static inline void __list_add_rcu(struct list_head *new,
				  struct list_head *prev, struct list_head *next)
{
	if (!__list_add_valid(new, prev, next))
		return;

	new->next = next;
	new->prev = prev;
	rcu_assign_pointer(list_next_rcu(prev), new);
	next->prev = new;
}

static inline void list_add_rcu(struct list_head *new, struct list_head *head)
{
	__list_add_rcu(new, head, head->next);
}

static inline void list_add_tail_rcu(struct list_head *new, struct list_head *head)
{
	__list_add_rcu(new, head->prev, head);
}

/* Unlink entry; readers on it still find the rest of the list through ->next. */
static inline void list_del_rcu(struct list_head *entry)
{
	__list_del_entry(entry);
	entry->prev = LIST_POISON2;
}

static inline void list_replace_rcu(struct list_head *old, struct list_head *new)
{
	new->next = old->next;
	new->prev = old->prev;
	rcu_assign_pointer(list_next_rcu(new->prev), new);
	new->next->prev = new;
	old->prev = LIST_POISON2;
}

#define list_entry_rcu(ptr, type, member)	container_of(READ_ONCE(ptr), type, member)

/* The first entry, or NULL for an empty list (one read of head->next). */
#define list_first_or_null_rcu(ptr, type, member)			\
	({								\
		struct list_head *__ptr = (ptr);			\
		struct list_head *__next = READ_ONCE(__ptr->next);	\
		likely(__ptr != __next) ? list_entry_rcu(__next, type, member) : NULL; \
	})

/* The entry after ptr, or NULL when ptr is the last. */
#define list_next_or_null_rcu(head, ptr, type, member)			\
	({								\
		struct list_head *__head = (head);			\
		struct list_head *__ptr = (ptr);			\
		struct list_head *__next = READ_ONCE(__ptr->next);	\
		likely(__next != __head) ? list_entry_rcu(__next, type, member) : NULL; \
	})

/* v5.10's optional lockdep condition argument is accepted and not checked. */
#define list_for_each_entry_rcu(pos, head, member, cond...)		\
	for (pos = list_entry_rcu((head)->next, typeof(*pos), member);	\
	     &pos->member != (head);					\
	     pos = list_entry_rcu(pos->member.next, typeof(*pos), member))

#define list_for_each_entry_continue_rcu(pos, head, member)		\
	for (pos = list_entry_rcu(pos->member.next, typeof(*pos), member); \
	     &pos->member != (head);					\
	     pos = list_entry_rcu(pos->member.next, typeof(*pos), member))

#define list_for_each_entry_from_rcu(pos, head, member)			\
	for (; &(pos)->member != (head);				\
	     pos = list_entry_rcu(pos->member.next, typeof(*(pos)), member))

#define hlist_first_rcu(head)	(*((struct hlist_node __rcu **)(&(head)->first)))
#define hlist_next_rcu(node)	(*((struct hlist_node __rcu **)(&(node)->next)))
#define hlist_pprev_rcu(node)	(*((struct hlist_node __rcu **)((node)->pprev)))

/* Unlink n; readers on it still reach the rest of the chain. */
static inline void hlist_del_rcu(struct hlist_node *n)
{
	__hlist_del(n);
	WRITE_ONCE(n->pprev, LIST_POISON2);
}

static inline void hlist_del_init_rcu(struct hlist_node *n)
{
	if (!hlist_unhashed(n)) {
		__hlist_del(n);
		WRITE_ONCE(n->pprev, NULL);
	}
}

static inline void hlist_add_head_rcu(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	n->next = first;
	WRITE_ONCE(n->pprev, &h->first);
	rcu_assign_pointer(hlist_first_rcu(h), n);
	if (first)
		WRITE_ONCE(first->pprev, &n->next);
}

#define hlist_entry_safe_rcu(ptr, type, member)				\
	({ typeof(ptr) ____ptr = READ_ONCE(ptr);			\
	   ____ptr ? hlist_entry(____ptr, type, member) : NULL; })

#define hlist_for_each_entry_rcu(pos, head, member, cond...)		\
	for (pos = hlist_entry_safe_rcu(hlist_first_rcu(head), typeof(*(pos)), member); \
	     pos;							\
	     pos = hlist_entry_safe_rcu(hlist_next_rcu(&(pos)->member), typeof(*(pos)), member))

#endif
