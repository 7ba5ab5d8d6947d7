/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerPC kprobe hooks for kernel/kprobes.c, after Linux v5.10
 * arch/powerpc/kernel/kprobes.c: try emulate_step() first (a success
 * counts as boosted, no second trap), else single-step the copy in the
 * slot with MSR_SE. emulate_step() here covers the branches (all of them:
 * a relative branch cannot run from the slot) and the common integer,
 * load and store forms of arch/powerpc/lib/sstep.c (with XER's CA and SO
 * as its add_with_carry() and set_cr0() use them); anything else returns
 * 0 and is single-stepped. Included by kernel/kprobes.c only.
 */
#ifndef _ASM_KPROBES_CORE_H
#define _ASM_KPROBES_CORE_H

/* The program check leaves nip (SRR0) at the trap. */
static __always_inline unsigned long arch_kprobe_trap_addr(struct pt_regs *regs)
{
	return regs->nip;
}

static __always_inline int arch_is_breakpoint(unsigned long addr)
{
	return *(u32 *)addr == BREAKPOINT_INSTRUCTION;
}

static __always_inline void arch_kprobe_retry(struct pt_regs *regs, unsigned long addr)
{
	regs->nip = addr;
}

static __always_inline int arch_kprobe_skip(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

/* sstep.c branch_taken(): BO's CTR and CR tests (CTR already decremented). */
static __always_inline int ppc_branch_taken(struct pt_regs *regs, unsigned int bo, unsigned int bi)
{
	if (!(bo & 4) && ((regs->ctr == 0) != ((bo >> 1) & 1)))
		return 0;
	if (!(bo & 0x10) && (((regs->ccr >> (31 - bi)) & 1) != ((bo >> 3) & 1)))
		return 0;
	return 1;
}

static __always_inline void ppc_set_cr(struct pt_regs *regs, unsigned int crf, int lt, int gt)
{
	unsigned long v = (lt ? 8 : gt ? 4 : 2) | ((regs->xer >> 31) & 1);
	unsigned int shift = 28 - 4 * crf;

	regs->ccr = (regs->ccr & ~(0xfUL << shift)) | (v << shift);
}

/* emulate_step(): 1 if done (regs updated, nip advanced), 0 to single-step. */
static __always_inline int __emulate_step(struct pt_regs *regs, u32 instr)
{
	unsigned int op = instr >> 26, rd = (instr >> 21) & 31, ra = (instr >> 16) & 31;
	unsigned int rb = (instr >> 11) & 31, xo = (instr >> 1) & 0x3ff, spr;
	long simm = (s16)instr;
	unsigned long nip = regs->nip + 4, base = ra ? regs->gpr[ra] : 0, target;

	switch (op) {
	case 18:	/* b, ba, bl, bla */
		target = (unsigned long)(((s32)(instr << 6)) >> 6) & ~3UL;
		if (instr & 1)
			regs->link = nip;
		regs->nip = (instr & 2) ? target : regs->nip + target;
		return 1;
	case 16:	/* bc */
		if (!(rd & 4))
			regs->ctr--;
		target = (instr & 2) ? (unsigned long)(simm & ~3L) : regs->nip + (simm & ~3L);
		if (instr & 1)
			regs->link = nip;
		regs->nip = ppc_branch_taken(regs, rd, ra) ? target : nip;
		return 1;
	case 19:
		if (xo != 16 && xo != 528)	/* bclr, bcctr */
			return 0;
		target = (xo == 16 ? regs->link : regs->ctr) & ~3UL;
		if (xo == 16 && !(rd & 4))
			regs->ctr--;
		if (instr & 1)
			regs->link = nip;
		regs->nip = ppc_branch_taken(regs, rd, ra) ? target : nip;
		return 1;
	case 14:	/* addi, li */
		regs->gpr[rd] = base + simm;
		break;
	case 15:	/* addis, lis */
		regs->gpr[rd] = base + ((unsigned long)simm << 16);
		break;
	case 24:	/* ori, nop */
		regs->gpr[ra] = regs->gpr[rd] | (instr & 0xffff);
		break;
	case 10:	/* cmplwi */
		ppc_set_cr(regs, rd >> 2, (u32)regs->gpr[ra] < (instr & 0xffff),
			   (u32)regs->gpr[ra] > (instr & 0xffff));
		break;
	case 11:	/* cmpwi */
		ppc_set_cr(regs, rd >> 2, (s32)regs->gpr[ra] < simm, (s32)regs->gpr[ra] > simm);
		break;
	case 32:	/* lwz */
		regs->gpr[rd] = *(u32 *)(base + simm);
		break;
	case 36:	/* stw */
		*(u32 *)(base + simm) = regs->gpr[rd];
		break;
	case 37:	/* stwu: a store below this frame would hit pt_regs; step it */
		if (!ra || regs->gpr[ra] + simm < (unsigned long)(regs + 1))
			return 0;
		*(u32 *)(regs->gpr[ra] + simm) = regs->gpr[rd];
		regs->gpr[ra] += simm;
		break;
	case 31:
		spr = ((instr >> 16) & 0x1f) | ((instr >> 6) & 0x3e0);
		if (xo == 444 && !(instr & 1)) {		/* or, mr */
			regs->gpr[ra] = regs->gpr[rd] | regs->gpr[rb];
		} else if (xo == 266 || xo == 10) {	/* add[.], addc[.]; xo holds OE */
			u32 a = regs->gpr[ra], sum = a + (u32)regs->gpr[rb];

			regs->gpr[rd] = sum;
			if (xo == 10)		/* sstep.c add_with_carry() */
				regs->xer = (regs->xer & ~XER_CA) | (sum < a ? XER_CA : 0);
			if (instr & 1)		/* Rc: set_cr0() */
				ppc_set_cr(regs, 0, (s32)sum < 0, (s32)sum > 0);
		} else if (xo == 23) {			/* lwzx */
			regs->gpr[rd] = *(u32 *)(base + regs->gpr[rb]);
		} else if (xo == 339 && spr == 8) {		/* mflr */
			regs->gpr[rd] = regs->link;
		} else if (xo == 467 && spr == 8) {		/* mtlr */
			regs->link = regs->gpr[rd];
		} else if (xo == 339 && spr == 9) {		/* mfctr */
			regs->gpr[rd] = regs->ctr;
		} else if (xo == 467 && spr == 9) {		/* mtctr */
			regs->ctr = regs->gpr[rd];
		} else if (xo == 83) {	/* mfmsr: the saved MSR, as sstep.c's MFMSR case */
			regs->gpr[rd] = regs->msr & MSR_MASK;
		} else {
			return 0;
		}
		break;
	default:
		return 0;
	}
	regs->nip = nip;
	return 1;
}

/* arch/powerpc/lib/sstep.c emulate_step(), for modules (the emulate_step selftest). */
notrace int emulate_step(struct pt_regs *regs, u32 instr)
{
	return __emulate_step(regs, instr);
}
NOKPROBE_SYMBOL(emulate_step);

/*
 * kprobe_handler's try_to_emulate() then prepare_singlestep(): emulated
 * hits are boosted; the rest single-step the copy with MSR_SE.
 */
static __always_inline int arch_setup_singlestep(struct kprobe *p, struct pt_regs *regs,
						 struct kprobe_ctlblk *kcb, int cpu, int reenter)
{
	if (p->ainsn.boostable >= 0) {
		if (__emulate_step(regs, p->opcode)) {
			p->ainsn.boostable = 1;
			return 1;
		}
		p->ainsn.boostable = -1;
	}
	kcb->kprobe_status = reenter ? KPROBE_REENTER : KPROBE_HIT_SS;
	kcb->kprobe_saved_flags = regs->msr;
	regs->msr |= MSR_SE;
	regs->nip = (unsigned long)p->ainsn.insn;
	return 0;
}

/* post_kprobe_handler(): only the trace after the copy is ours. */
static __always_inline int arch_kprobe_ss_done(struct kprobe *p, struct pt_regs *regs)
{
	return (unsigned long)p->ainsn.insn + 4 == regs->nip;
}

static __always_inline void arch_resume_singlestep(struct kprobe *p, struct pt_regs *regs,
						   struct kprobe_ctlblk *kcb)
{
	regs->msr = (regs->msr & ~MSR_SE) | (kcb->kprobe_saved_flags & ~MSR_SE);
	regs->nip = (unsigned long)p->addr + 4;
}

/*
 * The guest half of the trap entry and of the exception return. XER's
 * SO, OV and CA live outside the register Unicorn reads and writes (QEMU
 * keeps them apart: env->so, env->ov, env->ca), so the host saves and
 * restores every register but XER (GUEST_SAVED_REGS), and XER goes through
 * mfxer/mtxer here, as the kernel's exception prologue and
 * ret_from_except do (arch/powerpc/kernel/head_32.h, entry_32.S).
 * kprobe_exc_entry is entered with the frame in r3 and the handler in r4
 * (r0 and CTR are already saved); kprobe_exc_return finds the frame
 * KPROBE_REGS_ABOVE_SP above the stack pointer the handler returns with.
 */
__asm__(
	"	.text\n"
	"	.globl	kprobe_exc_entry\n"
	"	.type	kprobe_exc_entry, @function\n"
	"kprobe_exc_entry:\n"
	"	mfxer	0\n"
	"	stw	0, 4 * " __stringify(PT_XER) "(3)\n"
	"	mtctr	4\n"
	"	bctr\n"
	"	.size	kprobe_exc_entry, . - kprobe_exc_entry\n"
	"	.globl	kprobe_exc_return\n"
	"	.type	kprobe_exc_return, @function\n"
	"kprobe_exc_return:\n"
	"	lwz	0, " __stringify(KPROBE_REGS_ABOVE_SP) " + 4 * " __stringify(PT_XER) "(1)\n"
	"	mtxer	0\n"
	"	mr	5, 3\n"
	"	li	4, 0\n"
	"	li	3, " __stringify(HC_KPROBE) "\n"
	"	sc\n"
	"	trap\n"
	"	.size	kprobe_exc_return, . - kprobe_exc_return\n");

extern void kprobe_exc_entry(void);
NOKPROBE_SYMBOL(kprobe_exc_entry);

/* The trampoline is a kprobe (kernel/kprobes.c builds trampoline_probe_handler). */
#define ARCH_KRETPROBE_TRAMPOLINE_KPROBE

/* Resume at the real return address. */
static __always_inline void arch_kretprobe_return(struct pt_regs *regs, unsigned long addr)
{
	regs->nip = addr;
}

/* arch_prepare_kretprobe(): the return address is in the link register. */
static __always_inline void arch_prepare_kretprobe(struct kretprobe_instance *ri,
						   struct pt_regs *regs)
{
	ri->ret_addr = regs->link;
	regs->link = (unsigned long)&kretprobe_trampoline;
}

/*
 * The PowerPC trampoline is a nop with a kprobe on it, registered by the
 * host with trampoline_probe_handler as its pre_handler
 * (arch/powerpc/kernel/kprobes.c): the return costs a trap.
 */
__asm__(
	"	.text\n"
	"	.globl	kretprobe_trampoline\n"
	"	.type	kretprobe_trampoline, @function\n"
	"kretprobe_trampoline:\n"
	"	nop\n"
	"	blr\n"
	"	.globl	kretprobe_trampoline_end\n"	/* where it ends, for the unwinder */
	"kretprobe_trampoline_end:\n"
	"	.size	kretprobe_trampoline, . - kretprobe_trampoline\n");

#endif
