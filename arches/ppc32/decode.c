// SPDX-License-Identifier: MIT
/*
 * 32-bit PowerPC instruction classes for the timing model (sim/native/decode.h).
 *
 * Fields in IBM bit numbering (bit 0 is the most significant) after the
 * Power ISA Book I §2.4 "Branch Instructions", Book II "Cache Management
 * Instructions" (dcbi: the 32-bit PowerPC PEM), and for what synchronizes
 * the PEM / G2 core RM §3.2.2.4 "Synchronization" (the MPC7450's family).
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
	out->base = ra ? ra : KISIM_REG_NONE;
	out->index = (insn >> 11) & 31;
	out->scale = 1;
}

static void decode_x(uint32_t insn, struct kisim_decoded *out)
{
	switch ((insn >> 1) & 0x3ff) {
	case X_TW:		/* tw; the kprobe breakpoint is tw 31,0,0 (0x7fe00008) */
		out->kind = KISIM_TRAP;
		break;
	case X_SYNC:		/* sync, lwsync (L=1) */
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

int kisim_decode(const uint8_t *code, uint32_t size, uint64_t mode, struct kisim_decoded *out)
{
	uint32_t insn;

	(void)mode;
	*out = (struct kisim_decoded){ .base = KISIM_REG_NONE, .index = KISIM_REG_NONE };
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
		break;
	}
	return 0;
}
