// SPDX-License-Identifier: MIT
/*
 * 32-bit ARM instruction classes for the timing model (sim/native/decode.h).
 *
 * A32 after the ARM ARM (ARMv7-A/R, DDI 0406C) A5 "ARM Instruction Set
 * Encoding", Thumb after A6 "Thumb Instruction Set Encoding", CP15 cache
 * maintenance after the CP15 c7 tables of B4.2.1 "Cache and branch
 * predictor maintenance operations" (B6 for PMSA), exception returns after
 * B9.3. `mode` is the CPSR: T (bit 5) selects Thumb,
 * IT[7:0] (bits 15:10, 26:25) makes a Thumb instruction conditional.
 *
 * Data accesses (Decoder.accesses) after A5.3 "Load/store word and unsigned
 * byte", A5.2.8 "Extra load/store instructions", A5.2.10 "Synchronization
 * primitives", A5.5 "Branch, branch with link, and block data transfer",
 * A6.2.4 and A6.3.5-A6.3.10 for Thumb, each as QEMU performs it (Unicorn
 * 2.1's target/arm/translate.c): LDM/STM/PUSH/POP one word per register at
 * ascending addresses, LDRD/STRD two words, LDREXD one doubleword, and
 * STREX* a compare-and-exchange that loads, then stores. PC as a base reads
 * as the instruction's address + 8 (ARM) or Align(address + 4, 4) (Thumb).
 */
#include "decode.h"

#define COND_AL		0xe
#define REG_SP		13
#define REG_LR		14
#define REG_PC		15
#define REG_CPSR	16	/* Decoder.regs: r0-r12, sp, lr, pc, cpsr */
#define CPSR_T		(1u << 5)
#define COND_SET	0x10	/* struct kisim_decoded's cond: COND_SET | the condition */

/*
 * A branch that executes only on a condition: its direction is predicted.
 * A conditional call or indirect branch is predicted as a conditional
 * branch (COND); a conditional return as COND_RET.
 */
static void conditional(struct kisim_decoded *out)
{
	switch (out->kind) {
	case KISIM_JUMP: case KISIM_CALL: case KISIM_JUMP_IND: case KISIM_CALL_IND:
		out->kind = KISIM_COND;
		break;
	case KISIM_RET:
		out->kind = KISIM_COND_RET;
		break;
	}
}

static void cacheop(struct kisim_decoded *out, uint8_t op, int base)
{
	out->kind = KISIM_CACHEOP;
	out->cacheop = op;
	out->at.base = base;
	out->at.scale = 1;
}

/*
 * MCR p15, 0, Rt, c7, CRm, opc2 (B4.2.1). `insn` is the A32 word or the
 * Thumb T1 pair, whose low 28 bits are laid out alike:
 * 1110 opc1 0 CRn Rt 1111 opc2 1 CRm.
 */
static void cp15_c7(uint32_t insn, struct kisim_decoded *out)
{
	int rt = (insn >> 12) & 15;

	if ((insn & 0x0fff0f10) != 0x0e070f10)	/* MCR, opc1 0, CRn c7, coproc 15 */
		return;
	switch ((insn & 15) << 4 | ((insn >> 5) & 7)) {	/* CRm, opc2 */
	case 0x51:			/* ICIMVAU */
		cacheop(out, KISIM_OP_INVAL_I, rt);
		break;
	case 0x50:			/* ICIALLU */
	case 0x10:			/* ICIALLUIS */
		cacheop(out, KISIM_OP_INVAL_I_ALL, KISIM_REG_NONE);
		break;
	case 0x61:			/* DCIMVAC */
		cacheop(out, KISIM_OP_INVAL_D, rt);
		break;
	case 0xa1:			/* DCCMVAC */
	case 0xb1:			/* DCCMVAU */
		cacheop(out, KISIM_OP_CLEAN_D, rt);
		break;
	case 0xe1:			/* DCCIMVAC */
		cacheop(out, KISIM_OP_FLUSH_D, rt);
		break;
	case 0x54:			/* CP15ISB */
	case 0xa4:			/* CP15DSB */
		out->kind = KISIM_SERIALIZE;
		break;
	}				/* BPIALL (c5,6), CP15DMB (c10,5), set/way: plain */
}

/* ---- data accesses ---- */

/* [base, #disp]; a PC base reads as `pc` (the instruction's address + 8, or Thumb's). */
static struct kisim_address at_reg(int base, int64_t disp, uint64_t pc)
{
	if (base == REG_PC)
		return (struct kisim_address){ .base = KISIM_REG_NONE, .index = KISIM_REG_NONE,
					       .disp = (int64_t)pc + disp };
	return (struct kisim_address){ .base = (int8_t)base, .index = KISIM_REG_NONE,
				       .disp = disp };
}

/* [base, +/-index, LSL #shift]: a PC index is UNPREDICTABLE, so not modeled. */
static struct kisim_address at_index(int base, int index, int shift, int add, uint64_t pc,
				     struct kisim_decoded *out)
{
	struct kisim_address a = at_reg(base, 0, pc);

	if (index == REG_PC)
		out->unmodeled = 1;
	a.index = (int8_t)index;
	a.scale = add ? 1 << shift : -(1 << shift);
	return a;
}

