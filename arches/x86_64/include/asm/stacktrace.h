/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 frame-pointer unwinding (arch/x86/kernel/unwind_frame.c, v5.10):
 * with -fno-omit-frame-pointer every function pushes rbp and points rbp
 * at the pushed value, so fp[0] is the caller's rbp and fp[1] the return
 * address; the call pushed that return address at the callee's entry
 * stack pointer, fp + 8.
 */
#ifndef _ASM_STACKTRACE_H
#define _ASM_STACKTRACE_H

struct stackframe {
	unsigned long fp;	/* this function's frame pointer */
	unsigned long sp;	/* its stack pointer at entry (kernel_stack_pointer of a probe there) */
	unsigned long pc;	/* where it returns to */
};

static __always_inline void arch_unwind_frame(struct stackframe *frame)
{
	unsigned long *fp = (unsigned long *)frame->fp;

	frame->pc = fp[1];
	frame->sp = frame->fp + sizeof(long);
	frame->fp = fp[0];
}

/*
 * Where a kprobe trap's struct pt_regs is, from the entry stack pointer of
 * the handler the trap called: the host pushed the return address (to
 * kprobe_exc_return) just below pt_regs (probes/kprobes.py _enter,
 * STACK_HEADROOM 0).
 */
#define KPROBE_TRAP_REGS_OFFSET		8

#endif
