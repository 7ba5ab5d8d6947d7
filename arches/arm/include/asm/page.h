/* SPDX-License-Identifier: GPL-2.0 */
/* <asm/page.h> (v5.10): 4 KiB pages, kisim's flat memory (asm-generic/page.h). */
#ifndef _ASM_PAGE_H
#define _ASM_PAGE_H

#include <asm-generic/page.h>

#endif
