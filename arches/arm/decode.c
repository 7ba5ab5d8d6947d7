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
 */
#include "decode.h"

#define COND_AL		0xe
#define REG_SP		13
#define REG_LR		14
#define CPSR_T		(1u << 5)

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
	out->base = base;
	out->scale = 1;
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

static void decode_arm(uint32_t insn, struct kisim_decoded *out)
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
		return;
	}
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

int kisim_decode(const uint8_t *code, uint32_t size, uint64_t mode, struct kisim_decoded *out)
{
	uint32_t hw1, it;

	*out = (struct kisim_decoded){ .base = KISIM_REG_NONE, .index = KISIM_REG_NONE };
	if (size < 2 || (!(mode & CPSR_T) && size < 4))
		return 0;
	hw1 = code[0] | code[1] << 8;
	if (!(mode & CPSR_T)) {
		decode_arm(hw1 | (uint32_t)(code[2] | code[3] << 8) << 16, out);
		return 0;
	}
	if ((hw1 & 0xe000) == 0xe000 && (hw1 & 0x1800)) {	/* 32-bit: 111 op1 != 00 */
		if (size < 4)
			return 0;
		decode_thumb32(hw1, code[2] | code[3] << 8, out);
	} else {
		decode_thumb16(hw1, out);
	}
	/* In an IT block (A2.5.2 ITSTATE: IT[3:0] != 0), IT[7:4] is the condition. */
	it = ((mode >> 8) & 0xfc) | ((mode >> 25) & 3);
	if ((it & 15) && (it >> 4) != COND_AL)
		conditional(out);
	return 0;
}
