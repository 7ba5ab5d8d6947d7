/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Thumb kprobe instruction handlers of a CONFIG_THUMB2_KERNEL kernel,
 * after Linux v5.10 arch/arm/probes/kprobes/actions-thumb.c (t16_* and
 * t32_*), the single-step and condition hooks of
 * arch/arm/probes/decode-thumb.c (thumb16_singlestep, thumb32_singlestep,
 * thumb_check_cc; decode-thumb.h in_it_block, current_cond), decode.h
 * it_advance and kprobes/core.c singlestep_skip. The handlers LDM/STM
 * shares with A32 (actions-common.c) are in asm/kprobes-actions-common.h.
 *
 * arches/arm/kprobes_thumb.py decodes the probed instruction
 * (arches/arm/probes_decode_thumb.py) and fills struct kprobe: p->opcode is
 * the instruction, a 32-bit one composed as first halfword << 16 | second
 * (so it is 32-bit exactly when p->opcode >= 0xe800, is_wide_instruction);
 * p->ainsn.handler is KPROBE_THUMB_* below, the position of the handler's
 * name in THUMB_HANDLERS; p->ainsn.insn is the slot (0 if the handler does
 * not use one), which holds the instruction's halfwords with its registers
 * renamed (T32: Rn -> r2, Rt/RdLo -> r0, Rd/RdHi -> r1, Rm -> r3; T16 ADD/
 * CMP/MOV high registers: Rdn -> r1, Rm -> r0; PUSH/POP as a T32 STMDB/LDMIA
 * with r9 for sp and r8 for lr/pc), then "bx lr". The slot is Thumb code:
 * it is called at p->ainsn.insn | 1, as core.c's insn_fn.
 *
 * On entry regs->ARM_pc is the probed address (bit 0 clear). A PC operand
 * reads as that address + 4, word-aligned where the kernel aligns it.
 * ITSTATE lives in regs->ARM_cpsr (PSR_IT_MASK) and advances after every
 * instruction stepped or skipped except IT itself, which sets it.
 * Included by asm/kprobes-core.h on a Thumb-2 kernel only.
 */
#ifndef _ASM_KPROBES_ACTIONS_THUMB_H
#define _ASM_KPROBES_ACTIONS_THUMB_H

#include <asm/kprobes-actions-common.h>

/* The handlers, numbered as THUMB_HANDLERS in arches/arm/probes_decode_thumb.py. */
#define KPROBE_THUMB_PROBES_SIMULATE_NOP			0
#define KPROBE_THUMB_PROBES_EMULATE_NONE			1
#define KPROBE_THUMB_T16_SIMULATE_ADD_SP_IMM			2
#define KPROBE_THUMB_T16_SIMULATE_CBZ				3
#define KPROBE_THUMB_T16_EMULATE_LOREGS_RWFLAGS			4
#define KPROBE_THUMB_T16_EMULATE_LOREGS_NOITRWFLAGS		5
#define KPROBE_THUMB_T16_EMULATE_PUSH				6
#define KPROBE_THUMB_T16_EMULATE_POP_NOPC			7
#define KPROBE_THUMB_T16_EMULATE_POP_PC				8
#define KPROBE_THUMB_T16_SIMULATE_IT				9
#define KPROBE_THUMB_T16_SIMULATE_BXBLX				10
#define KPROBE_THUMB_T16_EMULATE_HIREGS				11
#define KPROBE_THUMB_T16_SIMULATE_LDR_LITERAL			12
#define KPROBE_THUMB_T16_SIMULATE_LDRSTR_SP_RELATIVE		13
#define KPROBE_THUMB_T16_SIMULATE_RELADR			14
#define KPROBE_THUMB_T16_SIMULATE_COND_BRANCH			15
#define KPROBE_THUMB_T16_SIMULATE_BRANCH			16
#define KPROBE_THUMB_T32_SIMULATE_TABLE_BRANCH			17
#define KPROBE_THUMB_T32_SIMULATE_MRS				18
#define KPROBE_THUMB_T32_SIMULATE_COND_BRANCH			19
#define KPROBE_THUMB_T32_SIMULATE_BRANCH			20
#define KPROBE_THUMB_T32_SIMULATE_LDR_LITERAL			21
#define KPROBE_THUMB_T32_EMULATE_LDRDSTRD			22
#define KPROBE_THUMB_T32_EMULATE_LDRSTR				23
#define KPROBE_THUMB_T32_EMULATE_RD8RN16RM0_RWFLAGS		24
#define KPROBE_THUMB_T32_EMULATE_RD8PC16_NOFLAGS		25
#define KPROBE_THUMB_T32_EMULATE_RD8RN16_NOFLAGS		26
#define KPROBE_THUMB_T32_EMULATE_RDLO12RDHI8RN16RM0_NOFLAGS	27
#define KPROBE_THUMB_EMULATE_GENERIC_R0_12_NOFLAGS		28
#define KPROBE_THUMB_EMULATE_GENERIC_R2_14_NOFLAGS		29
#define KPROBE_THUMB_EMULATE_LDM_R3_15				30
#define KPROBE_THUMB_SIMULATE_LDM1STM1				31
#define KPROBE_THUMB_SIMULATE_LDM1_PC				32

