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
#include <generated/autoconf.h>
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

#ifdef CONFIG_FUNCTION_TRACER
/*
 * -pg: every traced function calls mcount once its frame is set up
 * (push %rbp; mov %rsp,%rbp; ... call mcount). mcount is what the calls
 * reach while they are live (CONFIG_DYNAMIC_FTRACE=n); ftrace_caller is
 * what an enabled dynamic-ftrace site calls. Both do what 2.6.28's
 * arch/x86/kernel/entry_64.S mcount does: return at once while
 * ftrace_trace_function is ftrace_stub, else save the argument registers
 * (MCOUNT_SAVE_FRAME) and call it with ip = the call site (return address
 * - MCOUNT_INSN_SIZE), parent_ip = 8(%rbp), and the address of that slot
 * for the function-graph tracer.
 */
.macro FTRACE_CALLER
	cmpq	$ftrace_stub, ftrace_trace_function
	jne	1f
	ret
1:	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	movq	56(%rsp), %rdi
	subq	$5, %rdi
	leaq	8(%rbp), %rdx
	movq	(%rdx), %rsi
	call	*ftrace_trace_function
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	ret
.endm

	.globl	mcount
	.type	mcount, @function
mcount:
	FTRACE_CALLER
	.size	mcount, . - mcount

#ifdef CONFIG_DYNAMIC_FTRACE	/* only then does anything call it (entry_64.S, 2.6.28) */
	.globl	ftrace_caller
	.type	ftrace_caller, @function
ftrace_caller:
	FTRACE_CALLER
	.size	ftrace_caller, . - ftrace_caller
#endif

#ifdef CONFIG_FUNCTION_GRAPH_TRACER
/*
 * Where the function-graph tracer makes a traced function return: keep
 * the return registers, ask ftrace_return_to_handler() for the real
 * return address and go there (arch/x86/kernel/entry_64.S, 2.6.29).
 */
	.globl	return_to_handler
	.type	return_to_handler, @function
return_to_handler:
	subq	$32, %rsp
	movq	%rax, (%rsp)
	movq	%rdx, 8(%rsp)
	call	ftrace_return_to_handler
	movq	%rax, 24(%rsp)
	movq	8(%rsp), %rdx
	movq	(%rsp), %rax
	addq	$24, %rsp
	ret
	.size	return_to_handler, . - return_to_handler
#endif /* CONFIG_FUNCTION_GRAPH_TRACER */
#endif /* CONFIG_FUNCTION_TRACER */

	.globl	__fentry__
	.type	__fentry__, @function
__fentry__:
	ret
	.size	__fentry__, . - __fentry__
