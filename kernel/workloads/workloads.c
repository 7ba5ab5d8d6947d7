// SPDX-License-Identifier: GPL-2.0
/* The workload table. sim/guest.py reads the names and default sizes from it. */
#include <linux/kernel.h>
#include <linux/sched.h>
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
