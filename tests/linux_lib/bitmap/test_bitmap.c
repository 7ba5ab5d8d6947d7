// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/bitmap.c and lib/kstrtox.c (beside it): over
 * size bits (at most 1000) of pseudo-random bitmaps a, b and m, the
 * operations of <linux/bitmap.h>, the region allocator, the parsers
 * (bitmap_parselist, bitmap_parse) on fixed strings and on what
 * bitmap_print_to_pagebuf printed (%*pbl, %*pb), and the kstrto*()
 * conversions of fixed strings (below 64 bits every third one, to keep a
 * kprobe on every instruction short). Each bitmap is mixed as the u32 words of
 * bitmap_to_arr32 (bit i in word i / 32), each string byte by byte, into
 * an FNV-1a checksum; tests/test_linux_lib.py computes the same in Python.
 */
#include <linux/bitmap.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <kisim/testdata.h>

#define MAXBITS		1024

static DECLARE_BITMAP(a, MAXBITS);
static DECLARE_BITMAP(b, MAXBITS);
static DECLARE_BITMAP(m, MAXBITS);
static DECLARE_BITMAP(r, MAXBITS);
static DECLARE_BITMAP(p, MAXBITS);
static u32 words[MAXBITS / 32];
static char page[PAGE_SIZE] __aligned(PAGE_SIZE);

static u32 mix_bitmap(u32 h, const unsigned long *map, unsigned int nbits)
{
	unsigned int i;

	bitmap_to_arr32(words, map, nbits);
	for (i = 0; i < DIV_ROUND_UP(nbits, 32); i++)
		h = fnv_mix(h, words[i]);
	return h;
}

static u32 mix_string(u32 h, const char *s)
{
	for (; *s; s++)
		h = fnv_mix(h, (u8)*s);
	return fnv_mix(h, 0xffffffff);
}

/* bitmap_parselist of each string over 1024 bits: its return, and the bitmap when 0. */
static const char *const lists[] = {
	"0-3,8,10-11", "0-1023:2/256", "  1,,5 \n", "1-9:3/4,100-120:1/7",
	"", "\n", "1023", "7,6,5", "0-1023:0/5",
	"5-3", "1024", "99999999999", "a", "3-", "1-5:2", "1-5:3/2",
	"1-5:1/0", "4,x", "+5", "1-5:1/2x",
};

/* bitmap_parse of each string over 100 bits. */
static const char *const hexes[] = {
	"deadbeef", "1,23456789", "f,ffffffff,ffffffff", "  ab cd ,, ef\n12",
	"", "10,00000000,00000000,00000000", "123456789", "12g4",
	"1,0,0,0", "fffffffff",
};

struct kstrto_case {
	const char *s;
	unsigned int base;
};

static const struct kstrto_case kstrtos[] = {
	{ "0", 10 }, { "42\n", 10 }, { "42\n\n", 10 }, { "+7", 10 }, { "-7", 10 },
	{ "0x1F", 0 }, { "0X1f", 16 }, { "1f", 16 }, { "0777", 0 }, { "0x", 0 },
	{ "08", 0 }, { "4294967295", 10 }, { "4294967296", 10 }, { "255", 10 },
	{ "256", 10 }, { "-128", 10 }, { "-129", 10 }, { "18446744073709551615", 10 },
	{ "18446744073709551616", 10 }, { "", 10 }, { " 1", 10 }, { "12a", 10 },
	{ "ffffffffffffffff", 16 }, { "9223372036854775808", 10 },
	{ "-9223372036854775808", 10 }, { "101", 2 },
};

static const char *const bools[] = { "y", "N", "1", "0", "on", "OFF", "o", "x", "" };

