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
#include <kisim/testdata.h>

static u8 buf[4097];

u32 test_crc16_run(u32 size)
{
	const u8 *p = buf + 1;
	u32 h = FNV_BASIS, half = size / 2;

	if (size >= sizeof(buf))
		return 0;
	xorshift_bytes(buf + 1, size);
	h = fnv_mix(h, crc16(0, p, size));
	h = fnv_mix(h, crc16(0xffff, p, size));
	h = fnv_mix(h, crc16(crc16(0, p, half), p + half, size - half) == crc16(0, p, size));
	return h;
}
