/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/crc-itu-t.h (v5.10): the CRC of ITU-T V.41, polynomial
 * x^16 + x^12 + x^5 + 1 (0x1021), most significant bit first, as
 * lib/crc-itu-t.c computes it (CRC-16/XMODEM when seeded 0).
 */
#ifndef _LINUX_CRC_ITU_T_H
#define _LINUX_CRC_ITU_T_H

#include <linux/types.h>

extern u16 const crc_itu_t_table[256];

extern u16 crc_itu_t(u16 crc, const u8 *buffer, size_t len);

static inline u16 crc_itu_t_byte(u16 crc, const u8 data)
{
	return (crc << 8) ^ crc_itu_t_table[((crc >> 8) ^ data) & 0xff];
}

#endif