/* ITSTATE: IT[1:0] in CPSR bits 26:25, IT[7:2] in bits 15:10 (asm/ptrace.h). */
#define PSR_IT_MASK	0x0600fc00

unsigned long kprobe_thumb_loregs(unsigned long fn, struct pt_regs *regs);
unsigned long kprobe_thumb_stack(unsigned long fn, struct pt_regs *regs);
NOKPROBE_SYMBOL(kprobe_thumb_loregs);
NOKPROBE_SYMBOL(kprobe_thumb_stack);

/*
 * kprobe_thumb_loregs (t16_emulate_loregs): r0-r7 and the flags from regs,
 * call the slot, store r0-r7 back; returns the APSR it left.
 * kprobe_thumb_stack (t16_emulate_push, t16_emulate_pop_*): r0-r7, r9 = sp
 * and r8 = lr from regs, call the slot, store r0-r7 and sp back; returns
 * r8 (a POP's PC). The kernel's PUSH does not store r0-r7 back, nor its
 * POP load r8: one helper for both, the extra traffic changes nothing.
 */
__asm__(
	"	.text\n"
	KPROBE_ASM_FUNC(kprobe_thumb_loregs)
	"	push	{r4-r8, lr}\n"
	"	mov	r8, r1\n"
	"	mov	r12, r0\n"
	"	ldr	r0, [r8, #64]\n"		/* ARM_cpsr */
	"	msr	APSR_nzcvqg, r0\n"
	"	ldm	r8, {r0-r7}\n"
	"	blx	r12\n"
	"	stm	r8, {r0-r7}\n"
	"	mrs	r0, apsr\n"
	"	pop	{r4-r8, pc}\n"
	"	.size	kprobe_thumb_loregs, . - kprobe_thumb_loregs\n"
	KPROBE_ASM_FUNC(kprobe_thumb_stack)
	"	push	{r4-r10, lr}\n"
	"	mov	r10, r1\n"
	"	mov	r12, r0\n"
	"	ldr	r9, [r10, #52]\n"		/* ARM_sp */
	"	ldr	r8, [r10, #56]\n"		/* ARM_lr */
	"	ldm	r10, {r0-r7}\n"
	"	blx	r12\n"
	"	stm	r10, {r0-r7}\n"
	"	str	r9, [r10, #52]\n"
	"	mov	r0, r8\n"
	"	pop	{r4-r10, pc}\n"
	"	.size	kprobe_thumb_stack, . - kprobe_thumb_stack\n");

/* decode-thumb.h in_it_block, current_cond. */
static __always_inline int in_it_block(unsigned long cpsr)
{
	return (cpsr & 0x06000c00) != 0;
}

static __always_inline unsigned long current_cond(unsigned long cpsr)
{
	return (cpsr >> 12) & 0xf;
}

