/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's own system calls. syscall(nr, a0, a1, a2) enters through
 * the entry stub system_call(), which builds a struct pt_regs and calls
 * do_syscall(): syscall_entry marker, dispatch through sys_call_table,
 * syscall_exit marker.
 */
#ifndef _LINUX_SYSCALLS_H
#define _LINUX_SYSCALLS_H

#include <linux/types.h>

#define __NR_getpid		0
#define __NR_getppid		1
#define __NR_sched_yield	2
#define __NR_write		3
#define __NR_getcpu		4
#define NR_syscalls		5

#define ENOSYS			38

struct pt_regs {
	long nr;
	long args[3];
	long ret;
	unsigned long ip;	/* the caller of system_call() */
};

long system_call(long nr, long a0, long a1, long a2);
void do_syscall(struct pt_regs *regs);

#define syscall(nr, a0, a1, a2)	system_call(nr, (long)(a0), (long)(a1), (long)(a2))

#endif
