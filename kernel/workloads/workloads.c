// SPDX-License-Identifier: GPL-2.0
/* The workload table. sim/guest.py reads the names and default sizes from it. */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/ftrace.h>
#include <kisim/workload.h>

const struct workload workloads[] = {
	{ "fib",	fib_run,	20 },
	{ "getppid",	getppid_run,	4000 },
	{ "hackbench",	hackbench_run,	40 },
	{ "kmalloc",	kmalloc_run,	1500 },
	{ "kmem_errors",	kmemtrace_errors_run,	500 },
};
const int nr_workloads = ARRAY_SIZE(workloads);

u32 run_tasks(int (*fn)(void *), const char *prefix, u32 *results, int n)
{
	char name[TASK_COMM_LEN];
	unsigned long i;

	for (i = 0; i < (unsigned long)n; i++) {
		snprintf(name, sizeof(name), "%s/%lu", prefix, i);
		kernel_thread(fn, (void *)i, name);
	}
	wait_for_children();
	return fold_results(results, n);
}

#ifdef CONFIG_WORKLOAD_MEMORY_PRESSURE
/* Twice the largest outermost cache of the reference cores (1 MiB, Cortex-A9's PL310). */
#define MEMORY_PRESSURE_MAX	(2UL << 20)

/* Written by the host before the first instruction (non-zero: kept in .data). */
unsigned long memory_pressure_bytes = 1;
unsigned long memory_pressure_line = 1;

static u8 memory_pressure_set[MEMORY_PRESSURE_MAX] __aligned(4096);

/*
 * One load per line over the first memory_pressure_bytes of the set, in
 * address order: twice the outermost cache, so under LRU each set of every
 * level receives twice as many new lines as it has ways, and a dirty line
 * that the walk's first loads pushed out to the next level is evicted
 * there too. notrace and free of instrumentation: every build retires the
 * same walk.
 */
notrace void memory_pressure_walk(void)
{
	const volatile u8 *set = memory_pressure_set;
	unsigned long off, bytes = memory_pressure_bytes, line = memory_pressure_line;

	for (off = 0; off < bytes; off += line)
		(void)set[off];
}
#endif
