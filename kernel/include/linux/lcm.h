/* SPDX-License-Identifier: GPL-2.0 */
/* include/linux/lcm.h (v5.10): lib/math/lcm.c, brought by a module (with gcd.c). */
#ifndef _LINUX_LCM_H
#define _LINUX_LCM_H

#include <linux/compiler.h>

/* The least common multiple of a and b; 0 when either is 0. */
unsigned long lcm(unsigned long a, unsigned long b) __attribute_const__;
/* lcm(a, b), or whichever of b and a is not 0 when that is 0. */
unsigned long lcm_not_zero(unsigned long a, unsigned long b) __attribute_const__;

#endif
