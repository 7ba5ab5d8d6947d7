/* SPDX-License-Identifier: GPL-2.0 */
/* Byte swapping (include/uapi/linux/swab.h, v5.10), on the compiler's builtins. */
#ifndef _LINUX_SWAB_H
#define _LINUX_SWAB_H

#include <linux/types.h>

#define ___constant_swab16(x)	((u16)__builtin_bswap16((u16)(x)))
#define ___constant_swab32(x)	((u32)__builtin_bswap32((u32)(x)))
#define ___constant_swab64(x)	((u64)__builtin_bswap64((u64)(x)))
#define __swab16(x)		___constant_swab16(x)
#define __swab32(x)		___constant_swab32(x)
#define __swab64(x)		___constant_swab64(x)
#define swab16			__swab16
#define swab32			__swab32
#define swab64			__swab64

static inline u16 __swab16p(const u16 *p)	{ return __swab16(*p); }
static inline u32 __swab32p(const u32 *p)	{ return __swab32(*p); }
static inline u64 __swab64p(const u64 *p)	{ return __swab64(*p); }
static inline void __swab16s(u16 *p)		{ *p = __swab16p(p); }
static inline void __swab32s(u32 *p)		{ *p = __swab32p(p); }
static inline void __swab64s(u64 *p)		{ *p = __swab64p(p); }

#endif
