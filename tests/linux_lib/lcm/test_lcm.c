// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/math/lcm.c (lcm.c beside it; gcd() from the
 * gcd module, lib/math/gcd.c, as lcm.o takes it from gcd.o): lcm(a, b) and
 * lcm_not_zero(a, b) of size pairs of pseudo-random values below 60000 with
 * a shared factor, a = 0 in every fifth pair; returns them mixed (FNV-1a).
 */
#include <linux/lcm.h>
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

u32 test_lcm_run(u32 size)
{
	u32 i, x = 2463534242u, h = 2166136261u;

	for (i = 0; i < size; i++) {
		unsigned long k = next(&x) % 16 + 1;
		unsigned long a = (next(&x) % 3750) * k, b = (next(&x) % 3750 + 1) * k;

		if (i % 5 == 0)
			a = 0;
		h = mix(h, lcm(a, b));
		h = mix(h, lcm_not_zero(a, b));
	}
	return h;
}
