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

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)

#define barrier()		__asm__ __volatile__("" : : : "memory")
#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

#define __stringify_1(x...)	#x
#define __stringify(x...)	__stringify_1(x)

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c)		_Static_assert(!(c), #c)
#define offsetof(t, m)		__builtin_offsetof(t, m)
#define container_of(p, t, m)	((t *)((char *)(p) - offsetof(t, m)))

#define _RET_IP_		((unsigned long)__builtin_return_address(0))

#endif
