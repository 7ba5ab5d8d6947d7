/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ARM kprobe instruction handlers, after Linux v5.10
 * arch/arm/probes/decode-arm.c (simulate_bbl, simulate_blx1,
 * simulate_blx2bx, simulate_mrs, simulate_mov_ipsp),
 * arch/arm/probes/kprobes/actions-arm.c (emulate_*) and actions-common.c
 * (simulate_stm1_pc; the rest of that file, and the PC helpers of
 * arch/arm/probes/decode.h for an ARMv7 kernel, are shared with Thumb in
 * asm/kprobes-actions-common.h).
 *
 * arches/arm/kprobes.py chooses the handler (p->ainsn.handler) and writes
 * the slot: the instruction with its registers renamed (Rd -> r0, Rs -> r1,
 * Rn -> r2, Rm -> r3, decode.c INSN_NEW_BITS) and "mov pc, lr". An
 * emulating handler loads the probed registers into r0-r3 (a PC operand as
 * the probed address + 8), calls the slot and stores the results back,
 * with the asm helpers of asm/kprobes-actions-common.h. Included by
 * asm/kprobes-core.h only.
 */
#ifndef _ASM_KPROBES_ACTIONS_H
#define _ASM_KPROBES_ACTIONS_H

#include <asm/kprobes-actions-common.h>

/* decode.h: architecturally 8 from ARMv7 (the STR/STM of PC stores addr + 8). */
#define str_pc_offset	8

static __always_inline int arm_is_writeback(unsigned long insn)
{
	return (insn & 0x01200000) != 0x01000000;	/* decode.h is_writeback */
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
		emulate_generic_r0_12_noflags(fn, regs);
		break;
	case KPROBE_ARM_EMULATE_GENERIC_R2_14_NOFLAGS:
		emulate_generic_r2_14_noflags(fn, regs);
		break;
	case KPROBE_ARM_EMULATE_LDM_R3_15:
		emulate_ldm_r3_15(fn, regs);
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
		simulate_ldm1_pc(insn, regs);
		break;
	}
}

#endif
