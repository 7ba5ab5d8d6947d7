// SPDX-License-Identifier: GPL-2.0
/*
 * Cross-CPU function calls and stop_machine(), after Linux v5.10
 * kernel/smp.c (smp_call_function_many_cond(), flush_smp_call_function_queue(),
 * the csd lock) and kernel/stop_machine.c (multi_cpu_stop() and its state
 * machine). Neither the checker's guest nor kisim's kernel has stopper
 * threads, so stop_machine() runs multi_cpu_stop() on the other CPUs from
 * the call-function IPI instead; the state machine, its acknowledgements and
 * the "first online CPU runs fn" rule are v5.10's.
 */
#include "guest.h"

/* struct __call_single_data (include/linux/smp.h) */
struct csd {
	struct csd *next;		/* llist_node */
	u32 flags;
	smp_call_func_t func;
	void *info;
};

#define CSD_FLAG_LOCK		0x01
#define CSD_TYPE_SYNC		0x10

/* cfd_data: one csd per sender and target; call_single_queue: one llist per target. */
static struct csd cfd[PC_NR_CPUS][PC_NR_CPUS];
static struct csd *call_single_queue[PC_NR_CPUS];

static void csd_lock_wait(struct csd *csd)
{
	while (__atomic_load_n(&csd->flags, __ATOMIC_ACQUIRE) & CSD_FLAG_LOCK)
		cpu_relax();
}

static void csd_lock(struct csd *csd)
{
	csd_lock_wait(csd);
	csd->flags |= CSD_FLAG_LOCK;
	smp_wmb();		/* the lock before the csd's other fields */
}

static void csd_unlock(struct csd *csd)
{
	__atomic_store_n(&csd->flags, 0, __ATOMIC_RELEASE);	/* smp_store_release() */
}

