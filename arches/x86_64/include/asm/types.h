/* SPDX-License-Identifier: GPL-2.0 */
/* <asm/types.h> (v5.10): the generic fixed-width __u8..__s64, as on every arch. */
#ifndef _ASM_TYPES_H
#define _ASM_TYPES_H

#include <asm-generic/int-ll64.h>

#endif
