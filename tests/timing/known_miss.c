// SPDX-License-Identifier: MIT
/*
 * Known-miss microbenchmarks for tests/test_timing.py: loops whose cache
 * misses are known by construction. The host writes the geometry
 * (km_bytes, km_line) before the run and snapshots the timing model's
 * counters each time km_mark() is entered, so each loop is measured
 * between two marks. Every loop reads through a volatile pointer, so the
 * compiler keeps each access; loop state stays in registers.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <asm/cacheflush.h>

#define KM_BUF_BYTES	(64 * 1024)	/* 2 x the largest L1D of the reference cores */

/* Written by the host before the first instruction (non-zero: kept in .data). */
unsigned long km_bytes = 1;		/* bytes the stride walk covers */
unsigned long km_line = 1;		/* its stride: one L1D line */

static unsigned char km_buf[KM_BUF_BYTES] __aligned(4096);

/* The host's snapshot point: one call between measured loops. */
noinline void km_mark(void)
{
	barrier();
}

/* a. `reps` passes over km_bytes of km_buf, one load per line. */
u32 km_stride(u32 reps)
{
	const volatile unsigned char *buf = km_buf;
	unsigned long off, bytes = km_bytes, line = km_line;
	u32 sum = 0, r;

	km_mark();
	for (r = 0; r < reps; r++)
		for (off = 0; off < bytes; off += line)
			sum += buf[off];
	km_mark();
	return sum;
}

/* b. `iters` x (flush one line, load it), then `iters` loads of it without the flush. */
u32 km_flush(u32 iters)
{
	const volatile unsigned long *p = (const volatile unsigned long *)km_buf;
	u32 sum = 0, i;

	km_mark();
	for (i = 0; i < iters; i++) {
		dcache_clean_inval_line(p);
		sum += *p;
	}
	km_mark();
	for (i = 0; i < iters; i++)
		sum += *p;
	km_mark();
	return sum;
}
