// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/xxhash.c (xxhash.c beside it, reached through
 * <linux/xxhash.h>): over size pseudo-random bytes at an odd address,
 * xxh32 and xxh64 with seeds 0 and 0x9e3779b1, of the whole and of all
 * but the last byte; the streaming hashes fed in pieces of 1..37 bytes
 * (each digest compared with the one-shot hash), a NULL input's -EINVAL,
 * and whether xxhash() is the word-sized one. Returns them mixed (FNV-1a).
 */
#include <linux/xxhash.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <kisim/testdata.h>

static u8 buf[4097];

static u32 mix64(u32 h, u64 v)
{
	return fnv_mix(fnv_mix(h, (u32)v), (u32)(v >> 32));
}

u32 test_xxhash_run(u32 size)
{
	static const u32 seeds[] = { 0, 0x9e3779b1 };
	const u8 *p = buf + 1;
	u32 i, s, h = FNV_BASIS;
	struct xxh32_state s32;
	struct xxh64_state s64;

	if (size < 1 || size >= sizeof(buf))
		return 0;
	xorshift_bytes(buf + 1, size);
	for (s = 0; s < ARRAY_SIZE(seeds); s++) {
		h = fnv_mix(h, xxh32(p, size, seeds[s]));
		h = fnv_mix(h, xxh32(p, size - 1, seeds[s]));
		h = mix64(h, xxh64(p, size, seeds[s]));
		h = mix64(h, xxh64(p, size - 1, seeds[s]));

		xxh32_reset(&s32, seeds[s]);
		xxh64_reset(&s64, seeds[s]);
		for (i = 0; i < size; i += i % 37 + 1) {
			u32 n = min_t(u32, i % 37 + 1, size - i);

			xxh32_update(&s32, p + i, n);
			xxh64_update(&s64, p + i, n);
		}
		h = fnv_mix(h, xxh32_digest(&s32) == xxh32(p, size, seeds[s]));
		h = fnv_mix(h, xxh64_digest(&s64) == xxh64(p, size, seeds[s]));
	}
	h = fnv_mix(h, xxh32_update(&s32, NULL, 1) == -EINVAL);
	h = fnv_mix(h, xxh64_update(&s64, NULL, 1) == -EINVAL);
	h = fnv_mix(h, xxhash(p, size, 0) == (BITS_PER_LONG == 64 ? xxh64(p, size, 0)
							     : xxh32(p, size, 0)));
	return h;
}
