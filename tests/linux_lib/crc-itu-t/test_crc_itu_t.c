// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/crc-itu-t.c (crc-itu-t.c beside it: module
 * crc_itu_t, as kbuild names it; reached through <linux/crc-itu-t.h>): over
 * size pseudo-random bytes at an odd address, crc_itu_t seeded 0
 * (CRC-16/XMODEM) and 0xffff. Returns them mixed (FNV-1a).
 */
#include <linux/crc-itu-t.h>
#include <linux/module.h>

static u8 buf[4097];

static u32 mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

u32 test_crc_itu_t_run(u32 size)
{
	const u8 *p = buf + 1;
	u32 i, x = 2463534242u, h = 2166136261u;

	if (size >= sizeof(buf))
		return 0;
	for (i = 0; i < size; i++) {		/* xorshift32 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i + 1] = x >> 24;
	}
	h = mix(h, crc_itu_t(0, p, size));
	h = mix(h, crc_itu_t(0xffff, p, size));
	return h;
}
