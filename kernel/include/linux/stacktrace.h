/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack traces (include/linux/stacktrace.h, v5.10): the return addresses
 * of the current call chain, newest first, from the frame pointers
 * (kernel/stacktrace.c). Each returns how many entries it stored.
 */
#ifndef _LINUX_STACKTRACE_H
#define _LINUX_STACKTRACE_H

#include <linux/types.h>

struct pt_regs;

unsigned int stack_trace_save(unsigned long *store, unsigned int size, unsigned int skipnr);
unsigned int stack_trace_save_regs(struct pt_regs *regs, unsigned long *store,
				   unsigned int size, unsigned int skipnr);

#endif
