/* SPDX-License-Identifier: GPL-2.0 */
/* arch/x86/include/uapi/asm/byteorder.h (v5.10): a little-endian CPU. */
#ifndef _ASM_BYTEORDER_H
#define _ASM_BYTEORDER_H

#include <linux/byteorder/little_endian.h>

#endif
