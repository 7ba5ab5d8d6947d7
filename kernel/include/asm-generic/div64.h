/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/asm-generic/div64.h (v5.10): do_div(n, base) divides the u64 lvalue
 * n in place by the u32 base and returns the u32 remainder.
 *
 * With 64-bit longs it is C's own / and %. With 32-bit longs a 64-by-32
 * division would be a call to the compiler's runtime (__udivdi3), which the
 * kernel does not link: a power-of-two constant base is a mask and a shift,
 * an n that fits 32 bits is a 32-bit division, anything else is
 * __div64_32() (kernel/div64.c, as lib/math/div64.c; arm and powerpc have
 * assembly versions of the same function). v5.10 also turns other constant
 * bases into a multiply by the reciprocal (__div64_const32); kisim leaves
 * that speed-up out: the quotient and remainder are the same.
 */
#ifndef _ASM_GENERIC_DIV64_H
#define _ASM_GENERIC_DIV64_H

#include <linux/types.h>
#include <linux/compiler.h>

#if BITS_PER_LONG == 64

#define do_div(n, base) ({					\
	u32 __base = (base);					\
	u32 __rem;						\
	__rem = ((u64)(n)) % __base;				\
	(n) = ((u64)(n)) / __base;				\
	__rem;							\
})

#else

/* *dividend /= divisor; returns the remainder (lib/math/div64.c). */
extern u32 __div64_32(u64 *dividend, u32 divisor);

#define do_div(n, base) ({					\
	u32 __base = (base);					\
	u32 __rem;						\
	(void)(((typeof((n)) *)0) == ((u64 *)0));		\
	if (__builtin_constant_p(__base) &&			\
	    (__base & (__base - 1)) == 0) {			\
		__rem = (n) & (__base - 1);			\
		(n) >>= __builtin_ctz(__base);			\
	} else if (likely(((n) >> 32) == 0)) {			\
		__rem = (u32)(n) % __base;			\
		(n) = (u32)(n) / __base;			\
	} else {						\
		__rem = __div64_32(&(n), __base);		\
	}							\
	__rem;							\
})

#endif

#endif
