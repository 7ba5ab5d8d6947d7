/* SPDX-License-Identifier: GPL-2.0 */
/* Fixed-width types without a libc (-nostdinc): the compiler's own macros. */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H

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
typedef u32			uint32_t;
typedef u64			uint64_t;
typedef unsigned int		gfp_t;
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

#include <linux/compiler.h>
#include <generated/autoconf.h>

#endif
