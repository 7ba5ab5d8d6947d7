// SPDX-License-Identifier: MIT
/*
 * x86_64 instruction classes for the timing model (sim/native/decode.h).
 *
 * Reads the legacy prefixes, REX, the opcode and ModRM as laid out in the
 * Intel SDM vol. 2, chapter 2 ("Instruction Format") and appendix A
 * ("Opcode Map"). Serializing instructions are those of the SDM vol. 3
 * §8.3 "Serializing Instructions".
 *
 * Data accesses (Decoder.accesses) follow each opcode's operands in the
 * SDM vol. 2 instruction pages, as QEMU performs them (Unicorn 2.1's
 * target/i386/translate.c): a read-modify-write loads, then stores; an
 * exchange or compare-and-exchange (locked or not) loads, then stores;
 * push, call and the string instructions address through rsp, rsi and rdi;
 * a rep-prefixed string instruction makes one element's accesses per
 * execution of its code hook (QEMU runs each iteration as one), none once
 * rcx is 0. Accesses through fs or gs, a 67 prefix, or in instructions
 * outside the integer set (x87, SSE, far transfers, enter, iret, the
 * descriptor tables) are not described (counted as unmodeled).
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
#define REX_W	0x8

#define REG_RCX	1		/* Decoder.regs numbering (SDM vol. 2 table 2-2) */
#define REG_RSP	4
#define REG_RBP	5
#define REG_RSI	6
#define REG_RDI	7
#define COND_RCX 1		/* struct kisim_decoded's cond: rcx != 0 (a rep prefix) */

/* What the prefixes said (§2.1.1, §2.2.1). */
struct prefixes {
	int rex;
	int opsize;		/* 66 */
	int rep;		/* f2, f3 */
	int unmodeled;		/* fs, gs or 67: an address the model does not compute */
};

/*
 * The memory operand of ModRM `modrm` (mod != 3), SDM vol. 2 §2.2.1.2-6
 * (tables 2-2, 2-3, 2-5): SIB, RIP-relative, disp8/disp32, REX.B/REX.X.
 * Fills `out` and returns 1, or returns 0 if the bytes run out. The 67
 * prefix's 32-bit truncation is not modeled.
 */
static int memory_operand(struct cursor *c, int modrm, int rex, struct kisim_address *out)
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
	*out = (struct kisim_address){ .base = (int8_t)base, .index = (int8_t)index,
				       .scale = scale, .disp = d };
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
		if (cacheop != KISIM_OP_NONE && memory_operand(c, modrm, rex, &out->at)) {
			out->kind = KISIM_CACHEOP;
			out->cacheop = cacheop;
		}
		break;
	}
}

/* ---- data accesses ---- */

enum { LD = 1, ST = 2, RMW = LD | ST };	/* how an operand is accessed */

static void accesses(struct kisim_decoded *out, int how, uint8_t size, struct kisim_address at)
{
	if (how & LD)
		kisim_access(out, KISIM_LOAD, size, 1, at);
	if (how & ST)
		kisim_access(out, KISIM_STORE, size, 1, at);
}

static struct kisim_address at_reg(int reg, int64_t disp)
{
	return (struct kisim_address){ .base = (int8_t)reg, .index = KISIM_REG_NONE, .scale = 1,
				       .disp = disp };
}

/* An operand of size v (§3.1.1.3): REX.W 8 bytes, 66 2, else 4. */
static uint8_t v_size(const struct prefixes *p)
{
	return p->rex & REX_W ? 8 : p->opsize ? 2 : 4;
}

/* A push or pop: 8 bytes, 2 with 66 (§3.1.1.3 "64-bit mode" stack operations). */
static uint8_t stack_size(const struct prefixes *p)
{
	return p->opsize ? 2 : 8;
}

static void push(struct kisim_decoded *out, uint8_t size)
{
	kisim_access(out, KISIM_STORE, size, 1, at_reg(REG_RSP, -(int64_t)size));
}

static void pop(struct kisim_decoded *out, uint8_t size)
{
	kisim_access(out, KISIM_LOAD, size, 1, at_reg(REG_RSP, 0));
}

/* The ModRM r/m operand's accesses: `how`, of `size` bytes, if it is memory. */
static void rm_access(struct cursor *c, const struct prefixes *p, int modrm, int how,
		      uint8_t size, struct kisim_decoded *out)
{
	struct kisim_address at;

	if (modrm < 0 || (modrm >> 6) == 3)
		return;
	if (p->unmodeled || !how)
		out->unmodeled = 1;
	else if (memory_operand(c, modrm, p->rex, &at))
		accesses(out, how, size, at);
}

/*
 * String instructions (movs, cmps, stos, lods, scas): one element at rsi
 * and/or rdi, in QEMU's order; with a rep prefix only while rcx != 0.
 */
