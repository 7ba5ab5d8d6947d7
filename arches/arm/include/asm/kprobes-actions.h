/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ARM kprobe instruction handlers, after Linux v5.10
 * arch/arm/probes/decode-arm.c (simulate_bbl, simulate_blx1,
 * simulate_blx2bx, simulate_mrs, simulate_mov_ipsp),
 * arch/arm/probes/kprobes/actions-arm.c (emulate_*) and actions-common.c
 * (simulate_ldm1stm1, simulate_stm1_pc, simulate_ldm1_pc,
 * emulate_generic_r0_12_noflags and its r2_14 / ldm_r3_15 forms), with
 * the PC helpers of arch/arm/probes/decode.h for an ARMv7 kernel.
 *
 * arches/arm/kprobes.py chooses the handler (p->ainsn.handler) and writes
 * the slot: the instruction with its registers renamed (Rd -> r0, Rs -> r1,
 * Rn -> r2, Rm -> r3, decode.c INSN_NEW_BITS) and "mov pc, lr". An
 * emulating handler loads the probed registers into r0-r3 (a PC operand as
 * the probed address + 8), calls the slot and stores the results back.
 * The kernel does the loading with register-pinned inline asm; here two
 * small asm helpers do it, with the same registers. Included by
 * asm/kprobes-core.h only.
 */
#ifndef _ASM_KPROBES_ACTIONS_H
#define _ASM_KPROBES_ACTIONS_H

#define PSR_T_BIT	0x00000020
#define APSR_MASK	0xf80f0000	/* N Z C V Q and GE[3:0] */
/* decode.h: architecturally 8 from ARMv7 (the STR/STM of PC stores addr + 8). */
#define str_pc_offset	8

/* r0-r3 for the slot, and the flags it reads and writes. */
struct kprobe_arm_call_regs {
	unsigned long r[4];
	unsigned long cpsr;
};

void kprobe_arm_call(unsigned long fn, struct kprobe_arm_call_regs *c);
void kprobe_arm_generic(unsigned long fn, unsigned long *regs);
NOKPROBE_SYMBOL(kprobe_arm_call);
NOKPROBE_SYMBOL(kprobe_arm_generic);

/*
 * kprobe_arm_call: r0-r3 and APSR from *c, call the slot, store them back
 * (the register/flag traffic of the kernel's emulate_* inline asm).
 * kprobe_arm_generic: r0-r12 from regs[0..12], call the slot, store them
 * back (emulate_generic_r0_12_noflags; sp is never one of them).
 */
__asm__(
	"	.text\n"
	"	.globl	kprobe_arm_call\n"
	"	.type	kprobe_arm_call, %function\n"
	"kprobe_arm_call:\n"
	"	push	{r4, lr}\n"
	"	mov	r4, r1\n"
	"	mov	r12, r0\n"
	"	ldr	r0, [r4, #16]\n"
	"	msr	APSR_nzcvqg, r0\n"
	"	ldm	r4, {r0-r3}\n"
	"	blx	r12\n"
	"	stm	r4, {r0-r3}\n"
	"	mrs	r0, apsr\n"
	"	str	r0, [r4, #16]\n"
	"	pop	{r4, pc}\n"
	"	.size	kprobe_arm_call, . - kprobe_arm_call\n"
	"	.globl	kprobe_arm_generic\n"
	"	.type	kprobe_arm_generic, %function\n"
	"kprobe_arm_generic:\n"
	"	push	{r1, r4-r11, lr}\n"
	"	mov	lr, r0\n"
	"	ldm	r1, {r0-r12}\n"
	"	blx	lr\n"
	"	ldr	lr, [sp]\n"
	"	stm	lr, {r0-r12}\n"
	"	pop	{r1, r4-r11, pc}\n"
	"	.size	kprobe_arm_generic, . - kprobe_arm_generic\n");

