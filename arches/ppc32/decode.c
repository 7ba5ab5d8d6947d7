// SPDX-License-Identifier: MIT
/*
 * 32-bit PowerPC instruction classes for the timing model (sim/native/decode.h).
 *
 * Fields in IBM bit numbering (bit 0 is the most significant) after the
 * Power ISA Book I §2.4 "Branch Instructions", Book II "Cache Management
 * Instructions" (dcbi: the 32-bit PowerPC PEM), and for what synchronizes
 * the PEM / G2 core RM §3.2.2.4 "Synchronization" (the MPC7450's family).
 *
 * Data accesses (Decoder.accesses) after Book I §3.3.2-3.3.7 "Fixed-Point
 * Load and Store Instructions" and §4.6 for the floating-point ones: EA =
 * (rA|0) + d or (rA|0) + rB, rA itself in the update forms; lmw and stmw
 * one word per register, lwarx a load and stwcx. the compare-and-exchange
 * QEMU makes of it (a load, then a store). The string instructions, dcbz
 * and eciwx/ecowx are not described (counted as unmodeled).
 */
#include "decode.h"

#define OP_TWI		3
#define OP_BC		16
#define OP_SC		17
#define OP_B		18
#define OP_XL		19	/* XL-form: bclr, bcctr, isync, rfi */
#define OP_X		31	/* X-form: tw, sync, cache management, mtmsr */

/* XL-form extended opcodes (opcode 19) */
#define XL_BCLR		16
#define XL_RFI		50
#define XL_ISYNC	150
#define XL_BCCTR	528

/* X-form extended opcodes (opcode 31) */
#define X_TW		4
#define X_DCBST		54
#define X_DCBF		86
#define X_MTMSR		146
#define X_DCBI		470
#define X_SYNC		598
#define X_ICBI		982

#define LK		1u	/* bit 31: set the link register */

/* D-form loads and stores: opcodes 32 (lwz) to 55 (stfdu), by opcode - 32. */
static const struct { uint8_t op, size; } d_form[24] = {
	{ KISIM_LOAD, 4 }, { KISIM_LOAD, 4 }, { KISIM_LOAD, 1 }, { KISIM_LOAD, 1 },	/* lwz lwzu lbz lbzu */
	{ KISIM_STORE, 4 }, { KISIM_STORE, 4 }, { KISIM_STORE, 1 }, { KISIM_STORE, 1 },	/* stw stwu stb stbu */
	{ KISIM_LOAD, 2 }, { KISIM_LOAD, 2 }, { KISIM_LOAD, 2 }, { KISIM_LOAD, 2 },	/* lhz lhzu lha lhau */
	{ KISIM_STORE, 2 }, { KISIM_STORE, 2 }, { KISIM_LOAD, 4 }, { KISIM_STORE, 4 },	/* sth sthu lmw stmw */
	{ KISIM_LOAD, 4 }, { KISIM_LOAD, 4 }, { KISIM_LOAD, 8 }, { KISIM_LOAD, 8 },	/* lfs lfsu lfd lfdu */
	{ KISIM_STORE, 4 }, { KISIM_STORE, 4 }, { KISIM_STORE, 8 }, { KISIM_STORE, 8 },	/* stfs ... stfdu */
};

#define OP_LMW		46
#define OP_STMW		47

/* EA = (rA|0) + d, or + rB (index >= 0); rA itself in an update form. */
static struct kisim_address effective(uint32_t insn, int64_t d, int index)
{
	int ra = (insn >> 16) & 31;

	return (struct kisim_address){ .base = ra ? (int8_t)ra : KISIM_REG_NONE,
				       .index = (int8_t)index, .scale = 1, .disp = d };
}

