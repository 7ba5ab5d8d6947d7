// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/crc-itu-t.c (crc-itu-t.c beside it: module
 * crc_itu_t, as kbuild names it; reached through <linux/crc-itu-t.h>): over
 * size pseudo-random bytes at an odd address, crc_itu_t seeded 0
 * (CRC-16/XMODEM) and 0xffff. Returns them mixed (FNV-1a).
 */
#include <linux/crc-itu-t.h>
#include <linux/module.h>
#include <kisim/testdata.h>

static u8 buf[4097];

u32 test_crc_itu_t_run(u32 size)
{
	const u8 *p = buf + 1;
	u32 h = FNV_BASIS;

	if (size >= sizeof(buf))
		return 0;
	xorshift_bytes(buf + 1, size);
	h = fnv_mix(h, crc_itu_t(0, p, size));
	h = fnv_mix(h, crc_itu_t(0xffff, p, size));
	return h;
}
