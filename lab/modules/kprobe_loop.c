// SPDX-License-Identifier: GPL-2.0
/*
 * The loop of LTTng's marker microbenchmark with an empty kprobe attached
 * (Desnoyers, "performance measurements of the Linux Kernel Markers", 2006,
 * 3 GHz Pentium 4: "kprobe adds 4178.23 cycles" per iteration). The write-up
 * does not say where in the loop the probe sat; here the loop's body is a
 * call of kpl_site(), whose entry the host probes, and lab/microbench.py runs
 * the loop without and with the probe, as ``kisim kprobe`` measures one. A
 * module of its own, so that the marker loops' builds are not changed by it.
 */
#include <linux/kernel.h>
#include <linux/module.h>

/* The probed site: the host places its kprobe at this function's entry. */
noinline void kpl_site(void)
{
	barrier();
}

/* One hit per iteration; 0. */
int kpl_run(u32 iters)
{
	u32 i;

	for (i = 0; i < iters; i++) {
		__asm__ __volatile__("");
		kpl_site();
	}
	return 0;
}
