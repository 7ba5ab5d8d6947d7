/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_PROCESSOR_H
#define _ASM_PROCESSOR_H

#define ARCH_NAME	"x86_64"

static __always_inline unsigned long current_stack_pointer(void)
{
	unsigned long sp;

	__asm__("mov %%rsp, %0" : "=r" (sp));
	return sp;
}

/*
 * The frame __switch_to_asm pops for a task that never ran: rbp, rbx,
 * r12-r15 (zero), then the return address ret_from_fork. 16 bytes stay
 * free at the top so that ret_from_fork starts 16-byte aligned.
 */
static inline unsigned long arch_init_task_stack(unsigned long top, unsigned long entry)
{
	unsigned long *sp = (unsigned long *)(top - 16) - 7;
	int i;

	for (i = 0; i < 6; i++)
		sp[i] = 0;
	sp[6] = entry;
	return (unsigned long)sp;
}

#endif