/* decode.h it_advance: ITSTATE after an instruction of the block has run. */
static __always_inline unsigned long it_advance(unsigned long cpsr)
{
	const unsigned long mask = 0x06001c00;	/* ITSTATE<4:0> */
	unsigned long it;

	if ((cpsr & 0x06000400) == 0)		/* ITSTATE<2:0> == 0: the block ends */
		return cpsr & ~PSR_IT_MASK;
	it = (cpsr & mask) << 1;
	it |= it >> (27 - 10);			/* old ITSTATE<1> into ITSTATE<2> */
	return (cpsr & ~mask) | (it & mask);
}

/* asm/ptrace.h is_wide_instruction, on p->opcode as core.c composes it. */
static __always_inline unsigned long thumb_insn_length(unsigned long opcode)
{
	return opcode >= 0xe800 ? 4 : 2;
}

/*
 * kprobe_handler's insn_check_cc, and singlestep_skip when it fails: a
 * B<c> checks its own condition (t16/t32_decode_cond_branch), any other
 * instruction the IT block's (thumb_check_cc), or passes outside one.
 */
static __always_inline int thumb_kprobe_skip(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long insn = p->opcode, cpsr = regs->ARM_cpsr, cond;

	if (p->ainsn.handler == KPROBE_THUMB_T16_SIMULATE_COND_BRANCH)
		cond = (insn >> 8) & 0xf;
	else if (p->ainsn.handler == KPROBE_THUMB_T32_SIMULATE_COND_BRANCH)
		cond = (insn >> 22) & 0xf;
	else if (in_it_block(cpsr))
		cond = current_cond(cpsr);
	else
		return 0;
	if (arm_cond_passes(cond, cpsr))
		return 0;
	regs->ARM_cpsr = it_advance(cpsr);
	regs->ARM_pc += thumb_insn_length(insn);
	return 1;
}

/*
 * The T32 emulations (t32_emulate_*): the renamed layout's registers into
 * r0-r3 (bits 15:12, 11:8, 19:16, 3:0) and the flags, the slot called.
 * An Rn of PC reads as the probed address + 4 aligned to a word (LDRD
 * literal, ADR.W); a field that is no register in the instruction loads a
 * value the slot never reads.
 */
static __always_inline void t32_emulate(unsigned long insn, unsigned long fn,
					struct pt_regs *regs, unsigned long pc,
					struct kprobe_arm_call_regs *c)
{
	unsigned long *u = regs->uregs;
	int rn = (insn >> 16) & 0xf;

	c->r[0] = u[(insn >> 12) & 0xf];
	c->r[1] = u[(insn >> 8) & 0xf];
	c->r[2] = rn == 15 ? pc & ~3UL : u[rn];
	c->r[3] = u[insn & 0xf];
	c->cpsr = regs->ARM_cpsr;
	kprobe_arm_call(fn, c);
}

/* t32_simulate_branch: B.W, BL, BLX (immediate). */
static __always_inline void t32_simulate_branch(unsigned long insn, struct pt_regs *regs,
						unsigned long pc)
{
	long offset = insn & 0x7ff;		/* imm11 */

	offset += (insn & 0x03ff0000) >> 5;	/* imm10 */
	offset += (insn & 0x00002000) << 9;	/* J1 */
	offset += (insn & 0x00000800) << 10;	/* J2 */
	if (insn & 0x04000000)
		offset -= 0x00800000;		/* S: negative */
	else
		offset ^= 0x00600000;		/* I1 = !J1, I2 = !J2 */
	if (insn & (1 << 14)) {
		regs->ARM_lr = regs->ARM_pc | 1;
		if (!(insn & (1 << 12))) {	/* BLX: to ARM state */
			regs->ARM_cpsr &= ~PSR_T_BIT;
			pc &= ~3UL;
		}
	}
	regs->ARM_pc = pc + offset * 2;
}