/* A STREX*: QEMU's compare-and-exchange loads the location, then stores it. */
static void store_exclusive(struct kisim_decoded *out, uint8_t size, struct kisim_address at)
{
	kisim_access(out, KISIM_LOAD, size, 1, at);
	kisim_access(out, KISIM_STORE, size, 1, at);
}

/* `count` words from `rn` going up (IA, IB) or down (DA, DB), with or before the base. */
static void block(struct kisim_decoded *out, uint8_t op, int rn, int count, int up,
		  int before, uint64_t pc)
{
	int64_t first = up ? (before ? 4 : 0) : -4 * count + (before ? 0 : 4);

	if (count)
		kisim_access(out, op, 4, (uint8_t)count, at_reg(rn, first, pc));
}

/* A5.3: LDR, STR, LDRB, STRB and their T forms. */
static void word_or_byte(uint32_t insn, uint64_t pc, struct kisim_decoded *out)
{
	int rn = (insn >> 16) & 15, pre = insn & (1u << 24), add = insn & (1u << 23);
	uint8_t op = insn & (1u << 20) ? KISIM_LOAD : KISIM_STORE;
	uint8_t size = insn & (1u << 22) ? 1 : 4;
	struct kisim_address at;

	if (!(insn & (1u << 25))) {			/* imm12 */
		int64_t imm = insn & 0xfff;

		at = at_reg(rn, pre ? (add ? imm : -imm) : 0, pc);
	} else {					/* Rm, shift #imm5 (A8.4.1) */
		int type = (insn >> 5) & 3, imm5 = (insn >> 7) & 31;

		if (type == 3) {			/* ROR, RRX: not modeled */
			out->unmodeled = 1;
			return;
		}
		at = at_index(rn, insn & 15, type ? 0 : imm5, add, pc, out);
		if (type) {				/* LSR, ASR #0 mean #32 */
			at.shift_type = type == 1 ? KISIM_LSR : KISIM_ASR;
			at.shift = (uint8_t)(imm5 ? imm5 : 32);
		}
		if (!pre)
			at.index = KISIM_REG_NONE;
	}
	kisim_access(out, op, size, 1, at);
}

/* A5.2.8: STRH, LDRD, STRD (L=0), LDRH, LDRSB, LDRSH (L=1); op2 is bits 6:5. */
static void extra_load_store(uint32_t insn, uint64_t pc, struct kisim_decoded *out)
{
	int rn = (insn >> 16) & 15, pre = insn & (1u << 24), add = insn & (1u << 23);
	int load = insn & (1u << 20), op2 = (insn >> 5) & 3;
	struct kisim_address at;

	if (insn & (1u << 22)) {			/* imm8 = imm4H:imm4L */
		int64_t imm = ((insn >> 4) & 0xf0) | (insn & 15);

		at = at_reg(rn, pre ? (add ? imm : -imm) : 0, pc);
	} else {
		at = at_index(rn, insn & 15, 0, add, pc, out);
		if (!pre)
			at.index = KISIM_REG_NONE;
	}
	if (op2 == 1)
		kisim_access(out, load ? KISIM_LOAD : KISIM_STORE, 2, 1, at);
	else if (load)
		kisim_access(out, KISIM_LOAD, op2 == 2 ? 1 : 2, 1, at);
	else
		kisim_access(out, op2 == 2 ? KISIM_LOAD : KISIM_STORE, 4, 2, at);	/* LDRD, STRD */
}

/* A5.2.10: SWP/SWPB, LDREX/STREX and their B, H and D forms. */
static void synchronization(uint32_t insn, struct kisim_decoded *out)
{
	static const uint8_t sizes[4] = { 4, 8, 1, 2 };		/* op bits 22:21 */
	struct kisim_address at = at_reg((insn >> 16) & 15, 0, 0);
	uint8_t size = sizes[(insn >> 21) & 3];

	if (!(insn & (1u << 23))) {			/* SWP, SWPB: an atomic exchange */
		store_exclusive(out, insn & (1u << 22) ? 1 : 4, at);
		return;
	}
	if (insn & (1u << 20))
		kisim_access(out, KISIM_LOAD, size, 1, at);
	else
		store_exclusive(out, size, at);
}

/* A5.2 "Data-processing and miscellaneous instructions" writing the PC. */
static void data_processing(uint32_t insn, struct kisim_decoded *out)
{
	int op = (insn >> 21) & 15;

	if ((insn & 0x02000090) == 0x00000090)	/* multiply, extra load/store */
		return;
	if ((insn & 0x01900000) == 0x01000000)	/* op 10xx, S=0: A5.2.12 misc */
		return;
	if (((insn >> 12) & 15) != 15 || (op & 0xc) == 0x8)	/* Rd != pc; tst..cmn */
		return;
	if (insn & (1u << 20))			/* SUBS pc, lr and related (B9.3) */
		out->kind = KISIM_SERIALIZE;
	else if ((insn & 0x03e00fff) == 0x01a0000e)	/* mov pc, lr (register, no shift) */
		out->kind = KISIM_RET;
	else
		out->kind = KISIM_JUMP_IND;
}

