/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tasks and the scheduler: one shared FIFO runqueue under a spinlock,
 * round-robin, cooperative (a task runs until it blocks, yields or exits),
 * with a real context switch (__switch_to_asm in arches/<arch>/entry.S).
 */
#ifndef _LINUX_SCHED_H
#define _LINUX_SCHED_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <kisim/thread_info.h>

#define TASK_RUNNING		0
#define TASK_INTERRUPTIBLE	1
#define TASK_UNINTERRUPTIBLE	2
#define TASK_DEAD		64

#define PF_IDLE			0x00000002

#define TASK_COMM_LEN		16
#define MAX_RT_PRIO		100	/* include/linux/sched.h (2.6.28) */
#define MAX_PRIO		(MAX_RT_PRIO + 40)
#define DEFAULT_PRIO		(MAX_RT_PRIO + 20)
#define NR_TASK_STACKS		64	/* live tasks besides the idle tasks */

struct task_struct {
	unsigned long sp;		/* saved by __switch_to_asm */
	long state;
	u32 pid;
	u32 flags;
	char comm[TASK_COMM_LEN];
	struct task_struct *parent;
	struct task_struct *rq_next;
	int on_cpu;			/* running, or being switched out */
	int nr_children;		/* live children (wait_for_children) */
	int (*fn)(void *);
	void *arg;
	union thread_union *stack;
	u32 nvcsw;			/* times switched in */
	int prio;			/* DEFAULT_PRIO, or MAX_PRIO for idle */
#ifdef CONFIG_FUNCTION_GRAPH_TRACER
	int curr_ret_stack;		/* top of the ret_stack in thread_info, 0 = empty */
#endif
};

extern int nr_cpus;
extern int system_halting;

void sched_init(int ncpus);
void sched_init_idle(int cpu);
void schedule(void);
int wake_up_process(struct task_struct *p);
struct task_struct *kernel_thread(int (*fn)(void *), void *arg, const char *name);
void wait_for_children(void);
__noreturn void do_exit(void);
__noreturn void cpu_idle(void);
int nr_running(void);

/* set_current_state() orders the store before what follows (a full barrier
 * after it, as v5.10's smp_store_mb); __set_current_state() does not. */
static __always_inline void __set_current_state(long state)
{
	WRITE_ONCE(current->state, state);
}

static __always_inline void set_current_state(long state)
{
	__set_current_state(state);
	smp_mb();
}

#endif