static void string_access(int op, const struct prefixes *p, struct kisim_decoded *out)
{
	uint8_t size = op & 1 ? v_size(p) : 1;

	if (p->unmodeled) {
		out->unmodeled = 1;
		return;
	}
	switch (op & ~1) {
	case 0xa4:				/* movs: load [rsi], store [rdi] */
		kisim_access(out, KISIM_LOAD, size, 1, at_reg(REG_RSI, 0));
		kisim_access(out, KISIM_STORE, size, 1, at_reg(REG_RDI, 0));
		break;
	case 0xa6:				/* cmps: [rdi], then [rsi] */
		kisim_access(out, KISIM_LOAD, size, 1, at_reg(REG_RDI, 0));
		kisim_access(out, KISIM_LOAD, size, 1, at_reg(REG_RSI, 0));
		break;
	case 0xaa:				/* stos */
		kisim_access(out, KISIM_STORE, size, 1, at_reg(REG_RDI, 0));
		break;
	case 0xac:				/* lods */
		kisim_access(out, KISIM_LOAD, size, 1, at_reg(REG_RSI, 0));
		break;
	case 0xae:				/* scas */
		kisim_access(out, KISIM_LOAD, size, 1, at_reg(REG_RDI, 0));
		break;
	}
	if (p->rep) {
		out->cond = COND_RCX;
		out->cond_reg = REG_RCX;
	}
}

/* group 3 (f6, f7): test reads, not and neg modify, mul and div read (table A-6). */
static int group3(int reg)
{
	return reg == 2 || reg == 3 ? RMW : LD;
}

/* One-byte opcodes with a memory access (SDM vol. 2 table A-2). */
static void one_byte_accesses(struct cursor *c, const struct prefixes *p, int op,
			      struct kisim_decoded *out)
{
	uint8_t v = v_size(p);
	int modrm, reg;

	if (op < 0x40 && (op & 7) < 4) {	/* add, or, adc, sbb, and, sub, xor, cmp */
		int how = (op & 7) >= 2 || (op & 0xf8) == 0x38 ? LD : RMW;

		rm_access(c, p, next(c), how, op & 1 ? v : 1, out);
		return;
	}
	if (op >= 0x50 && op <= 0x57) {
		push(out, stack_size(p));
		return;
	}
	if (op >= 0x58 && op <= 0x5f) {
		pop(out, stack_size(p));
		return;
	}
	switch (op) {
	case 0x68: case 0x6a: case 0x9c:	/* push imm, pushf */
		push(out, stack_size(p));
		return;
	case 0x9d:				/* popf */
		pop(out, stack_size(p));
		return;
	case 0xe8:				/* call rel32 */
		push(out, 8);
		return;
	case 0xc2: case 0xc3:			/* ret */
		pop(out, 8);
		return;
	case 0xc9:				/* leave: rsp = rbp, then pop rbp */
		kisim_access(out, KISIM_LOAD, stack_size(p), 1, at_reg(REG_RBP, 0));
		return;
	case 0xa0: case 0xa1: case 0xa2: case 0xa3: {	/* mov with a 64-bit moffs */
		int64_t lo, hi;

		if (p->unmodeled) {
			out->unmodeled = 1;
		} else if (disp(c, 4, &lo) && disp(c, 4, &hi)) {
			struct kisim_address at = at_reg(KISIM_REG_NONE,
							 (int64_t)((uint64_t)hi << 32 | (uint32_t)lo));

			accesses(out, op & 2 ? ST : LD, op & 1 ? v : 1, at);
		}
		return;
	}
	case 0xa4: case 0xa5: case 0xa6: case 0xa7: case 0xaa: case 0xab:
	case 0xac: case 0xad: case 0xae: case 0xaf:
		string_access(op, p, out);
		return;
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:	/* ins, outs */
	case 0xc8: case 0xca: case 0xcb: case 0xcf:	/* enter, far ret, iret */
	case 0xd7: case 0x62: case 0xc4: case 0xc5:	/* xlat, EVEX, VEX */
		out->unmodeled = 1;
		return;
	}
	modrm = next(c);
	reg = (modrm >> 3) & 7;
	switch (op) {
	case 0x63:				/* movsxd */
		rm_access(c, p, modrm, LD, p->opsize ? 2 : 4, out);
		break;
	case 0x69: case 0x6b: case 0x85:	/* imul, test */
	case 0x8b:				/* mov Gv, Ev */
		rm_access(c, p, modrm, LD, v, out);
		break;
	case 0x84: case 0x8a:			/* test, mov Gb, Eb */
		rm_access(c, p, modrm, LD, 1, out);
		break;
	case 0x80: case 0x81: case 0x83:	/* group 1: cmp (/7) reads */
		rm_access(c, p, modrm, reg == 7 ? LD : RMW, op == 0x80 ? 1 : v, out);
		break;
	case 0x86: case 0x87:			/* xchg */
		rm_access(c, p, modrm, RMW, op & 1 ? v : 1, out);
		break;
	case 0x88: case 0x89:			/* mov Ev, Gv */
		rm_access(c, p, modrm, ST, op & 1 ? v : 1, out);
		break;
	case 0x8c:				/* mov Ew, Sw */
		rm_access(c, p, modrm, ST, 2, out);
		break;
	case 0x8e:				/* mov Sw, Ew */
		rm_access(c, p, modrm, LD, 2, out);
		break;
	case 0x8f:				/* pop Ev: load [rsp], store the operand */
		if (modrm >= 0 && (modrm >> 6) != 3)
			pop(out, stack_size(p));
		rm_access(c, p, modrm, ST, stack_size(p), out);
		break;
	case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3:	/* group 2 */
		rm_access(c, p, modrm, RMW, op & 1 ? v : 1, out);
		break;
	case 0xc6: case 0xc7:			/* mov Ev, imm */
		rm_access(c, p, modrm, reg == 0 ? ST : 0, op & 1 ? v : 1, out);
		break;
	case 0xf6: case 0xf7:
		rm_access(c, p, modrm, group3(reg), op & 1 ? v : 1, out);
		break;
	case 0xfe:				/* group 4: inc, dec */
		rm_access(c, p, modrm, reg < 2 ? RMW : 0, 1, out);
		break;
	case 0xff:				/* group 5 (table A-6) */
		switch (reg) {
		case 0: case 1:			/* inc, dec */
			rm_access(c, p, modrm, RMW, v, out);
			break;
		case 2: case 6:			/* call, push Ev: load it, then push */
			rm_access(c, p, modrm, LD, 8, out);
			push(out, 8);
			break;
		case 4:				/* jmp Ev */
			rm_access(c, p, modrm, LD, 8, out);
			break;
		default:			/* far call, far jmp */
			rm_access(c, p, modrm, 0, 8, out);
			break;
		}
		break;
	default:
		if (op >= 0xd8 && op <= 0xdf)	/* x87 */
			rm_access(c, p, modrm, 0, 0, out);
		break;
	}
}