/* The data accesses of the A32 word `insn` at `addr`. */
static void arm_accesses(uint32_t insn, uint64_t addr, struct kisim_decoded *out)
{
	uint64_t pc = addr + 8;
	int rn = (insn >> 16) & 15;

	if ((insn & 0x0c000000) == 0x04000000) {		/* 01x: A5.3 (011x...1: media) */
		if ((insn & 0x02000010) != 0x02000010)
			word_or_byte(insn, pc, out);
	} else if ((insn & 0x0e000090) == 0x00000090 && (insn & 0x60)) {
		extra_load_store(insn, pc, out);
	} else if ((insn & 0x0f0000f0) == 0x01000090) {
		synchronization(insn, out);
	} else if ((insn & 0x0e000000) == 0x08000000) {	/* A5.5 LDM, STM */
		block(out, insn & (1u << 20) ? KISIM_LOAD : KISIM_STORE, rn,
		      __builtin_popcount(insn & 0xffff), insn & (1u << 23), insn & (1u << 24), pc);
	} else if ((insn & 0x0c000000) == 0x0c000000 && (insn & 0x0e000000) != 0x0e000000) {
		out->unmodeled = 1;				/* LDC, STC, VLDR, VSTM... */
	}
	if (out->accesses && insn >> 28 != COND_AL) {
		out->cond = (uint8_t)(COND_SET | insn >> 28);
		out->cond_reg = REG_CPSR;
	}
}

/* A5.7's accesses: RFE loads two words; PLD, PLI only hint; SRS stores to another SP. */
static void unconditional_accesses(uint32_t insn, struct kisim_decoded *out)
{
	if ((insn & 0xfe50ffff) == 0xf8100a00)
		block(out, KISIM_LOAD, (insn >> 16) & 15, 2, insn & (1u << 23), insn & (1u << 24), 0);
	else if ((insn & 0xfe5fffe0) == 0xf84d0500 || (insn & 0x0e000000) == 0x0c000000)
		out->unmodeled = 1;				/* SRS, LDC2, STC2 */
}

static void decode_arm(uint32_t insn, uint64_t addr, struct kisim_decoded *out)
{
	uint32_t cond = insn >> 28;
	int rn = (insn >> 16) & 15;

	if (cond == 0xf) {			/* A5.7 "Unconditional instructions" */
		if ((insn & 0x0e000000) == 0x0a000000)
			out->kind = KISIM_CALL;	/* BLX (immediate) */
		else if ((insn & 0xffffffd0) == 0xf57ff040)
			out->kind = KISIM_SERIALIZE;	/* DSB (4x), ISB (6x); DMB (5x) plain */
		else if ((insn & 0xfe50ffff) == 0xf8100a00)
			out->kind = KISIM_SERIALIZE;	/* RFE: exception return */
		unconditional_accesses(insn, out);
		return;
	}
	arm_accesses(insn, addr, out);
	if ((insn & 0x0ff000f0) == 0x07f000f0 ||	/* UDF; any cond: A5.4 permanently undefined */
	    (insn & 0x0f000000) == 0x0f000000 ||	/* SVC */
	    (insn & 0xfff000f0) == 0xe1200070 ||	/* BKPT */
	    (insn & 0xfff000f0) == 0xe1400070 ||	/* HVC */
	    (insn & 0x0ffffff0) == 0x01600070) {	/* SMC */
		out->kind = KISIM_TRAP;
		return;
	}
	if ((insn & 0x0e000000) == 0x0a000000)	/* B, BL (A5.5) */
		out->kind = insn & (1u << 24) ? KISIM_CALL : KISIM_JUMP;
	else if ((insn & 0x0ffffff0) == 0x012fff10)	/* BX Rm */
		out->kind = (insn & 15) == REG_LR ? KISIM_RET : KISIM_JUMP_IND;
	else if ((insn & 0x0ffffff0) == 0x012fff30)	/* BLX Rm */
		out->kind = KISIM_CALL_IND;
	else if ((insn & 0x0e108000) == 0x08108000)	/* LDM with pc in the list */
		out->kind = insn & (1u << 22) ? KISIM_SERIALIZE :	/* LDM (exception return) */
			    rn == REG_SP ? KISIM_RET : KISIM_JUMP_IND;
	else if ((insn & 0x0c10f000) == 0x0410f000 &&	/* LDR pc (A5.3), not media */
		 (insn & 0x02000010) != 0x02000010)
		/* pop {pc} is ldr pc, [sp], #4: post-indexed (P=0) */
		out->kind = rn == REG_SP && !(insn & (1u << 24)) ? KISIM_RET : KISIM_JUMP_IND;
	else if ((insn & 0x0c000000) == 0)
		data_processing(insn, out);
	else
		cp15_c7(insn, out);
	if (cond != COND_AL)
		conditional(out);
}

