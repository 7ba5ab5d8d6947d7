// SPDX-License-Identifier: MIT
/*
 * x86_64 instruction classes for the timing model (sim/native/decode.h).
 *
 * Reads the legacy prefixes, REX, the opcode and ModRM as laid out in the
 * Intel SDM vol. 2, chapter 2 ("Instruction Format") and appendix A
 * ("Opcode Map"). Serializing instructions are those of the SDM vol. 3
 * §8.3 "Serializing Instructions".
 */
#include "decode.h"

struct cursor {
	const uint8_t *code;
	uint32_t size;
	uint32_t pos;
};

/* The next byte, or -1 past the instruction's end. */
static int next(struct cursor *c)
{
	return c->pos < c->size ? c->code[c->pos++] : -1;
}

/* Little-endian signed immediate of `n` (1 or 4) bytes; 0 on a short read. */
static int disp(struct cursor *c, int n, int64_t *out)
{
	uint32_t v = 0;
	int i, b;

	for (i = 0; i < n; i++) {
		b = next(c);
		if (b < 0)
			return 0;
		v |= (uint32_t)b << (8 * i);
	}
	*out = n == 1 ? (int8_t)v : (int32_t)v;
	return 1;
}

/* SDM vol. 2 §2.1.1: groups 1-4 (lock/rep, segment, 66, 67). */
static int legacy_prefix(int b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3:
	case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
	case 0x66: case 0x67:
		return 1;
	}
	return 0;
}

#define REX_B	0x1
#define REX_X	0x2
#define REX_R	0x4

/*
 * The memory operand of ModRM `modrm` (mod != 3), SDM vol. 2 §2.2.1.2-6
 * (tables 2-2, 2-3, 2-5): SIB, RIP-relative, disp8/disp32, REX.B/REX.X.
 * Fills `out` and returns 1, or returns 0 if the bytes run out. The 67
 * prefix's 32-bit truncation is not modeled.
 */
static int memory_operand(struct cursor *c, int modrm, int rex, struct kisim_decoded *out)
{
	int mod = modrm >> 6, rm = modrm & 7, sib = 0;
	int base = rm | (rex & REX_B ? 8 : 0), index = KISIM_REG_NONE, scale = 1;
	int64_t d = 0;

	if (rm == 4) {
		sib = next(c);
		if (sib < 0)
			return 0;
		index = ((sib >> 3) & 7) | (rex & REX_X ? 8 : 0);
		if (index == 4)			/* index 100 without REX.X: none */
			index = KISIM_REG_NONE;
		else
			scale = 1 << (sib >> 6);
		base = (sib & 7) | (rex & REX_B ? 8 : 0);
	}
	if (mod == 0 && rm == 5)
		base = KISIM_REG_NEXT_PC;	/* RIP-relative, whatever REX.B */
	else if (mod == 0 && rm == 4 && (sib & 7) == 5)
		base = KISIM_REG_NONE;		/* SIB base 101: [index*scale + disp32] */
	if ((mod == 0 && base < 0) || mod == 2) {
		if (!disp(c, 4, &d))
			return 0;
	} else if (mod == 1 && !disp(c, 1, &d)) {
		return 0;
	}
	out->base = base;
	out->index = index;
	out->scale = scale;
	out->disp = d;
	return 1;
}

/* 0f ae: group 15 (SDM vol. 2 table A-6): clflush, clflushopt, clwb. */
static uint8_t group15(int modrm, int opsize)
{
	int reg = (modrm >> 3) & 7;

	if ((modrm >> 6) == 3)
		return KISIM_OP_NONE;		/* lfence, mfence, sfence, ... */
	if (reg == 7)				/* clflush; 66: clflushopt */
		return KISIM_OP_FLUSH_D;
	if (reg == 6 && opsize)			/* 66 0f ae /6: clwb (no 66: xsaveopt) */
		return KISIM_OP_CLEAN_D;
	return KISIM_OP_NONE;
}