/* Two-byte opcodes without a ModRM byte (table A-3), besides jcc rel32. */
static int no_modrm(int op)
{
	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e:
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x37:
	case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
		return 1;
	}
	return (op >= 0x80 && op <= 0x8f) || (op >= 0xc8 && op <= 0xcf);
}

/* Two-byte opcodes 0f xx with a memory access (table A-3). */
static void two_byte_accesses(struct cursor *c, const struct prefixes *p,
			      struct kisim_decoded *out)
{
	int op = next(c), modrm, reg;
	uint8_t v = v_size(p);

	if (op == 0xa0 || op == 0xa8) {		/* push fs, push gs */
		push(out, stack_size(p));
		return;
	}
	if (op == 0xa1 || op == 0xa9) {		/* pop fs, pop gs */
		pop(out, stack_size(p));
		return;
	}
	if (op < 0 || no_modrm(op))
		return;
	if (op == 0x38) {			/* 0f 38 f0/f1: movbe, crc32 (f2) */
		int op3 = next(c);

		modrm = next(c);
		if (op3 == 0xf0 || op3 == 0xf1)
			rm_access(c, p, modrm, p->rep || !(op3 & 1) ? LD : ST,
				  op3 & 1 ? v : 1, out);
		else
			rm_access(c, p, modrm, 0, 0, out);
		return;
	}
	modrm = next(c);
	reg = (modrm >> 3) & 7;
	if (op >= 0x40 && op <= 0x4f) {		/* cmovcc: loads whatever the condition */
		rm_access(c, p, modrm, LD, v, out);
		return;
	}
	if (op >= 0x90 && op <= 0x9f) {		/* setcc */
		rm_access(c, p, modrm, ST, 1, out);
		return;
	}
	switch (op) {
	case 0x0d: case 0x18: case 0x19: case 0x1a: case 0x1b: case 0x1c: case 0x1d:
	case 0x1e: case 0x1f:			/* prefetch, hint nops */
	case 0x20: case 0x22: case 0x21: case 0x23:	/* mov to and from CRn, DRn */
		break;
	case 0xa4: case 0xa5: case 0xac: case 0xad:	/* shld, shrd */
	case 0xb1: case 0xc1:			/* cmpxchg, xadd */
		rm_access(c, p, modrm, RMW, v, out);
		break;
	case 0xb0: case 0xc0:
		rm_access(c, p, modrm, RMW, 1, out);
		break;
	case 0xaf: case 0xb8: case 0xbc: case 0xbd:	/* imul, popcnt, bsf/tzcnt, bsr/lzcnt */
		rm_access(c, p, modrm, LD, v, out);
		break;
	case 0xb6: case 0xbe:			/* movzx, movsx Gv, Eb */
		rm_access(c, p, modrm, LD, 1, out);
		break;
	case 0xb7: case 0xbf:
		rm_access(c, p, modrm, LD, 2, out);
		break;
	case 0xba:				/* group 8: bt reads; bts, btr, btc modify */
		rm_access(c, p, modrm, reg == 4 ? LD : reg > 4 ? RMW : 0, v, out);
		break;
	case 0xae:				/* group 15: cache maintenance makes no access */
		if (group15(modrm, p->opsize) == KISIM_OP_NONE)
			rm_access(c, p, modrm, 0, 0, out);
		break;
	default:	/* bt Ev, Gv with its bit offset, cmpxchg8b, SSE, descriptor tables */
		rm_access(c, p, modrm, 0, 0, out);
		break;
	}
}

