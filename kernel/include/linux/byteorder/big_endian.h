/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/uapi/linux/byteorder/big_endian.h (v5.10): the conversions of a
 * big-endian CPU, and include/linux/byteorder/generic.h's short names.
 * asm/byteorder.h includes this on the arches of that byte order.
 */
#ifndef _LINUX_BYTEORDER_BIG_ENDIAN_H
#define _LINUX_BYTEORDER_BIG_ENDIAN_H

#define __BIG_ENDIAN 4321
#define __BIG_ENDIAN_BITFIELD

#include <linux/types.h>
#include <linux/swab.h>

#define __constant_htonl(x) ((__force __be32)(u32)(x))
#define __constant_ntohl(x) (u32)((__force __be32)(x))
#define __constant_htons(x) ((__force __be16)(u16)(x))
#define __constant_ntohs(x) (u16)((__force __be16)(x))
#define __constant_cpu_to_le64(x) ((__force __le64)__swab64(x))
#define __constant_le64_to_cpu(x) __swab64((__force u64)(__le64)(x))
#define __constant_cpu_to_le32(x) ((__force __le32)__swab32(x))
#define __constant_le32_to_cpu(x) __swab32((__force u32)(__le32)(x))
#define __constant_cpu_to_le16(x) ((__force __le16)__swab16(x))
#define __constant_le16_to_cpu(x) __swab16((__force u16)(__le16)(x))
#define __constant_cpu_to_be64(x) ((__force __be64)(u64)(x))
#define __constant_be64_to_cpu(x) (u64)((__force u64)(__be64)(x))
#define __constant_cpu_to_be32(x) ((__force __be32)(u32)(x))
#define __constant_be32_to_cpu(x) (u32)((__force u32)(__be32)(x))
#define __constant_cpu_to_be16(x) ((__force __be16)(u16)(x))
#define __constant_be16_to_cpu(x) (u16)((__force u16)(__be16)(x))
#define __cpu_to_le64(x) ((__force __le64)__swab64(x))
#define __le64_to_cpu(x) __swab64((__force u64)(__le64)(x))
#define __cpu_to_le32(x) ((__force __le32)__swab32(x))
#define __le32_to_cpu(x) __swab32((__force u32)(__le32)(x))
#define __cpu_to_le16(x) ((__force __le16)__swab16(x))
#define __le16_to_cpu(x) __swab16((__force u16)(__le16)(x))
#define __cpu_to_be64(x) ((__force __be64)(u64)(x))
#define __be64_to_cpu(x) (u64)((__force u64)(__be64)(x))
#define __cpu_to_be32(x) ((__force __be32)(u32)(x))
#define __be32_to_cpu(x) (u32)((__force u32)(__be32)(x))
#define __cpu_to_be16(x) ((__force __be16)(u16)(x))
#define __be16_to_cpu(x) (u16)((__force u16)(__be16)(x))

#define cpu_to_le64 __cpu_to_le64
#define le64_to_cpu __le64_to_cpu
#define cpu_to_le32 __cpu_to_le32
#define le32_to_cpu __le32_to_cpu
#define cpu_to_le16 __cpu_to_le16
#define le16_to_cpu __le16_to_cpu
#define cpu_to_be64 __cpu_to_be64
#define be64_to_cpu __be64_to_cpu
#define cpu_to_be32 __cpu_to_be32
#define be32_to_cpu __be32_to_cpu
#define cpu_to_be16 __cpu_to_be16
#define be16_to_cpu __be16_to_cpu
#define htonl(x) __cpu_to_be32(x)
#define ntohl(x) __be32_to_cpu(x)
#define htons(x) __cpu_to_be16(x)
#define ntohs(x) __be16_to_cpu(x)

static inline u32 le32_to_cpup(const __le32 *p)	{ return __le32_to_cpu(*p); }
static inline u32 be32_to_cpup(const __be32 *p)	{ return __be32_to_cpu(*p); }
static inline u16 le16_to_cpup(const __le16 *p)	{ return __le16_to_cpu(*p); }
static inline u16 be16_to_cpup(const __be16 *p)	{ return __be16_to_cpu(*p); }
static inline u64 le64_to_cpup(const __le64 *p)	{ return __le64_to_cpu(*p); }
static inline u64 be64_to_cpup(const __be64 *p)	{ return __be64_to_cpu(*p); }

#endif
