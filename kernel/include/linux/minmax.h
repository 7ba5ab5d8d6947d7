/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/minmax.h (v5.10, split out of kernel.h in that release).
 * min() and max() evaluate each argument once and insist on one type: two
 * different types compare pointers to them, which the compiler reports
 * ("comparison of distinct pointer types"), as v5.10's __typecheck does;
 * min_t()/max_t() convert both to the type named first.
 */
#ifndef _LINUX_MINMAX_H
#define _LINUX_MINMAX_H

#include <linux/compiler.h>

/* Warns (once per use) when x and y are of different types; always 1. */
#define __typecheck(x, y)	(!!(sizeof((typeof(x) *)1 == (typeof(y) *)1)))

#define __minmax_once(x, y, op, ux, uy)					\
	({								\
		typeof(x) ux = (x);					\
		typeof(y) uy = (y);					\
		(void)__typecheck(ux, uy);				\
		ux op uy ? ux : uy;					\
	})
#define __careful_cmp(x, y, op)						\
	__minmax_once(x, y, op, __UNIQUE_ID(__x), __UNIQUE_ID(__y))

#define min(x, y)		__careful_cmp(x, y, <)
#define max(x, y)		__careful_cmp(x, y, >)
#define min3(x, y, z)		min((typeof(x))min(x, y), z)
#define max3(x, y, z)		max((typeof(x))max(x, y), z)
#define min_not_zero(x, y)						\
	({ typeof(x) __mnz_x = (x); typeof(y) __mnz_y = (y);		\
	   __mnz_x == 0 ? __mnz_y : (__mnz_y == 0 ? __mnz_x : min(__mnz_x, __mnz_y)); })
#define clamp(val, lo, hi)	min((typeof(val))max(val, lo), hi)

#define min_t(type, x, y)	__careful_cmp((type)(x), (type)(y), <)
#define max_t(type, x, y)	__careful_cmp((type)(x), (type)(y), >)
#define clamp_t(type, val, lo, hi)	min_t(type, max_t(type, val, lo), hi)
#define clamp_val(val, lo, hi)	clamp_t(typeof(val), val, lo, hi)

#define swap(a, b)							\
	do { typeof(a) __tmp = (a); (a) = (b); (b) = __tmp; } while (0)

#endif
