// SPDX-License-Identifier: GPL-2.0
/*
 * What the checker calls: pc_patch() on the patching CPU, for the sites it
 * wrote into pc_sites[], calls the routine under check with them (the arch's
 * arch_patch_batch(), or PC_PROTOCOL); it returns to pc_done, where the
 * checker takes the CPU back. pc_stacks[] are the CPUs' stacks (thread_info at each base).
 */
#include "guest.h"

#define PC_MAX_SITES	16

union thread_union {
	struct thread_info thread_info;
	unsigned long stack[THREAD_SIZE / sizeof(unsigned long)];
};

union thread_union pc_stacks[PC_NR_CPUS]
	__attribute__((section(".stacks"), aligned(THREAD_SIZE))) __used;
struct pc_site pc_sites[PC_MAX_SITES] __used;
unsigned long pc_breakpoint_declined[PC_NR_CPUS] __used;

/* The routine checked: the arch's, or a user's (kisim patchcheck --guest-protocol NAME). */
#ifndef PC_PROTOCOL
#define PC_PROTOCOL arch_patch_batch
#endif
void PC_PROTOCOL(const struct pc_site *sites, int nr);

void pc_patch(int nr)
{
	PC_PROTOCOL(pc_sites, nr);
}

__asm__(
	"	.text\n"
	"	.globl	pc_done\n"
	"	.type	pc_done, %function\n"
	"pc_done:\n"
	"	nop\n"
	"	nop\n"
	"	.size	pc_done, . - pc_done\n");
