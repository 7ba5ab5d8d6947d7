/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What arches/arm/patching.c offers a user's routine (kisim patchcheck
 * --guest --module FILE.c --guest-protocol NAME; #include "patching.h"),
 * as v5.10 asm/cacheflush.h and arch/arm/kernel/patch.c have it:
 * flush_icache_range() is v7_coherent_kern_range (clean, dsb, invalidate,
 * BPIALLIS, dsb, isb); patch_text() stores one instruction under
 * stop_machine(): an A32 word, or on a Thumb-2 kernel the Thumb opcode
 * (asm/opcodes.h: a 32-bit instruction's first halfword in bits 31:16), as
 * one halfword, one word, or at 2 mod 4 two halfwords.
 */
#ifndef _PC_ARM_PATCHING_H
#define _PC_ARM_PATCHING_H

void flush_icache_range(unsigned long start, unsigned long end);
void patch_text(void *addr, unsigned int insn);

#endif /* _PC_ARM_PATCHING_H */
