/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What arches/arm/patching.c offers a user's routine (kisim patchcheck
 * --guest --module FILE.c --guest-protocol NAME; #include "patching.h"),
 * as v5.10 asm/cacheflush.h and arch/arm/kernel/patch.c have it:
 * flush_icache_range() is v7_coherent_kern_range (clean, dsb, invalidate,
 * BPIALLIS, dsb, isb); patch_text() stores one word under stop_machine().
 */
#ifndef _PC_ARM_PATCHING_H
#define _PC_ARM_PATCHING_H

void flush_icache_range(unsigned long start, unsigned long end);
void patch_text(void *addr, unsigned int insn);

#endif /* _PC_ARM_PATCHING_H */
