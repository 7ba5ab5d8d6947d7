/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_KERNEL_H
#define _LINUX_KERNEL_H

#include <linux/types.h>
#include <linux/kconfig.h>
#include <linux/limits.h>
#include <linux/printk.h>
#include <linux/bug.h>
#include <linux/bitops.h>
#include <linux/string.h>
#include <linux/preempt.h>
#include <linux/minmax.h>
#include <linux/export.h>		/* through <linux/linkage.h> in v5.10 */
#include <linux/kstrtox.h>		/* v5.10 declares them here */
#include <asm/div64.h>
#include <asm/byteorder.h>		/* as v5.10's: cpu_to_le32 & co. */

/* include/linux/kernel.h and include/uapi/linux/const.h (v5.10). */
#define __ALIGN_KERNEL_MASK(x, mask)	(((x) + (mask)) & ~(mask))
#define __ALIGN_MASK(x, mask)	__ALIGN_KERNEL_MASK((x), (mask))
#define __ALIGN_KERNEL(x, a)	__ALIGN_KERNEL_MASK(x, (typeof(x))(a) - 1)
#define ALIGN(x, a)		__ALIGN_KERNEL((x), (a))
#define ALIGN_DOWN(x, a)	__ALIGN_KERNEL((x) - ((a) - 1), (a))
#define PTR_ALIGN(p, a)		((typeof(p))ALIGN((unsigned long)(p), (a)))
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define __round_mask(x, y)	((__typeof__(x))((y) - 1))
#define round_up(x, y)		((((x) - 1) | __round_mask(x, y)) + 1)
#define round_down(x, y)	((x) & ~__round_mask(x, y))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(ll, d)	DIV_ROUND_UP((unsigned long long)(ll), (d))
#define DIV_ROUND_CLOSEST(x, d)	(((x) + ((d) / 2)) / (d))
#define roundup(x, y)		((((x) + ((y) - 1)) / (y)) * (y))
#define rounddown(x, y)		((x) - ((x) % (y)))
#define REPEAT_BYTE(x)		((~0ul / 0xff) * (x))
#define upper_32_bits(n)	((u32)(((n) >> 16) >> 16))
#define lower_32_bits(n)	((u32)(n))
#define abs(x)			({ typeof(x) __x = (x); __x < 0 ? -__x : __x; })

/*
 * Hex digits (lib/hexdump.c, v5.10): hex_asc_lo/hi give a byte's low and
 * high digit in lower case; hex_to_bin() is a digit's value, either case,
 * or -1 for any other character.
 */
extern const char hex_asc[];
#define hex_asc_lo(x)	hex_asc[((x) & 0x0f)]
#define hex_asc_hi(x)	hex_asc[((x) & 0xf0) >> 4]
extern const char hex_asc_upper[];
#define hex_asc_upper_lo(x)	hex_asc_upper[((x) & 0x0f)]
#define hex_asc_upper_hi(x)	hex_asc_upper[((x) & 0xf0) >> 4]
int hex_to_bin(char ch);

#endif
