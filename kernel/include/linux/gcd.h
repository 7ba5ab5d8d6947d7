/* SPDX-License-Identifier: GPL-2.0 */
/* include/linux/gcd.h (v5.10): lib/math/gcd.c, brought by a module. */
#ifndef _LINUX_GCD_H
#define _LINUX_GCD_H

#include <linux/compiler.h>

/* The greatest common divisor of a and b; the other one when either is 0. */
unsigned long gcd(unsigned long a, unsigned long b) __attribute_const__;

#endif