/* t32_simulate_ldr_literal: LDR/LDRH/LDRSH/LDRB/LDRSB Rt, [PC, #+-imm12]. */
static __always_inline void t32_simulate_ldr_literal(unsigned long insn, struct pt_regs *regs,
						     unsigned long pc)
{
	unsigned long addr = pc & ~3UL, rtv;
	int rt = (insn >> 12) & 0xf;

	if (insn & 0x00800000)
		addr += insn & 0xfff;
	else
		addr -= insn & 0xfff;
	if (insn & 0x00400000) {		/* word */
		rtv = *(unsigned long *)addr;
		if (rt == 15) {
			bx_write_pc(rtv, regs);	/* load_write_pc */
			return;
		}
	} else if (insn & 0x00200000) {		/* halfword */
		rtv = insn & 0x01000000 ? (unsigned long)*(s16 *)addr : *(u16 *)addr;
	} else {				/* byte */
		rtv = insn & 0x01000000 ? (unsigned long)*(s8 *)addr : *(u8 *)addr;
	}
	regs->uregs[rt] = rtv;
}

/* t16_simulate_it (t16_singlestep_it): the IT instruction's ITSTATE into CPSR. */
static __always_inline void t16_simulate_it(unsigned long insn, struct pt_regs *regs)
{
	unsigned long cpsr = regs->ARM_cpsr & ~PSR_IT_MASK;

	cpsr |= (insn & 0xfc) << 8;
	cpsr |= (insn & 0x03) << 25;
	regs->ARM_cpsr = cpsr;
}

/* t16_emulate_hiregs: ADD/CMP/MOV with a high register, Rdn -> r1, Rm -> r0. */
static __always_inline void t16_emulate_hiregs(unsigned long insn, unsigned long fn,
					       struct pt_regs *regs, unsigned long pc)
{
	int rdn = (insn & 0x7) | ((insn & 0x80) >> 4), rm = (insn >> 3) & 0xf;
	struct kprobe_arm_call_regs c;

	c.r[0] = rm == 15 ? pc : regs->uregs[rm];
	c.r[1] = rdn == 15 ? pc : regs->uregs[rdn];
	c.cpsr = regs->ARM_cpsr;
	kprobe_arm_call(fn, &c);
	if (rdn == 15)
		c.r[1] &= ~1UL;		/* a branch: no interworking */
	regs->uregs[rdn] = c.r[1];
	arm_merge_flags(regs, c.cpsr);
}

/*
 * PUSH or POP of one register. Its slot, a T32 STMDB/LDMIA of one register,
 * is UNPREDICTABLE: ARMv7 cores run it, QEMU (so Unicorn) makes it
 * UNDEFINED. kisim simulates it in C instead, as actions-common.c does an
 * LDM/STM it cannot rename: as the T32 STMDB sp!/LDMIA sp! of that register
 * (bit 8: lr for PUSH, pc for POP).
 */
static __always_inline int t16_pushpop_single(unsigned long insn)
{
	return __builtin_popcount(insn & 0x1ff) == 1;
}

static __always_inline unsigned long t16_pushpop_t32(unsigned long insn)
{
	unsigned long list = insn & 0xff, pop = insn & 0x800;

	if (insn & 0x100)
		list |= pop ? 1 << 15 : 1 << 14;
	return (pop ? 0xe8bd0000 : 0xe92d0000) | list;
}

