/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bitmaps (include/linux/bitmap.h, v5.10): arrays of unsigned long, bit n
 * in word n / BITS_PER_LONG at position n % BITS_PER_LONG, whatever the
 * byte order. The bits of the last word above nbits are "don't care": every
 * operation that answers a question (empty, weight, equal...) masks them
 * off, and the ones that write may leave them set. The out-of-line
 * __bitmap_*() and the parsers and printers are lib/bitmap.c's, which a
 * module brings (tests/linux_lib/bitmap); these inline front ends pick the
 * one-word case when nbits is a compile-time constant, as v5.10's do.
 */
#ifndef _LINUX_BITMAP_H
#define _LINUX_BITMAP_H

#include <linux/types.h>
#include <linux/bitops.h>
#include <linux/gfp.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <asm/byteorder.h>		/* __BIG_ENDIAN: bitmap_copy_le */

struct device;

/* The bits of a first word from bit start up, and of a last word below nbits. */
#define BITMAP_FIRST_WORD_MASK(start)	(~0UL << ((start) & (BITS_PER_LONG - 1)))
#define BITMAP_LAST_WORD_MASK(nbits)	(~0UL >> (-(nbits) & (BITS_PER_LONG - 1)))

/* A constant size of one word or less: the inline one-word paths. */
#define small_const_nbits(nbits) \
	(__builtin_constant_p(nbits) && (nbits) <= BITS_PER_LONG && (nbits) > 0)

/* lib/bitmap.c */
int __bitmap_equal(const unsigned long *bitmap1, const unsigned long *bitmap2,
		   unsigned int nbits);
bool __bitmap_or_equal(const unsigned long *src1, const unsigned long *src2,
		       const unsigned long *src3, unsigned int nbits);
void __bitmap_complement(unsigned long *dst, const unsigned long *src, unsigned int nbits);
void __bitmap_shift_right(unsigned long *dst, const unsigned long *src,
			  unsigned int shift, unsigned int nbits);
void __bitmap_shift_left(unsigned long *dst, const unsigned long *src,
			 unsigned int shift, unsigned int nbits);
void bitmap_cut(unsigned long *dst, const unsigned long *src,
		unsigned int first, unsigned int cut, unsigned int nbits);
int __bitmap_and(unsigned long *dst, const unsigned long *bitmap1,
		 const unsigned long *bitmap2, unsigned int nbits);
void __bitmap_or(unsigned long *dst, const unsigned long *bitmap1,
		 const unsigned long *bitmap2, unsigned int nbits);
void __bitmap_xor(unsigned long *dst, const unsigned long *bitmap1,
		  const unsigned long *bitmap2, unsigned int nbits);
int __bitmap_andnot(unsigned long *dst, const unsigned long *bitmap1,
		    const unsigned long *bitmap2, unsigned int nbits);
void __bitmap_replace(unsigned long *dst, const unsigned long *old,
		      const unsigned long *new, const unsigned long *mask,
		      unsigned int nbits);
int __bitmap_intersects(const unsigned long *bitmap1, const unsigned long *bitmap2,
			unsigned int nbits);
int __bitmap_subset(const unsigned long *bitmap1, const unsigned long *bitmap2,
		    unsigned int nbits);
int __bitmap_weight(const unsigned long *bitmap, unsigned int nbits);
void __bitmap_set(unsigned long *map, unsigned int start, int len);
void __bitmap_clear(unsigned long *map, unsigned int start, int len);

unsigned long bitmap_find_next_zero_area_off(unsigned long *map, unsigned long size,
					     unsigned long start, unsigned int nr,
					     unsigned long align_mask,
					     unsigned long align_offset);

/*
 * The first run of nr clear bits at or after start whose first bit is a
 * multiple of align_mask + 1; a value past size when there is none.
 */
static inline unsigned long bitmap_find_next_zero_area(unsigned long *map, unsigned long size,
							unsigned long start, unsigned int nr,
							unsigned long align_mask)
{
	return bitmap_find_next_zero_area_off(map, size, start, nr, align_mask, 0);
}

int bitmap_parse(const char *buf, unsigned int buflen, unsigned long *dst, int nbits);
int bitmap_parse_user(const char __user *ubuf, unsigned int ulen,
		      unsigned long *dst, int nbits);
int bitmap_parselist(const char *buf, unsigned long *maskp, int nmaskbits);
int bitmap_parselist_user(const char __user *ubuf, unsigned int ulen,
			  unsigned long *dst, int nbits);
void bitmap_remap(unsigned long *dst, const unsigned long *src,
		  const unsigned long *old, const unsigned long *new, unsigned int nbits);
int bitmap_bitremap(int oldbit, const unsigned long *old, const unsigned long *new, int bits);
void bitmap_onto(unsigned long *dst, const unsigned long *orig,
		 const unsigned long *relmap, unsigned int bits);
