/* SPDX-License-Identifier: GPL-2.0 */
/* asm/word-at-a-time.h: the generic variant of this arch's byte order (v5.10). */
#ifndef _ASM_WORD_AT_A_TIME_H
#define _ASM_WORD_AT_A_TIME_H

#include <asm-generic/word-at-a-time.h>

#endif
