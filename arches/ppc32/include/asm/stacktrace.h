/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerPC back-chain unwinding (arch/powerpc/kernel/stacktrace.c, v5.10):
 * word 0 of every frame is the caller's stack pointer (the back chain),
 * and a function saves its return address (LR) in word 1 of its caller's
 * frame. The frame pointer is r1 itself.
 */
#ifndef _ASM_STACKTRACE_H
#define _ASM_STACKTRACE_H

struct stackframe {
	unsigned long fp;	/* this function's stack pointer (r1) */
	unsigned long sp;	/* its stack pointer at entry: its caller's r1 */
	unsigned long pc;	/* where it returns to */
};

static __always_inline void arch_unwind_frame(struct stackframe *frame)
{
	unsigned long caller = *(unsigned long *)frame->fp;

	frame->sp = caller;
	frame->fp = caller;
	frame->pc = caller ? ((unsigned long *)caller)[1] : 0;
}

/*
 * Where a kprobe trap's struct pt_regs is, from the entry stack pointer of
 * the handler the trap called: the host leaves a 16-byte frame below
 * pt_regs for the LR save (probes/kprobes.py _enter, STACK_HEADROOM 16).
 */
#define KPROBE_TRAP_REGS_OFFSET		16

#endif
