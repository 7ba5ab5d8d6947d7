/* SPDX-License-Identifier: GPL-2.0 */
/* include/linux/crc32.h (v5.10): lib/crc32.c, which a module brings. */
#ifndef _LINUX_CRC32_H
#define _LINUX_CRC32_H

#include <linux/types.h>

u32 __pure crc32_le(u32 crc, unsigned char const *p, size_t len);
u32 __pure crc32_be(u32 crc, unsigned char const *p, size_t len);
u32 __pure __crc32c_le(u32 crc, unsigned char const *p, size_t len);
u32 __attribute_const__ crc32_le_shift(u32 crc, size_t len);
u32 __attribute_const__ __crc32c_le_shift(u32 crc, size_t len);

/* crc32_le_combine: the CRC of A then B from crc(A), crc(B) and len(B). */
static inline u32 crc32_le_combine(u32 crc1, u32 crc2, size_t len2)
{
	return crc32_le_shift(crc1, len2) ^ crc2;
}

#define crc32(seed, data, length)  crc32_le(seed, (unsigned char const *)(data), length)

#endif
