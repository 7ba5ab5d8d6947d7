/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation flags (include/linux/gfp.h). kisim's slab takes the 2.6 values
 * its kmemtrace events record (GFP_KERNEL 0xd0) and does not act on them:
 * it never sleeps, reclaims or does I/O. __GFP_ZERO (its 2.6 value) zeroes
 * what kmalloc_array() and kcalloc() return (linux/slab.h); kmalloc() itself
 * does not act on it: use kzalloc().
 */
#ifndef _LINUX_GFP_H
#define _LINUX_GFP_H

#include <linux/types.h>

#define __GFP_WAIT		0x10u
#define __GFP_HIGH		0x20u
#define __GFP_IO		0x40u
#define __GFP_FS		0x80u
#define __GFP_NOWARN		0x200u
#define __GFP_ZERO		0x8000u

#define GFP_ATOMIC		(__GFP_HIGH)
#define GFP_NOWAIT		0u
#define GFP_NOIO		(__GFP_WAIT)
#define GFP_NOFS		(__GFP_WAIT | __GFP_IO)
#define GFP_KERNEL		(__GFP_WAIT | __GFP_IO | __GFP_FS)	/* 0xd0 */

#endif
