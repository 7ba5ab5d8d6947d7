// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/crc-ccitt.c (crc-ccitt.c beside it: module
 * crc_ccitt, as kbuild names it; reached through <linux/crc-ccitt.h>): over
 * size pseudo-random bytes at an odd address, crc_ccitt seeded 0
 * (CRC-16/KERMIT) and 0xffff, crc_ccitt_false seeded 0xffff
 * (CRC-16/CCITT-FALSE) and 0. Returns them mixed (FNV-1a).
 */
#include <linux/crc-ccitt.h>
#include <linux/module.h>
#include <kisim/testdata.h>

static u8 buf[4097];

u32 test_crc_ccitt_run(u32 size)
{
	const u8 *p = buf + 1;
	u32 h = FNV_BASIS;

	if (size >= sizeof(buf))
		return 0;
	xorshift_bytes(buf + 1, size);
	h = fnv_mix(h, crc_ccitt(0, p, size));
	h = fnv_mix(h, crc_ccitt(0xffff, p, size));
	h = fnv_mix(h, crc_ccitt_false(0xffff, p, size));
	h = fnv_mix(h, crc_ccitt_false(0, p, size));
	return h;
}
