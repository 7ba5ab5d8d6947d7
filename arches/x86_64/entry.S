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

#if defined(CONFIG_DYNAMIC_FTRACE) && defined(CONFIG_KPROBES)
/*
 * What a site with an ftrace-based kprobe calls (v5.10
 * CONFIG_KPROBES_ON_FTRACE, arch/x86/kernel/ftrace_64.S
 * ftrace_regs_caller): save a struct pt_regs (ip = the return address,
 * sp = the stack pointer at the site), call kprobe_ftrace_handler(ip =
 * the site, parent_ip, regs), restore the registers and return to
 * regs->ip, which a pre_handler may have changed. The list form also
 * calls the function tracer, as ftrace_ops_list_func calls every ops of a
 * site. lea, not sub/add, keeps the flags.
 */
.macro FTRACE_REGS_CALLER trace
	leaq	-168(%rsp), %rsp
	movq	%r15, 0(%rsp)
	movq	%r14, 8(%rsp)
	movq	%r13, 16(%rsp)
	movq	%r12, 24(%rsp)
	movq	%rbp, 32(%rsp)
	movq	%rbx, 40(%rsp)
	movq	%r11, 48(%rsp)
	movq	%r10, 56(%rsp)
	movq	%r9, 64(%rsp)
	movq	%r8, 72(%rsp)
	movq	%rax, 80(%rsp)
	movq	%rcx, 88(%rsp)
	movq	%rdx, 96(%rsp)
	movq	%rsi, 104(%rsp)
	movq	%rdi, 112(%rsp)
	movq	$0, 120(%rsp)
	movq	$0, 136(%rsp)
	movq	$0, 160(%rsp)
	pushfq
	popq	144(%rsp)
	movq	168(%rsp), %rax
	movq	%rax, 128(%rsp)
	leaq	176(%rsp), %rax
	movq	%rax, 152(%rsp)
	movq	168(%rsp), %rdi
	subq	$5, %rdi
	movq	8(%rbp), %rsi
	movq	%rsp, %rdx
	call	kprobe_ftrace_handler
.if \trace
	cmpq	$ftrace_stub, ftrace_trace_function
	je	1f
	movq	168(%rsp), %rdi
	subq	$5, %rdi
	leaq	8(%rbp), %rdx
	movq	(%rdx), %rsi
	call	*ftrace_trace_function
1:
.endif
	movq	128(%rsp), %rax
	movq	%rax, 168(%rsp)
	pushq	144(%rsp)
	popfq
	movq	0(%rsp), %r15
	movq	8(%rsp), %r14
	movq	16(%rsp), %r13
	movq	24(%rsp), %r12
	movq	32(%rsp), %rbp
	movq	40(%rsp), %rbx
	movq	48(%rsp), %r11
	movq	56(%rsp), %r10
	movq	64(%rsp), %r9
	movq	72(%rsp), %r8
	movq	80(%rsp), %rax
	movq	88(%rsp), %rcx
	movq	96(%rsp), %rdx
	movq	104(%rsp), %rsi
	movq	112(%rsp), %rdi
	leaq	168(%rsp), %rsp
	ret
.endm

	.globl	ftrace_regs_caller
	.type	ftrace_regs_caller, @function
ftrace_regs_caller:
	FTRACE_REGS_CALLER 0
	.size	ftrace_regs_caller, . - ftrace_regs_caller

	.globl	ftrace_regs_list_caller
	.type	ftrace_regs_list_caller, @function
ftrace_regs_list_caller:
	FTRACE_REGS_CALLER 1
	.size	ftrace_regs_list_caller, . - ftrace_regs_list_caller
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
