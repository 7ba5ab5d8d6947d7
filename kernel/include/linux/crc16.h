/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/crc16.h (v5.10): CRC-16 with polynomial x^16 + x^15 + x^2 + 1
 * (0x8005), bits least significant first (so the table is of 0xa001),
 * as lib/crc16.c computes it; no initial value or final inversion of its own.
 */
#ifndef _LINUX_CRC16_H
#define _LINUX_CRC16_H

#include <linux/types.h>

extern u16 const crc16_table[256];

u16 crc16(u16 crc, const u8 *buffer, size_t len);

/* One byte more of a CRC-16: the low byte meets the data, the rest shifts down. */
static inline u16 crc16_byte(u16 crc, const u8 data)
{
	return (crc >> 8) ^ crc16_table[(crc ^ data) & 0xff];
}

#endif
