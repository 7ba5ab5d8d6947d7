/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/reciprocal_div.h (v5.10): division by a run-time constant
 * d as a multiply and two shifts (Granlund and Montgomery, "Division by
 * Invariant Integers using Multiplication", PLDI 1994, figure 4.1).
 * reciprocal_value(d) computes {m, sh1, sh2} once (lib/math/reciprocal_div.c);
 * reciprocal_divide(a, R) is then a / d for every u32 a, d >= 1.
 */
#ifndef _LINUX_RECIPROCAL_DIV_H
#define _LINUX_RECIPROCAL_DIV_H

#include <linux/types.h>

struct reciprocal_value {
	u32 m;
	u8 sh1, sh2;
};

struct reciprocal_value reciprocal_value(u32 d);

static inline u32 reciprocal_divide(u32 a, struct reciprocal_value R)
{
	u32 t = (u32)(((u64)a * R.m) >> 32);

	return (t + ((a - t) >> R.sh1)) >> R.sh2;
}

/*
 * The same paper's figure 6.2 with a precision of prec bits: the multiplier
 * m (is_wide_m when it needs 33 bits), the post-shift sh and exp =
 * ceil(log2(d)). d must be below 2^31 (exp 32 would overflow the u64s).
 */
struct reciprocal_value_adv {
	u32 m;
	u8 sh, exp;
	bool is_wide_m;
};

struct reciprocal_value_adv reciprocal_value_adv(u32 d, u8 prec);

#endif
