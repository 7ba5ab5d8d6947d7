/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 entry: boot, context switch, mcount.
 *
 * Every CPU starts at _start with its id in rdi and the CPU count in rsi
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
	mov	%rdi, %rax
	shl	$THREAD_SHIFT, %rax
	movl	%edi, init_stacks + TI_CPU(%rax)
	lea	init_stacks + THREAD_SIZE(%rax), %rsp
	xor	%ebp, %ebp
	call	start_kernel
	ud2
	.size	_start, . - _start

	.text
/*
 * void __switch_to_asm(unsigned long *prev_sp, unsigned long next_sp)
 * Saves the callee-saved registers on the current stack, stores the stack
 * pointer in *prev_sp and resumes the task whose stack is next_sp.
 */
	.globl	__switch_to_asm
	.type	__switch_to_asm, @function
__switch_to_asm:
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	%rsp, (%rdi)
	mov	%rsi, %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	ret
	.size	__switch_to_asm, . - __switch_to_asm

/* A new task's first return from __switch_to_asm lands here. */
	.globl	ret_from_fork
	.type	ret_from_fork, @function
ret_from_fork:
	xor	%ebp, %ebp
	call	schedule_tail_and_run
	ud2
	.size	ret_from_fork, . - ret_from_fork

/*
 * -pg: every traced function calls mcount after its prologue. The stub
 * only returns; the function tracer patches the call sites (__mcount_loc)
 * or hooks this address.
 */
	.globl	mcount
	.type	mcount, @function
mcount:
	ret
	.size	mcount, . - mcount

	.globl	__fentry__
	.type	__fentry__, @function
__fentry__:
	ret
	.size	__fentry__, . - __fentry__
