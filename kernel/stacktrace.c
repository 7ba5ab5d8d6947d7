// SPDX-License-Identifier: GPL-2.0
/*
 * Stack traces from frame pointers (kernel/stacktrace.c and the arch's
 * arch_stack_walk, v5.10; the kretprobe handling of v5.15's
 * kretprobe_find_ret_addr, CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE).
 *
 * The arch gives one step (<asm/stacktrace.h>): from a function's frame
 * pointer, its return address, its entry stack pointer and its caller's
 * frame pointer. Two kinds of return address need more than that step:
 *
 * - kretprobe_trampoline (a probed function's return address was
 *   replaced): the real one is that of the current task's newest
 *   kretprobe instance entered at or above this frame's entry stack
 *   pointer, so nested probed functions each get their own;
 * - kprobe_exc_return (a kprobe trap's handler returns there): the trap's
 *   struct pt_regs lies just above the handler's entry stack pointer, and
 *   the walk goes on from the interrupted pc and frame pointer.
 *
 * The walk stops at a frame pointer outside the current task's stack or
 * one that does not move up it.
 */
#include <linux/kernel.h>
#include <linux/stacktrace.h>
#include <kisim/thread_info.h>
#include <asm/stacktrace.h>
#include <kisim/ptrace.h>

#ifdef CONFIG_KPROBES
#include <kisim/kprobes.h>
#include <linux/spinlock.h>

extern void kprobe_exc_return(void);

static __always_inline bool is_kprobe_trap_return(unsigned long pc)
{
	return pc == (unsigned long)kprobe_exc_return;
}
#else
static __always_inline bool is_kprobe_trap_return(unsigned long pc)
{
	return false;
}

static __always_inline unsigned long kretprobe_find_ret_addr(void *task, unsigned long sp,
							     unsigned long pc)
{
	return pc;
}
#endif

struct stack_trace_data {
	unsigned long *store;
	unsigned int size, skip, len;
};

static bool consume(struct stack_trace_data *c, unsigned long pc)
{
	if (c->skip) {
		c->skip--;
		return true;
	}
	c->store[c->len++] = pc;
	return c->len < c->size;
}

static bool frame_on_stack(unsigned long fp, unsigned long below)
{
	unsigned long base = (unsigned long)current_thread_info();

	return fp > below && fp >= base && fp < base + THREAD_SIZE - 2 * sizeof(long);
}

static notrace unsigned int walk_stack(struct stackframe *frame, struct stack_trace_data *c)
{
	unsigned long below = 0;

	while (c->len < c->size && frame_on_stack(frame->fp, below)) {
		below = frame->fp;
		arch_unwind_frame(frame);
		if (!frame->pc)
			break;
		if (is_kprobe_trap_return(frame->pc)) {
			struct pt_regs *regs = (struct pt_regs *)(frame->sp +
								  KPROBE_TRAP_REGS_OFFSET);

			frame->pc = instruction_pointer(regs);
			frame->fp = frame_pointer(regs);
			below = 0;	/* the interrupted frames may lie below the handler's */
		}
		frame->pc = kretprobe_find_ret_addr(current, frame->sp, frame->pc);
		if (!consume(c, frame->pc))
			break;
	}
	return c->len;
}

notrace noinline unsigned int stack_trace_save(unsigned long *store, unsigned int size,
					       unsigned int skipnr)
{
	struct stack_trace_data c = { store, size, skipnr, 0 };
	struct stackframe frame = { .fp = (unsigned long)__builtin_frame_address(0) };

	return size ? walk_stack(&frame, &c) : 0;
}

notrace unsigned int stack_trace_save_regs(struct pt_regs *regs, unsigned long *store,
					   unsigned int size, unsigned int skipnr)
{
	struct stack_trace_data c = { store, size, skipnr, 0 };
	struct stackframe frame = { .fp = frame_pointer(regs) };

	if (!size || !consume(&c, instruction_pointer(regs)))
		return c.len;
	return walk_stack(&frame, &c);
}