/* A6.2.4 and its neighbours: the data accesses of a 16-bit Thumb instruction. */
static void thumb16_accesses(uint32_t hw, uint64_t pc, struct kisim_decoded *out)
{
	static const uint8_t sizes[8] = { 4, 2, 1, 1, 4, 2, 1, 2 };	/* STR..LDRSH */
	int rn = (hw >> 3) & 7, imm5 = (hw >> 6) & 31, load = hw & 0x0800;
	int list = __builtin_popcount(hw & 0xff);

	switch (hw >> 12) {
	case 0x4:
		if ((hw & 0x0800) == 0x0800)		/* LDR (literal) */
			kisim_access(out, KISIM_LOAD, 4, 1, at_reg(REG_PC, (hw & 0xff) * 4, pc & ~3ull));
		break;
	case 0x5: {					/* register offset */
		int opb = (hw >> 9) & 7;

		kisim_access(out, opb >= 3 ? KISIM_LOAD : KISIM_STORE, sizes[opb], 1,
		       at_index(rn, (hw >> 6) & 7, 0, 1, pc, out));
		break;
	}
	case 0x6:
		kisim_access(out, load ? KISIM_LOAD : KISIM_STORE, 4, 1, at_reg(rn, imm5 * 4, pc));
		break;
	case 0x7:
		kisim_access(out, load ? KISIM_LOAD : KISIM_STORE, 1, 1, at_reg(rn, imm5, pc));
		break;
	case 0x8:
		kisim_access(out, load ? KISIM_LOAD : KISIM_STORE, 2, 1, at_reg(rn, imm5 * 2, pc));
		break;
	case 0x9:					/* SP-relative */
		kisim_access(out, load ? KISIM_LOAD : KISIM_STORE, 4, 1,
		       at_reg(REG_SP, (hw & 0xff) * 4, pc));
		break;
	case 0xb:
		if ((hw & 0x0e00) == 0x0400)		/* PUSH {list, lr} */
			block(out, KISIM_STORE, REG_SP, list + !!(hw & 0x100), 0, 1, pc);
		else if ((hw & 0x0e00) == 0x0c00)	/* POP {list, pc} */
			block(out, KISIM_LOAD, REG_SP, list + !!(hw & 0x100), 1, 0, pc);
		break;
	case 0xc:					/* STMIA, LDMIA */
		block(out, load ? KISIM_LOAD : KISIM_STORE, (hw >> 8) & 7, list, 1, 0, pc);
		break;
	}
}

/* A6.3.6: LDREX, STREX, LDRD, STRD, TBB, TBH (hw1 & 0xfe40 == 0xe840). */
static void thumb32_dual(uint32_t hw1, uint32_t hw2, uint64_t addr, struct kisim_decoded *out)
{
	int op1 = (hw1 >> 7) & 3, op2 = (hw1 >> 4) & 3, op3 = (hw2 >> 4) & 15;
	int rn = hw1 & 15, imm8 = (hw2 & 0xff) * 4;
	uint64_t pc = (addr + 4) & ~3ull;
	static const uint8_t exclusive[8] = { 0, 0, 0, 0, 1, 2, 0, 8 };	/* by op3 */

	if (op1 == 0 && op2 < 2) {			/* STREX, LDREX [rn, #imm8 * 4] */
		if (op2)
			kisim_access(out, KISIM_LOAD, 4, 1, at_reg(rn, imm8, pc));
		else
			store_exclusive(out, 4, at_reg(rn, imm8, pc));
	} else if (op1 == 1 && op2 < 2) {
		if (op2 && op3 < 2)			/* TBB, TBH: PC reads unaligned */
			kisim_access(out, KISIM_LOAD, (uint8_t)(1 + op3), 1,
			       at_index(rn, hw2 & 15, op3, 1, addr + 4, out));
		else if (op3 < 8 && exclusive[op3] && op2)
			kisim_access(out, KISIM_LOAD, exclusive[op3], 1, at_reg(rn, 0, pc));
		else if (op3 < 8 && exclusive[op3])
			store_exclusive(out, exclusive[op3], at_reg(rn, 0, pc));
		else
			out->unmodeled = 1;
	} else {					/* LDRD, STRD (immediate, literal) */
		int pre = hw1 & 0x100, add = hw1 & 0x80;

		kisim_access(out, hw1 & 0x10 ? KISIM_LOAD : KISIM_STORE, 4, 2,
		       at_reg(rn, pre ? (add ? imm8 : -imm8) : 0, pc));
	}
}

/* A6.3.7-A6.3.10: a single load or store (hw1 & 0xfe00 == 0xf800). */
static void thumb32_single(uint32_t hw1, uint32_t hw2, uint64_t addr, struct kisim_decoded *out)
{
	int rn = hw1 & 15, rt = hw2 >> 12, size = (hw1 >> 5) & 3, load = hw1 & 0x10;
	uint8_t op = load ? KISIM_LOAD : KISIM_STORE;
	uint64_t pc = (addr + 4) & ~3ull;

	if (size == 3 || (!load && (hw1 & 0x100))) {
		out->unmodeled = 1;
		return;
	}
	if (load && rt == REG_PC && size != 2)
		return;					/* PLD, PLI: hints, no access */
	if (rn == REG_PC) {				/* literal: U is bit 7 */
		int imm = hw2 & 0xfff;

		kisim_access(out, op, 1u << size, 1, at_reg(REG_PC, hw1 & 0x80 ? imm : -imm, pc));
	} else if (hw1 & 0x80) {			/* imm12 */
		kisim_access(out, op, 1u << size, 1, at_reg(rn, hw2 & 0xfff, pc));
	} else if (hw2 & 0x800) {			/* imm8: P (bit 10), U (bit 9) */
		int imm = hw2 & 0xff;

		kisim_access(out, op, 1u << size, 1,
		       at_reg(rn, hw2 & 0x400 ? (hw2 & 0x200 ? imm : -imm) : 0, pc));
	} else if (!(hw2 & 0xfc0)) {			/* [rn, rm, LSL #imm2] */
		kisim_access(out, op, 1u << size, 1, at_index(rn, hw2 & 15, (hw2 >> 4) & 3, 1, pc, out));
	} else {
		out->unmodeled = 1;
	}
}

