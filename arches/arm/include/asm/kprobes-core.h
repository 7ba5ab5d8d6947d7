/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM kprobe hooks for kernel/kprobes.c, after Linux v5.10
 * arch/arm/probes/kprobes/core.c: "We do not have hardware single-stepping
 * on ARM", so the instruction is simulated in C or emulated by running a
 * copy with the probed registers, all inside the undefined-instruction
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
	return (*(u32 *)addr & 0x0fffffff) == KPROBE_ARM_BREAKPOINT_INSTRUCTION;
}

static __always_inline void arch_kprobe_retry(struct pt_regs *regs, unsigned long addr)
{
	regs->ARM_pc = addr;
}

/* arch/arm/probes/kprobes/checkers / probes_condition_checks: cond vs NZCV. */
static __always_inline int arm_cond_passes(unsigned long cond, unsigned long cpsr)
{
	int n = (cpsr >> 31) & 1, z = (cpsr >> 30) & 1, c = (cpsr >> 29) & 1;
	int v = (cpsr >> 28) & 1, r;

	switch (cond >> 1) {
	case 0: r = z; break;
	case 1: r = c; break;
	case 2: r = n; break;
	case 3: r = v; break;
	case 4: r = c && !z; break;
	case 5: r = n == v; break;
	case 6: r = !z && n == v; break;
	default: return 1;
	}
	return (cond & 1) ? !r : r;
}

/* A failed condition: skip the instruction, run no handler (singlestep_skip). */
static __always_inline int arch_kprobe_skip(struct kprobe *p, struct pt_regs *regs)
{
	if (arm_cond_passes(p->opcode >> 28, regs->ARM_cpsr))
		return 0;
	regs->ARM_pc += 4;
	return 1;
}

void kprobe_emulate_slot(struct pt_regs *regs, unsigned long slot);
NOKPROBE_SYMBOL(kprobe_emulate_slot);

/*
 * arm_singlestep(): pc += 4, then the decode class's handler. Always
 * finishes in the handler.
 */
static __always_inline int arch_setup_singlestep(struct kprobe *p, struct pt_regs *regs,
						 struct kprobe_ctlblk *kcb, int cpu, int reenter)
{
	unsigned long insn = p->opcode;
	unsigned long pc = regs->ARM_pc + 4;
	unsigned long *sp, addr;
	int i;

	kcb->kprobe_status = reenter ? KPROBE_REENTER : KPROBE_HIT_SS;
	regs->ARM_pc = pc;
	switch (p->ainsn.kind) {
	case KPROBE_ARM_SIM_NOP:
		break;
	case KPROBE_ARM_SIM_BBL:
		if (insn & (1 << 24))
			regs->ARM_lr = pc;
		regs->ARM_pc = pc + 4 + (((long)(insn << 8)) >> 6);
		break;
	case KPROBE_ARM_SIM_BLX2BX:
		addr = regs->uregs[insn & 15];
		if (insn & (1 << 5))
			regs->ARM_lr = pc;
		regs->ARM_pc = addr;
		break;
	case KPROBE_ARM_SIM_LDR_LIT:
		addr = (insn & (1 << 23)) ? pc + 4 + (insn & 0xfff) : pc + 4 - (insn & 0xfff);
		regs->uregs[(insn >> 12) & 15] = *(unsigned long *)addr;
		break;
	case KPROBE_ARM_SIM_LDM_PC:
		sp = (unsigned long *)regs->ARM_sp;
		for (i = 0; i < 16; i++)
			if (insn & (1 << i))
				regs->uregs[i] = *sp++;
		regs->ARM_sp = (unsigned long)sp;
		break;
	default:
		kprobe_emulate_slot(regs, p->ainsn.insn + cpu * KPROBE_ARM_SLOT);
		regs->ARM_pc = pc;
		break;
	}
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

/*
 * kprobe_emulate_slot(regs, slot): load every probed register (flags,
 * r0-r14) and jump to this CPU's copy; the copy's tail (written by
 * arches/arm/kprobes.py) stores them back into regs and returns here.
 */
__asm__(
	"	.text\n"
	"	.globl	kprobe_emulate_slot\n"
	"	.type	kprobe_emulate_slot, %function\n"
	"kprobe_emulate_slot:\n"
	"	push	{r4-r11, lr}\n"
	"	str	r0, [r1, #48]\n"
	"	str	sp, [r1, #56]\n"
	"	str	r1, [r0, #60]\n"
	"	ldr	r2, [r0, #64]\n"
	"	msr	APSR_nzcvq, r2\n"
	"	.inst	0xe890ffff\n"		/* ldm r0, {r0-r15}: clang refuses lr+pc in a list */
	"	.size	kprobe_emulate_slot, . - kprobe_emulate_slot\n"
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

/*
 * Optprobes (arch/arm/probes/kprobes/opt-arm.c, v5.10): the breakpoint is
 * replaced by a branch to a detour buffer (written by arches/arm/kprobes.py)
 * that saves the registers as a struct pt_regs with ARM_pc at the probe,
 * calls optimized_callback(p, regs) (kernel/kprobes.c) and reloads r0-r15
 * from it.
 */
#define ARCH_HAS_OPTPROBES
#define OPTPROBE_BUFFER_BYTES	128

/* optimized_callback() hooks (opt-arm.c): the skipped registers. */
static __always_inline void arch_optprobe_regs(struct kprobe *p, struct pt_regs *regs)
{
	regs->ARM_pc = (unsigned long)p->addr;
	regs->ARM_ORIG_r0 = ~0UL;
}

/*
 * An instruction that does not use PC (the emulated class:
 * can_kprobe_direct_exec) is run by the detour itself after it restores
 * r0-r14 (kprobe_direct_exec); the others are stepped here.
 */
static __always_inline void arch_optprobe_step(struct kprobe *p, struct pt_regs *regs, int cpu)
{
	struct kprobe_ctlblk scratch;

	if (p->ainsn.kind != KPROBE_ARM_EMULATE)
		arch_setup_singlestep(p, regs, &scratch, cpu, 0);
}

#endif
