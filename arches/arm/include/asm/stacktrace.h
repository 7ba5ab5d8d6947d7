/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM frame-pointer unwinding (arch/arm/kernel/stacktrace.c unwind_frame,
 * v5.10, for the frame record clang's ARM-mode code builds): the prologue
 * pushes {..., r11, lr} and points r11 at the saved r11, so fp[0] is the
 * caller's fp and fp[1] the return address; the push started at the
 * function's entry stack pointer, fp + 8.
 */
#ifndef _ASM_STACKTRACE_H
#define _ASM_STACKTRACE_H

struct stackframe {
	unsigned long fp;	/* this function's frame pointer (r11) */
	unsigned long sp;	/* its stack pointer at entry (kernel_stack_pointer of a probe there) */
	unsigned long pc;	/* where it returns to */
};

static __always_inline void arch_unwind_frame(struct stackframe *frame)
{
	unsigned long *fp = (unsigned long *)frame->fp;

	frame->pc = fp[1];
	frame->sp = frame->fp + 2 * sizeof(long);
	frame->fp = fp[0];
}

/*
 * Where a kprobe trap's struct pt_regs is, from the entry stack pointer of
 * the handler the trap called (lr = kprobe_exc_return, sp = pt_regs:
 * probes/kprobes.py _enter, STACK_HEADROOM 0).
 */
#define KPROBE_TRAP_REGS_OFFSET		0

#endif