static u32 test_kstrtox(u32 h, unsigned int step)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kstrtos); i += step) {
		const char *s = kstrtos[i].s;
		unsigned int base = kstrtos[i].base;
		unsigned long long ull = 0;
		long long ll = 0;
		unsigned long ul = 0;
		unsigned int ui = 0;
		int si = 0;
		u8 u8v = 0;
		s8 s8v = 0;
		int ret;

		h = fnv_mix(h, kstrtoull(s, base, &ull));
		h = fnv_mix(fnv_mix(h, (u32)ull), (u32)(ull >> 32));
		h = fnv_mix(h, kstrtoll(s, base, &ll));
		h = fnv_mix(fnv_mix(h, (u32)ll), (u32)((u64)ll >> 32));
		/* kstrtoul() is kstrtoull() or kstrtouint() as longs are wide */
		ret = kstrtoul(s, base, &ul);
		h = fnv_mix(h, BITS_PER_LONG == 64 ? ret == kstrtoull(s, base, &ull) && ul == ull
						   : ret == kstrtouint(s, base, &ui) && ul == ui);
		h = fnv_mix(h, kstrtouint(s, base, &ui));
		h = fnv_mix(h, ui);
		h = fnv_mix(h, kstrtoint(s, base, &si));
		h = fnv_mix(h, si);
		h = fnv_mix(h, kstrtou8(s, base, &u8v));
		h = fnv_mix(h, u8v);
		h = fnv_mix(h, kstrtos8(s, base, &s8v));
		h = fnv_mix(h, s8v);
	}
	for (i = 0; i < ARRAY_SIZE(bools); i += step) {
		bool v = false;

		h = fnv_mix(h, kstrtobool(bools[i], &v));
		h = fnv_mix(h, v);
	}
	return h;
}

static u32 test_parsers(u32 h, unsigned int step)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(lists); i += step) {
		ret = bitmap_parselist(lists[i], p, MAXBITS);
		h = fnv_mix(h, ret);
		if (!ret)
			h = mix_bitmap(h, p, MAXBITS);
	}
	for (i = 0; i < ARRAY_SIZE(hexes); i += step) {
		ret = bitmap_parse(hexes[i], UINT_MAX, p, 100);
		h = fnv_mix(h, ret);
		if (!ret)
			h = mix_bitmap(h, p, 100);
	}
	/* only the first 6 characters */
	ret = bitmap_parse("abcdef01", 6, p, 100);
	h = fnv_mix(h, ret);
	h = mix_bitmap(h, p, 100);
	/* the user-memory variants, on a kernel pointer (no user space) */
	h = fnv_mix(h, bitmap_parselist_user((const char __user *)"2-4,9", 5, p, 64));
	h = mix_bitmap(h, p, 64);
	h = fnv_mix(h, bitmap_parse_user((const char __user *)"f0f0", 4, p, 64));
	return mix_bitmap(h, p, 64);
}

/* bitmap_print_to_pagebuf's list and hex of map, both parsed back. */
static u32 test_print(u32 h, const unsigned long *map, unsigned int n)
{
	int len;

	len = bitmap_print_to_pagebuf(true, page, map, n);
	h = mix_string(fnv_mix(h, len), page);
	h = fnv_mix(h, bitmap_parselist(page, p, n));
	h = fnv_mix(h, bitmap_equal(p, map, n));
	len = bitmap_print_to_pagebuf(false, page, map, n);
	h = mix_string(fnv_mix(h, len), page);
	h = fnv_mix(h, bitmap_parse(page, UINT_MAX, p, n));
	h = fnv_mix(h, bitmap_equal(p, map, n));
	/* the end of the page: scnprintf's count of what fitted */
	len = bitmap_print_to_pagebuf(true, page + PAGE_SIZE - 8, map, n);
	return mix_string(fnv_mix(h, len), page + PAGE_SIZE - 8);
}

/* The region allocator and the zero-area search over a copy of a. */
static u32 test_regions(u32 h, unsigned int n)
{
	int order, pos;

	bitmap_copy(r, a, n);
	for (order = 0; order < 4; order++) {
		pos = bitmap_find_free_region(r, n, order);
		h = fnv_mix(h, pos);
		if (pos >= 0) {
			h = fnv_mix(h, bitmap_allocate_region(r, pos, order));
			bitmap_release_region(r, pos, order);
			h = fnv_mix(h, bitmap_allocate_region(r, pos, order));
		}
	}
	h = mix_bitmap(h, r, n);
	h = fnv_mix(h, bitmap_find_next_zero_area(r, n, 0, 3, 1));
	h = fnv_mix(h, bitmap_find_next_zero_area(r, n, n / 2, 2, 3));
	h = fnv_mix(h, bitmap_find_next_zero_area_off(r, n, 1, 4, 7, 2));
	return h;
}

