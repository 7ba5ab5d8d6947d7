// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's system-call path: entry stub, dispatch table, exit.
 * (Host hypercalls are something else: include/kisim/hypercall.h.)
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <linux/marker.h>
#include <kisim/hypercall.h>

typedef long (*sys_call_ptr_t)(long, long, long);

static long sys_getpid(long a0, long a1, long a2)
{
	(void)a0; (void)a1; (void)a2;
	return current->pid;
}

static long sys_getppid(long a0, long a1, long a2)
{
	(void)a0; (void)a1; (void)a2;
	return current->parent ? current->parent->pid : 0;
}

static long sys_sched_yield(long a0, long a1, long a2)
{
	(void)a0; (void)a1; (void)a2;
	schedule();
	return 0;
}

static long sys_write(long fd, long buf, long len)
{
	(void)fd;
	hypercall2(HC_WRITE, (unsigned long)buf, (unsigned long)len);
	return len;
}

static long sys_getcpu(long a0, long a1, long a2)
{
	(void)a0; (void)a1; (void)a2;
	return smp_processor_id();
}

static const sys_call_ptr_t sys_call_table[NR_syscalls] = {
	[__NR_getpid]		= sys_getpid,
	[__NR_getppid]		= sys_getppid,
	[__NR_sched_yield]	= sys_sched_yield,
	[__NR_write]		= sys_write,
	[__NR_getcpu]		= sys_getcpu,
};

noinline void do_syscall(struct pt_regs *regs)
{
	unsigned long nr = regs->nr;

	trace_mark(syscall_entry, "syscall_id %d ip %lu", (int)regs->nr, regs->ip);
	if (nr < NR_syscalls)
		regs->ret = sys_call_table[nr](regs->args[0], regs->args[1], regs->args[2]);
	else
		regs->ret = -ENOSYS;
	trace_mark(syscall_exit, "ret %ld", regs->ret);
}

/* The entry stub: saves the caller's registers as a pt_regs. */
noinline long system_call(long nr, long a0, long a1, long a2)
{
	struct pt_regs regs = {
		.nr = nr,
		.args = { a0, a1, a2 },
		.ret = 0,
		.ip = _RET_IP_,
	};

	do_syscall(&regs);
	return regs.ret;
}