/* Opcodes 32-55: the D-form loads and stores (update forms alike: rA is read first). */
static void d_form_access(uint32_t insn, struct kisim_decoded *out)
{
	unsigned int opcode = insn >> 26;
	uint8_t count = opcode == OP_LMW || opcode == OP_STMW ? 32 - ((insn >> 21) & 31) : 1;

	kisim_access(out, d_form[opcode - 32].op, d_form[opcode - 32].size, count,
	       effective(insn, (int16_t)(insn & 0xffff), KISIM_REG_NONE));
}

/* Opcode 31's indexed loads and stores: EA = (rA|0) + rB. */
static void x_form_access(uint32_t insn, struct kisim_decoded *out)
{
	struct kisim_address at = effective(insn, 0, (insn >> 11) & 31);

	switch ((insn >> 1) & 0x3ff) {
	case 23: case 55: case 20: case 534:	/* lwzx lwzux lwarx lwbrx */
	case 535: case 567:			/* lfsx lfsux */
		kisim_access(out, KISIM_LOAD, 4, 1, at);
		break;
	case 87: case 119:			/* lbzx lbzux */
		kisim_access(out, KISIM_LOAD, 1, 1, at);
		break;
	case 279: case 311: case 343: case 375: case 790:	/* lhzx lhzux lhax lhaux lhbrx */
		kisim_access(out, KISIM_LOAD, 2, 1, at);
		break;
	case 599: case 631:			/* lfdx lfdux */
		kisim_access(out, KISIM_LOAD, 8, 1, at);
		break;
	case 151: case 183: case 662:		/* stwx stwux stwbrx */
	case 663: case 695: case 983:		/* stfsx stfsux stfiwx */
		kisim_access(out, KISIM_STORE, 4, 1, at);
		break;
	case 215: case 247:			/* stbx stbux */
		kisim_access(out, KISIM_STORE, 1, 1, at);
		break;
	case 407: case 439: case 918:		/* sthx sthux sthbrx */
		kisim_access(out, KISIM_STORE, 2, 1, at);
		break;
	case 727: case 759:			/* stfdx stfdux */
		kisim_access(out, KISIM_STORE, 8, 1, at);
		break;
	case 150:				/* stwcx.: compare-and-exchange */
		kisim_access(out, KISIM_LOAD, 4, 1, at);
		kisim_access(out, KISIM_STORE, 4, 1, at);
		break;
	case 533: case 597: case 661: case 725:	/* lswx lswi stswx stswi */
	case 1014: case 310: case 438:		/* dcbz eciwx ecowx */
		out->unmodeled = 1;
		break;
	}
}

/* BO (bits 6:10) with 1z1zz: branch always, no CTR decrement (Book I §2.4) */
static int bo_always(uint32_t insn)
{
	return ((insn >> 21) & 0x14) == 0x14;
}

/* A branch through LR or CTR (bclr, bcctr) once its condition is known. */
static uint8_t branch_to_reg(uint32_t insn, int through_lr)
{
	if (!bo_always(insn))	/* a conditional bclrl/bcctr(l) is predicted as a branch */
		return through_lr && !(insn & LK) ? KISIM_COND_RET : KISIM_COND;
	if (insn & LK)
		return KISIM_CALL_IND;
	return through_lr ? KISIM_RET : KISIM_JUMP_IND;
}

/* dcbf, dcbst, dcbi, icbi: EA = (rA|0) + rB (Book II). */
static void cacheop(uint32_t insn, uint8_t op, struct kisim_decoded *out)
{
	int ra = (insn >> 16) & 31;

	out->kind = KISIM_CACHEOP;
	out->cacheop = op;
	out->at.base = ra ? ra : KISIM_REG_NONE;
	out->at.index = (insn >> 11) & 31;
	out->at.scale = 1;
}

