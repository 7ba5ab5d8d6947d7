/* SPDX-License-Identifier: GPL-2.0 */
/* struct pt_regs accessors (arch/arm/include/asm/ptrace.h, v5.10). */
#ifndef _ASM_PTRACE_H
#define _ASM_PTRACE_H

#include <asm/kprobes.h>

#ifndef ARM_r0
#define ARM_r0		uregs[0]
#endif
#ifndef ARM_fp
#define ARM_fp		uregs[11]
#endif

static inline unsigned long regs_return_value(struct pt_regs *regs)
{
	return regs->ARM_r0;
}

static inline unsigned long instruction_pointer(struct pt_regs *regs)
{
	return regs->ARM_pc;
}

static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val)
{
	regs->ARM_pc = val;
}

static inline unsigned long kernel_stack_pointer(struct pt_regs *regs)
{
	return regs->ARM_sp;
}

static inline unsigned long frame_pointer(struct pt_regs *regs)
{
	return regs->ARM_fp;
}

#endif