void bitmap_fold(unsigned long *dst, const unsigned long *orig,
		 unsigned int sz, unsigned int nbits);
int bitmap_find_free_region(unsigned long *bitmap, unsigned int bits, int order);
void bitmap_release_region(unsigned long *bitmap, unsigned int pos, int order);
int bitmap_allocate_region(unsigned long *bitmap, unsigned int pos, int order);
unsigned int bitmap_ord_to_pos(const unsigned long *bitmap, unsigned int ord, unsigned int nbits);
int bitmap_print_to_pagebuf(bool list, char *buf, const unsigned long *maskp, int nmaskbits);

#ifdef __BIG_ENDIAN
void bitmap_copy_le(unsigned long *dst, const unsigned long *src, unsigned int nbits);
#else
#define bitmap_copy_le bitmap_copy
#endif

/* Allocation: bitmap_free() takes what either allocator gave. */
unsigned long *bitmap_alloc(unsigned int nbits, gfp_t flags);
unsigned long *bitmap_zalloc(unsigned int nbits, gfp_t flags);
void bitmap_free(const unsigned long *bitmap);
/* Freed by the device's devres when it lets go of its resources (linux/device.h). */
unsigned long *devm_bitmap_alloc(struct device *dev, unsigned int nbits, gfp_t flags);
unsigned long *devm_bitmap_zalloc(struct device *dev, unsigned int nbits, gfp_t flags);

