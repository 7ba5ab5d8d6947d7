/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel stacks and thread_info, as in Linux 2.6 on x86-32: every stack is
 * THREAD_SIZE bytes, THREAD_SIZE-aligned, with the thread_info at its
 * lowest address, so that current_thread_info() is the stack pointer with
 * the low bits cleared. The CPU a task runs on lives there (TI_CPU), so
 * smp_processor_id() needs no per-CPU register. Included by the asm entry.
 */
#ifndef _KISIM_THREAD_INFO_H
#define _KISIM_THREAD_INFO_H

#define THREAD_SHIFT	13
#define THREAD_SIZE	8192	/* 1 << THREAD_SHIFT */
#define TI_CPU		0	/* offsetof(struct thread_info, cpu) */

#ifndef __ASSEMBLY__
#include <linux/types.h>
#include <asm/processor.h>
#include <linux/ftrace.h>

struct task_struct;

struct thread_info {
	u32 cpu;			/* must stay at TI_CPU */
	u32 preempt_count;
	struct task_struct *task;
#ifdef CONFIG_FUNCTION_GRAPH_TRACER
	/* the function-graph tracer's saved return addresses (kernel/ftrace.c) */
	struct ftrace_ret_stack ret_stack[FTRACE_RETFUNC_DEPTH];
#endif
};

union thread_union {
	struct thread_info thread_info;
	unsigned long stack[THREAD_SIZE / sizeof(unsigned long)];
};

static __always_inline struct thread_info *current_thread_info(void)
{
	return (struct thread_info *)(current_stack_pointer() & ~(unsigned long)(THREAD_SIZE - 1));
}

static __always_inline int smp_processor_id(void)
{
	return current_thread_info()->cpu;
}

#define current		(current_thread_info()->task)

/* The boot (idle) stack of each CPU; the asm entry switches to it. */
extern union thread_union init_stacks[CONFIG_NR_CPUS];
#endif

#endif
