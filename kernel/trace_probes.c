// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint probes that record into the per-CPU ring buffer, with the
 * field layouts of lttng-modules' instrumentation/events (kmem.h,
 * sched.h): the host registers them on the tracepoints it is asked to
 * record (tracing/session.py), so recording costs guest instructions.
 *
 * Payloads are unsigned longs in the order of tracing/events.py, with a
 * task's comm copied as 16 bytes. prio is the task's prio minus MAX_RT_PRIO,
 * as lttng-modules' sched probes report it.
 */
#include <linux/kernel.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>

typedef void (*commit_fn)(void);

/*
 * Every probe has a twin, probe_<event>_filtered, for an event that has a
 * filter: it commits through ring_buffer_commit_filtered, and the host
 * registers it on the tracepoint instead of the plain probe
 * (tracing/session.py). The record is built by one always-inlined body, so
 * the plain probe's code is what it was without the twin.
 */
#define DEFINE_PROBE(name, proto, ...)						\
notrace void probe_##name proto							\
{										\
	const commit_fn commit = ring_buffer_commit;				\
	__VA_ARGS__;								\
}										\
notrace void probe_##name##_filtered proto					\
{										\
	const commit_fn commit = ring_buffer_commit_filtered;			\
	__VA_ARGS__;								\
}										\
NOTRACE_SYMBOL(probe_##name);							\
NOTRACE_SYMBOL(probe_##name##_filtered);					\
NOKPROBE_SYMBOL(probe_##name);							\
NOKPROBE_SYMBOL(probe_##name##_filtered)

static __always_inline void rb_alloc(commit_fn commit, unsigned int id, unsigned long call_site,
				     const void *ptr, size_t bytes_req, size_t bytes_alloc,
				     gfp_t gfp_flags)
{
	unsigned long *p = ring_buffer_reserve(id, 5 * sizeof(unsigned long));

	if (!p)
		return;
	p[0] = call_site;
	p[1] = (unsigned long)ptr;
	p[2] = bytes_req;
	p[3] = bytes_alloc;
	p[4] = gfp_flags;
	commit();
}

static __always_inline void rb_free(commit_fn commit, unsigned int id, unsigned long call_site,
				    const void *ptr)
{
	unsigned long *p = ring_buffer_reserve(id, 2 * sizeof(unsigned long));

	if (!p)
		return;
	p[0] = call_site;
	p[1] = (unsigned long)ptr;
	commit();
}

static notrace void rb_comm(char *dst, const struct task_struct *t)
{
	__builtin_memcpy(dst, t->comm, RB_COMM_LEN);
}

/* prev_comm[16], prev_tid, prev_prio, prev_state, next_comm[16], next_tid, next_prio */
static __always_inline void rb_sched_switch(commit_fn commit, struct task_struct *prev,
					    struct task_struct *next)
{
	unsigned long *p = ring_buffer_reserve(RB_EV_SCHED_SWITCH,
					       2 * RB_COMM_LEN + 5 * sizeof(unsigned long));

	if (!p)
		return;
	rb_comm((char *)p, prev);
	p += RB_COMM_LEN / sizeof(unsigned long);
	p[0] = prev->pid;
	p[1] = prev->prio - MAX_RT_PRIO;
	p[2] = prev->state;
	rb_comm((char *)(p + 3), next);
	p += 3 + RB_COMM_LEN / sizeof(unsigned long);
	p[0] = next->pid;
	p[1] = next->prio - MAX_RT_PRIO;
	commit();
}

/* comm[16], tid, prio, target_cpu */
static __always_inline void rb_sched_wakeup(commit_fn commit, struct task_struct *t)
{
	unsigned long *p = ring_buffer_reserve(RB_EV_SCHED_WAKEUP,
					       RB_COMM_LEN + 3 * sizeof(unsigned long));

	if (!p)
		return;
	rb_comm((char *)p, t);
	p += RB_COMM_LEN / sizeof(unsigned long);
	p[0] = t->pid;
	p[1] = t->prio - MAX_RT_PRIO;
	p[2] = smp_processor_id();
	commit();
}

DEFINE_PROBE(kmem_kmalloc, (unsigned long call_site, const void *ptr, size_t bytes_req,
			    size_t bytes_alloc, gfp_t gfp_flags),
	     rb_alloc(commit, RB_EV_KMEM_KMALLOC, call_site, ptr, bytes_req, bytes_alloc,
		      gfp_flags));
DEFINE_PROBE(kmem_cache_alloc, (unsigned long call_site, const void *ptr, size_t bytes_req,
				size_t bytes_alloc, gfp_t gfp_flags),
	     rb_alloc(commit, RB_EV_KMEM_CACHE_ALLOC, call_site, ptr, bytes_req, bytes_alloc,
		      gfp_flags));
DEFINE_PROBE(kmem_kfree, (unsigned long call_site, const void *ptr),
	     rb_free(commit, RB_EV_KMEM_KFREE, call_site, ptr));
DEFINE_PROBE(kmem_cache_free, (unsigned long call_site, const void *ptr),
	     rb_free(commit, RB_EV_KMEM_CACHE_FREE, call_site, ptr));
DEFINE_PROBE(sched_switch, (struct task_struct *prev, struct task_struct *next),
	     rb_sched_switch(commit, prev, next));
DEFINE_PROBE(sched_wakeup, (struct task_struct *t), rb_sched_wakeup(commit, t));

#ifdef CONFIG_KPROBES
#include <kisim/hypercall.h>
#include <kisim/kprobes.h>

/*
 * kprobe events (kernel/trace/trace_kprobe.c kprobe_dispatcher,
 * __kprobe_trace_func): the host runs the event's fetch program on the
 * trapped registers and memory and leaves the whole record (common fields,
 * probe address, arguments, strings) in this CPU's kprobe_event_record,
 * or answers 0 when the event's filter rejects it; the probe then records
 * it as the kernel does: reserve, copy, commit. The record's first u16 is
 * its event id (common_type). See probes/trace_kprobe.py. The slot holds
 * the largest record the kernel's ring buffer takes (ring_buffer.c
 * BUF_MAX_DATA_SIZE, under a page); the host answers 0 for a larger one.
 */
#define KPROBE_EVENT_RECORD	4096
u8 kprobe_event_record[CONFIG_NR_CPUS][KPROBE_EVENT_RECORD] __attribute__((aligned(8)));

static notrace void kprobe_event_commit(unsigned long len)
{
	const u8 *rec = kprobe_event_record[smp_processor_id()];
	void *dst;

	if (!len)
		return;
	dst = ring_buffer_reserve(*(const u16 *)rec, len);
	if (!dst)
		return;
	__builtin_memcpy(dst, rec, len);
	ring_buffer_commit();
}

notrace int kprobe_event_handler(struct kprobe *p, struct pt_regs *regs)
{
	kprobe_event_commit(hypercall3(HC_KPROBE_EVENT, (unsigned long)regs, (unsigned long)p, 0));
	return 0;
}

notrace int kretprobe_event_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kprobe_event_commit(hypercall3(HC_KPROBE_EVENT, (unsigned long)regs, (unsigned long)ri, 1));
	return 0;
}
NOTRACE_SYMBOL(kprobe_event_handler);
NOTRACE_SYMBOL(kretprobe_event_handler);
NOKPROBE_SYMBOL(kprobe_event_commit);
NOKPROBE_SYMBOL(kprobe_event_handler);
NOKPROBE_SYMBOL(kretprobe_event_handler);
#endif
