// SPDX-License-Identifier: GPL-2.0
/*
 * getppid: a system-call loop (the immediate-values benchmark of
 * Documentation/immediate.txt). GETPPID_TASKS children of init (pid 1)
 * each call getppid() `iterations` times through the syscall path and
 * sched_yield() every 64 calls.
 *
 *	task i: acc = i; for k < n: acc = mix32(acc + getppid() + k)
 *	checksum = fold_results(acc[0..GETPPID_TASKS-1])
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <kisim/workload.h>

#define GETPPID_TASKS	4

static u32 getppid_iterations;
static u32 getppid_results[GETPPID_TASKS];

static int getppid_task(void *arg)
{
	u32 i = (u32)(unsigned long)arg, acc = i, k;

	for (k = 0; k < getppid_iterations; k++) {
		memory_pressure_walk();
		acc = mix32(acc + (u32)syscall(__NR_getppid, 0, 0, 0) + k);
		if ((k & 63) == 63)
			syscall(__NR_sched_yield, 0, 0, 0);
	}
	getppid_results[i] = acc;
	return 0;
}

u32 getppid_run(u32 iterations)
{
	getppid_iterations = iterations;
	return run_tasks(getppid_task, "getppid", getppid_results, GETPPID_TASKS);
}