/* The data accesses of a 32-bit Thumb instruction. */
static void thumb32_accesses(uint32_t hw1, uint32_t hw2, uint64_t addr, struct kisim_decoded *out)
{
	int op = (hw1 >> 7) & 3;

	if ((hw1 & 0xfe40) == 0xe800) {			/* A6.3.5: LDM, STM; SRS, RFE */
		if (op == 1 || op == 2)
			block(out, hw1 & 0x10 ? KISIM_LOAD : KISIM_STORE, hw1 & 15,
			      __builtin_popcount(hw2), op == 1, op == 2, 0);
		else if (hw1 & 0x10)				/* RFEDB (00), RFEIA (11) */
			block(out, KISIM_LOAD, hw1 & 15, 2, op == 3, op == 0, 0);
		else
			out->unmodeled = 1;
	} else if ((hw1 & 0xfe40) == 0xe840) {
		thumb32_dual(hw1, hw2, addr, out);
	} else if ((hw1 & 0xfe00) == 0xf800) {
		thumb32_single(hw1, hw2, addr, out);
	} else if ((hw1 & 0xee00) == 0xec00 && (hw1 & 0x01a0)) {
		out->unmodeled = 1;			/* LDC, STC, VLDR, VSTM... */
	}
}

/* A6.2 "16-bit Thumb instruction encoding". */
static void decode_thumb16(uint32_t hw, struct kisim_decoded *out)
{
	int rm = (hw >> 3) & 15;

	if ((hw & 0xf000) == 0xd000)		/* B<c> T1; cond 1110 UDF, 1111 SVC */
		out->kind = (hw & 0x0e00) == 0x0e00 ? KISIM_TRAP : KISIM_COND;
	else if ((hw & 0xf800) == 0xe000)	/* B T2 */
		out->kind = KISIM_JUMP;
	else if ((hw & 0xff07) == 0x4700)	/* BX, BLX Rm (A6.2.3) */
		out->kind = hw & 0x80 ? KISIM_CALL_IND :
			    rm == REG_LR ? KISIM_RET : KISIM_JUMP_IND;
	else if ((hw & 0xff87) == 0x4687)	/* mov pc, Rm */
		out->kind = rm == REG_LR ? KISIM_RET : KISIM_JUMP_IND;
	else if ((hw & 0xff87) == 0x4487)	/* add pc, Rm */
		out->kind = KISIM_JUMP_IND;
	else if ((hw & 0xff00) == 0xbd00)	/* pop {..., pc} (A6.2.5) */
		out->kind = KISIM_RET;
	else if ((hw & 0xf500) == 0xb100)	/* CBZ, CBNZ */
		out->kind = KISIM_COND;
	else if ((hw & 0xff00) == 0xbe00)	/* BKPT */
		out->kind = KISIM_TRAP;
}

/* A6.3 "32-bit Thumb instruction encoding"; hw1 is the first halfword. */
static void decode_thumb32(uint32_t hw1, uint32_t hw2, struct kisim_decoded *out)
{
	int rn = hw1 & 15;

	if ((hw1 & 0xf800) == 0xf000 && (hw2 & 0x8000)) {
		/* A6.3.4 "Branches and miscellaneous control" */
		if (hw2 & 0x4000)		/* BL (J 1), BLX imm (J 0) */
			out->kind = KISIM_CALL;
		else if (hw2 & 0x1000)		/* B T4 */
			out->kind = KISIM_JUMP;
		else if ((hw1 & 0x0380) != 0x0380)	/* B<c> T3, cond not 111x */
			out->kind = KISIM_COND;
		else if ((hw1 & 0xffe0) == 0xf7e0)	/* HVC, SMC, UDF.W (kprobes' f7f0 a018) */
			out->kind = KISIM_TRAP;
		else if (hw1 == 0xf3bf && (hw2 & 0xffd0) == 0x8f40)
			out->kind = KISIM_SERIALIZE;	/* DSB (4x), ISB (6x); DMB plain */
		else if ((hw1 & 0xfff0) == 0xf3d0)	/* SUBS pc, lr: exception return */
			out->kind = KISIM_SERIALIZE;
	} else if (((hw1 & 0xffd0) == 0xe890 || (hw1 & 0xffd0) == 0xe910) &&
		   (hw2 & 0x8000)) {		/* LDM/LDMDB with pc (A6.3.5) */
		out->kind = rn == REG_SP ? KISIM_RET : KISIM_JUMP_IND;
	} else if ((hw1 & 0xfff0) == 0xe8d0 && (hw2 & 0xffe0) == 0xf000) {
		out->kind = KISIM_JUMP_IND;	/* TBB, TBH */
	} else if ((hw1 & 0xff70) == 0xf850 && (hw2 & 0xf000) == 0xf000) {
		/* LDR pc (A6.3.7); pop.w {pc} is T4 post-indexed: ldr pc, [sp], #4 */
		out->kind = rn == REG_SP && !(hw1 & 0x80) && (hw2 & 0x0d00) == 0x0900 ?
			    KISIM_RET : KISIM_JUMP_IND;
	} else if ((hw1 & 0xf000) == 0xe000) {	/* not MCR2 (1111 1110 ...) */
		cp15_c7(hw1 << 16 | hw2, out);
	}
}

