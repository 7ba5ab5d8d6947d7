// SPDX-License-Identifier: GPL-2.0
/*
 * The patch checker's guest besides kernel/patching/: the CPUs' stacks,
 * pc_stacks[], with thread_info at each base (the checker fills in the CPU
 * number), in a section of their own (guest.lds).
 */
#include "guest.h"

union thread_union {
	struct thread_info thread_info;
	unsigned long stack[THREAD_SIZE / sizeof(unsigned long)];
};

union thread_union pc_stacks[PC_NR_CPUS]
	__attribute__((section(".stacks"), aligned(THREAD_SIZE))) __used;
