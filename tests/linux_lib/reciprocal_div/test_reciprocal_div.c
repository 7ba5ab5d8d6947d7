// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/math/reciprocal_div.c (reciprocal_div.c
 * beside it, reached through <linux/reciprocal_div.h>): for size
 * pseudo-random divisors d (a word shifted right by 0..31 bits, 0 made 1)
 * and dividends a, reciprocal_divide(a, reciprocal_value(d)), the value's
 * m, sh1 and sh2, reciprocal_value_adv(d, 32)'s fields for d < 2^31, and
 * do_div() of a 64-bit n by d (its quotient and remainder: __div64_32 on
 * 32-bit arches). Returns them mixed (FNV-1a).
 */
#include <linux/reciprocal_div.h>
#include <linux/module.h>
#include <asm/div64.h>

static u32 next(u32 *x)			/* xorshift32 */
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static u32 mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

u32 test_reciprocal_div_run(u32 size)
{
	u32 i, x = 2463534242u, h = 2166136261u;

	for (i = 0; i < size; i++) {
		u32 d = next(&x) >> (next(&x) % 32), a = next(&x), rem;
		u64 n = (u64)next(&x) << 32 | next(&x);
		struct reciprocal_value R;

		if (!d)
			d = 1;
		R = reciprocal_value(d);
		h = mix(h, reciprocal_divide(a, R));
		h = mix(h, R.m);
		h = mix(h, R.sh1 | R.sh2 << 8);
		if (d < 1u << 31) {
			struct reciprocal_value_adv adv = reciprocal_value_adv(d, 32);

			h = mix(h, adv.m);
			h = mix(h, adv.sh | adv.exp << 8 | adv.is_wide_m << 16);
		}
		rem = do_div(n, d);
		h = mix(h, rem);
		h = mix(h, (u32)n);
		h = mix(h, (u32)(n >> 32));
	}
	return h;
}