/* ---- classes and registers (the out-of-order core's dependencies) ---- */

#define R(n)	KISIM_R(n)
#define FLAGS	KISIM_R_FLAGS
#define BIT(x, n)	(((x) >> (n)) & 1u)
#define REGS_OF(list)	((uint64_t)(list) & 0xffff)	/* a register list: bit n is rn */

/* Rd, or nothing for the PC: a PC write is the branch, which the kind describes. */
static uint64_t reg(uint32_t n)
{
	return n == REG_PC ? 0 : R(n);
}

/* A5.2.1-A5.2.3: data-processing (register, register-shifted register, immediate). */
static void arm_data_processing(uint32_t insn, struct kisim_decoded *out)
{
	uint32_t op = (insn >> 21) & 15, rn = (insn >> 16) & 15, rd = (insn >> 12) & 15;

	if (op != 13 && op != 15)			/* MOV, MVN have no Rn */
		out->reads |= reg(rn);
	if (op < 8 || op > 11)				/* TST, TEQ, CMP, CMN write no Rd */
		out->writes |= reg(rd);
	if (op == 5 || op == 6 || op == 7)		/* ADC, SBC, RSC read C */
		out->reads |= FLAGS;
	if (BIT(insn, 20))
		out->writes |= FLAGS;
	if (BIT(insn, 25))
		return;
	out->reads |= reg(insn & 15);
	if (BIT(insn, 4)) {				/* shifted by Rs */
		out->reads |= reg((insn >> 8) & 15);
		out->cls = KISIM_C_SHIFT;
	} else if ((insn & 0xf60) || (op == 13 && (insn & 0xfe0))) {
		out->cls = KISIM_C_SHIFT;		/* shifted by an immediate */
		if ((insn & 0xff0) == 0x060)		/* RRX reads C */
			out->reads |= FLAGS;
	}
}

/* A5.2.5, A5.4.4: multiplies and divides. */
static void arm_multiply(uint32_t insn, struct kisim_decoded *out)
{
	uint32_t hi = (insn >> 16) & 15, lo = (insn >> 12) & 15;

	out->cls = KISIM_C_MUL;
	out->reads |= reg(insn & 15) | reg((insn >> 8) & 15);
	out->writes |= reg(hi) | (BIT(insn, 20) ? FLAGS : 0);
	if (BIT(insn, 23)) {				/* UMULL, UMLAL, SMULL, SMLAL */
		out->writes |= reg(lo);
		out->reads |= BIT(insn, 21) ? reg(lo) | reg(hi) : 0;
	} else if (BIT(insn, 21)) {			/* MLA, MLS */
		out->reads |= reg(lo);
	}
}

/* Base, offset register and the transferred registers of a load or store. */
static void arm_transfer(uint32_t insn, struct kisim_decoded *out)
{
	uint32_t rn = (insn >> 16) & 15, rt = (insn >> 12) & 15;
	int load = out->access[0].op == KISIM_LOAD, wback = !BIT(insn, 24) || BIT(insn, 21);
	uint64_t data = reg(rt), offset = 0;

	out->cls = load ? KISIM_C_LOAD : KISIM_C_STORE;
	if ((insn & 0x0e000000) == 0x08000000) {	/* LDM, STM */
		data = REGS_OF(insn) & ~R(REG_PC);
		wback = BIT(insn, 21);
	} else if (out->access[0].count == 2) {		/* LDRD, STRD: Rt, Rt + 1 */
		data |= reg(rt + 1);
	}
	if ((insn & 0x0e000000) == 0x06000000 || ((insn & 0x0e000090) == 0x00000090 &&
						    !BIT(insn, 22)))
		offset = reg(insn & 15);		/* a register offset */
	out->reads |= reg(rn) | offset | (load ? 0 : data);
	out->writes |= load ? data : 0;
	if (wback && !(load && (data & reg(rn))))	/* else the base is loaded */
		kisim_update(out, reg(rn), offset);
}