/* decode.h bx_write_pc; ARMv7 loads and ALU writes of PC interwork. */
static __always_inline void bx_write_pc(unsigned long pcv, struct pt_regs *regs)
{
	if (pcv & 1) {
		regs->ARM_cpsr |= PSR_T_BIT;
		pcv &= ~1UL;
	} else {
		regs->ARM_cpsr &= ~PSR_T_BIT;
		pcv &= ~2UL;
	}
	regs->ARM_pc = pcv;
}

static __always_inline int arm_is_writeback(unsigned long insn)
{
	return (insn & 0x01200000) != 0x01000000;	/* decode.h is_writeback */
}

static __always_inline void arm_merge_flags(struct pt_regs *regs, unsigned long cpsr)
{
	regs->ARM_cpsr = (regs->ARM_cpsr & ~APSR_MASK) | (cpsr & APSR_MASK);
}

/* actions-common.c simulate_ldm1stm1: LDM/STM in C, any registers. */
static __always_inline void simulate_ldm1stm1(unsigned long insn, struct pt_regs *regs)
{
	int rn = (insn >> 16) & 0xf;
	unsigned long *addr = (unsigned long *)regs->uregs[rn];
	unsigned long list = insn & 0xffff;
	int count = __builtin_popcount(list), up = insn & (1 << 23), pre = insn & (1 << 24);
	int reg;

	if (!up)
		addr -= count;
	addr += (!pre == !up);
	for (reg = 0; reg < 16; reg++) {
		if (!(list & (1 << reg)))
			continue;
		if (insn & (1 << 20))
			regs->uregs[reg] = *addr++;
		else
			*addr++ = regs->uregs[reg];
	}
	if (insn & (1 << 21)) {
		if (!up)
			addr -= count;
		addr -= (!pre == !up);
		regs->uregs[rn] = (unsigned long)addr;
	}
}

/*
 * arm_singlestep (decode-arm.c): ARM_pc += 4, then the handler. PC as an
 * operand reads as ARM_pc + 4, the probed address + 8.
 */