/* ---- classes and registers (the out-of-order core's dependencies) ---- */

#define R(n)	KISIM_R(n)
#define REG_RAX	0
#define REG_RDX	2
#define FLAGS	KISIM_R_FLAGS

/* What one instruction reads and writes: filled from the opcode, then the operands. */
struct deps {
	uint64_t reads, writes;
	uint32_t updates, update_reads;	/* struct kisim_decoded's */
	uint8_t cls;
	uint8_t byte_reg, byte_rm;	/* the ModRM reg / r/m operand is 8 bits wide */
	uint8_t word;			/* operands are 16 bits wide (66, no REX.W) */
};

/* The registers an address names (base, index; RIP-relative and absent ones are none). */
static uint64_t address_regs(const struct kisim_address *a)
{
	return (a->base >= 0 ? R(a->base) : 0) | (a->index >= 0 ? R(a->index) : 0);
}

/*
 * A register operand: without REX, 4-7 of a byte operand are ah, ch, dh,
 * bh, the second byte of rax, rcx, rdx, rbx (SDM vol. 2 §3.7.2.1, table
 * 3-1); of any wider operand, and of a byte operand with REX (spl, bpl,
 * sil, dil), they are rsp, rbp, rsi, rdi.
 */
static uint64_t gpr(int n, int rex, int byte)
{
	return R(byte && !rex && n >= 4 && n < 8 ? n - 4 : n);
}

/*
 * A register the instruction writes, `partial`ly with an 8- or 16-bit
 * operand: that keeps the register's other bits (SDM vol. 1 §3.4.1.1), so
 * the result depends on its old value too. A 32-bit operand zero-extends
 * and depends on nothing. The Pentium 4 renames whole registers, so a
 * write to al waits for the last writer of eax (IA-32 optimization manual
 * 248966-013, §2 "Operand Sizes and Partial Register Accesses"), as ARM's
 * movt and PowerPC's rlwimi wait for theirs.
 */
static void written(struct deps *d, uint64_t reg, int partial)
{
	d->writes |= reg;
	if (partial)
		d->reads |= reg;
}

/*
 * rsp, which push, pop, call and ret move by the size they transfer: the
 * Pentium 4 does that in a micro-operation of its own, from rsp alone,
 * beside the access's (docs/timing.md); `leave` sets it from rbp.
 */
static void stack_moved(struct deps *d, uint64_t from)
{
	d->reads |= R(REG_RSP) | from;
	d->writes |= R(REG_RSP);
	d->updates |= (uint32_t)R(REG_RSP);
	d->update_reads |= (uint32_t)(from ? from : R(REG_RSP));
}

/*
 * The ModRM operands: the reg field's register and the r/m operand, a
 * register or the registers of its address. `rm_how` is LD (read), ST
 * (written) or RMW; `reg_how` alike for the reg field (0: not an operand).
 */
static void modrm_deps(struct cursor *c, int rex, int modrm, int reg_how, int rm_how,
		       struct deps *d)
{
	int reg = ((modrm >> 3) & 7) | (rex & REX_R ? 8 : 0);
	struct kisim_address at;

	if (reg_how & LD)
		d->reads |= gpr(reg, rex, d->byte_reg);
	if (reg_how & ST)
		written(d, gpr(reg, rex, d->byte_reg), d->byte_reg || d->word);
	if ((modrm >> 6) == 3) {
		int rm = (modrm & 7) | (rex & REX_B ? 8 : 0);

		if (rm_how & LD)
			d->reads |= gpr(rm, rex, d->byte_rm);
		if (rm_how & ST)
			written(d, gpr(rm, rex, d->byte_rm), d->byte_rm || d->word);
	} else if (memory_operand(c, modrm, rex, &at)) {
		d->reads |= address_regs(&at);
	}
}

