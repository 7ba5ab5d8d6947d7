/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 64-bit divisions by a 32-bit divisor (include/linux/math64.h, v5.10), on
 * do_div(): C's own with 64-bit longs, __div64_32() with 32-bit ones (no
 * libgcc). The signed and 64-by-64 ones (div_s64, div64_u64...) are not offered.
 */
#ifndef _LINUX_MATH64_H
#define _LINUX_MATH64_H

#include <linux/types.h>
#include <asm/div64.h>

/* dividend / divisor, the remainder in *remainder. */
static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = do_div(dividend, divisor);
	return dividend;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	u32 remainder;

	return div_u64_rem(dividend, divisor, &remainder);
}

#endif
