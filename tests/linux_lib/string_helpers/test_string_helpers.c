// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/string_helpers.c (beside it): string_get_size
 * of fixed sizes and of size pseudo-random ones in both units (and into a
 * 4-byte buffer); string_escape_mem of fixed strings and of size
 * pseudo-random bytes under several flag sets, with and without an @only
 * set, and into a short buffer; string_escape_mem_ascii; string_unescape of
 * fixed strings under each flag and with a size limit; kstrdup_quotable,
 * kstrdup_quotable_cmdline of the running task (a kernel thread: no command
 * line), kstrdup_quotable_file(NULL) and kfree_strarray. Below 64 bytes
 * the tables of sizes, escape flag sets, @only sets and escaped strings are
 * walked every third entry, to keep a kprobe on every instruction short.
 * Each return value and each output byte is mixed (FNV-1a);
 * tests/test_linux_lib.py computes the same in Python.
 */
#include <linux/string_helpers.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <kisim/testdata.h>

static u8 bytes[1024];
static char out[4 * 1024 + 1];

static u32 mix_bytes(u32 h, const char *s, int n)
{
	while (n-- > 0)
		h = fnv_mix(h, (u8)*s++);
	return fnv_mix(h, 0xffffffff);
}

static u32 mix_string(u32 h, const char *s)
{
	return mix_bytes(h, s, s ? strlen(s) : -1);
}

static const u64 sizes[][2] = {
	{ 0, 512 }, { 1, 512 }, { 1100, 1 }, { 16384, 512 }, { 500118192, 512 },
	{ 8192, 4096 }, { 3000, 1900 }, { 1, 1 }, { U64_MAX, 4096 }, { 4096, U64_MAX }, { 999, 1 },
	{ 1000, 1 }, { 1023, 1 }, { 1024, 1 }, { 999999, 1 }, { 1023999, 1 },
	{ 5, 0 }, { 12345678901ULL, 3 },
};

static u32 test_get_size(u32 h, u32 n, unsigned int step)
{
	u32 x = XORSHIFT_SEED, i, units;
	char buf[16];

	for (units = STRING_UNITS_10; units <= STRING_UNITS_2; units++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i += step) {
			string_get_size(sizes[i][0], sizes[i][1], units, buf, sizeof(buf));
			h = mix_string(h, buf);
		}
		for (i = 0; i < n; i++) {
			u64 size = xorshift32(&x);
			u32 blk = xorshift32(&x) >> (i % 32);

			size = size << (i % 29) | xorshift32(&x);
			string_get_size(size, blk, units, buf, sizeof(buf));
			h = mix_string(h, buf);
		}
		string_get_size(123456, 1, units, buf, 4);	/* cut to 3 characters */
		h = mix_string(h, buf);
	}
	return h;
}

static const char fixed[] = "a\\b\"c\n\r\t\v\f\a\033\0d\177\200\240\377 ~";

static const unsigned int flag_sets[] = {
	ESCAPE_SPACE, ESCAPE_SPECIAL, ESCAPE_NULL, ESCAPE_OCTAL, ESCAPE_HEX,
	ESCAPE_ANY, ESCAPE_ANY_NP, ESCAPE_NP | ESCAPE_HEX, ESCAPE_SPACE | ESCAPE_HEX,
	ESCAPE_NP, 0,
};

