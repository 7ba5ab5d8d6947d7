/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/bitops.h (v5.10) and the generic bit searches of
 * include/asm-generic/bitops/ (fls, __ffs, ...), on the compiler's
 * builtins. The bitmap operations are the non-atomic ones
 * (asm-generic/bitops/non-atomic.h): kisim has no atomic bitops.
 */
#ifndef _LINUX_BITOPS_H
#define _LINUX_BITOPS_H

#include <linux/types.h>
#include <linux/bits.h>

#define BITS_TO_LONGS(nr)	(((nr) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define BITS_TO_U32(nr)		(((nr) + 31) / 32)
#define BITS_TO_BYTES(nr)	(((nr) + BITS_PER_BYTE - 1) / BITS_PER_BYTE)

/* ffs(x): 1 + the index of the lowest set bit, 0 for 0 (as libc ffs). */
static __always_inline int ffs(int x)
{
	return __builtin_ffs(x);
}

/* __ffs(word): the index of the lowest set bit; undefined for 0. */
static __always_inline unsigned long __ffs(unsigned long word)
{
	return __builtin_ctzl(word);
}

/* ffz(word): the index of the lowest clear bit; undefined for ~0. */
#define ffz(x)	__ffs(~(x))

/* fls(x): 1 + the index of the highest set bit, 0 for 0. */
static __always_inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* __fls(word): the index of the highest set bit; undefined for 0. */
static __always_inline unsigned long __fls(unsigned long word)
{
	return BITS_PER_LONG - 1 - __builtin_clzl(word);
}

static __always_inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* fls of an unsigned long, of whichever width. */
static __always_inline unsigned int fls_long(unsigned long l)
{
	return sizeof(l) == 4 ? fls(l) : fls64(l);
}

static inline unsigned long __ffs64(u64 word)
{
	return __builtin_ctzll(word);
}

/* lib/hweight.c's software population counts, brought by a module. */
extern unsigned int __sw_hweight8(unsigned int w);
extern unsigned int __sw_hweight16(unsigned int w);
extern unsigned int __sw_hweight32(unsigned int w);
extern unsigned long __sw_hweight64(__u64 w);

static inline unsigned int hweight8(unsigned int w)	{ return __builtin_popcount(w & 0xff); }
static inline unsigned int hweight16(unsigned int w)	{ return __builtin_popcount(w & 0xffff); }
static inline unsigned int hweight32(unsigned int w)	{ return __builtin_popcount(w); }
static inline unsigned long hweight64(u64 w)		{ return __builtin_popcountll(w); }
static inline unsigned long hweight_long(unsigned long w) { return __builtin_popcountl(w); }

static inline u64 rol64(u64 word, unsigned int shift)
{
	return (word << (shift & 63)) | (word >> ((-shift) & 63));
}

static inline u64 ror64(u64 word, unsigned int shift)
{
	return (word >> (shift & 63)) | (word << ((-shift) & 63));
}

static inline u32 rol32(u32 word, unsigned int shift)
{
	return (word << (shift & 31)) | (word >> ((-shift) & 31));
}

static inline u32 ror32(u32 word, unsigned int shift)
{
	return (word >> (shift & 31)) | (word << ((-shift) & 31));
}

static inline u16 rol16(u16 word, unsigned int shift)
{
	return (word << (shift & 15)) | (word >> ((-shift) & 15));
}

static inline u16 ror16(u16 word, unsigned int shift)
{
	return (word >> (shift & 15)) | (word << ((-shift) & 15));
}

static inline s32 sign_extend32(u32 value, int index)
{
	u8 shift = 31 - index;

	return (s32)(value << shift) >> shift;
}

static inline s64 sign_extend64(u64 value, int index)
{
	u8 shift = 63 - index;

	return (s64)(value << shift) >> shift;
}

static inline int get_count_order(unsigned int count)
{
	if (count == 0)
		return -1;
	return fls(--count);
}

static inline void __set_bit(unsigned int nr, volatile unsigned long *addr)
{
	addr[BIT_WORD(nr)] |= BIT_MASK(nr);
}

static inline void __clear_bit(unsigned int nr, volatile unsigned long *addr)
{
	addr[BIT_WORD(nr)] &= ~BIT_MASK(nr);
}

static inline void __change_bit(unsigned int nr, volatile unsigned long *addr)
{
	addr[BIT_WORD(nr)] ^= BIT_MASK(nr);
}

static inline bool test_bit(unsigned int nr, const volatile unsigned long *addr)
{
	return 1UL & (addr[BIT_WORD(nr)] >> (nr & (BITS_PER_LONG - 1)));
}

static inline bool __test_and_set_bit(unsigned int nr, volatile unsigned long *addr)
{
	bool old = test_bit(nr, addr);

	__set_bit(nr, addr);
	return old;
}

/*
 * Bit searches (include/asm-generic/bitops/find.h, lib/find_bit.c, v5.10):
 * the index of the first bit at or after offset that is set (clear), below
 * size; size itself when there is none, or when offset >= size.
 */
unsigned long find_next_bit(const unsigned long *addr, unsigned long size,
			    unsigned long offset);
unsigned long find_next_zero_bit(const unsigned long *addr, unsigned long size,
				 unsigned long offset);
/* The highest set bit below size; size when there is none. */
unsigned long find_last_bit(const unsigned long *addr, unsigned long size);

#define find_first_bit(addr, size)	find_next_bit((addr), (size), 0)
#define find_first_zero_bit(addr, size)	find_next_zero_bit((addr), (size), 0)

#define for_each_set_bit(bit, addr, size)				\
	for ((bit) = find_first_bit((addr), (size));			\
	     (bit) < (size);						\
	     (bit) = find_next_bit((addr), (size), (bit) + 1))

#define for_each_clear_bit(bit, addr, size)				\
	for ((bit) = find_first_zero_bit((addr), (size));		\
	     (bit) < (size);						\
	     (bit) = find_next_zero_bit((addr), (size), (bit) + 1))

static inline bool __test_and_clear_bit(unsigned int nr, volatile unsigned long *addr)
{
	bool old = test_bit(nr, addr);

	__clear_bit(nr, addr);
	return old;
}

#endif
