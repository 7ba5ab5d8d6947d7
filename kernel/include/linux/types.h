/* SPDX-License-Identifier: GPL-2.0 */
/* Fixed-width types without a libc (-nostdinc): the compiler's own macros;
 * the rest of include/linux/types.h (v5.10). */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H

#include <linux/compiler.h>
#include <asm/types.h>

typedef __UINT8_TYPE__		u8;
typedef __UINT16_TYPE__		u16;
typedef __UINT32_TYPE__		u32;
typedef __UINT64_TYPE__		u64;
typedef __INT8_TYPE__		s8;
typedef __INT16_TYPE__		s16;
typedef __INT32_TYPE__		s32;
typedef __INT64_TYPE__		s64;
typedef __SIZE_TYPE__		size_t;
typedef __PTRDIFF_TYPE__	ptrdiff_t;
typedef __UINTPTR_TYPE__	uintptr_t;
typedef u8			uint8_t;
typedef u16			uint16_t;
typedef u32			uint32_t;
typedef u64			uint64_t;
typedef s8			int8_t;
typedef s16			int16_t;
typedef s32			int32_t;
typedef s64			int64_t;
typedef u8			u_int8_t;
typedef u16			u_int16_t;
typedef u32			u_int32_t;
typedef u64			u_int64_t;
typedef __PTRDIFF_TYPE__	ssize_t;	/* __kernel_ssize_t: int or long, as size_t */
typedef __INTPTR_TYPE__		intptr_t;
typedef unsigned char		u_char;
typedef unsigned short		u_short;
typedef unsigned int		u_int;
typedef unsigned long		u_long;
typedef unsigned char		unchar;
typedef unsigned short		ushort;
typedef unsigned int		uint;
typedef unsigned long		ulong;

/* Byte-order annotated types (include/uapi/linux/types.h). */
typedef u16 __bitwise		__le16;
typedef u16 __bitwise		__be16;
typedef u32 __bitwise		__le32;
typedef u32 __bitwise		__be32;
typedef u64 __bitwise		__le64;
typedef u64 __bitwise		__be64;
typedef u16 __bitwise		__sum16;
typedef u32 __bitwise		__wsum;
typedef unsigned int		gfp_t;
typedef unsigned long		phys_addr_t;	/* no LPAE, no 64-bit DMA on the 32-bit arches */
typedef unsigned long		dma_addr_t;
typedef _Bool			bool;

#define true	1
#define false	0
#define NULL	((void *)0)

typedef __builtin_va_list	va_list;
#define va_start(ap, last)	__builtin_va_start(ap, last)
#define va_copy(dst, src)	__builtin_va_copy(dst, src)
#define va_arg(ap, type)	__builtin_va_arg(ap, type)
#define va_end(ap)		__builtin_va_end(ap)

#define BITS_PER_LONG		(__SIZEOF_LONG__ * 8)

/* A bitmap of bits bits (BITS_TO_LONGS is linux/bitops.h's). */
#define DECLARE_BITMAP(name, bits)	unsigned long name[BITS_TO_LONGS(bits)]

#include <generated/autoconf.h>

/* include/linux/types.h (v5.10): the kernel's list heads and callback types. */
struct list_head {
	struct list_head *next, *prev;
};

struct hlist_head {
	struct hlist_node *first;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct callback_head {
	struct callback_head *next;
	void (*func)(struct callback_head *head);
} __attribute__((aligned(sizeof(void *))));
#define rcu_head callback_head

typedef void (*rcu_callback_t)(struct rcu_head *head);
typedef void (*swap_func_t)(void *a, void *b, int size);
typedef int (*cmp_r_func_t)(const void *a, const void *b, const void *priv);
typedef int (*cmp_func_t)(const void *a, const void *b);

#endif