static u32 test_alloc(u32 h, unsigned int n)
{
	struct device dev;
	unsigned long *z;

	z = bitmap_zalloc(n, GFP_KERNEL);
	h = fnv_mix(h, z && bitmap_empty(z, n));
	bitmap_free(z);
	device_initialize(&dev);
	z = devm_bitmap_zalloc(&dev, n, GFP_KERNEL);
	h = fnv_mix(h, z && bitmap_empty(z, n));
	h = fnv_mix(h, devm_bitmap_alloc(&dev, n, GFP_KERNEL) != NULL);
	return fnv_mix(h, devres_release_all(&dev));
}

u32 test_bitmap_run(u32 size)
{
	unsigned int n = size, i, s, step = size < 64 ? 3 : 1;
	u32 x = XORSHIFT_SEED, h = FNV_BASIS;

	if (n < 1 || n > 1000)
		return 0;
	bitmap_zero(a, MAXBITS);
	bitmap_zero(b, MAXBITS);
	bitmap_zero(m, MAXBITS);
	for (i = 0; i < n; i++) {
		u32 v = xorshift32(&x);

		if (v >> 31)
			__set_bit(i, a);
		if ((v >> 30) & 1)
			__set_bit(i, b);
		if ((v >> 29) & 1)
			__set_bit(i, m);
	}
	h = fnv_mix(h, bitmap_weight(a, n));
	h = fnv_mix(h, bitmap_weight(b, n));
	h = fnv_mix(h, bitmap_and(r, a, b, n));
	h = mix_bitmap(h, r, n);
	h = fnv_mix(h, bitmap_subset(r, a, n) + 2 * bitmap_subset(a, b, n));
	bitmap_or(r, a, b, n);
	h = mix_bitmap(h, r, n);
	h = fnv_mix(h, bitmap_or_equal(a, b, r, n) + 2 * bitmap_or_equal(a, m, r, n));
	bitmap_xor(r, a, b, n);
	h = mix_bitmap(h, r, n);
	h = fnv_mix(h, bitmap_andnot(r, a, b, n));
	h = mix_bitmap(h, r, n);
	bitmap_complement(r, a, n);
	h = mix_bitmap(h, r, n);
	h = fnv_mix(h, bitmap_equal(a, a, n) + 2 * bitmap_equal(a, b, n) +
		    4 * bitmap_intersects(a, b, n) + 8 * bitmap_empty(a, n) +
		    16 * bitmap_full(a, n));
	s = size % 37 + 1;
	bitmap_shift_right(r, a, s, n);
	h = mix_bitmap(h, r, n);
	bitmap_shift_left(r, a, s, n);
	h = mix_bitmap(h, r, n);
	bitmap_cut(r, a, n / 3, 5, n);
	h = mix_bitmap(h, r, n);
	bitmap_replace(r, a, b, m, n);
	h = mix_bitmap(h, r, n);
	bitmap_copy(r, a, n);
	bitmap_set(r, n / 5, n / 2);
	bitmap_clear(r, n / 4, n / 3);
	h = mix_bitmap(h, r, n);
	h = fnv_mix(h, find_first_bit(a, n));
	h = fnv_mix(h, find_first_zero_bit(a, n));
	h = fnv_mix(h, find_last_bit(a, n));
	h = fnv_mix(h, find_next_bit(a, n, n / 2));
	h = fnv_mix(h, find_next_zero_bit(a, n, n / 2));

	bitmap_from_arr32(r, words, n);		/* words: bitmap_to_arr32 of the last r */
	bitmap_to_arr32(words, r, n);
	h = mix_bitmap(h, r, n);

	h = test_regions(h, n);
	h = test_print(h, a, n);
	h = test_print(h, m, n);
	h = test_parsers(h, step);
	h = test_kstrtox(h, step);
	return test_alloc(h, n);
}
