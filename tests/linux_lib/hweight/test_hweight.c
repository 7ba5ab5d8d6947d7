// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/hweight.c (hweight.c beside it; the
 * __sw_hweight* declarations are <linux/bitops.h>'s): the population counts
 * __sw_hweight8/16/32 of size pseudo-random words and __sw_hweight64 of
 * pairs of them. Returns them mixed (FNV-1a).
 */
#include <linux/bitops.h>
#include <linux/module.h>
#include <kisim/testdata.h>

u32 test_hweight_run(u32 size)
{
	u32 i, x = XORSHIFT_SEED, h = FNV_BASIS;

	for (i = 0; i < size; i++) {
		u32 w = xorshift32(&x);
		u64 wide = (u64)w << 32 | xorshift32(&x);

		h = fnv_mix(h, __sw_hweight8(w));
		h = fnv_mix(h, __sw_hweight16(w));
		h = fnv_mix(h, __sw_hweight32(w));
		h = fnv_mix(h, __sw_hweight64(wide));
	}
	return h;
}
