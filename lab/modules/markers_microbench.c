// SPDX-License-Identifier: GPL-2.0
/*
 * LTTng's marker microbenchmark as a guest module: Desnoyers, "performance
 * measurements of the Linux Kernel Markers" (2006; LTTV's
 * tests/markers/markers-microbench-0.2.txt, with its test-micro-loop-empty.c
 * and test-micro-loop-marker.c), on a 3 GHz Pentium 4. Each published
 * figure is a loop's TSC cycles per iteration, interrupts off:
 *
 *	empty		for (i = 0; i < NR_LOOPS; i++) { }
 *	marker		the same loop around MARK(subsys_mark1, "%d %p", 1, NULL),
 *			dormant ("optimized": an immediate value; "generic": a
 *			load of the marker's state)
 *	armed		the marker connected to an empty var-args probe
 *
 * and the per-marker cost is the marker loop's figure minus the empty
 * loop's (2.50 optimized, 1.17 generic); the armed marker's is the armed
 * loop's minus the dormant loop's (52.11 - 4.00 = 48.11). mmb_run() runs
 * the three loops here, each between two calls of mmb_mark(), where the
 * host snapshots the timing model (lab/microbench.py); which enable check
 * the marker compiles to is the build's (CONFIG_IMMEDIATE, linux/marker.h).
 *
 * The published empty loop was kept by the 2006 compiler; kisim's would
 * delete a loop with no effect, so each body holds an empty asm statement,
 * which emits no instruction. kisim's guest runs without interrupts from
 * devices, so nothing is disabled around the loops.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/marker.h>

/* The empty probe: the published one had a var-args signature and did nothing. */
static void mmb_probe(void *probe_private, void *call_private, const char *fmt,
		      va_list *args)
{
	(void)probe_private; (void)call_private; (void)fmt; (void)args;
}

/* The host's snapshot point: one call between measured loops. */
noinline void mmb_mark(void)
{
	barrier();
}

static noinline void mmb_empty(u32 iters)
{
	u32 i;

	for (i = 0; i < iters; i++)
		__asm__ __volatile__("");
}

static noinline void mmb_marker(u32 iters)
{
	u32 i;

	for (i = 0; i < iters; i++) {
		__asm__ __volatile__("");
		trace_mark(subsys_mark1, "%d %p", 1, NULL);
	}
}

/* The empty loop, the dormant marker loop, then the armed one; 0 or -errno. */
int mmb_run(u32 iters)
{
	int err;

	mmb_mark();
	mmb_empty(iters);
	mmb_mark();
	mmb_marker(iters);
	mmb_mark();
	err = marker_probe_register("subsys_mark1", "%d %p", mmb_probe, NULL);
	if (!err)
		err = marker_arm("subsys_mark1");
	if (err)
		return err;
	mmb_mark();
	mmb_marker(iters);
	mmb_mark();
	return 0;
}
