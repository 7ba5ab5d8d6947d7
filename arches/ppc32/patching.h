/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What arches/ppc32/patching.c offers a user's routine (kisim patchcheck
 * --guest --module FILE.c --guest-protocol NAME; #include "patching.h"),
 * as v5.10 arch/powerpc/lib/code-patching.c has it: patch_instruction()
 * stores one word through the alias with interrupts off, then dcbst, sync,
 * icbi, sync, isync.
 */
#ifndef _PC_PPC32_PATCHING_H
#define _PC_PPC32_PATCHING_H

int patch_instruction(u32 *addr, u32 instr);

#endif /* _PC_PPC32_PATCHING_H */
