/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/uapi/asm-generic/int-ll64.h (v5.10): the __u8..__s64 types every
 * arch's <asm/types.h> gives. They are the compiler's fixed-width types, as
 * <linux/types.h>'s u8..s64 are (so __u64 is u64 on every arch).
 */
#ifndef _ASM_GENERIC_INT_LL64_H
#define _ASM_GENERIC_INT_LL64_H

typedef __INT8_TYPE__		__s8;
typedef __UINT8_TYPE__		__u8;
typedef __INT16_TYPE__		__s16;
typedef __UINT16_TYPE__		__u16;
typedef __INT32_TYPE__		__s32;
typedef __UINT32_TYPE__		__u32;
typedef __INT64_TYPE__		__s64;
typedef __UINT64_TYPE__		__u64;

#endif
