/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kref (include/linux/kref.h, v5.10): a reference count embedded in an
 * object, released through a callback when the last reference goes.
 */
#ifndef _LINUX_KREF_H
#define _LINUX_KREF_H

#include <linux/refcount.h>

struct kref {
	refcount_t refcount;
};

#define KREF_INIT(n)	{ .refcount = REFCOUNT_INIT(n), }

/* The object's first reference. */
static inline void kref_init(struct kref *kref)
{
	refcount_set(&kref->refcount, 1);
}

static inline unsigned int kref_read(const struct kref *kref)
{
	return refcount_read(&kref->refcount);
}

/* Take one more reference; the caller holds one already. */
static inline void kref_get(struct kref *kref)
{
	refcount_inc(&kref->refcount);
}

/*
 * Drop a reference; on the last, call release(kref) and return 1 (the
 * object is gone). Otherwise 0: the object may still go at any time, from
 * another reference's kref_put.
 */
static inline int kref_put(struct kref *kref, void (*release)(struct kref *kref))
{
	if (refcount_dec_and_test(&kref->refcount)) {
		release(kref);
		return 1;
	}
	return 0;
}

/* Take a reference unless the last one is already gone; nonzero when taken. */
static inline int __must_check kref_get_unless_zero(struct kref *kref)
{
	return refcount_inc_not_zero(&kref->refcount);
}

#endif
