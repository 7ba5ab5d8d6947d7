// SPDX-License-Identifier: GPL-2.0
/*
 * Deterministic random numbers (<linux/random.h>): xorshift32 from a
 * fixed seed. get_random_u32_below() and _above() reduce the way
 * include/linux/random.h does, by the top bits of a 32x32->64 product,
 * but without its redraw of the (at most ceil in 2^32) biased draws,
 * which would need a 32-bit division (a libgcc call on ARM).
 */
#include <linux/random.h>

static u32 random_state = 0x2545f491u;

u32 get_random_u32(void)
{
	u32 x = random_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	random_state = x;
	return x;
}

u32 get_random_u32_below(u32 ceil)
{
	return ((u64)ceil * get_random_u32()) >> 32;
}

u32 get_random_u32_above(u32 floor)
{
	return floor + 1 + get_random_u32_below(0u - (floor + 1));
}
