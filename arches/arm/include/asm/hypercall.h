/* SPDX-License-Identifier: GPL-2.0 */
/* ARM hypercall: `svc #0`, nr in r0, args in r1-r3, result in r0. */
#ifndef _ASM_HYPERCALL_H
#define _ASM_HYPERCALL_H

static __always_inline unsigned long arch_hypercall(unsigned long nr, unsigned long a1,
						    unsigned long a2, unsigned long a3)
{
	register unsigned long r0 __asm__("r0") = nr;
	register unsigned long r1 __asm__("r1") = a1;
	register unsigned long r2 __asm__("r2") = a2;
	register unsigned long r3 __asm__("r3") = a3;

	__asm__ __volatile__("svc #0"
			     : "+r" (r0)
			     : "r" (r1), "r" (r2), "r" (r3)
			     : "memory");
	return r0;
}

#endif