static void decode_x(uint32_t insn, struct kisim_decoded *out)
{
	switch ((insn >> 1) & 0x3ff) {
	case X_TW:		/* tw; the kprobe breakpoint is tw 31,0,0 (0x7fe00008) */
		out->kind = KISIM_TRAP;
		break;
	case X_MTMSR:		/* execution synchronizing: G2 core RM §3.2.2.4.2 */
		out->kind = KISIM_SERIALIZE;
		break;
	case X_DCBF:
		cacheop(insn, KISIM_OP_FLUSH_D, out);
		break;
	case X_DCBST:
		cacheop(insn, KISIM_OP_CLEAN_D, out);
		break;
	case X_DCBI:
		cacheop(insn, KISIM_OP_INVAL_D, out);
		break;
	case X_ICBI:
		cacheop(insn, KISIM_OP_INVAL_I, out);
		break;
	}	/* eieio, dcbt, dcbtst, dcbz: plain */
}

/* ---- classes and registers (the out-of-order core's dependencies) ---- */

#define R(n)		KISIM_R(n)
#define RT(i)		(((i) >> 21) & 31)	/* rD, rS (bits 6:10) */
#define RA(i)		(((i) >> 16) & 31)
#define RB(i)		(((i) >> 11) & 31)
#define RC(i)		((i) & 1u)		/* Rc: record CR0 */
#define SPR_XER		1
#define SPR_LR		8
#define SPR_CTR		9

static uint64_t ra0(uint32_t insn)		/* (rA|0) */
{
	return RA(insn) ? R(RA(insn)) : 0;
}

/* A special register's bit (mfspr, mtspr; the spr field's halves swapped), 0: none of ours. */
static uint64_t spr(uint32_t insn)
{
	switch ((((insn >> 11) & 31) << 5) | ((insn >> 16) & 31)) {
	case SPR_XER:
		return KISIM_R_XER;
	case SPR_LR:
		return KISIM_R_LR;
	case SPR_CTR:
		return KISIM_R_CTR;
	}
	return 0;
}

/* Book I §3.3.8-3.3.13: opcode 31's integer arithmetic, logic, shifts, compares, moves. */
static int x_deps(uint32_t insn, struct kisim_decoded *out)
{
	uint32_t xo = (insn >> 1) & 0x3ff;
	uint64_t rd = R(RT(insn)), ra = R(RA(insn)), rb = R(RB(insn));

	out->writes |= RC(insn) ? KISIM_R_CR(0) : 0;
	switch (xo & 0x1ff) {				/* XO-form: rD = f(rA, rB); OE is bit 21 */
	case 266: case 40: case 8: case 10:		/* add, subf, subfc, addc */
		out->reads |= ra | rb;
		out->writes |= rd | ((xo & 0x1ff) == 8 || (xo & 0x1ff) == 10 ? KISIM_R_XER : 0);
		return 1;
	case 136: case 138:				/* subfe, adde */
		out->reads |= ra | rb | KISIM_R_XER;
		out->writes |= rd | KISIM_R_XER;
		return 1;
	case 104: case 200: case 202: case 232: case 234:	/* neg, subfze, addze, subfme, addme */
		out->reads |= ra | ((xo & 0x1ff) == 104 ? 0 : KISIM_R_XER);
		out->writes |= rd | ((xo & 0x1ff) == 104 ? 0 : KISIM_R_XER);
		return 1;
	case 235: case 75: case 11:			/* mullw, mulhw, mulhwu */
		out->cls = KISIM_C_MUL;
		out->reads |= ra | rb;
		out->writes |= rd;
		return 1;
	case 491: case 459:				/* divw, divwu */
		out->cls = KISIM_C_DIV;
		out->reads |= ra | rb;
		out->writes |= rd;
		return 1;
	}
	switch (xo) {
	case 28: case 60: case 124: case 284: case 316: case 412: case 444: case 476:
		out->reads |= rd | rb;			/* and andc nor eqv xor orc or nand: rA = f(rS, rB) */
		out->writes |= ra;
		return 1;
	case 24: case 536: case 792:			/* slw, srw, sraw */
		out->cls = KISIM_C_SHIFT;
		out->reads |= rd | rb;
		out->writes |= ra | (xo == 792 ? KISIM_R_XER : 0);
		return 1;
	case 824:					/* srawi */
		out->cls = KISIM_C_SHIFT;
		out->reads |= rd;
		out->writes |= ra | KISIM_R_XER;
		return 1;
	case 26: case 922: case 954:			/* cntlzw, extsh, extsb */
		out->reads |= rd;
		out->writes |= ra;
		return 1;
	case 0: case 32:				/* cmp, cmpl: crfD */
		out->reads |= ra | rb;
		out->writes |= KISIM_R_CR((insn >> 23) & 7);
		return 1;
	case 339:					/* mfspr */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= spr(insn);
		out->writes |= rd;
		return 1;
	case 467:					/* mtspr */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= rd;
		out->writes |= spr(insn);
		return 1;
	case 19:					/* mfcr */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= 0xffull << 32;
		out->writes |= rd;
		return 1;
	case 144:					/* mtcrf: the FXM fields */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= rd;
		for (int f = 0; f < 8; f++)
			out->writes |= (insn >> (19 - f)) & 1 ? KISIM_R_CR(f) : 0;
		return 1;
	case 83: case 146: case 339 + 32:		/* mfmsr, mtmsr, mftb */
		out->cls = KISIM_C_SYSTEM;
		out->reads |= xo == 146 ? rd : 0;
		out->writes |= xo == 146 ? 0 : rd;
		return 1;
	case X_SYNC:					/* sync, lwsync: Linux's LWSYNC is sync here */
		out->cls = KISIM_C_FENCE;
		return 1;
	case 854:					/* eieio */
		out->cls = KISIM_C_SFENCE;
		return 1;
	case 150:					/* stwcx.: CR0 */
		out->writes |= KISIM_R_CR(0);
		break;
	}
	if (out->accesses) {				/* indexed loads and stores */
		int load = out->access[0].op == KISIM_LOAD && xo != 150;

		out->cls = load ? KISIM_C_LOAD : KISIM_C_STORE;
		out->reads |= ra0(insn) | rb | (load ? 0 : rd);
		out->writes |= load ? rd : 0;
		if (xo & 32 && xo != 150 && RA(insn))	/* the update forms */
			kisim_update(out, ra, rb);
		return 1;
	}
	return out->kind == KISIM_CACHEOP;
}