/* The class, reads and writes of an A32 instruction (A5.1's cond != 1111). */
static void arm_deps(uint32_t insn, struct kisim_decoded *out)
{
	uint32_t rd = (insn >> 12) & 15;

	out->described = 1;
	if ((insn & 0x0fb00ff0) == 0x01000090) {	/* SWP, SWPB */
		out->cls = KISIM_C_ATOMIC;
		out->reads |= reg((insn >> 16) & 15) | reg(insn & 15);
		out->writes |= reg(rd);
	} else if ((insn & 0x0f8000f0) == 0x01800090) {	/* LDREX*, STREX* */
		out->cls = BIT(insn, 20) ? KISIM_C_LOAD : KISIM_C_STORE;
		out->reads |= reg((insn >> 16) & 15) | (BIT(insn, 20) ? 0 : reg(insn & 15));
		out->writes |= reg(rd);
	} else if (out->accesses) {
		arm_transfer(insn, out);
	} else if ((insn & 0x0f0000f0) == 0x00000090) {
		arm_multiply(insn, out);
	} else if ((insn & 0x0fd0f0f0) == 0x0710f010) {	/* SDIV, UDIV (A8.8.165, A8.8.248) */
		out->cls = KISIM_C_DIV;
		out->reads |= reg(insn & 15) | reg((insn >> 8) & 15);
		out->writes |= reg((insn >> 16) & 15);
	} else if ((insn & 0x0e000000) == 0x0a000000) {	/* B, BL */
		out->writes |= BIT(insn, 24) ? R(REG_LR) : 0;
	} else if ((insn & 0x0ffffff0) == 0x012fff10 || (insn & 0x0ffffff0) == 0x012fff30) {
		out->reads |= reg(insn & 15);		/* BX, BLX Rm */
		out->writes |= BIT(insn, 5) ? R(REG_LR) : 0;
	} else if ((insn & 0x0fbf0fff) == 0x010f0000) {	/* MRS */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= FLAGS;
		out->writes |= reg(rd);
	} else if ((insn & 0x0db0f000) == 0x0120f000) {	/* MSR */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= BIT(insn, 25) ? 0 : reg(insn & 15);
		out->writes |= FLAGS;
	} else if ((insn & 0x0fb00000) == 0x03000000) {	/* MOVW, MOVT */
		out->reads |= BIT(insn, 22) ? reg(rd) : 0;
		out->writes |= reg(rd);
	} else if ((insn & 0x0ff00ff0) == 0x016f0f10) {	/* CLZ */
		out->reads |= reg(insn & 15);
		out->writes |= reg(rd);
	} else if ((insn & 0x0e000010) == 0x06000010) {	/* A5.4 media: extend, bitfield, reverse */
		out->cls = KISIM_C_SHIFT;
		out->reads |= reg(insn & 15) | reg((insn >> 16) & 15) | reg(rd);
		out->writes |= reg(rd);
	} else if ((insn & 0x0c000000) == 0x00000000 &&
		   (insn & 0x01900000) != 0x01000000) {
		arm_data_processing(insn, out);
	} else if ((insn & 0x0f000010) == 0x0e000010) {	/* MCR, MRC */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= BIT(insn, 20) ? 0 : reg(rd);
		out->writes |= BIT(insn, 20) ? reg(rd) : 0;
	} else {
		out->described = 0;
	}
	if (insn >> 28 != COND_AL) {	/* conditional: the flags, and the old value if skipped */
		out->reads |= FLAGS | out->writes;
	}
}

/* A6.2.1-A6.2.3: the common 16-bit Thumb data-processing instructions; the rest undescribed. */
static void thumb16_deps(uint32_t hw, struct kisim_decoded *out)
{
	uint32_t rd = hw & 7, rn = (hw >> 3) & 7;

	out->described = 1;
	if (out->accesses) {
		int load = out->access[0].op == KISIM_LOAD;
		uint64_t data = (hw >> 12) == 0xb || (hw >> 12) == 0xc ?
				REGS_OF(hw & 0xff) | ((hw >> 12) == 0xb && BIT(hw, 8) ?
						      (load ? 0 : R(REG_LR)) : 0) :
				(hw >> 12) == 0x9 || (hw >> 11) == 0x9 ? R((hw >> 8) & 7) : R(rd);
		uint64_t base = (hw >> 12) == 0xb || (hw >> 12) == 0x9 ? R(REG_SP) :
				(hw >> 12) == 0xc ? R((hw >> 8) & 7) : R(rn);

		out->cls = load ? KISIM_C_LOAD : KISIM_C_STORE;
		out->reads |= base | ((hw >> 12) == 0x5 ? R((hw >> 6) & 7) : 0) | (load ? 0 : data);
		out->writes |= load ? data : 0;
		/* PUSH, POP, STMIA and LDMIA write their base back (LDMIA unless it loads it) */
		if (((hw >> 12) == 0xb || (hw >> 12) == 0xc) && !(load && (data & base)))
			kisim_update(out, base, 0);
	} else if ((hw >> 13) == 0) {			/* shift imm, add, sub, mov, cmp */
		out->cls = (hw >> 11) < 3 ? KISIM_C_SHIFT : KISIM_C_ALU;
		out->reads |= (hw >> 11) == 4 ? 0 : (hw >> 11) < 4 ? R(rn) |
			      ((hw >> 10) == 6 ? R((hw >> 6) & 7) : 0) : R((hw >> 8) & 7);
		out->writes |= FLAGS | ((hw >> 11) == 5 ? 0 : (hw >> 11) < 4 ? R(rd) :
					R((hw >> 8) & 7));
	} else if ((hw >> 10) == 0x10) {		/* A6.2.2: AND..MVN */
		uint32_t op = (hw >> 6) & 15;

		out->cls = op == 13 ? KISIM_C_MUL : (op >= 2 && op <= 4) || op == 7 ?
			   KISIM_C_SHIFT : KISIM_C_ALU;
		out->reads |= R(rn) | R(rd) | (op == 5 || op == 6 ? FLAGS : 0);
		out->writes |= FLAGS | (op == 8 || op == 10 || op == 11 ? 0 : R(rd));
	} else if ((hw >> 10) == 0x11 && ((hw >> 8) & 3) != 3) {	/* A6.2.3: ADD, CMP, MOV high */
		uint32_t d = (hw & 7) | (BIT(hw, 7) << 3), m = (hw >> 3) & 15;

		out->reads |= reg(m) | (((hw >> 8) & 3) == 2 ? 0 : reg(d));
		out->writes |= ((hw >> 8) & 3) == 1 ? FLAGS : reg(d);
	} else if ((hw >> 12) == 0xa) {			/* ADR, ADD rd, sp, #imm */
		out->reads |= BIT(hw, 11) ? R(REG_SP) : 0;
		out->writes |= R((hw >> 8) & 7);
	} else if ((hw >> 8) == 0xb0) {			/* ADD, SUB sp, sp, #imm */
		out->reads |= R(REG_SP);
		out->writes |= R(REG_SP);
	} else if ((hw >> 12) == 0xd || (hw >> 11) == 0x1c) {	/* B<c>, B */
		out->reads |= (hw >> 12) == 0xd ? FLAGS : 0;
	} else if ((hw & 0xf500) == 0xb100) {		/* CBZ, CBNZ */
		out->reads |= R(rd);
	} else if ((hw & 0xff00) == 0x4700) {		/* BX, BLX */
		out->reads |= reg((hw >> 3) & 15);
		out->writes |= BIT(hw, 7) ? R(REG_LR) : 0;
	} else {
		out->described = 0;
	}
}

