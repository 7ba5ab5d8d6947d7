/* SPDX-License-Identifier: GPL-2.0 */
/* <asm/unaligned.h> (v5.10): the generic accessors (see asm-generic/unaligned.h). */
#ifndef _ASM_UNALIGNED_H
#define _ASM_UNALIGNED_H

#include <asm-generic/unaligned.h>

#endif
