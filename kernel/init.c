// SPDX-License-Identifier: GPL-2.0
/*
 * Boot. Every CPU enters start_kernel(cpu, ncpus) on its own boot stack
 * (arches/<arch>/entry.S). CPU 0 sets up memory and the scheduler and
 * starts init; the others wait for it, then every CPU becomes its idle
 * task. init runs the workload named in boot_params, reports its
 * checksum to the host and lets the idle loops end the run.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <kisim/hypercall.h>
#include <kisim/workload.h>
#include <linux/module.h>

extern unsigned long (*module_workload)(unsigned long size);

#ifdef CONFIG_PATCHING_IN_GUEST
/* set_cpu_online(): the kernel's patching code may now IPI this CPU (kernel/patching/). */
void pc_cpu_online(int cpu);
#endif

/* Filled in by the host before the first instruction (sim/guest.py). */
struct boot_params boot_params __section(".data.boot_params") = {
	.magic = 0,
	.size = 0,
	.flags = 0,
	.workload = "",
};

/* boot_params.workload in printk: it may fill its array, with no NUL. */
#define WORKLOAD_FMT	"%." __stringify(WORKLOAD_NAME_LEN) "s"

union thread_union init_stacks[CONFIG_NR_CPUS] __aligned(THREAD_SIZE);

static int boot_done;

static const struct workload *find_workload(const char *name)
{
	int i;

	for (i = 0; i < nr_workloads; i++)
		if (!strncmp(workloads[i].name, name, WORKLOAD_NAME_LEN))
			return &workloads[i];
	return NULL;
}

static int kernel_init(void *unused)
{
	const struct workload *w = NULL;
	const char *name = boot_params.workload;
	u32 size;
	unsigned long sum;	/* a built-in workload's is a u32 */

	(void)unused;
	if (boot_params.magic != BOOT_PARAMS_MAGIC)
		panic("no boot parameters from the host (magic %#x)", boot_params.magic);
	if (!module_workload) {
		w = find_workload(boot_params.workload);
		if (!w)
			panic("unknown workload '" WORKLOAD_FMT "'", boot_params.workload);
		name = w->name;
	}
	size = boot_params.size || !w ? boot_params.size : w->default_size;
	module_init_all();
	hypercall2(HC_WORKLOAD, (unsigned long)name, size);
	printk("kisim: " ARCH_NAME " kernel, %d CPU%s, workload " WORKLOAD_FMT " size %u\n",
	       nr_cpus, nr_cpus == 1 ? "" : "s", name, size);
	sum = w ? w->run(size) : module_workload(size);
	printk("kisim: " WORKLOAD_FMT " done, checksum %08lx\n", name, sum);
	hypercall1(HC_CHECKSUM, sum);
	module_exit_all();
	smp_store_release(&system_halting, 1);
	return 0;
}

asmlinkage __noreturn void start_kernel(int cpu, int ncpus)
{
	sched_init_idle(cpu);
#ifdef CONFIG_PATCHING_IN_GUEST
	pc_cpu_online(cpu);		/* smp_processor_id() is right from here on */
#endif
	if (cpu == 0) {
		kmem_cache_init();
		sched_init(ncpus);
		kernel_thread(kernel_init, NULL, "init");
		smp_store_release(&boot_done, 1);
	} else {
		while (!smp_load_acquire(&boot_done))
			hypercall0(HC_IDLE);
	}
	cpu_idle();
}
NOKPROBE_SYMBOL(start_kernel);
