// SPDX-License-Identifier: GPL-2.0
/*
 * The microbenchmark of Documentation/immediate.txt (Desnoyers, Immediate
 * Values patch set, 2007-2008), as a guest module. Each loop runs imb_iters
 * iterations of the published baseline, "getting the pointer from a modulo
 * on a pseudo-random value, doing nothing with it", then one variant:
 *
 *	base		nothing more
 *	imv		a branch on an immediate value (imv_read, CONFIG_IMMEDIATE)
 *	l1		a branch on a memory flag that stays in the L1 cache
 *	memory		a branch on the element picked: a line of an array larger
 *			than every cache of the reference cores, so cache-cold
 *	flush_base	the base loop plus a clean-and-invalidate of the flag's line
 *	flush		the same, then a branch on the flag: the second way to a
 *			cold line
 *
 * Every flag and element is 0, so no branch is taken. The host snapshots
 * the timing model each time imb_mark() is entered; a loop is measured
 * between two marks (lab/microbench.py).
 *
 * The modulo is a modulo: by the element count, held where the compiler
 * cannot see its value (a run-time value, as a module parameter is), so
 * every arch divides (x86-64 div, ARM udiv, PowerPC divwu) as a `%` by a
 * size the compiler does not know compiles to. A count known at compile
 * time would let the compiler replace the division by a multiply (or, for
 * a power of two, an AND). immediate.txt gives neither the generator nor
 * the size; docs/timing.md says what kisim chose and why.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/immediate.h>
#include <asm/cacheflush.h>
#include <kisim/workload.h>

/* 8 MiB: eight times the largest cache of the reference cores (Cortex-A9's 1 MiB L2). */
#define IMB_ELEMS	((8UL << 20) / sizeof(unsigned long))

enum imb_variant { IMB_BASE, IMB_IMV, IMB_L1, IMB_MEMORY, IMB_FLUSH_BASE, IMB_FLUSH };

static unsigned long imb_array[IMB_ELEMS] __aligned(4096);
static u8 imb_imv_flag;		/* read through imv_read(): its immediate */
static u8 imb_flag;		/* read from memory, as a marker's state */
static u32 imb_taken;

/* The host's snapshot point: one call between measured loops. */
noinline void imb_mark(void)
{
	barrier();
}

static __always_inline void imb_loop(enum imb_variant v, u32 iters)
{
	u32 state = 0x9e3779b9U, taken = 0, elems = IMB_ELEMS, i;

	__asm__("" : "+r" (elems));		/* a run-time size: the `%` divides */
	for (i = 0; i < iters; i++) {
		unsigned long *p = &imb_array[xorshift32(&state) % elems];

		__asm__ __volatile__("" : "+r" (p));	/* picked, and nothing done with it */
		if (v == IMB_FLUSH_BASE || v == IMB_FLUSH)
			dcache_clean_inval_line(&imb_flag);
		if (v == IMB_IMV && unlikely(imv_read(imb_imv_flag)))
			taken++;
		if ((v == IMB_L1 || v == IMB_FLUSH) && unlikely(READ_ONCE(imb_flag)))
			taken++;
		if (v == IMB_MEMORY && unlikely(READ_ONCE(*p)))
			taken++;
	}
	imb_taken += taken;
	imb_mark();
}

/* Every variant in turn, in enum order, each between two marks. */
u32 imb_run(u32 iters)
{
	imb_mark();
	imb_loop(IMB_BASE, iters);
	imb_loop(IMB_IMV, iters);
	imb_loop(IMB_L1, iters);
	imb_loop(IMB_MEMORY, iters);
	imb_loop(IMB_FLUSH_BASE, iters);
	imb_loop(IMB_FLUSH, iters);
	return imb_taken;
}
