// SPDX-License-Identifier: GPL-2.0
/*
 * The bit searches of lib/find_bit.c (v5.10), declared in linux/bitops.h:
 * a word at a time, the bits before offset masked off the first word and
 * the answer clamped to size, so bits past size in the last word never count.
 */
#include <linux/bitops.h>
#include <linux/export.h>
#include <linux/minmax.h>

/*
 * The first bit at or after start, below nbits, set in addr, or clear when
 * invert is ~0UL; nbits when there is none.
 */
static unsigned long find_next(const unsigned long *addr, unsigned long nbits,
			       unsigned long start, unsigned long invert)
{
	unsigned long word;

	if (start >= nbits)
		return nbits;
	word = addr[BIT_WORD(start)] ^ invert;
	word &= ~0UL << (start % BITS_PER_LONG);
	start -= start % BITS_PER_LONG;
	while (!word) {
		start += BITS_PER_LONG;
		if (start >= nbits)
			return nbits;
		word = addr[BIT_WORD(start)] ^ invert;
	}
	return min(start + __ffs(word), nbits);
}

unsigned long find_next_bit(const unsigned long *addr, unsigned long size,
			    unsigned long offset)
{
	return find_next(addr, size, offset, 0UL);
}
EXPORT_SYMBOL(find_next_bit);

unsigned long find_next_zero_bit(const unsigned long *addr, unsigned long size,
				 unsigned long offset)
{
	return find_next(addr, size, offset, ~0UL);
}
EXPORT_SYMBOL(find_next_zero_bit);

unsigned long find_last_bit(const unsigned long *addr, unsigned long size)
{
	unsigned long idx, word;

	if (!size)
		return size;
	idx = (size - 1) / BITS_PER_LONG;
	/* the bits of the last word below size */
	word = addr[idx] & (~0UL >> (-size & (BITS_PER_LONG - 1)));
	for (;;) {
		if (word)
			return idx * BITS_PER_LONG + __fls(word);
		if (!idx--)
			return size;
		word = addr[idx];
	}
}
EXPORT_SYMBOL(find_last_bit);