/* The whole words that hold nbits. */
static inline void bitmap_zero(unsigned long *dst, unsigned int nbits)
{
	memset(dst, 0, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}

static inline void bitmap_fill(unsigned long *dst, unsigned int nbits)
{
	memset(dst, 0xff, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}

static inline void bitmap_copy(unsigned long *dst, const unsigned long *src, unsigned int nbits)
{
	memcpy(dst, src, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}

/* A copy whose last word has its bits above nbits cleared. */
static inline void bitmap_copy_clear_tail(unsigned long *dst, const unsigned long *src,
					  unsigned int nbits)
{
	bitmap_copy(dst, src, nbits);
	if (nbits % BITS_PER_LONG)
		dst[nbits / BITS_PER_LONG] &= BITMAP_LAST_WORD_MASK(nbits);
}

/*
 * Between a bitmap and an array of u32 in host order: with 64-bit longs
 * each long is two u32, low half first (lib/bitmap.c); with 32-bit longs
 * the two layouts are the same and a copy does.
 */
#if BITS_PER_LONG == 64
void bitmap_from_arr32(unsigned long *bitmap, const u32 *buf, unsigned int nbits);
void bitmap_to_arr32(u32 *buf, const unsigned long *bitmap, unsigned int nbits);
#else
#define bitmap_from_arr32(bitmap, buf, nbits)				\
	bitmap_copy_clear_tail((unsigned long *)(bitmap), (const unsigned long *)(buf), (nbits))
#define bitmap_to_arr32(buf, bitmap, nbits)				\
	bitmap_copy_clear_tail((unsigned long *)(buf), (const unsigned long *)(bitmap), (nbits))
#endif

/* dst = src1 & src2; whether any of the nbits is left set. */
static inline int bitmap_and(unsigned long *dst, const unsigned long *src1,
			     const unsigned long *src2, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return (*dst = *src1 & *src2 & BITMAP_LAST_WORD_MASK(nbits)) != 0;
	return __bitmap_and(dst, src1, src2, nbits);
}

static inline void bitmap_or(unsigned long *dst, const unsigned long *src1,
			     const unsigned long *src2, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		*dst = *src1 | *src2;
	else
		__bitmap_or(dst, src1, src2, nbits);
}

static inline void bitmap_xor(unsigned long *dst, const unsigned long *src1,
			      const unsigned long *src2, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		*dst = *src1 ^ *src2;
	else
		__bitmap_xor(dst, src1, src2, nbits);
}

/* dst = src1 & ~src2; whether any of the nbits is left set. */
static inline int bitmap_andnot(unsigned long *dst, const unsigned long *src1,
				const unsigned long *src2, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return (*dst = *src1 & ~(*src2) & BITMAP_LAST_WORD_MASK(nbits)) != 0;
	return __bitmap_andnot(dst, src1, src2, nbits);
}

static inline void bitmap_complement(unsigned long *dst, const unsigned long *src,
				     unsigned int nbits)
{
	if (small_const_nbits(nbits))
		*dst = ~(*src);
	else
		__bitmap_complement(dst, src, nbits);
}

static inline int bitmap_equal(const unsigned long *src1, const unsigned long *src2,
			       unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return !((*src1 ^ *src2) & BITMAP_LAST_WORD_MASK(nbits));
	return __bitmap_equal(src1, src2, nbits);
}

/* Whether (src1 | src2) == src3 over nbits. */
static inline bool bitmap_or_equal(const unsigned long *src1, const unsigned long *src2,
				   const unsigned long *src3, unsigned int nbits)
{
	if (!small_const_nbits(nbits))
		return __bitmap_or_equal(src1, src2, src3, nbits);
	return !(((*src1 | *src2) ^ *src3) & BITMAP_LAST_WORD_MASK(nbits));
}

static inline int bitmap_intersects(const unsigned long *src1, const unsigned long *src2,
				    unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return ((*src1 & *src2) & BITMAP_LAST_WORD_MASK(nbits)) != 0;
	return __bitmap_intersects(src1, src2, nbits);
}

/* Whether every bit of src1 is set in src2. */
static inline int bitmap_subset(const unsigned long *src1, const unsigned long *src2,
				unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return !((*src1 & ~(*src2)) & BITMAP_LAST_WORD_MASK(nbits));
	return __bitmap_subset(src1, src2, nbits);
}

static inline bool bitmap_empty(const unsigned long *src, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return !(*src & BITMAP_LAST_WORD_MASK(nbits));
	return find_first_bit(src, nbits) == nbits;
}

static inline bool bitmap_full(const unsigned long *src, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return !(~(*src) & BITMAP_LAST_WORD_MASK(nbits));
	return find_first_zero_bit(src, nbits) == nbits;
}

static __always_inline int bitmap_weight(const unsigned long *src, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		return hweight_long(*src & BITMAP_LAST_WORD_MASK(nbits));
	return __bitmap_weight(src, nbits);
}

/* Set, or clear, the nbits bits from start. */
static __always_inline void bitmap_set(unsigned long *map, unsigned int start,
				       unsigned int nbits)
{
	if (__builtin_constant_p(nbits) && nbits == 1)
		__set_bit(start, map);
	else
		__bitmap_set(map, start, nbits);
}

static __always_inline void bitmap_clear(unsigned long *map, unsigned int start,
					 unsigned int nbits)
{
	if (__builtin_constant_p(nbits) && nbits == 1)
		__clear_bit(start, map);
	else
		__bitmap_clear(map, start, nbits);
}

/* Towards bit 0 (right) or away from it (left), zeros shifted in, over nbits. */
static inline void bitmap_shift_right(unsigned long *dst, const unsigned long *src,
				      unsigned int shift, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		*dst = (*src & BITMAP_LAST_WORD_MASK(nbits)) >> shift;
	else
		__bitmap_shift_right(dst, src, shift, nbits);
}

static inline void bitmap_shift_left(unsigned long *dst, const unsigned long *src,
				     unsigned int shift, unsigned int nbits)
{
	if (small_const_nbits(nbits))
		*dst = (*src << shift) & BITMAP_LAST_WORD_MASK(nbits);
	else
		__bitmap_shift_left(dst, src, shift, nbits);
}

/* dst = the bits of new where mask is set, of old elsewhere. */
static inline void bitmap_replace(unsigned long *dst, const unsigned long *old,
				  const unsigned long *new, const unsigned long *mask,
				  unsigned int nbits)
{
	if (small_const_nbits(nbits))
		*dst = (*old & ~(*mask)) | (*new & *mask);
	else
		__bitmap_replace(dst, old, new, mask, nbits);
}

/* The next run of clear (or set) bits before end: [*rs, *re). */
static inline void bitmap_next_clear_region(unsigned long *bitmap, unsigned int *rs,
					    unsigned int *re, unsigned int end)
{
	*rs = find_next_zero_bit(bitmap, end, *rs);
	*re = find_next_bit(bitmap, end, *rs + 1);
}

static inline void bitmap_next_set_region(unsigned long *bitmap, unsigned int *rs,
					  unsigned int *re, unsigned int end)
{
	*rs = find_next_bit(bitmap, end, *rs);
	*re = find_next_zero_bit(bitmap, end, *rs + 1);
}

/* A 64-bit mask as a bitmap: one long, or two with the low half first. */
static inline void bitmap_from_u64(unsigned long *dst, u64 mask)
{
	dst[0] = mask & ULONG_MAX;
	if (sizeof(mask) > sizeof(unsigned long))
		dst[1] = mask >> 32;
}

/* The 8 bits from start, a multiple of 8 (they never straddle words). */
static inline unsigned long bitmap_get_value8(const unsigned long *map, unsigned long start)
{
	return (map[BIT_WORD(start)] >> (start % BITS_PER_LONG)) & 0xff;
}

static inline void bitmap_set_value8(unsigned long *map, unsigned long value,
				     unsigned long start)
{
	unsigned long *word = &map[BIT_WORD(start)];
	unsigned long offset = start % BITS_PER_LONG;

	*word = (*word & ~(0xffUL << offset)) | (value << offset);
}

#endif
