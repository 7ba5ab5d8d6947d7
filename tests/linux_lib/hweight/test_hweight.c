// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/hweight.c (hweight.c beside it; the
 * __sw_hweight* declarations are <linux/bitops.h>'s): the population counts
 * __sw_hweight8/16/32 of size pseudo-random words and __sw_hweight64 of
 * pairs of them. Returns them mixed (FNV-1a).
 */
#include <linux/bitops.h>
#include <linux/module.h>

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

u32 test_hweight_run(u32 size)
{
	u32 i, x = 2463534242u, h = 2166136261u;

	for (i = 0; i < size; i++) {
		u32 w = next(&x);
		u64 wide = (u64)w << 32 | next(&x);

		h = mix(h, __sw_hweight8(w));
		h = mix(h, __sw_hweight16(w));
		h = mix(h, __sw_hweight32(w));
		h = mix(h, __sw_hweight64(wide));
	}
	return h;
}
