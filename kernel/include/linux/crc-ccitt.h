/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/crc-ccitt.h (v5.10), lib/crc-ccitt.c's two CRCs of the
 * polynomial x^16 + x^12 + x^5 + 1: crc_ccitt() least significant bit
 * first (table of 0x8408, CRC-16/KERMIT when seeded 0), crc_ccitt_false()
 * most significant bit first (table of 0x1021, CRC-16/CCITT-FALSE when
 * seeded 0xffff). Neither inverts its result.
 */
#ifndef _LINUX_CRC_CCITT_H
#define _LINUX_CRC_CCITT_H

#include <linux/types.h>

extern u16 const crc_ccitt_table[256];
extern u16 const crc_ccitt_false_table[256];

extern u16 crc_ccitt(u16 crc, const u8 *buffer, size_t len);
extern u16 crc_ccitt_false(u16 crc, const u8 *buffer, size_t len);

static inline u16 crc_ccitt_byte(u16 crc, const u8 c)
{
	return (crc >> 8) ^ crc_ccitt_table[(crc ^ c) & 0xff];
}

static inline u16 crc_ccitt_false_byte(u16 crc, const u8 c)
{
	return (crc << 8) ^ crc_ccitt_false_table[(crc >> 8) ^ c];
}

#endif
