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
#include <kisim/testdata.h>
#include <asm/div64.h>

u32 test_reciprocal_div_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;

	for (i = 0; i < size; i++) {
		u32 d = xorshift32(&x), a, rem;
		struct reciprocal_value R;
		u64 n;

		d >>= xorshift32(&x) % 32;
		a = xorshift32(&x);
		n = (u64)xorshift32(&x) << 32;
		n |= xorshift32(&x);

		if (!d)
			d = 1;
		R = reciprocal_value(d);
		h = fnv_mix(h, reciprocal_divide(a, R));
		h = fnv_mix(h, R.m);
		h = fnv_mix(h, R.sh1 | R.sh2 << 8);
		if (d < 1u << 31) {
			struct reciprocal_value_adv adv = reciprocal_value_adv(d, 32);

			h = fnv_mix(h, adv.m);
			h = fnv_mix(h, adv.sh | adv.exp << 8 | adv.is_wide_m << 16);
		}
		rem = do_div(n, d);
		h = fnv_mix(h, rem);
		h = fnv_mix(h, (u32)n);
		h = fnv_mix(h, (u32)(n >> 32));
	}
	return h;
}
