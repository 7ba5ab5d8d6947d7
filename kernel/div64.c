// SPDX-License-Identifier: GPL-2.0
/*
 * __div64_32: the 64-by-32 division behind do_div() where longs are 32 bits
 * (<asm-generic/div64.h>), with the contract of lib/math/div64.c (v5.10):
 * *dividend becomes the quotient, the remainder is returned. The kernel does
 * not link the compiler's runtime, so this uses 32-bit operations only:
 * the high word is one 32-bit division, the low word is shifted in a bit
 * at a time (restoring binary long division).
 */
#include <linux/kernel.h>
#include <asm/div64.h>

#if BITS_PER_LONG == 32

u32 __div64_32(u64 *dividend, u32 divisor)
{
	u32 high = *dividend >> 32, low = (u32)*dividend;
	u32 q_high = high / divisor, q_low = 0, rem = high % divisor;
	int i;

	for (i = 0; i < 32; i++) {
		u32 carry = rem >> 31;		/* rem < divisor, so 2 * rem < 2^33 */

		rem = (rem << 1) | (low >> 31);
		low <<= 1;
		q_low <<= 1;
		if (carry || rem >= divisor) {	/* subtracting mod 2^32 is exact here */
			rem -= divisor;
			q_low |= 1;
		}
	}
	*dividend = ((u64)q_high << 32) | q_low;
	return rem;
}

#endif
