/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Integer base-2 logarithms and powers of two (include/linux/log2.h,
 * v5.10). ilog2(n) is floor(log2(n)), a constant for a constant n; it is
 * undefined for 0. The rounding helpers are undefined for 0 and for
 * results that do not fit an unsigned long.
 */
#ifndef _LINUX_LOG2_H
#define _LINUX_LOG2_H

#include <linux/bitops.h>

static inline __attribute_const__ int __ilog2_u32(u32 n)
{
	return fls(n) - 1;
}

static inline __attribute_const__ int __ilog2_u64(u64 n)
{
	return fls64(n) - 1;
}

#define ilog2(n)							\
	(__builtin_constant_p(n) ?					\
	 ((n) < 2 ? 0 : 63 - __builtin_clzll(n)) :			\
	 (sizeof(n) <= 4) ? __ilog2_u32(n) : __ilog2_u64(n))

static inline __attribute_const__ bool is_power_of_2(unsigned long n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

static inline __attribute_const__ unsigned long __roundup_pow_of_two(unsigned long n)
{
	return 1UL << fls_long(n - 1);
}

static inline __attribute_const__ unsigned long __rounddown_pow_of_two(unsigned long n)
{
	return 1UL << (fls_long(n) - 1);
}

/* The power of two at or above n (1 for 1). */
#define roundup_pow_of_two(n)						\
	(__builtin_constant_p(n) ?					\
	 ((n) == 1 ? 1 : (1UL << (ilog2((n) - 1) + 1))) :		\
	 __roundup_pow_of_two(n))

/* The power of two at or below n. */
#define rounddown_pow_of_two(n)						\
	(__builtin_constant_p(n) ? (1UL << ilog2(n)) : __rounddown_pow_of_two(n))

/* ceil(log2(n)): the order of the smallest power of two holding n; 0 for 0 and 1. */
#define order_base_2(n)	((n) > 1 ? ilog2((n) - 1) + 1 : 0)

#endif