/* The T16 handlers (actions-thumb.c t16_*); pc is the probed address + 4. */
static __always_inline void thumb16_handler(unsigned long insn, unsigned long handler,
					    unsigned long fn, struct pt_regs *regs,
					    unsigned long pc)
{
	unsigned long *u = regs->uregs, value;
	int rt = (insn >> 8) & 0x7, rm = (insn >> 3) & 0xf;
	long imm8 = insn & 0xff, offset;

	switch (handler) {
	case KPROBE_THUMB_T16_SIMULATE_ADD_SP_IMM:
		if (insn & 0x80)
			regs->ARM_sp -= (insn & 0x7f) * 4;
		else
			regs->ARM_sp += (insn & 0x7f) * 4;
		break;
	case KPROBE_THUMB_T16_SIMULATE_CBZ:	/* CBZ/CBNZ: bit 11 says which */
		if ((u[insn & 0x7] ? insn : ~insn) & 0x800)
			regs->ARM_pc = pc + ((insn & 0x200) >> 3) + ((insn & 0xf8) >> 2);
		break;
	case KPROBE_THUMB_T16_EMULATE_LOREGS_RWFLAGS:
		arm_merge_flags(regs, kprobe_thumb_loregs(fn, regs));
		break;
	case KPROBE_THUMB_T16_EMULATE_LOREGS_NOITRWFLAGS:
		/* Inside an IT block the 16-bit form sets no flags; the slot does. */
		value = kprobe_thumb_loregs(fn, regs);
		if (!in_it_block(regs->ARM_cpsr))
			arm_merge_flags(regs, value);
		break;
	case KPROBE_THUMB_T16_EMULATE_PUSH:
	case KPROBE_THUMB_T16_EMULATE_POP_NOPC:
		if (t16_pushpop_single(insn))
			simulate_ldm1stm1(t16_pushpop_t32(insn), regs);
		else
			kprobe_thumb_stack(fn, regs);
		break;
	case KPROBE_THUMB_T16_EMULATE_POP_PC:
		if (t16_pushpop_single(insn))
			simulate_ldm1_pc(t16_pushpop_t32(insn), regs);
		else
			bx_write_pc(kprobe_thumb_stack(fn, regs), regs);
		break;
	case KPROBE_THUMB_T16_SIMULATE_BXBLX:
		value = rm == 15 ? pc : u[rm];
		if (insn & (1 << 7))		/* BLX */
			regs->ARM_lr = regs->ARM_pc | 1;
		bx_write_pc(value, regs);
		break;
	case KPROBE_THUMB_T16_EMULATE_HIREGS:
		t16_emulate_hiregs(insn, fn, regs, pc);
		break;
	case KPROBE_THUMB_T16_SIMULATE_LDR_LITERAL:
		u[rt] = ((unsigned long *)(pc & ~3UL))[imm8];
		break;
	case KPROBE_THUMB_T16_SIMULATE_LDRSTR_SP_RELATIVE:
		if (insn & 0x800)		/* LDR */
			u[rt] = ((unsigned long *)regs->ARM_sp)[imm8];
		else
			((unsigned long *)regs->ARM_sp)[imm8] = u[rt];
		break;
	case KPROBE_THUMB_T16_SIMULATE_RELADR:	/* ADR, ADD Rd, SP, #imm */
		u[rt] = (insn & 0x800 ? regs->ARM_sp : pc & ~3UL) + imm8 * 4;
		break;
	case KPROBE_THUMB_T16_SIMULATE_COND_BRANCH:
		offset = (insn & 0x7f) - (insn & 0x80);
		regs->ARM_pc = pc + offset * 2;
		break;
	case KPROBE_THUMB_T16_SIMULATE_BRANCH:
		offset = (insn & 0x3ff) - (insn & 0x400);
		regs->ARM_pc = pc + offset * 2;
		break;
	}
}

