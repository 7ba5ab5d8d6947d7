/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct pt_regs accessors (include/asm-generic/ptrace.h and the arches'
 * asm/ptrace.h, v5.10), from the field names each arch's <asm/ptrace.h>
 * gives: PT_REGS_RETURN, PT_REGS_IP, PT_REGS_SP, PT_REGS_FP.
 */
#ifndef _KISIM_PTRACE_H
#define _KISIM_PTRACE_H

#include <asm/ptrace.h>

static inline unsigned long regs_return_value(struct pt_regs *regs)
{
	return regs->PT_REGS_RETURN;
}

static inline unsigned long instruction_pointer(struct pt_regs *regs)
{
	return regs->PT_REGS_IP;
}

static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val)
{
	regs->PT_REGS_IP = val;
}

static inline unsigned long kernel_stack_pointer(struct pt_regs *regs)
{
	return regs->PT_REGS_SP;
}

/* The frame pointer the unwinder starts from (kernel/stacktrace.c). */
static inline unsigned long frame_pointer(struct pt_regs *regs)
{
	return regs->PT_REGS_FP;
}

#endif