/* Book I §2.4: what a branch reads (CR bit, CTR, LR) and writes (CTR, LR). */
static void branch_deps(uint32_t insn, struct kisim_decoded *out)
{
	uint32_t bo = RT(insn), bi = RA(insn), op = insn >> 26, xo = (insn >> 1) & 0x3ff;

	out->writes |= insn & LK ? KISIM_R_LR : 0;
	if (op == OP_B)
		return;
	if (!(bo & 0x10))
		out->reads |= KISIM_R_CR(bi >> 2);
	if (!(bo & 0x04)) {
		out->reads |= KISIM_R_CTR;
		out->writes |= KISIM_R_CTR;
	}
	if (op == OP_XL)
		out->reads |= xo == XL_BCLR ? KISIM_R_LR : KISIM_R_CTR;
}

/* The class, reads and writes of `insn` (Book I chapters 2-3). */
static void deps(uint32_t insn, struct kisim_decoded *out)
{
	uint32_t op = insn >> 26;
	uint64_t rd = R(RT(insn)), ra = R(RA(insn));

	out->described = 1;
	if (out->kind == KISIM_SERIALIZE) {
		out->cls = KISIM_C_SERIALIZE;
		return;
	}
	switch (op) {
	case OP_B: case OP_BC:
		out->cls = KISIM_C_BRANCH;
		branch_deps(insn, out);
		return;
	case OP_XL:
		if (out->kind != KISIM_PLAIN) {
			out->cls = KISIM_C_BRANCH;
			branch_deps(insn, out);
		} else {				/* CR logic, mcrf: CR fields */
			out->cls = KISIM_C_SYSTEM;
			out->reads |= KISIM_R_CR(RA(insn) >> 2) | KISIM_R_CR(RB(insn) >> 2);
			out->writes |= KISIM_R_CR(RT(insn) >> 2);
		}
		return;
	case 14: case 15:				/* addi, addis: (rA|0) */
		out->reads |= ra0(insn);
		out->writes |= rd;
		return;
	case 7:						/* mulli */
		out->cls = KISIM_C_MUL;
		out->reads |= ra;
		out->writes |= rd;
		return;
	case 8: case 12: case 13:			/* subfic, addic, addic. */
		out->reads |= ra;
		out->writes |= rd | KISIM_R_XER | (op == 13 ? KISIM_R_CR(0) : 0);
		return;
	case 10: case 11:				/* cmpli, cmpi */
		out->reads |= ra;
		out->writes |= KISIM_R_CR((insn >> 23) & 7);
		return;
	case 24: case 25: case 26: case 27: case 28: case 29:	/* ori ... andis.: rA = rS op imm */
		out->reads |= rd;
		out->writes |= ra | (op >= 28 ? KISIM_R_CR(0) : 0);
		return;
	case 20: case 21: case 23:			/* rlwimi, rlwinm, rlwnm */
		out->reads |= rd | (op == 20 ? ra : 0) | (op == 23 ? R(RB(insn)) : 0);
		out->writes |= ra | (RC(insn) ? KISIM_R_CR(0) : 0);
		return;
	case OP_X:
		out->described = (uint8_t)x_deps(insn, out);
		if (out->kind == KISIM_CACHEOP || out->kind == KISIM_TRAP)
			out->cls = KISIM_C_SYSTEM;
		return;
	case OP_SC: case OP_TWI:
		out->cls = KISIM_C_SYSTEM;
		return;
	}
	if (op >= 32 && op <= 55) {			/* D-form loads and stores */
		int load = out->access[0].op == KISIM_LOAD, update = op & 1;
		uint64_t data = rd;

		if (op == OP_LMW || op == OP_STMW) {
			data = ~0ull >> 32 << RT(insn) & 0xffffffffull;
			update = 0;
		}
		out->cls = load ? KISIM_C_LOAD : KISIM_C_STORE;
		out->reads |= ra0(insn) | (load ? 0 : data);
		out->writes |= load ? data : 0;
		if (update)
			kisim_update(out, ra, 0);
		return;
	}
	out->described = 0;
}

