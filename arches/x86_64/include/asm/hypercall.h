/* SPDX-License-Identifier: GPL-2.0 */
/* x86-64 hypercall: `syscall`, nr in rdi, args in rsi rdx rcx, result in rax. */
#ifndef _ASM_HYPERCALL_H
#define _ASM_HYPERCALL_H

static __always_inline unsigned long arch_hypercall(unsigned long nr, unsigned long a1,
						    unsigned long a2, unsigned long a3)
{
	unsigned long ret;
	register unsigned long rcx __asm__("rcx") = a3;

	/* The instruction itself clobbers rcx and r11 (saved RIP, RFLAGS). */
	__asm__ __volatile__("syscall"
			     : "=a" (ret), "+r" (rcx)
			     : "D" (nr), "S" (a1), "d" (a2)
			     : "r11", "memory");
	return ret;
}

#endif