/* Group 3 (f6, f7; SDM vol. 2 table A-6) by its reg field. */
static void group3_deps(int reg, struct deps *d)
{
	switch (reg) {
	case 0: case 1:				/* test */
		d->writes |= FLAGS;
		break;
	case 4: case 5:				/* mul, imul: rdx:rax = rax * r/m */
		d->cls = KISIM_C_MUL;
		d->reads |= R(REG_RAX);
		d->writes |= R(REG_RAX) | R(REG_RDX) | FLAGS;
		break;
	case 6: case 7:				/* div, idiv: rdx:rax / r/m */
		d->cls = KISIM_C_DIV;
		d->reads |= R(REG_RAX) | R(REG_RDX);
		d->writes |= R(REG_RAX) | R(REG_RDX) | FLAGS;
		break;
	default:				/* not, neg */
		d->writes |= reg == 3 ? FLAGS : 0;
		break;
	}
}

/*
 * The register that sub or xor (families 5 and 6 of 00-3f) of a 32- or
 * 64-bit register with itself zeroes, or none: the result is 0 whatever the
 * register held, and the Pentium 4 does not wait for its old value
 * ("Clearing Registers": special support for xor, sub and pxor within the
 * same register; IA-32 optimization manual 248966, ch. 2). An 8- or 16-bit
 * one still merges into the register, so it keeps the read.
 */
static uint64_t zeroed(int family, int rex, int modrm, const struct deps *d)
{
	int reg = ((modrm >> 3) & 7) | (rex & REX_R ? 8 : 0);
	int rm = (modrm & 7) | (rex & REX_B ? 8 : 0);

	return (family == 5 || family == 6) && (modrm >> 6) == 3 && reg == rm
	       && !d->byte_reg && !d->word ? R(rm) : 0;
}

