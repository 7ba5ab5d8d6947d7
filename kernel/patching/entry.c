// SPDX-License-Identifier: GPL-2.0
/*
 * What the host calls: pc_patch() on the patching CPU, for the sites it
 * wrote into pc_sites[], calls the routine that patches them (the arch's
 * arch_patch_batch(), or PC_PROTOCOL for a user's routine under the
 * checker); it returns to pc_done, where the host takes the CPU back.
 * The patch checker's guest and the kernel built with
 * CONFIG_PATCHING_IN_GUEST share it (guest.h).
 */
#include "guest.h"

#define PC_MAX_SITES	16	/* as many as one text_poke_bp_batch() call takes here */

/* guest.h's memory, for the host to map (sim/self_patching.py) */
const unsigned long pc_text_base __used = PC_TEXT_BASE;
const unsigned long pc_text_alias __used = PC_TEXT_ALIAS;

volatile int pc_nr_cpus;
volatile unsigned long pc_online;
struct pc_site pc_sites[PC_MAX_SITES] __used;
unsigned long pc_breakpoint_declined[PC_NR_CPUS] __used;

/* set_cpu_online(cpu, true): from now on this CPU answers IPIs. */
void pc_cpu_online(int cpu)
{
	__atomic_fetch_or(&pc_online, 1UL << cpu, __ATOMIC_SEQ_CST);
}

/* The routine patched through: the arch's, or a user's (kisim patchcheck --guest-protocol NAME). */
#ifndef PC_PROTOCOL
#define PC_PROTOCOL arch_patch_batch
#endif
void PC_PROTOCOL(const struct pc_site *sites, int nr);

noinline void pc_release(const void *p, size_t size)
{
	__asm__ __volatile__("" : : "r" (p), "r" (size) : "memory");
}

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
