// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/math/lcm.c (lcm.c beside it; gcd() from the
 * gcd module, lib/math/gcd.c, as lcm.o takes it from gcd.o): lcm(a, b) and
 * lcm_not_zero(a, b) of size pairs of pseudo-random values below 60000 with
 * a shared factor, a = 0 in every fifth pair; returns them mixed (FNV-1a).
 */
#include <linux/lcm.h>
#include <linux/module.h>
#include <kisim/testdata.h>

u32 test_lcm_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;

	for (i = 0; i < size; i++) {
		unsigned long k = xorshift32(&x) % 16 + 1;
		unsigned long a = (xorshift32(&x) % 3750) * k, b = (xorshift32(&x) % 3750 + 1) * k;

		if (i % 5 == 0)
			a = 0;
		h = fnv_mix(h, lcm(a, b));
		h = fnv_mix(h, lcm_not_zero(a, b));
	}
	return h;
}