static __always_inline void arm_singlestep(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long insn = p->opcode, fn = p->ainsn.insn, handler = p->ainsn.handler;
	unsigned long *u = regs->uregs;
	unsigned long pc, iaddr;
	int rd = (insn >> 12) & 0xf, rn = (insn >> 16) & 0xf;
	int rm = insn & 0xf, rs = (insn >> 8) & 0xf;
	long disp = ((long)(insn << 8)) >> 6;	/* branch_displacement */
	struct kprobe_arm_call_regs c;

	regs->ARM_pc += 4;
	pc = regs->ARM_pc + 4;
	iaddr = regs->ARM_pc - 4;
	if (handler >= KPROBE_ARM_EMULATE_LDRDSTRD &&
	    handler <= KPROBE_ARM_EMULATE_RDLO12RDHI16RN0RM8_RWFLAGS_NOPC) {
		/*
		 * Every emulate_* loads the fields in the renaming's layout:
		 * bits 15:12 -> r0, 11:8 -> r1 (ldrd/strd: Rt + 1), 19:16 -> r2,
		 * 3:0 -> r3, a PC field as the probed address + 8 (str_pc_offset
		 * for a stored PC). The decoder refuses PC wherever a handler
		 * would not substitute it.
		 */
		c.r[0] = rd == 15 ? iaddr + str_pc_offset : u[rd];
		c.r[1] = handler == KPROBE_ARM_EMULATE_LDRDSTRD ? u[rd + 1] : u[rs];
		c.r[2] = rn == 15 ? pc : u[rn];
		c.r[3] = rm == 15 ? pc : u[rm];
		c.cpsr = regs->ARM_cpsr;
		kprobe_arm_call(fn, &c);
	}
	switch (handler) {
	case KPROBE_ARM_PROBES_SIMULATE_NOP:
		break;
	case KPROBE_ARM_PROBES_EMULATE_NONE:
		c.cpsr = regs->ARM_cpsr;
		kprobe_arm_call(fn, &c);
		break;
	case KPROBE_ARM_SIMULATE_BBL:
		if (insn & (1 << 24))
			regs->ARM_lr = iaddr + 4;
		regs->ARM_pc = iaddr + 8 + disp;
		break;
	case KPROBE_ARM_SIMULATE_BLX1:
		regs->ARM_lr = iaddr + 4;
		regs->ARM_pc = iaddr + 8 + disp + ((insn >> 23) & 0x2);
		regs->ARM_cpsr |= PSR_T_BIT;
		break;
	case KPROBE_ARM_SIMULATE_BLX2BX:
		iaddr = u[rm];
		if (insn & (1 << 5))
			regs->ARM_lr = regs->ARM_pc;
		regs->ARM_pc = iaddr & ~1UL;
		regs->ARM_cpsr &= ~PSR_T_BIT;
		if (iaddr & 1)
			regs->ARM_cpsr |= PSR_T_BIT;
		break;
	case KPROBE_ARM_SIMULATE_MRS:
		u[rd] = regs->ARM_cpsr & 0xf8ff03df;	/* execution state masked out */
		break;
	case KPROBE_ARM_SIMULATE_MOV_IPSP:
		u[12] = u[13];
		break;
	case KPROBE_ARM_EMULATE_LDRDSTRD:
		u[rd] = c.r[0];
		u[rd + 1] = c.r[1];
		if (arm_is_writeback(insn))
			u[rn] = c.r[2];
		break;
	case KPROBE_ARM_EMULATE_LDR:
		if (rd == 15)
			bx_write_pc(c.r[0], regs);	/* load_write_pc */
		else
			u[rd] = c.r[0];
		if (arm_is_writeback(insn))
			u[rn] = c.r[2];
		break;
	case KPROBE_ARM_EMULATE_STR:
		if (arm_is_writeback(insn))
			u[rn] = c.r[2];
		break;
	case KPROBE_ARM_EMULATE_RD12RN16RM0RS8_RWFLAGS:
		if (rd == 15)
			bx_write_pc(c.r[0], regs);	/* alu_write_pc */
		else
			u[rd] = c.r[0];
		arm_merge_flags(regs, c.cpsr);
		break;
	case KPROBE_ARM_EMULATE_RD12RN16RM0_RWFLAGS_NOPC:
		u[rd] = c.r[0];
		arm_merge_flags(regs, c.cpsr);
		break;
	case KPROBE_ARM_EMULATE_RD16RN12RM0RS8_RWFLAGS_NOPC:
		u[rn] = c.r[2];			/* Rd is the field at bits 19:16 */
		arm_merge_flags(regs, c.cpsr);
		break;
	case KPROBE_ARM_EMULATE_RD12RM0_NOFLAGS_NOPC:
		u[rd] = c.r[0];
		break;
	case KPROBE_ARM_EMULATE_RDLO12RDHI16RN0RM8_RWFLAGS_NOPC:
		u[rd] = c.r[0];			/* RdLo */
		u[rn] = c.r[2];			/* RdHi */
		arm_merge_flags(regs, c.cpsr);
		break;
	case KPROBE_ARM_EMULATE_GENERIC_R0_12_NOFLAGS:
		kprobe_arm_generic(fn, u);
		break;
	case KPROBE_ARM_EMULATE_GENERIC_R2_14_NOFLAGS:
		kprobe_arm_generic(fn, u + 2);
		break;
	case KPROBE_ARM_EMULATE_LDM_R3_15:
		kprobe_arm_generic(fn, u + 3);
		bx_write_pc(regs->ARM_pc, regs);	/* load_write_pc */
		break;
	case KPROBE_ARM_SIMULATE_LDM1STM1:
		simulate_ldm1stm1(insn, regs);
		break;
	case KPROBE_ARM_SIMULATE_STM1_PC:
		regs->ARM_pc = iaddr + str_pc_offset;
		simulate_ldm1stm1(insn, regs);
		regs->ARM_pc = iaddr + 4;
		break;
	case KPROBE_ARM_SIMULATE_LDM1_PC:
		simulate_ldm1stm1(insn, regs);
		bx_write_pc(regs->ARM_pc, regs);	/* load_write_pc */
		break;
	}
}

#endif