/* Class from the kind where the kind decides it; data moves from their accesses. */
static void kind_class(struct kisim_decoded *out)
{
	if (out->kind == KISIM_SERIALIZE)
		out->cls = KISIM_C_SERIALIZE;
	else if (out->kind != KISIM_PLAIN && out->kind != KISIM_CACHEOP && out->kind != KISIM_TRAP)
		out->cls = KISIM_C_BRANCH;
	else if (out->kind == KISIM_CACHEOP || out->kind == KISIM_TRAP)
		out->cls = KISIM_C_SYSTEM;
}

int kisim_decode(const uint8_t *code, uint32_t size, uint64_t addr, uint64_t mode,
		 struct kisim_decoded *out)
{
	uint32_t hw1, it;

	*out = (struct kisim_decoded){ .at = KISIM_NO_ADDRESS };
	if (size < 2 || (!(mode & CPSR_T) && size < 4))
		return 0;
	hw1 = code[0] | code[1] << 8;
	if (!(mode & CPSR_T)) {
		uint32_t insn = hw1 | (uint32_t)(code[2] | code[3] << 8) << 16;

		decode_arm(insn, addr, out);
		if (insn >> 28 == 0xf) {
			if ((insn & 0xfffffff0) == 0xf57ff050)
				out->cls = KISIM_C_FENCE;	/* DMB (A8.8.43) */
			else if ((insn & 0x0e000000) == 0x0a000000)
				out->writes = R(REG_LR);	/* BLX (immediate) */
			out->described = 1;
		} else {
			arm_deps(insn, out);
		}
		kind_class(out);
		return 0;
	}
	if ((hw1 & 0xe000) == 0xe000 && (hw1 & 0x1800)) {	/* 32-bit: 111 op1 != 00 */
		if (size < 4)
			return 0;
		uint32_t hw2 = code[2] | code[3] << 8;

		decode_thumb32(hw1, hw2, out);
		thumb32_accesses(hw1, hw2, addr, out);
		if (hw1 == 0xf3bf && (hw2 & 0xfff0) == 0x8f50)
			out->cls = KISIM_C_FENCE;		/* DMB (A8.8.43 T1) */
		else if (out->accesses)
			out->cls = out->access[0].op == KISIM_LOAD ? KISIM_C_LOAD : KISIM_C_STORE;
	} else {
		decode_thumb16(hw1, out);
		thumb16_accesses(hw1, addr + 4, out);
		thumb16_deps(hw1, out);
	}
	kind_class(out);
	/* In an IT block (A2.5.2 ITSTATE: IT[3:0] != 0), IT[7:4] is the condition. */
	it = ((mode >> 8) & 0xfc) | ((mode >> 25) & 3);
	if ((it & 15) && (it >> 4) != COND_AL) {
		conditional(out);
		out->reads |= FLAGS | out->writes;
		if (out->accesses) {
			out->cond = (uint8_t)(COND_SET | it >> 4);
			out->cond_reg = REG_CPSR;
		}
	}
	return 0;
}

/* Whether `cond` (COND_SET | A8.3's cond) passes under the CPSR `cpsr`. */
int kisim_condition(uint8_t cond, uint64_t cpsr)
{
	int n = (cpsr >> 31) & 1, z = (cpsr >> 30) & 1, c = (cpsr >> 29) & 1;
	int v = (cpsr >> 28) & 1, holds;

	switch ((cond >> 1) & 7) {
	case 0: holds = z; break;			/* EQ, NE */
	case 1: holds = c; break;			/* CS, CC */
	case 2: holds = n; break;			/* MI, PL */
	case 3: holds = v; break;			/* VS, VC */
	case 4: holds = c && !z; break;			/* HI, LS */
	case 5: holds = n == v; break;			/* GE, LT */
	case 6: holds = n == v && !z; break;		/* GT, LE */
	default: return 1;				/* AL */
	}
	return cond & 1 ? !holds : holds;
}
