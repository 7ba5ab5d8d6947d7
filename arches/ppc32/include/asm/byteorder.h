/* SPDX-License-Identifier: GPL-2.0 */
/* arch/powerpc/include/uapi/asm/byteorder.h (v5.10): a big-endian CPU. */
#ifndef _ASM_BYTEORDER_H
#define _ASM_BYTEORDER_H

#include <linux/byteorder/big_endian.h>

#endif
