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
#include <generated/autoconf.h>
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

#ifdef CONFIG_FUNCTION_TRACER
/*
 * -pg: `bl _mcount` in every traced function once its prologue has saved
 * LR in the caller's frame (4 bytes above the back chain). _mcount is
 * what live calls reach (CONFIG_DYNAMIC_FTRACE=n); ftrace_caller is what
 * an enabled dynamic-ftrace site calls. Both follow
 * arch/powerpc/kernel/entry_32.S: return at once while
 * ftrace_trace_function is ftrace_stub, else save r3-r10 and call it with
 * ip = LR - MCOUNT_INSN_SIZE, parent_ip = the traced function's saved LR,
 * and that word's address for the function-graph tracer.
 */
.macro FTRACE_CALLER
	stwu	1, -48(1)
	mflr	0
	stw	0, 52(1)
	stw	3, 8(1)
	stw	4, 12(1)
	stw	5, 16(1)
	stw	6, 20(1)
	stw	7, 24(1)
	stw	8, 28(1)
	stw	9, 32(1)
	stw	10, 36(1)
	lis	12, ftrace_trace_function@ha
	lwz	12, ftrace_trace_function@l(12)
	lis	11, ftrace_stub@ha
	addi	11, 11, ftrace_stub@l
	cmplw	12, 11
	beq	1f
	mtctr	12
	mr	3, 0
	subi	3, 3, 4
	lwz	5, 0(1)
	lwz	5, 0(5)
	addi	5, 5, 4
	lwz	4, 0(5)
	bctrl
1:	lwz	3, 8(1)
	lwz	4, 12(1)
	lwz	5, 16(1)
	lwz	6, 20(1)
	lwz	7, 24(1)
	lwz	8, 28(1)
	lwz	9, 32(1)
	lwz	10, 36(1)
	lwz	0, 52(1)
	mtlr	0
	addi	1, 1, 48
	blr
.endm

	.globl	_mcount
	.type	_mcount, @function
_mcount:
	FTRACE_CALLER
	.size	_mcount, . - _mcount

#ifdef CONFIG_DYNAMIC_FTRACE	/* only then does anything call it (entry_64.S, 2.6.28) */
	.globl	ftrace_caller
	.type	ftrace_caller, @function
ftrace_caller:
	FTRACE_CALLER
	.size	ftrace_caller, . - ftrace_caller
#endif

#ifdef CONFIG_FUNCTION_GRAPH_TRACER
/*
 * Where the function-graph tracer makes a traced function return
 * (entry_32.S return_to_handler): keep r3/r4, get the real return
 * address from ftrace_return_to_handler() and go there.
 */
	.globl	return_to_handler
	.type	return_to_handler, @function
return_to_handler:
	stwu	1, -32(1)
	stw	3, 8(1)
	stw	4, 12(1)
	bl	ftrace_return_to_handler
	mtlr	3
	lwz	3, 8(1)
	lwz	4, 12(1)
	addi	1, 1, 32
	blr
	.size	return_to_handler, . - return_to_handler
#endif /* CONFIG_FUNCTION_GRAPH_TRACER */
#endif /* CONFIG_FUNCTION_TRACER */