/* Two-byte opcodes 0f xx (SDM vol. 2 table A-3). */
static void two_byte(struct cursor *c, int rex, int opsize, struct kisim_decoded *out)
{
	int op = next(c), modrm, reg;
	uint8_t cacheop;

	if (op >= 0x80 && op <= 0x8f) {		/* jcc rel32 */
		out->kind = KISIM_COND;
		return;
	}
	switch (op) {
	case 0x05:				/* syscall */
	case 0x34:				/* sysenter */
	case 0x0b:				/* ud2 */
	case 0xb9:				/* ud1 */
	case 0xff:				/* ud0 */
		out->kind = KISIM_TRAP;
		return;
	case 0x08:				/* invd */
	case 0x09:				/* wbinvd */
	case 0x23:				/* mov DRn, r64 */
	case 0x30:				/* wrmsr */
	case 0xa2:				/* cpuid */
	case 0xaa:				/* rsm */
		out->kind = KISIM_SERIALIZE;
		return;
	}
	modrm = next(c);
	if (modrm < 0)
		return;
	reg = (modrm >> 3) & 7;
	switch (op) {
	case 0x22:				/* mov CRn, r64; not CR8 (§8.3) */
		if ((reg | (rex & REX_R ? 8 : 0)) != 8)
			out->kind = KISIM_SERIALIZE;
		break;
	case 0x00:				/* group 6: /2 lldt, /3 ltr */
		if (reg == 2 || reg == 3)
			out->kind = KISIM_SERIALIZE;
		break;
	case 0x01:				/* group 7 (table A-6) */
		if ((modrm >> 6) != 3) {	/* /2 lgdt, /3 lidt, /7 invlpg */
			if (reg == 2 || reg == 3 || reg == 7)
				out->kind = KISIM_SERIALIZE;
		} else if (modrm == 0xe8) {	/* serialize (swapgs, rdtscp: plain) */
			out->kind = KISIM_SERIALIZE;
		}
		break;
	case 0xae:
		cacheop = group15(modrm, opsize);
		if (cacheop != KISIM_OP_NONE && memory_operand(c, modrm, rex, out)) {
			out->kind = KISIM_CACHEOP;
			out->cacheop = cacheop;
		}
		break;
	}
}

int kisim_decode(const uint8_t *code, uint32_t size, uint64_t mode, struct kisim_decoded *out)
{
	struct cursor c = { code, size, 0 };
	int b, rex = 0, opsize = 0, modrm;

	(void)mode;
	*out = (struct kisim_decoded){ .base = KISIM_REG_NONE, .index = KISIM_REG_NONE };

	/* Prefixes; a REX counts only right before the opcode (§2.2.1). */
	for (b = next(&c); b >= 0; b = next(&c)) {
		if (legacy_prefix(b)) {
			opsize |= b == 0x66;
			rex = 0;
		} else if ((b & 0xf0) == 0x40) {
			rex = b;
		} else {
			break;
		}
	}

	/* One-byte opcodes (SDM vol. 2 table A-2). */
	if ((b >= 0x70 && b <= 0x7f) || (b >= 0xe0 && b <= 0xe3)) {
		out->kind = KISIM_COND;		/* jcc rel8; loopne, loope, loop, jrcxz */
		return 0;
	}
	switch (b) {
	case 0x0f:
		two_byte(&c, rex, opsize, out);
		break;
	case 0xeb:				/* jmp rel8 */
	case 0xe9:				/* jmp rel32 */
		out->kind = KISIM_JUMP;
		break;
	case 0xe8:				/* call rel32 */
		out->kind = KISIM_CALL;
		break;
	case 0xc3: case 0xc2:			/* ret, ret imm16 */
	case 0xcb: case 0xca:			/* far ret */
		out->kind = KISIM_RET;
		break;
	case 0xcc:				/* int3 */
	case 0xcd:				/* int imm8 */
	case 0xce:				/* into (#UD in 64-bit mode) */
	case 0xf1:				/* int1 */
		out->kind = KISIM_TRAP;
		break;
	case 0xcf:				/* iret, iretq (§8.3) */
		out->kind = KISIM_SERIALIZE;
		break;
	case 0xff:				/* group 5 (table A-6) */
		modrm = next(&c);
		if (modrm < 0)
			break;
		switch ((modrm >> 3) & 7) {
		case 2:				/* call r/m64 */
		case 3:				/* call far m16:64 */
			out->kind = KISIM_CALL_IND;
			break;
		case 4:				/* jmp r/m64 */
		case 5:				/* jmp far m16:64 */
			out->kind = KISIM_JUMP_IND;
			break;
		}
		break;
	}
	return 0;
}
