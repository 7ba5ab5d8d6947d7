/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workloads. Each runs as children of init and returns a u32 checksum
 * that depends only on the workload and its size: never on pointers, the
 * arch, the CPU count or the interleaving. sim/guest.py recomputes each
 * one in Python (reference_checksum); keep the two in step.
 */
#ifndef _KISIM_WORKLOAD_H
#define _KISIM_WORKLOAD_H

#include <linux/types.h>

struct workload {
	const char *name;
	u32 (*run)(u32 size);
	u32 default_size;
};

extern const struct workload workloads[];
extern const int nr_workloads;

/*
 * Start n children of init running fn((void *)i), named prefix/i, wait for
 * them all and fold results[0..n-1] (each task fills its own slot).
 */
u32 run_tasks(int (*fn)(void *), const char *prefix, u32 *results, int n);

/*
 * CONFIG_WORKLOAD_MEMORY_PRESSURE: each workload step begins with a walk
 * over a working set twice the size of the reference core's outermost cache,
 * one load per line (kconfig/Kconfig.workloads). The host writes the
 * geometry into memory_pressure_bytes and memory_pressure_line.
 */
#ifdef CONFIG_WORKLOAD_MEMORY_PRESSURE
void memory_pressure_walk(void);
#else
static inline void memory_pressure_walk(void) { }
#endif

u32 hackbench_run(u32 loops);
u32 kmalloc_run(u32 iterations);
u32 getppid_run(u32 iterations);
u32 fib_run(u32 depth);
u32 kmemtrace_errors_run(u32 iterations);

/* The murmur3 finalizer: all checksums fold through it. */
static inline u32 mix32(u32 x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static inline u32 xorshift32(u32 *state)
{
	u32 x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* Fold per-task results, in task order. */
static inline u32 fold_results(const u32 *results, int n)
{
	u32 c = 0;
	int i;

	for (i = 0; i < n; i++)
		c = mix32(c ^ results[i]);
	return c;
}

#endif
