// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/math/gcd.c (gcd.c beside it, its own
 * translation unit, reached through <linux/gcd.h>): for size pairs made of
 * pseudo-random factors times a shared factor k, shifted left by i % 4 bits,
 * every seventh pair with b = 0, gcd(a, b); returns them mixed (FNV-1a).
 */
#include <linux/gcd.h>
#include <linux/module.h>
#include <kisim/testdata.h>

u32 test_gcd_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;

	for (i = 0; i < size; i++) {
		unsigned long a = xorshift32(&x) % 5000 + 1, b = xorshift32(&x) % 5000 + 1;
		unsigned long k = xorshift32(&x) % 64 + 1;

		a = (a * k) << (i % 4);
		b = i % 7 ? (b * k) << (i % 4) : 0;
		h = (h ^ (u32)gcd(a, b)) * 16777619u;
	}
	return h;
}
