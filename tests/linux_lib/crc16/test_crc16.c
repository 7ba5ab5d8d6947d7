// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/crc16.c (crc16.c beside it, reached through
 * <linux/crc16.h>): the CRC-16 of size pseudo-random bytes starting at an
 * odd address, seeded 0 (CRC-16/ARC) and 0xffff (CRC-16/MODBUS), and
 * whether the CRC of the second half seeded with that of the first is the
 * whole's. Returns them mixed (FNV-1a).
 */
#include <linux/crc16.h>
#include <linux/module.h>

static u8 buf[4097];

static u32 mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

u32 test_crc16_run(u32 size)
{
	const u8 *p = buf + 1;
	u32 i, x = 2463534242u, h = 2166136261u, half = size / 2;

	if (size >= sizeof(buf))
		return 0;
	for (i = 0; i < size; i++) {		/* xorshift32 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i + 1] = x >> 24;
	}
	h = mix(h, crc16(0, p, size));
	h = mix(h, crc16(0xffff, p, size));
	h = mix(h, crc16(crc16(0, p, half), p + half, size - half) == crc16(0, p, size));
	return h;
}
