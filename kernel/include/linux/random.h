/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Random numbers for modules (include/linux/random.h, include/linux/prandom.h).
 * kisim runs are deterministic, so these come from one xorshift32 stream
 * with a fixed seed (kernel/random.c): the same values on every run and
 * every arch. get_random_u32_above/below follow the v6.2 API that the
 * newest self-tests call.
 */
#ifndef _LINUX_RANDOM_H
#define _LINUX_RANDOM_H

#include <linux/types.h>

u32 get_random_u32(void);
u32 get_random_u32_below(u32 ceil);
u32 get_random_u32_above(u32 floor);
#define prandom_u32()	get_random_u32()

#endif
