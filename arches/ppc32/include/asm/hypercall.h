/* SPDX-License-Identifier: GPL-2.0 */
/* PowerPC hypercall: `sc`, nr in r3, args in r4-r6, result in r3. */
#ifndef _ASM_HYPERCALL_H
#define _ASM_HYPERCALL_H

static __always_inline unsigned long arch_hypercall(unsigned long nr, unsigned long a1,
						    unsigned long a2, unsigned long a3)
{
	register unsigned long r3 __asm__("r3") = nr;
	register unsigned long r4 __asm__("r4") = a1;
	register unsigned long r5 __asm__("r5") = a2;
	register unsigned long r6 __asm__("r6") = a3;

	__asm__ __volatile__("sc"
			     : "+r" (r3)
			     : "r" (r4), "r" (r5), "r" (r6)
			     : "cr0", "memory");
	return r3;
}

#endif
