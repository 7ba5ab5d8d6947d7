/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reference counts (include/linux/refcount.h, v5.10): an atomic int that
 * saturates instead of wrapping. Taking a reference on 0 (a use after
 * free), or overflowing, warns once and pins the count at
 * REFCOUNT_SATURATED, where it stays (the object leaks rather than being
 * freed twice); so does dropping a reference below zero.
 * refcount_dec_and_test() is a release, and an acquire when it returns true.
 */
#ifndef _LINUX_REFCOUNT_H
#define _LINUX_REFCOUNT_H

#include <linux/bug.h>
#include <linux/limits.h>
#include <linux/spinlock.h>

typedef struct refcount_struct {
	int refs;
} refcount_t;

#define REFCOUNT_INIT(n)	{ .refs = (n), }
#define REFCOUNT_MAX		INT_MAX
#define REFCOUNT_SATURATED	(INT_MIN / 2)

static inline void refcount_set(refcount_t *r, int n)
{
	WRITE_ONCE(r->refs, n);
}

static inline unsigned int refcount_read(const refcount_t *r)
{
	return READ_ONCE(r->refs);
}

/* The count was old before an add: saturate on 0 (use after free) or overflow. */
static inline void __refcount_check_add(refcount_t *r, int old, int i)
{
	if (unlikely(!old)) {
		refcount_set(r, REFCOUNT_SATURATED);
		WARN_ONCE(1, "refcount_t: addition on 0; use-after-free.\n");
	} else if (unlikely(old < 0 || old + i < 0)) {
		refcount_set(r, REFCOUNT_SATURATED);
		WARN_ONCE(1, "refcount_t: saturated; leaking memory.\n");
	}
}

static inline void refcount_add(int i, refcount_t *r)
{
	__refcount_check_add(r, __atomic_fetch_add(&r->refs, i, __ATOMIC_RELAXED), i);
}

static inline void refcount_inc(refcount_t *r)
{
	refcount_add(1, r);
}

/* Take a reference unless the count is 0; true when taken. */
static inline __must_check bool refcount_inc_not_zero(refcount_t *r)
{
	int old = refcount_read(r);

	do {
		if (!old)
			return false;
	} while (!__atomic_compare_exchange_n(&r->refs, &old, old + 1, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	if (unlikely(old < 0 || old + 1 < 0)) {
		refcount_set(r, REFCOUNT_SATURATED);
		WARN_ONCE(1, "refcount_t: saturated; leaking memory.\n");
	}
	return true;
}

/* Drop i references; true when that was the last (the count is now 0). */
static inline __must_check bool refcount_sub_and_test(int i, refcount_t *r)
{
	int old = __atomic_fetch_sub(&r->refs, i, __ATOMIC_RELEASE);

	if (old == i) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		return true;
	}
	if (unlikely(old < 0 || old - i < 0)) {
		refcount_set(r, REFCOUNT_SATURATED);
		WARN_ONCE(1, "refcount_t: underflow; use-after-free.\n");
	}
	return false;
}

static inline __must_check bool refcount_dec_and_test(refcount_t *r)
{
	return refcount_sub_and_test(1, r);
}

#endif