int kisim_decode(const uint8_t *code, uint32_t size, uint64_t addr, uint64_t mode,
		 struct kisim_decoded *out)
{
	uint32_t insn;

	(void)addr;
	(void)mode;
	*out = (struct kisim_decoded){ .at = KISIM_NO_ADDRESS };
	if (size < 4)
		return 0;
	insn = (uint32_t)code[0] << 24 | code[1] << 16 | code[2] << 8 | code[3];

	switch (insn >> 26) {
	case OP_B:
		out->kind = insn & LK ? KISIM_CALL : KISIM_JUMP;
		break;
	case OP_BC:
		/* a conditional bcl is predicted as a conditional branch */
		if (!bo_always(insn))
			out->kind = KISIM_COND;
		else
			out->kind = insn & LK ? KISIM_CALL : KISIM_JUMP;
		break;
	case OP_SC:
	case OP_TWI:
		out->kind = KISIM_TRAP;
		break;
	case OP_XL:
		switch ((insn >> 1) & 0x3ff) {
		case XL_BCLR:
			out->kind = branch_to_reg(insn, 1);
			break;
		case XL_BCCTR:
			out->kind = branch_to_reg(insn, 0);
			break;
		case XL_ISYNC:
		case XL_RFI:		/* context synchronizing (§3.2.2.4.1) */
			out->kind = KISIM_SERIALIZE;
			break;
		}
		break;
	case OP_X:
		decode_x(insn, out);
		x_form_access(insn, out);
		break;
	default:
		if (insn >> 26 >= 32 && insn >> 26 <= 55)
			d_form_access(insn, out);
		break;
	}
	deps(insn, out);
	return 0;
}
