/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM kprobe hooks for kernel/kprobes.c, after Linux v5.10
 * arch/arm/probes/kprobes/core.c: "We do not have hardware single-stepping
 * on ARM", so the instruction is simulated in C or emulated by calling a
 * renamed copy (asm/kprobes-actions.h; on a Thumb-2 kernel
 * asm/kprobes-actions-thumb.h), all inside the undefined-instruction
 * handler; there is no second trap. Included by kernel/kprobes.c only.
 */
#ifndef _ASM_KPROBES_CORE_H
#define _ASM_KPROBES_CORE_H

/* The undefined-instruction entry leaves ARM_pc at the breakpoint. */
static __always_inline unsigned long arch_kprobe_trap_addr(struct pt_regs *regs)
{
	return regs->ARM_pc;
}

static __always_inline int arch_is_breakpoint(unsigned long addr)
{
#ifdef CONFIG_THUMB2_KERNEL
	u16 first = *(u16 *)addr;

	return first == KPROBE_THUMB16_BREAKPOINT_INSTRUCTION ||
	       (first == KPROBE_THUMB32_BREAKPOINT_INSTRUCTION >> 16 &&
		*(u16 *)(addr + 2) == (KPROBE_THUMB32_BREAKPOINT_INSTRUCTION & 0xffff));
#else
	return (*(u32 *)addr & 0x0fffffff) == KPROBE_ARM_BREAKPOINT_INSTRUCTION;
#endif
}

static __always_inline void arch_kprobe_retry(struct pt_regs *regs, unsigned long addr)
{
	regs->ARM_pc = addr;
}

#ifdef CONFIG_THUMB2_KERNEL
#include <asm/kprobes-actions-thumb.h>

/* A failed condition (IT block or B<c>): skip it, no handler (singlestep_skip). */
static __always_inline int arch_kprobe_skip(struct kprobe *p, struct pt_regs *regs)
{
	return thumb_kprobe_skip(p, regs);
}

#define arch_singlestep		thumb_singlestep
#else
/* A failed condition: skip the instruction, run no handler (singlestep_skip). */
static __always_inline int arch_kprobe_skip(struct kprobe *p, struct pt_regs *regs)
{
	if (arm_cond_passes(p->opcode >> 28, regs->ARM_cpsr))
		return 0;
	regs->ARM_pc += 4;
	return 1;
}

#include <asm/kprobes-actions.h>

#define arch_singlestep		arm_singlestep
#endif

/*
 * core.c kprobe_handler's singlestep(): the decoder's handler (the PC
 * moved past the instruction and the simulation or emulation:
 * arm_singlestep, or thumb16/32_singlestep on a Thumb-2 kernel). Always
 * finishes here.
 */
static __always_inline int arch_setup_singlestep(struct kprobe *p, struct pt_regs *regs,
						 struct kprobe_ctlblk *kcb, int cpu, int reenter)
{
	kcb->kprobe_status = reenter ? KPROBE_REENTER : KPROBE_HIT_SS;
	arch_singlestep(p, regs);
	return 1;
}

/* No single-step trap on ARM: the debug handler never owns a trap. */
static __always_inline int arch_kprobe_ss_done(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static __always_inline void arch_resume_singlestep(struct kprobe *p, struct pt_regs *regs,
						   struct kprobe_ctlblk *kcb)
{
}

/* The exception return: hand the handler's result to the host (HC_KPROBE). */
__asm__(
	"	.text\n"
	"	.globl	kprobe_exc_return\n"
	"	.type	kprobe_exc_return, %function\n"
	"kprobe_exc_return:\n"
	"	mov	r2, r0\n"
	"	mov	r1, #0\n"
	"	mov	r0, #" __stringify(HC_KPROBE) "\n"
	"	svc	#0\n"
	"	udf	#0\n"
	"	.size	kprobe_exc_return, . - kprobe_exc_return\n");

/* arch_prepare_kretprobe(): the return address is in lr. */
static __always_inline void arch_prepare_kretprobe(struct kretprobe_instance *ri,
						   struct pt_regs *regs)
{
	ri->ret_addr = regs->ARM_lr;
	regs->ARM_lr = (unsigned long)&kretprobe_trampoline;
}

/*
 * kretprobe_trampoline: save r0-r12 as the start of a struct pt_regs, call
 * trampoline_handler(regs), return to the address it gives back.
 */
__asm__(
	"	.text\n"
	"	.globl	kretprobe_trampoline\n"
	"	.type	kretprobe_trampoline, %function\n"
	"kretprobe_trampoline:\n"
	"	sub	sp, sp, #72\n"
	"	stm	sp, {r0-r12}\n"
	"	mov	r0, sp\n"
	"	bl	trampoline_handler\n"
	"	mov	lr, r0\n"
	"	ldm	sp, {r0-r3}\n"
	"	add	sp, sp, #72\n"
	"	bx	lr\n"
	"	.globl	kretprobe_trampoline_end\n"	/* where it ends, for the unwinder */
	"kretprobe_trampoline_end:\n"
	"	.size	kretprobe_trampoline, . - kretprobe_trampoline\n");

#ifndef CONFIG_THUMB2_KERNEL	/* arch/arm/Kconfig: HAVE_OPTPROBES if !THUMB2_KERNEL */
/*
 * Optprobes (arch/arm/probes/kprobes/opt-arm.c, v5.10): the breakpoint is
 * replaced by a branch to a detour buffer (written by arches/arm/kprobes.py)
 * that saves the registers as a struct pt_regs with ARM_pc at the probe,
 * calls optimized_callback(p, regs) (kernel/kprobes.c) and reloads r0-r15
 * from it.
 */
/* built with CONFIG_OPTPROBES (HAVE_OPTPROBES if !THUMB2_KERNEL) */
#define OPTPROBE_BUFFER_BYTES	128

/* optimized_callback() hooks (opt-arm.c): the skipped registers. */
static __always_inline void arch_optprobe_regs(struct kprobe *p, struct pt_regs *regs)
{
	regs->ARM_pc = (unsigned long)p->addr;
	regs->ARM_ORIG_r0 = ~0UL;
}

/*
 * An instruction that does not use PC (can_kprobe_direct_exec) is run by
 * the detour itself after it restores r0-r14 (kprobe_direct_exec); the
 * others are stepped here.
 */
static __always_inline void arch_optprobe_step(struct kprobe *p, struct pt_regs *regs, int cpu)
{
	if (!p->ainsn.kprobe_direct_exec)
		arm_singlestep(p, regs);
}

#endif /* !CONFIG_THUMB2_KERNEL */

#endif
