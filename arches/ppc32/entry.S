/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerPC (32-bit) entry: boot, context switch, mcount.
 *
 * Every CPU starts at _start with its id in r3 and the CPU count in r4
 * (set by the host). It takes its own boot stack, records its id in that
 * stack's thread_info (the per-CPU anchor: smp_processor_id() reads it)
 * and calls start_kernel(cpu, ncpus).
 */
#define __ASSEMBLY__
#include <kisim/thread_info.h>

	.section .text.head, "ax"
	.globl	_start
	.type	_start, @function
_start:
	lis	5, init_stacks@ha
	addi	5, 5, init_stacks@l
	slwi	6, 3, THREAD_SHIFT
	add	5, 5, 6
	stw	3, TI_CPU(5)
	addi	1, 5, THREAD_SIZE - 16
	li	0, 0
	stw	0, 0(1)
	bl	start_kernel
	trap
	.size	_start, . - _start

	.text
/*
 * void __switch_to_asm(unsigned long *prev_sp, unsigned long next_sp)
 * Frame (96 bytes): 0 back chain, 8 LR, 12 CR, 16..87 r14-r31.
 * Stores r1 in *prev_sp and resumes the task whose stack is next_sp.
 */
	.globl	__switch_to_asm
	.type	__switch_to_asm, @function
__switch_to_asm:
	stwu	1, -96(1)
	mflr	0
	stw	0, 8(1)
	mfcr	0
	stw	0, 12(1)
	stmw	14, 16(1)
	stw	1, 0(3)
	mr	1, 4
	lwz	0, 8(1)
	mtlr	0
	lwz	0, 12(1)
	mtcrf	0xff, 0
	lmw	14, 16(1)
	addi	1, 1, 96
	blr
	.size	__switch_to_asm, . - __switch_to_asm

/* A new task's first return from __switch_to_asm lands here. */
	.globl	ret_from_fork
	.type	ret_from_fork, @function
ret_from_fork:
	bl	schedule_tail_and_run
	trap
	.size	ret_from_fork, . - ret_from_fork

/*
 * -pg: `bl _mcount` in every traced function after it saved LR in its
 * frame. The stub only returns.
 */
	.globl	_mcount
	.type	_mcount, @function
_mcount:
	blr
	.size	_mcount, . - _mcount
