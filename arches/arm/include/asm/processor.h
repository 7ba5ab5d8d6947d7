/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_PROCESSOR_H
#define _ASM_PROCESSOR_H

#define ARCH_NAME	"arm"

static __always_inline unsigned long current_stack_pointer(void)
{
	unsigned long sp;

	__asm__("mov %0, sp" : "=r" (sp));
	return sp;
}

/*
 * The frame __switch_to_asm pops for a task that never ran: r4-r11
 * (zero) and pc = ret_from_fork. Eight bytes stay free at the top so
 * that sp is 8-byte aligned (AAPCS) once the frame is popped.
 */
static inline unsigned long arch_init_task_stack(unsigned long top, unsigned long entry)
{
	unsigned long *sp = (unsigned long *)(top - 8) - 9;
	int i;

	for (i = 0; i < 8; i++)
		sp[i] = 0;
	sp[8] = entry;
	return (unsigned long)sp;
}

#endif
