/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM (A32) entry: boot, context switch, mcount.
 *
 * Every CPU starts at _start with its id in r0 and the CPU count in r1
 * (set by the host). It takes its own boot stack, records its id in that
 * stack's thread_info (the per-CPU anchor: smp_processor_id() reads it)
 * and calls start_kernel(cpu, ncpus).
 *
 * With CONFIG_THUMB2_KERNEL everything after _start is Thumb code, as the
 * C it calls and is called from; _start itself is entered in ARM state
 * (as Linux's head.S is) and its bl becomes a blx at link time. FRAME is
 * the frame-pointer register each instruction set's code uses (r7 in
 * Thumb, r11 in ARM).
 */
#define __ASSEMBLY__
#include <generated/autoconf.h>
#include <kisim/thread_info.h>

#ifdef CONFIG_THUMB2_KERNEL
#define FRAME	r7
#else
#define FRAME	fp
#endif

	.syntax unified
	.arm

	.section .text.head, "ax"
	.globl	_start
	.type	_start, %function
_start:
	movw	r2, #:lower16:init_stacks
	movt	r2, #:upper16:init_stacks
	add	r2, r2, r0, lsl #THREAD_SHIFT
	str	r0, [r2, #TI_CPU]
	add	sp, r2, #THREAD_SIZE
	mov	fp, #0
	bl	start_kernel
	udf	#0
	.size	_start, . - _start

	.text
#ifdef CONFIG_THUMB2_KERNEL
	.thumb
#endif
/*
 * void __switch_to_asm(unsigned long *prev_sp, unsigned long next_sp)
 * Saves r4-r11 and lr on the current stack, stores sp in *prev_sp and
 * resumes the task whose stack is next_sp.
 */
	.globl	__switch_to_asm
	.type	__switch_to_asm, %function
__switch_to_asm:
	push	{r4-r11, lr}
	str	sp, [r0]
	mov	sp, r1
	pop	{r4-r11, pc}
	.size	__switch_to_asm, . - __switch_to_asm

/* A new task's first return from __switch_to_asm lands here. */
	.globl	ret_from_fork
	.type	ret_from_fork, %function
ret_from_fork:
	mov	FRAME, #0
	bl	schedule_tail_and_run
	udf	#0
	.size	ret_from_fork, . - ret_from_fork

#ifdef CONFIG_FUNCTION_TRACER
/*
 * -pg with the GNU EABI: `push {lr}; bl __gnu_mcount_nc` in every traced
 * function. The callee must pop the pushed lr (arch/arm/kernel/entry-ftrace.S).
 * __gnu_mcount_nc is what live calls reach (CONFIG_DYNAMIC_FTRACE=n);
 * ftrace_caller is what an enabled dynamic-ftrace site calls. Both follow
 * entry-ftrace.S: return at once while ftrace_trace_function is
 * ftrace_stub, else call it with ip = lr - MCOUNT_INSN_SIZE, parent_ip =
 * the lr the site pushed, and the address of the traced function's saved
 * lr in its frame record (fp + 4) for the function-graph tracer.
 */
.macro FTRACE_CALLER
	stmdb	sp!, {r0-r3, lr}
	ldr	r0, =ftrace_trace_function
	ldr	ip, [r0]
	ldr	r0, =ftrace_stub
	cmp	r0, ip
	beq	1f
#ifdef CONFIG_THUMB2_KERNEL
	bic	r0, lr, #1		/* the return address names Thumb state */
	sub	r0, r0, #4
#else
	sub	r0, lr, #4
#endif
	ldr	r1, [sp, #20]
	add	r2, FRAME, #4
	blx	ip
1:	ldmia	sp!, {r0-r3, ip, lr}
	bx	ip
	.ltorg
.endm

	.globl	__gnu_mcount_nc
	.type	__gnu_mcount_nc, %function
__gnu_mcount_nc:
	FTRACE_CALLER
	.size	__gnu_mcount_nc, . - __gnu_mcount_nc

#ifdef CONFIG_DYNAMIC_FTRACE	/* only then does anything call it (entry_64.S, 2.6.28) */
	.globl	ftrace_caller
	.type	ftrace_caller, %function
ftrace_caller:
	FTRACE_CALLER
	.size	ftrace_caller, . - ftrace_caller
#endif

#ifdef CONFIG_FUNCTION_GRAPH_TRACER
/*
 * Where the function-graph tracer makes a traced function return
 * (entry-ftrace.S return_to_handler): keep r0-r3, get the real return
 * address from ftrace_return_to_handler() and go there.
 */
	.globl	return_to_handler
	.type	return_to_handler, %function
return_to_handler:
	push	{r0-r3}
	bl	ftrace_return_to_handler
	mov	lr, r0
	pop	{r0-r3}
	bx	lr
	.size	return_to_handler, . - return_to_handler
#endif /* CONFIG_FUNCTION_GRAPH_TRACER */
#endif /* CONFIG_FUNCTION_TRACER */

/* The old APCS mcount: a plain call, nothing pushed. */
	.globl	mcount
	.type	mcount, %function
mcount:
	bx	lr
	.size	mcount, . - mcount
