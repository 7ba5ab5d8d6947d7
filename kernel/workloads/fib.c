// SPDX-License-Identifier: GPL-2.0
/*
 * fib: pure compute. FIB_TASKS tasks each compute fib(k) recursively for
 * k = 0 .. depth-1, folding every value into their result, and yield
 * every fourth k.
 *
 *	task i: acc = 0; for k < depth: acc = mix32(acc + fib(k) + i)
 *	checksum = fold_results(acc[0..FIB_TASKS-1])
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <kisim/workload.h>

#define FIB_TASKS	4

static u32 fib_depth;
static u32 fib_results[FIB_TASKS];

static noinline u32 fib(u32 n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int fib_task(void *arg)
{
	u32 i = (u32)(unsigned long)arg, acc = 0, k;

	for (k = 0; k < fib_depth; k++) {
		acc = mix32(acc + fib(k) + i);
		if ((k & 3) == 3)
			schedule();
	}
	fib_results[i] = acc;
	return 0;
}

u32 fib_run(u32 depth)
{
	fib_depth = depth;
	return run_tasks(fib_task, "fib", fib_results, FIB_TASKS);
}
