// SPDX-License-Identifier: GPL-2.0
/* The workload table. sim/guest.py's WORKLOADS lists the same names. */
#include <kisim/workload.h>

const struct workload workloads[] = {
	{ "fib",	fib_run,	20 },
	{ "getppid",	getppid_run,	4000 },
	{ "hackbench",	hackbench_run,	40 },
	{ "kmalloc",	kmalloc_run,	1500 },
};
const int nr_workloads = ARRAY_SIZE(workloads);
