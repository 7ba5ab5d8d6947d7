// SPDX-License-Identifier: GPL-2.0
/*
 * A marker of your own, compared with every other mechanism at the same
 * point: kisim compare arms the marker (dormant and armed to an empty
 * probe) and the kprobe family at the function holding it, my_fill():
 *
 *   kisim compare --arch x86_64 --module examples/my_marker.c \
 *       --workload my_marker:my_run --size 200 --expect 136f0 --site my_event
 *
 * Every armed row takes 200 hits, one per call (docs/compare.md, "Your own
 * site"). The checksum is the sum of my_fill()'s results.
 */
#include <linux/module.h>
#include <linux/marker.h>

noinline unsigned long my_fill(unsigned long n)
{
	unsigned long i, sum = 0;

	trace_mark(my_event, "n %lu", n);
	for (i = 0; i < 4; i++)
		sum += n ^ i;
	return sum;
}

unsigned long my_run(unsigned long size)
{
	unsigned long i, sum = 0;

	for (i = 0; i < size; i++)
		sum += my_fill(i);
	return sum;
}