/* One-byte opcodes (SDM vol. 2 table A-2): 1 if described. */
static int one_byte_deps(struct cursor *c, int rex, int op, struct deps *d)
{
	int modrm, reg;

	/* every even opcode described here with a ModRM byte is the byte form of its odd
	 * neighbour (00-3a, 80, 84-8a, c0, c6, d0, d2, f6, fe; SDM vol. 2 table A-2) */
	d->byte_reg = d->byte_rm = !(op & 1);
	if (op < 0x40 && (op & 7) < 6) {	/* add, or, adc, sbb, and, sub, xor, cmp */
		int family = op >> 3, writes = family == 7 ? 0 : ST;

		d->writes |= FLAGS;
		if (family == 2 || family == 3) {	/* adc, sbb */
			d->cls = KISIM_C_CARRY;
			d->reads |= FLAGS;
		}
		if ((op & 7) >= 4) {		/* al/eax, imm */
			d->reads |= R(REG_RAX);
			d->writes |= writes ? R(REG_RAX) : 0;
			return 1;
		}
		modrm = next(c);
		if (modrm < 0)
			return 0;
		if (op & 2)			/* reg = reg op r/m */
			modrm_deps(c, rex, modrm, LD | writes, LD, d);
		else
			modrm_deps(c, rex, modrm, LD, LD | writes, d);
		d->reads &= ~zeroed(family, rex, modrm, d);
		return 1;
	}
	if (op >= 0x50 && op <= 0x5f) {		/* push, pop r64 */
		uint64_t r = R((op & 7) | (rex & REX_B ? 8 : 0));

		d->cls = op < 0x58 ? KISIM_C_STORE : KISIM_C_LOAD;
		if (r != R(REG_RSP) || op < 0x58)	/* pop rsp loads it */
			stack_moved(d, 0);
		d->reads |= R(REG_RSP) | (op < 0x58 ? r : 0);
		d->writes |= R(REG_RSP) | (op >= 0x58 ? r : 0);
		return 1;
	}
	if (op >= 0x70 && op <= 0x7f) {		/* jcc */
		d->cls = KISIM_C_BRANCH;
		d->reads |= FLAGS;
		return 1;
	}
	if (op >= 0x90 && op <= 0x97) {		/* nop, xchg rax, r64 */
		int r = (op & 7) | (rex & REX_B ? 8 : 0);

		if (op != 0x90 || (rex & REX_B)) {
			d->reads |= R(REG_RAX) | R(r);
			d->writes |= R(REG_RAX) | R(r);
		}
		return 1;
	}
	if (op >= 0xb0 && op <= 0xbf) {		/* mov r, imm (b0-b7: r8) */
		written(d, gpr((op & 7) | (rex & REX_B ? 8 : 0), rex, op < 0xb8),
			op < 0xb8 || d->word);
		return 1;
	}
	if (op >= 0xd8 && op <= 0xdf)		/* x87 */
		return 0;
	switch (op) {
	case 0x68: case 0x6a:			/* push imm */
		d->cls = KISIM_C_STORE;
		stack_moved(d, 0);
		return 1;
	case 0x9c: case 0x9d:			/* pushf; popf, a system-flag write */
		d->cls = op == 0x9c ? KISIM_C_STORE : KISIM_C_SYSTEM;
		stack_moved(d, 0);
		d->reads |= op == 0x9c ? FLAGS : 0;
		d->writes |= op == 0x9d ? FLAGS : 0;
		return 1;
	case 0x98:				/* cbw, cwde, cdqe */
		d->reads |= R(REG_RAX);
		d->writes |= R(REG_RAX);
		return 1;
	case 0x99:				/* cwd, cdq, cqo */
		d->reads |= R(REG_RAX);
		d->writes |= R(REG_RDX);
		return 1;
	case 0xa8: case 0xa9:			/* test al/eax, imm */
		d->reads |= R(REG_RAX);
		d->writes |= FLAGS;
		return 1;
	case 0xa4: case 0xa5: case 0xa6: case 0xa7: case 0xaa: case 0xab:
	case 0xac: case 0xad: case 0xae: case 0xaf:	/* string instructions */
		d->reads |= R(REG_RSI) | R(REG_RDI) | R(REG_RCX) | R(REG_RAX) | FLAGS;
		d->writes |= R(REG_RSI) | R(REG_RDI) | R(REG_RCX) | R(REG_RAX) | FLAGS;
		return 1;
	case 0xe8: case 0xc2: case 0xc3:	/* call, ret: through rsp */
		d->cls = KISIM_C_BRANCH;
		stack_moved(d, 0);
		return 1;
	case 0xe9: case 0xeb:			/* jmp */
		d->cls = KISIM_C_BRANCH;
		return 1;
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:	/* loop*, jrcxz */
		d->cls = KISIM_C_BRANCH;
		d->reads |= R(REG_RCX) | FLAGS;
		d->writes |= op == 0xe3 ? 0 : R(REG_RCX);
		return 1;
	case 0xc9:				/* leave */
		d->cls = KISIM_C_LOAD;
		stack_moved(d, R(REG_RBP));
		d->writes |= R(REG_RBP);
		return 1;
	case 0xf5: case 0xf8: case 0xf9: case 0xfc: case 0xfd:	/* cmc, clc, stc, cld, std */
		d->reads |= FLAGS;
		d->writes |= FLAGS;
		return 1;
	}
	modrm = next(c);
	if (modrm < 0)
		return 0;
	reg = (modrm >> 3) & 7;
	switch (op) {
	case 0x63:				/* movsxd */
	case 0x8a: case 0x8b:			/* mov Gv, Ev */
		modrm_deps(c, rex, modrm, ST, LD, d);
		return 1;
	case 0x8d:				/* lea */
		modrm_deps(c, rex, modrm, ST, 0, d);
		return 1;
	case 0x88: case 0x89:			/* mov Ev, Gv */
		modrm_deps(c, rex, modrm, LD, ST, d);
		return 1;
	case 0x69: case 0x6b:			/* imul r, r/m, imm */
		d->cls = KISIM_C_MUL;
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, ST, LD, d);
		return 1;
	case 0x84: case 0x85:			/* test */
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, LD, LD, d);
		return 1;
	case 0x86: case 0x87:			/* xchg */
		modrm_deps(c, rex, modrm, RMW, RMW, d);
		return 1;
	case 0x80: case 0x81: case 0x83:	/* group 1; adc (/2), sbb (/3) read CF */
		d->writes |= FLAGS;
		if (reg == 2 || reg == 3) {
			d->cls = KISIM_C_CARRY;
			d->reads |= FLAGS;
		}
		modrm_deps(c, rex, modrm, 0, reg == 7 ? LD : RMW, d);
		return 1;
	case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3:	/* group 2 */
		d->cls = KISIM_C_SHIFT;
		d->reads |= FLAGS | (op >= 0xd2 ? R(REG_RCX) : 0);
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, 0, RMW, d);
		return 1;
	case 0xc6: case 0xc7:			/* mov Ev, imm */
		modrm_deps(c, rex, modrm, 0, ST, d);
		return 1;
	case 0xf6: case 0xf7:
		group3_deps(reg, d);
		modrm_deps(c, rex, modrm, 0, reg == 2 || reg == 3 ? RMW : LD, d);
		return 1;
	case 0xfe: case 0xff:			/* group 4, 5 */
		if (reg < 2) {			/* inc, dec keep CF: they read the flags */
			d->reads |= FLAGS;
			d->writes |= FLAGS;
			modrm_deps(c, rex, modrm, 0, RMW, d);
			return 1;
		}
		if (op == 0xfe)
			return 0;
		d->cls = reg == 6 ? KISIM_C_STORE : KISIM_C_BRANCH;
		if (reg == 2 || reg == 6)	/* call, push r/m */
			stack_moved(d, 0);
		modrm_deps(c, rex, modrm, 0, LD, d);
		return 1;
	case 0x8f:				/* pop r/m */
		d->cls = KISIM_C_LOAD;
		if (modrm != 0xc4 || (rex & REX_B))	/* pop rsp loads it */
			stack_moved(d, 0);
		modrm_deps(c, rex, modrm, 0, ST, d);
		d->reads |= R(REG_RSP);
		d->writes |= R(REG_RSP);
		return 1;
	}
	return 0;
}