static u32 test_escape(u32 h, u32 n, unsigned int step)
{
	const char *onlies[] = { NULL, "", "\n\\b", "\"a" };
	unsigned int f, o;
	int len;

	for (f = 0; f < ARRAY_SIZE(flag_sets); f += step) {
		for (o = 0; o < ARRAY_SIZE(onlies); o += step) {
			len = string_escape_mem(fixed, sizeof(fixed) - 1, out, sizeof(out),
						flag_sets[f], onlies[o]);
			h = mix_bytes(fnv_mix(h, len), out, len);
		}
		len = string_escape_mem((const char *)bytes, n, out, sizeof(out), flag_sets[f], NULL);
		h = mix_bytes(fnv_mix(h, len), out, len);
		/* a short buffer: the length needed, the first 7 bytes written */
		memset(out, '#', 8);
		len = string_escape_mem((const char *)bytes, n, out, 7, flag_sets[f], NULL);
		h = mix_bytes(fnv_mix(h, len), out, 8);
	}
	len = string_escape_mem(fixed, sizeof(fixed) - 1, NULL, 0, ESCAPE_ANY, NULL);
	h = fnv_mix(h, len);
	len = string_escape_mem_ascii(fixed, sizeof(fixed) - 1, out, sizeof(out));
	h = mix_bytes(fnv_mix(h, len), out, len);
	len = string_escape_mem_ascii((const char *)bytes, n, out, sizeof(out));
	h = mix_bytes(fnv_mix(h, len), out, len);
	len = string_escape_str("tab\there", out, sizeof(out), ESCAPE_SPACE, NULL);
	return mix_bytes(fnv_mix(h, len), out, len);
}

static const char *const escaped[] = {
	"plain", "a\\nb\\tc\\rd\\ve\\f", "\\101\\0\\12x\\400\\777\\8", "\\x41\\x4g\\xg\\x",
	"\\\"\\\\\\a\\e\\q", "tail\\", "\\\\n", "\\x414243", "\\1234", "",
};

static const unsigned int unescape_flags[] = {
	UNESCAPE_SPACE, UNESCAPE_OCTAL, UNESCAPE_HEX, UNESCAPE_SPECIAL, UNESCAPE_ANY, 0,
};

static u32 test_unescape(u32 h, unsigned int step)
{
	static const size_t limits[] = { 0, 1, 2, 5 };
	char src[64];
	unsigned int i, f, l;
	int len;

	for (i = 0; i < ARRAY_SIZE(escaped); i += step) {
		for (f = 0; f < ARRAY_SIZE(unescape_flags); f++) {
			strscpy(src, escaped[i], sizeof(src));
			len = string_unescape(src, out, 0, unescape_flags[f]);
			h = mix_bytes(fnv_mix(h, len), out, len + 1);
		}
		for (l = 0; l < ARRAY_SIZE(limits); l++) {
			strscpy(src, escaped[i], sizeof(src));
			memset(out, '#', 8);
			len = string_unescape(src, out, limits[l], UNESCAPE_ANY);
			h = mix_bytes(fnv_mix(h, len), out, len + 1);
		}
		strscpy(src, escaped[i], sizeof(src));
		len = string_unescape_any_inplace(src);
		h = mix_bytes(fnv_mix(h, len), src, len + 1);
	}
	return h;
}

static u32 test_quotable(u32 h)
{
	char **array = kmalloc_array(3, sizeof(char *), GFP_KERNEL);
	char *s;

	s = kstrdup_quotable("say \"hi\"\n\tand\\go \033[0m", GFP_KERNEL);
	h = mix_string(h, s);
	kfree(s);
	h = fnv_mix(h, kstrdup_quotable(NULL, GFP_KERNEL) == NULL);
	s = kstrdup_quotable_cmdline(current, GFP_KERNEL);
	h = mix_string(h, s);
	kfree(s);
	s = kstrdup_quotable_file(NULL, GFP_KERNEL);
	h = mix_string(h, s);
	kfree(s);
	if (!array)
		return 0;
	array[0] = kstrdup("one", GFP_KERNEL);
	array[1] = kstrdup("two", GFP_KERNEL);
	array[2] = NULL;
	kfree_strarray(array, 3);
	kfree_strarray(NULL, 5);
	return fnv_mix(h, 1);
}

u32 test_string_helpers_run(u32 size)
{
	unsigned int step = size < 64 ? 3 : 1;
	u32 h = FNV_BASIS;

	if (size > sizeof(bytes))
		return 0;
	xorshift_bytes(bytes, size);
	h = test_get_size(h, size, step);
	h = test_escape(h, size, step);
	h = test_unescape(h, step);
	return test_quotable(h);
}
