/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inputs and checksums of kisim's test modules (tests/linux_lib/):
 * Marsaglia's xorshift32 ("Xorshift RNGs", J. Stat. Softw. 8(14), 2003,
 * shifts 13, 17, 5) from one seed, and the FNV-1a step (32-bit prime
 * 16777619) that folds each result into the checksum. tests/test_linux_lib.py
 * computes the same in Python (_xorshift, _fnv).
 */
#ifndef _KISIM_TESTDATA_H
#define _KISIM_TESTDATA_H

#include <linux/types.h>

#define XORSHIFT_SEED	2463534242u
#define FNV_BASIS	2166136261u

/* The next xorshift32 value of the state *x. */
static inline u32 xorshift32(u32 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static inline u32 fnv_mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

/* buf[i] = the top byte of the (i + 1)th value from XORSHIFT_SEED. */
static inline void xorshift_bytes(u8 *buf, u32 n)
{
	u32 i, x = XORSHIFT_SEED;

	for (i = 0; i < n; i++)
		buf[i] = xorshift32(&x) >> 24;
}

#endif