/* 0f ae with mod 3 (SDM vol. 2 table A-6, group 15): lfence, mfence, sfence. */
static uint8_t fence_class(int modrm)
{
	switch (modrm >> 3) {
	case 0x1d:
		return KISIM_C_LFENCE;
	case 0x1e:
		return KISIM_C_FENCE;
	case 0x1f:
		return KISIM_C_SFENCE;
	}
	return KISIM_C_SYSTEM;
}

/* Two-byte opcodes 0f xx (SDM vol. 2 table A-3): 1 if described. */
static int two_byte_deps(struct cursor *c, int rex, struct deps *d)
{
	int op = next(c), modrm, reg;

	if (op >= 0x80 && op <= 0x8f) {		/* jcc rel32 */
		d->cls = KISIM_C_BRANCH;
		d->reads |= FLAGS;
		return 1;
	}
	if (op >= 0xc8 && op <= 0xcf) {		/* bswap */
		int r = (op & 7) | (rex & REX_B ? 8 : 0);

		d->reads |= R(r);
		d->writes |= R(r);
		return 1;
	}
	switch (op) {
	case 0xa2:				/* cpuid */
		d->reads |= R(REG_RAX) | R(REG_RCX);
		d->writes |= R(REG_RAX) | R(REG_RCX) | R(REG_RDX) | R(3);
		return 1;
	case 0x31:				/* rdtsc */
		d->cls = KISIM_C_SYSTEM;
		d->writes |= R(REG_RAX) | R(REG_RDX);
		return 1;
	case 0x05: case 0x34: case 0x0b: case 0x09: case 0x08: case 0x30:
	case 0x32: case 0x06: case 0x07: case 0x35:
		d->cls = KISIM_C_SYSTEM;
		return 0;
	}
	if (op < 0)
		return 0;
	modrm = next(c);
	if (modrm < 0)
		return 0;
	reg = (modrm >> 3) & 7;
	if (op >= 0x40 && op <= 0x4f) {		/* cmovcc: the old value if not moved */
		d->cls = KISIM_C_SELECT;
		d->reads |= FLAGS;
		modrm_deps(c, rex, modrm, RMW, LD, d);
		return 1;
	}
	if (op >= 0x90 && op <= 0x9f) {		/* setcc r/m8 */
		d->reads |= FLAGS;
		d->byte_rm = 1;
		modrm_deps(c, rex, modrm, 0, ST, d);
		return 1;
	}
	switch (op) {
	case 0x1f: case 0x18: case 0x0d:	/* nop r/m, prefetch */
		return 1;
	case 0xae:
		if ((modrm >> 6) == 3) {
			d->cls = fence_class(modrm);
			return 1;
		}
		modrm_deps(c, rex, modrm, 0, 0, d);	/* clflush: its address */
		return 1;
	case 0xaf:				/* imul r, r/m */
		d->cls = KISIM_C_MUL;
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, RMW, LD, d);
		return 1;
	case 0xb6: case 0xb7: case 0xbe: case 0xbf:	/* movzx, movsx (b6, be: from r/m8) */
		d->byte_rm = !(op & 1);
		modrm_deps(c, rex, modrm, ST, LD, d);
		return 1;
	case 0xbc: case 0xbd:			/* bsf, bsr */
	case 0xb8:				/* popcnt */
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, RMW, LD, d);
		return 1;
	case 0xa3: case 0xab: case 0xb3: case 0xbb:	/* bt, bts, btr, btc */
		d->cls = KISIM_C_SHIFT;
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, LD, op == 0xa3 ? LD : RMW, d);
		return 1;
	case 0xba:				/* group 8 */
		d->cls = KISIM_C_SHIFT;
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, 0, reg == 4 ? LD : RMW, d);
		return 1;
	case 0xa4: case 0xa5: case 0xac: case 0xad:	/* shld, shrd */
		d->cls = KISIM_C_SHIFT;
		d->writes |= FLAGS;
		d->reads |= op & 1 ? R(REG_RCX) : 0;
		modrm_deps(c, rex, modrm, LD, RMW, d);
		return 1;
	case 0xb0: case 0xb1:			/* cmpxchg (b0: r/m8, r8) */
		d->byte_reg = d->byte_rm = !(op & 1);
		d->reads |= R(REG_RAX);
		d->writes |= R(REG_RAX) | FLAGS;
		modrm_deps(c, rex, modrm, LD, RMW, d);
		return 1;
	case 0xc0: case 0xc1:			/* xadd (c0: r/m8, r8) */
		d->byte_reg = d->byte_rm = !(op & 1);
		d->writes |= FLAGS;
		modrm_deps(c, rex, modrm, RMW, RMW, d);
		return 1;
	case 0x20: case 0x22: case 0x01: case 0x00:	/* control registers, descriptor tables */
		d->cls = KISIM_C_SYSTEM;
		return 0;
	}
	return 0;
}

