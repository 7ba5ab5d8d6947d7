/* SPDX-License-Identifier: GPL-2.0 */
/* Compiler attributes, as include/linux/compiler*.h names them. */
#ifndef _LINUX_COMPILER_H
#define _LINUX_COMPILER_H

#define __used			__attribute__((__used__))
#define __unused		__attribute__((__unused__))
#define __section(s)		__attribute__((__section__(s)))
#define __aligned(x)		__attribute__((__aligned__(x)))
#define __packed		__attribute__((__packed__))
#define __noreturn		__attribute__((__noreturn__))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))
#define noinline		__attribute__((__noinline__))
#define __always_inline		inline __attribute__((__always_inline__))
#define asmlinkage
#define __pure			__attribute__((__pure__))
#define __attribute_const__	__attribute__((__const__))
#define __maybe_unused		__attribute__((__unused__))
#define __always_unused		__attribute__((__unused__))
#define __must_check		__attribute__((__warn_unused_result__))
#define __visible		/* externally_visible: a GCC attribute clang lacks */
#define __weak			__attribute__((__weak__))
#define __alias(symbol)		__attribute__((__alias__(#symbol)))
#define __cold			__attribute__((__cold__))
#define __read_mostly
#define noinline_for_stack	noinline
#define fallthrough		__attribute__((__fallthrough__))

/* Sparse annotations (include/linux/compiler_types.h): nothing to the compiler. */
#define __force
#define __bitwise
#define __user
#define __kernel
#define __iomem
#define __rcu

/* include/linux/cache.h; asm/cache.h: 64-byte lines on every kisim arch. */
#define L1_CACHE_SHIFT		6
#define L1_CACHE_BYTES		(1 << L1_CACHE_SHIFT)
#define SMP_CACHE_BYTES		L1_CACHE_BYTES
#define ____cacheline_aligned	__attribute__((__aligned__(SMP_CACHE_BYTES)))
#define __cacheline_aligned	____cacheline_aligned
#define ____cacheline_aligned_in_smp	____cacheline_aligned

#define __same_type(a, b)	__builtin_types_compatible_p(typeof(a), typeof(b))

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)

#define barrier()		__asm__ __volatile__("" : : : "memory")
#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

/* A word that may run past the end of a string (include/linux/compiler.h, v5.10). */
static inline unsigned long read_word_at_a_time(const void *addr)
{
	return *(unsigned long *)addr;
}

/* A name no other use of the macro can clash with (include/linux/compiler_types.h). */
#define ___PASTE(a, b)		a##b
#define __PASTE(a, b)		___PASTE(a, b)
#define __UNIQUE_ID(prefix)	__PASTE(__PASTE(__UNIQUE_ID_, prefix), __COUNTER__)

#define __stringify_1(x...)	#x
#define __stringify(x...)	__stringify_1(x)

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c)		_Static_assert(!(c), #c)
#define offsetof(t, m)		__builtin_offsetof(t, m)
#define container_of(p, t, m)	((t *)((char *)(p) - offsetof(t, m)))

#define _RET_IP_		((unsigned long)__builtin_return_address(0))

#endif