/* The T32 handlers (actions-thumb.c t32_*); pc is the probed address + 4. */
static __always_inline void thumb32_handler(unsigned long insn, unsigned long handler,
					    unsigned long fn, struct pt_regs *regs,
					    unsigned long pc)
{
	unsigned long *u = regs->uregs, base;
	int rt = (insn >> 12) & 0xf, rd = (insn >> 8) & 0xf;
	int rn = (insn >> 16) & 0xf, rm = insn & 0xf;
	long offset;
	struct kprobe_arm_call_regs c;

	if (handler >= KPROBE_THUMB_T32_EMULATE_LDRDSTRD &&
	    handler <= KPROBE_THUMB_T32_EMULATE_RDLO12RDHI8RN16RM0_NOFLAGS)
		t32_emulate(insn, fn, regs, pc, &c);
	switch (handler) {
	case KPROBE_THUMB_T32_SIMULATE_TABLE_BRANCH:	/* TBB/TBH */
		base = rn == 15 ? pc : u[rn];
		offset = insn & 0x10 ? ((u16 *)base)[u[rm]] : ((u8 *)base)[u[rm]];
		regs->ARM_pc = pc + 2 * offset;
		break;
	case KPROBE_THUMB_T32_SIMULATE_MRS:
		u[rd] = regs->ARM_cpsr & 0xf8ff03df;	/* execution state masked out */
		break;
	case KPROBE_THUMB_T32_SIMULATE_COND_BRANCH:
		offset = insn & 0x7ff;			/* imm11 */
		offset += (insn & 0x003f0000) >> 5;	/* imm6 */
		offset += (insn & 0x00002000) << 4;	/* J1 */
		offset += (insn & 0x00000800) << 7;	/* J2 */
		offset -= (insn & 0x04000000) >> 7;	/* S */
		regs->ARM_pc = pc + offset * 2;
		break;
	case KPROBE_THUMB_T32_SIMULATE_BRANCH:
		t32_simulate_branch(insn, regs, pc);
		break;
	case KPROBE_THUMB_T32_SIMULATE_LDR_LITERAL:
		t32_simulate_ldr_literal(insn, regs, pc);
		break;
	case KPROBE_THUMB_T32_EMULATE_LDRDSTRD:
		if (rn != 15)
			u[rn] = c.r[2];			/* writeback */
		u[rt] = c.r[0];
		u[rd] = c.r[1];				/* Rt2 */
		break;
	case KPROBE_THUMB_T32_EMULATE_LDRSTR:
		u[rn] = c.r[2];				/* writeback */
		if (rt == 15)				/* a load: STR PC is refused */
			bx_write_pc(c.r[0], regs);	/* load_write_pc */
		else
			u[rt] = c.r[0];
		break;
	case KPROBE_THUMB_T32_EMULATE_RD8RN16RM0_RWFLAGS:
		u[rd] = c.r[1];
		arm_merge_flags(regs, c.cpsr);
		break;
	case KPROBE_THUMB_T32_EMULATE_RD8PC16_NOFLAGS:
	case KPROBE_THUMB_T32_EMULATE_RD8RN16_NOFLAGS:
		u[rd] = c.r[1];
		break;
	case KPROBE_THUMB_T32_EMULATE_RDLO12RDHI8RN16RM0_NOFLAGS:
		u[rt] = c.r[0];				/* RdLo, or Ra */
		u[rd] = c.r[1];				/* RdHi, or Rd */
		break;
	}
}

/*
 * core.c singlestep() on a Thumb-2 kernel: t16_singlestep_it for IT;
 * otherwise thumb16/32_singlestep: ARM_pc past the instruction, the
 * handler, then ITSTATE advanced.
 */
static __always_inline void thumb_singlestep(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long insn = p->opcode, handler = p->ainsn.handler;
	unsigned long fn = p->ainsn.insn | 1, pc = regs->ARM_pc + 4;

	if (handler == KPROBE_THUMB_T16_SIMULATE_IT) {
		regs->ARM_pc += 2;
		t16_simulate_it(insn, regs);
		return;
	}
	regs->ARM_pc += thumb_insn_length(insn);
	switch (handler) {
	case KPROBE_THUMB_PROBES_SIMULATE_NOP:
		break;
	case KPROBE_THUMB_PROBES_EMULATE_NONE:
		((void (*)(void))fn)();
		break;
	case KPROBE_THUMB_EMULATE_GENERIC_R0_12_NOFLAGS:
		emulate_generic_r0_12_noflags(fn, regs);
		break;
	case KPROBE_THUMB_EMULATE_GENERIC_R2_14_NOFLAGS:
		emulate_generic_r2_14_noflags(fn, regs);
		break;
	case KPROBE_THUMB_EMULATE_LDM_R3_15:
		emulate_ldm_r3_15(fn, regs);
		break;
	case KPROBE_THUMB_SIMULATE_LDM1STM1:
		simulate_ldm1stm1(insn, regs);
		break;
	case KPROBE_THUMB_SIMULATE_LDM1_PC:
		simulate_ldm1_pc(insn, regs);
		break;
	default:
		if (handler < KPROBE_THUMB_T32_SIMULATE_TABLE_BRANCH)
			thumb16_handler(insn, handler, fn, regs, pc);
		else
			thumb32_handler(insn, handler, fn, regs, pc);
	}
	regs->ARM_cpsr = it_advance(regs->ARM_cpsr);
}

#endif
