/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding a zero byte in a word (include/asm-generic/word-at-a-time.h,
 * v5.10): the big-endian and the little-endian variants, chosen by the
 * byte order asm/byteorder.h declares. Used as the kernel's string code does:
 *
 *	if (has_zero(val, &data, &constants)) {
 *		data = prep_zero_mask(val, data, &constants);
 *		data = create_zero_mask(data);
 *		return find_zero(data);		(the zero byte's index in memory order)
 *	}
 */
#ifndef _ASM_GENERIC_WORD_AT_A_TIME_H
#define _ASM_GENERIC_WORD_AT_A_TIME_H

#include <linux/kernel.h>
#include <asm/byteorder.h>

#ifdef __BIG_ENDIAN

struct word_at_a_time {
	const unsigned long high_bits, low_bits;
};

#define WORD_AT_A_TIME_CONSTANTS { REPEAT_BYTE(0xfe) + 1, REPEAT_BYTE(0x7f) }

/* Bit set in the positions where the byte is zero. */
static inline unsigned long prep_zero_mask(unsigned long val, unsigned long rhs,
					   const struct word_at_a_time *c)
{
	unsigned long mask = (val & c->low_bits) + c->low_bits;

	return ~(mask | rhs);
}

#define create_zero_mask(mask) (mask)

static inline long find_zero(unsigned long mask)
{
	long byte = 0;
#ifdef CONFIG_64BIT
	if (mask >> 32)
		mask >>= 32;
	else
		byte = 4;
#endif
	if (mask >> 16)
		mask >>= 16;
	else
		byte += 2;
	return (mask >> 8) ? byte : byte + 1;
}

static inline bool has_zero(unsigned long val, unsigned long *data,
			    const struct word_at_a_time *c)
{
	unsigned long rhs = val | c->low_bits;

	*data = rhs;
	return (val + c->high_bits) & ~rhs;
}

#define zero_bytemask(mask) (~1ul << __fls(mask))

#else

struct word_at_a_time {
	const unsigned long one_bits, high_bits;
};

#define WORD_AT_A_TIME_CONSTANTS { REPEAT_BYTE(0x01), REPEAT_BYTE(0x80) }

static inline unsigned long has_zero(unsigned long a, unsigned long *bits,
				     const struct word_at_a_time *c)
{
	unsigned long mask = ((a - c->one_bits) & ~a) & c->high_bits;

	*bits = mask;
	return mask;
}

#define prep_zero_mask(a, bits, c) (bits)

/* The bytes before the first zero byte, as 0xff bytes (bits >> 7). */
static inline unsigned long create_zero_mask(unsigned long bits)
{
	bits = (bits - 1) & ~bits;
	return bits >> 7;
}

static inline unsigned long find_zero(unsigned long mask)
{
	return fls64(mask) >> 3;
}

#define zero_bytemask(mask) (mask)

#endif

#endif
