/* SPDX-License-Identifier: GPL-2.0 */
/* struct pt_regs accessors (arch/powerpc/include/asm/ptrace.h, v5.10). */
#ifndef _ASM_PTRACE_H
#define _ASM_PTRACE_H

#include <asm/kprobes.h>

static inline unsigned long regs_return_value(struct pt_regs *regs)
{
	return regs->gpr[3];
}

static inline unsigned long instruction_pointer(struct pt_regs *regs)
{
	return regs->nip;
}

static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val)
{
	regs->nip = val;
}

static inline unsigned long kernel_stack_pointer(struct pt_regs *regs)
{
	return regs->gpr[1];
}

/* The back chain is the frame pointer: r1 (r31 is a copy of it). */
static inline unsigned long frame_pointer(struct pt_regs *regs)
{
	return regs->gpr[1];
}

#endif