/*
 * The class and the registers of the instruction whose opcode `c` points
 * at; `lock` is its lock prefix (SDM vol. 2 "LOCK"): a locked
 * read-modify-write, or an xchg with memory, which is locked without one
 * (SDM vol. 3 §8.1.2.1), is a fence around an atomic access.
 */
static void deps(struct cursor *c, int b, int rex, int lock, int opsize,
		 struct kisim_decoded *out)
{
	struct deps d = { .cls = KISIM_C_ALU, .word = opsize && !(rex & REX_W) };
	int described;

	if (b == 0x0f)
		described = two_byte_deps(c, rex, &d);
	else
		described = b >= 0 && one_byte_deps(c, rex, b, &d);
	if (d.cls == KISIM_C_ALU && out->accesses == 1) {
		if (out->access[0].op == KISIM_LOAD && !(d.writes & FLAGS))
			d.cls = KISIM_C_LOAD;		/* mov, movzx, movsx from memory */
		else if (out->access[0].op == KISIM_STORE)
			d.cls = KISIM_C_STORE;		/* mov, setcc to memory */
	}
	if (out->accesses == 2 && out->access[0].op == KISIM_LOAD &&
	    out->access[1].op == KISIM_STORE && out->access[0].count == 1 &&
	    (lock || b == 0x86 || b == 0x87))
		d.cls = KISIM_C_ATOMIC;
	if (out->kind == KISIM_SERIALIZE)
		d.cls = KISIM_C_SERIALIZE;
	else if (out->kind != KISIM_PLAIN && out->kind != KISIM_CACHEOP)
		d.cls = KISIM_C_BRANCH;
	out->cls = d.cls;
	out->described = (uint8_t)described;
	out->reads = d.reads;
	out->writes = d.writes;
	out->updates = d.updates;
	out->update_reads = d.update_reads;
}

static void classify(const uint8_t *code, uint32_t size, struct kisim_decoded *out)
{
	struct cursor c = { code, size, 0 }, opcode;
	struct prefixes p = { 0 };
	int b, rex, opsize, modrm;

	*out = (struct kisim_decoded){ .at = KISIM_NO_ADDRESS };

	/* Prefixes; a REX counts only right before the opcode (§2.2.1). */
	for (b = next(&c); b >= 0; b = next(&c)) {
		if (legacy_prefix(b)) {
			p.opsize |= b == 0x66;
			p.rep |= b == 0xf2 || b == 0xf3;
			p.unmodeled |= b == 0x64 || b == 0x65 || b == 0x67;
			p.rex = 0;
		} else if ((b & 0xf0) == 0x40) {
			p.rex = b;
		} else {
			break;
		}
	}
	rex = p.rex;
	opsize = p.opsize;
	opcode = c;
	if (b == 0x0f)
		two_byte_accesses(&opcode, &p, out);
	else if (b >= 0)
		one_byte_accesses(&opcode, &p, b, out);

	/* One-byte opcodes (SDM vol. 2 table A-2). */
	if ((b >= 0x70 && b <= 0x7f) || (b >= 0xe0 && b <= 0xe3)) {
		out->kind = KISIM_COND;		/* jcc rel8; loopne, loope, loop, jrcxz */
		return;
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
	return;
}

int kisim_decode(const uint8_t *code, uint32_t size, uint64_t addr, uint64_t mode,
		 struct kisim_decoded *out)
{
	struct cursor c = { code, size, 0 };
	int b, rex = 0, lock = 0, opsize = 0;

	(void)addr;
	(void)mode;
	classify(code, size, out);
	for (b = next(&c); b >= 0; b = next(&c)) {	/* the prefixes again (§2.2.1) */
		if (legacy_prefix(b)) {
			lock |= b == 0xf0;
			opsize |= b == 0x66;
			rex = 0;
		} else if ((b & 0xf0) == 0x40) {
			rex = b;
		} else {
			break;
		}
	}
	deps(&c, b, rex, lock, opsize, out);
	return 0;
}

/* A rep-prefixed string instruction makes its accesses while rcx != 0. */
int kisim_condition(uint8_t cond, uint64_t rcx)
{
	return cond != COND_RCX || rcx != 0;
}
