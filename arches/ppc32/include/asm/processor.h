/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_PROCESSOR_H
#define _ASM_PROCESSOR_H

#define ARCH_NAME	"ppc32"

static __always_inline unsigned long current_stack_pointer(void)
{
	unsigned long sp;

	__asm__("mr %0, 1" : "=r" (sp));
	return sp;
}

/*
 * The frame __switch_to_asm pops for a task that never ran (96 bytes:
 * back chain, pad, LR = ret_from_fork, CR, r14-r31 zero). Below the top
 * 16 bytes stay free with a zero back chain: the frame ret_from_fork
 * calls from.
 */
static inline unsigned long arch_init_task_stack(unsigned long top, unsigned long entry)
{
	unsigned long *frame = (unsigned long *)(top - 16 - 96);
	int i;

	for (i = 0; i < 24 + 4; i++)
		frame[i] = 0;
	frame[0] = top - 16;	/* back chain */
	frame[2] = entry;	/* LR */
	return (unsigned long)frame;
}

#endif
