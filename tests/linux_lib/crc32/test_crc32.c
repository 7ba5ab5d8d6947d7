// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/crc32.c (crc32.c beside it, its own
 * translation unit, reached through <linux/crc32.h>): the CRC-32 (crc32_le,
 * as zlib's), CRC-32C (__crc32c_le) and big-endian CRC-32 (crc32_be) of
 * size pseudo-random bytes starting at an odd address (crc32_body's
 * alignment path), each seeded with ~0 and inverted, and crc32_le_combine
 * of the two halves. Returns them mixed (FNV-1a over the four words).
 */
#include <linux/crc32.h>
#include <linux/module.h>

static u8 buf[4097];

static u32 mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

u32 test_crc32_run(u32 size)
{
	const u8 *p = buf + 1;
	u32 i, x = 2463534242u, h = 2166136261u, half = size / 2, a, b;

	if (size >= sizeof(buf))
		return 0;
	for (i = 0; i < size; i++) {		/* xorshift32 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i + 1] = x >> 24;
	}
	h = mix(h, ~crc32_le(~0u, p, size));
	h = mix(h, ~__crc32c_le(~0u, p, size));
	h = mix(h, ~crc32_be(~0u, p, size));
	a = crc32_le(0, p, half);
	b = crc32_le(0, p + half, size - half);
	h = mix(h, crc32_le_combine(a, b, size - half) == crc32_le(0, p, size));
	return h;
}