/* llist_add(): true if the list was empty (include/linux/llist.h) */
static bool llist_add(struct csd *node, struct csd **head)
{
	struct csd *first = __atomic_load_n(head, __ATOMIC_RELAXED);

	do {
		node->next = first;
	} while (!__atomic_compare_exchange_n(head, &first, node, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return first == NULL;
}

/* cpumask_weight() and cpumask_first(), without the compiler's library calls */
static int cpumask_weight(unsigned long mask)
{
	int n = 0;

	for (; mask; mask &= mask - 1)
		n++;
	return n;
}

static int cpumask_first(unsigned long mask)
{
	int cpu = 0;

	while (!(mask & (1UL << cpu)))
		cpu++;
	return cpu;
}

/* cpumask_and(cfd->cpumask, mask, cpu_online_mask) without this CPU */
static unsigned long others_online(int this)
{
	return READ_ONCE(pc_online) & ~(1UL << this);
}

void smp_call_function(smp_call_func_t func, void *info, int wait)
{
	int this = smp_processor_id(), cpu;
	unsigned long mask = others_online(this);
	unsigned long ipi = 0;		/* cfd->cpumask_ipi */

	for (cpu = 0; cpu < pc_nr_cpus; cpu++) {
		struct csd *csd = &cfd[this][cpu];

		if (!(mask & (1UL << cpu)))
			continue;
		csd_lock(csd);
		if (wait)
			csd->flags |= CSD_TYPE_SYNC;
		csd->func = func;
		csd->info = info;
		if (llist_add(csd, &call_single_queue[cpu]))
			ipi |= 1UL << cpu;
	}
	/* Send a message to all CPUs in the map */
	if (ipi)
		arch_send_call_function_ipi_mask(ipi);
	if (!wait)
		return;
	for (cpu = 0; cpu < pc_nr_cpus; cpu++)
		if (mask & (1UL << cpu))
			csd_lock_wait(&cfd[this][cpu]);
}

void on_each_cpu(smp_call_func_t func, void *info, int wait)
{
	unsigned long flags;

	smp_call_function(func, info, wait);
	local_irq_save(flags);
	func(info);
	local_irq_restore(flags);
}

/* flush_smp_call_function_queue(): run every queued csd, oldest first. */
void generic_smp_call_function_interrupt(void)
{
	struct csd *entry = __atomic_exchange_n(&call_single_queue[smp_processor_id()], NULL,
						__ATOMIC_SEQ_CST);
	struct csd *fifo = NULL, *next;

	for (; entry; entry = next) {		/* llist_reverse_order() */
		next = entry->next;
		entry->next = fifo;
		fifo = entry;
	}
	for (entry = fifo; entry; entry = next) {
		smp_call_func_t func = entry->func;
		void *info = entry->info;

		next = entry->next;
		if (entry->flags & CSD_TYPE_SYNC) {
			func(info);
			csd_unlock(entry);
		} else {
			csd_unlock(entry);
			func(info);
		}
	}
}

/* -- kernel/stop_machine.c -- */
enum multi_stop_state {
	MULTI_STOP_NONE,		/* Dummy starting state for thread. */
	MULTI_STOP_PREPARE,		/* Awaiting everyone to be scheduled. */
	MULTI_STOP_DISABLE_IRQ,		/* Disable interrupts. */
	MULTI_STOP_RUN,			/* Run the function */
	MULTI_STOP_EXIT,		/* Exit */
};

struct multi_stop_data {
	cpu_stop_fn_t fn;
	void *data;
	int active_cpu;			/* cpumask_first() of the CPUs stopped */
	int num_threads;
	int thread_ack;			/* atomic_t */
	enum multi_stop_state state;
	int done;			/* the stoppers still running (cpu_stop_done) */
};

static void set_state(struct multi_stop_data *msdata, enum multi_stop_state newstate)
{
	/* Reset ack counter. */
	__atomic_store_n(&msdata->thread_ack, msdata->num_threads, __ATOMIC_RELAXED);
	smp_wmb();
	WRITE_ONCE(msdata->state, newstate);
}

/* Last one to ack a state moves to the next state. */
static void ack_state(struct multi_stop_data *msdata)
{
	if (__atomic_sub_fetch(&msdata->thread_ack, 1, __ATOMIC_SEQ_CST) == 0)
		set_state(msdata, msdata->state + 1);
}

/* This is the cpu_stop function which stops the CPU. */
static int multi_cpu_stop(struct multi_stop_data *msdata)
{
	enum multi_stop_state newstate, curstate = MULTI_STOP_NONE;
	bool is_active = smp_processor_id() == msdata->active_cpu;
	unsigned long flags;
	int err = 0;

	local_irq_save(flags);
	do {
		/* Chill out and ensure we re-read multi_stop_state. */
		cpu_relax();
		newstate = READ_ONCE(msdata->state);
		if (newstate != curstate) {
			curstate = newstate;
			switch (curstate) {
			case MULTI_STOP_DISABLE_IRQ:
				/* local_irq_disable(): already, since the save above */
				break;
			case MULTI_STOP_RUN:
				if (is_active)
					err = msdata->fn(msdata->data);
				break;
			default:
				break;
			}
			ack_state(msdata);
		}
	} while (curstate != MULTI_STOP_EXIT);
	local_irq_restore(flags);
	return err;
}

static void multi_cpu_stop_ipi(void *data)
{
	struct multi_stop_data *msdata = data;

	multi_cpu_stop(msdata);
	__atomic_sub_fetch(&msdata->done, 1, __ATOMIC_SEQ_CST);	/* cpu_stop_signal_done() */
}

/*
 * stop_machine(fn, data, NULL): fn runs on the first online CPU, all others
 * spin. msdata is on the caller's stack, as in stop_machine_cpuslocked().
 * The caller takes part even before it is online (v5.10 runs fn on it
 * alone then, with interrupts off).
 */
int stop_machine(cpu_stop_fn_t fn, void *data, const void *cpus)
{
	int this = smp_processor_id();
	unsigned long stopped = others_online(this) | 1UL << this;
	struct multi_stop_data msdata = {
		.fn = fn,
		.data = data,
		.active_cpu = cpumask_first(stopped),
		.num_threads = cpumask_weight(stopped),
		.done = cpumask_weight(stopped) - 1,
	};
	int err;

	set_state(&msdata, MULTI_STOP_PREPARE);
	smp_call_function(multi_cpu_stop_ipi, &msdata, 0);	/* stop_cpus() */
	err = multi_cpu_stop(&msdata);
	while (__atomic_load_n(&msdata.done, __ATOMIC_ACQUIRE))	/* wait_for_completion() */
		cpu_relax();
	return err;
}
