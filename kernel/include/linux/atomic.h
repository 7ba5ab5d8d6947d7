/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cmpxchg() and xchg() (include/linux/atomic.h and the arches'
 * asm/cmpxchg.h, v5.10): on a naturally aligned word, fully ordered
 * (a full barrier before and after, as v5.10's unsuffixed forms are).
 * cmpxchg returns the value found: the swap took iff it equals old.
 * Over the compiler's __atomic builtins (see <linux/spinlock.h>).
 */
#ifndef _LINUX_ATOMIC_H
#define _LINUX_ATOMIC_H

#include <linux/compiler.h>

#define cmpxchg(ptr, old, new)						\
	({								\
		typeof(*(ptr)) __old = (old);				\
		__atomic_compare_exchange_n((ptr), &__old, (new), false,	\
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
		__old;							\
	})

#define xchg(ptr, v)	__atomic_exchange_n((ptr), (v), __ATOMIC_SEQ_CST)

#endif
