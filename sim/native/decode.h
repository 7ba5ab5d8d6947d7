/* SPDX-License-Identifier: MIT */
/*
 * What an arch's decoder tells the timing model about one instruction.
 *
 * Each arch package has one C file (arches/<arch>/decode.c, named by its
 * Decoder) that defines kisim_decode() from the encoding bits, as the
 * kernel's own instruction decoders read them: nothing here depends on
 * Capstone's operand lists. The timing model (sim/native/timing.c) calls
 * it once per instruction address and caches the answer, checked against
 * the bytes on every execution, so patched text is decoded again.
 */
#ifndef KISIM_DECODE_H
#define KISIM_DECODE_H

#include <stdint.h>

enum kisim_kind {
	KISIM_PLAIN = 0,	/* none of the below (conditionally executed ALU ops included) */
	/* the branches, COND to COND_RET, in one run (the timing model tests the range) */
	KISIM_COND,		/* conditional direct branch: direction predicted */
	KISIM_JUMP,		/* unconditional direct branch: target from the BTB */
	KISIM_CALL,		/* direct call: BTB, and pushes the return stack */
	KISIM_JUMP_IND,		/* indirect jump (register or memory): BTB */
	KISIM_CALL_IND,		/* indirect call: BTB, and pushes the return stack */
	KISIM_RET,		/* return: pops the return stack */
	KISIM_COND_RET,		/* conditional return: direction, then the return stack */
	KISIM_TRAP,		/* raises an exception (syscall, breakpoint, undefined, trap) */
	KISIM_SERIALIZE,	/* drains the pipeline: cpuid, iret, mov cr; isb, dsb; isync, sync, rfi */
	KISIM_CACHEOP,		/* cache maintenance of the line at an address (cacheop says which) */
};

enum kisim_cacheop {
	KISIM_OP_NONE = 0,
	KISIM_OP_FLUSH_D,	/* clean and invalidate everywhere: clflush, dcbf, DCCIMVAC */
	KISIM_OP_CLEAN_D,	/* write back if dirty, keep the line: dcbst, DCCMVAC, DCCMVAU */
	KISIM_OP_INVAL_D,	/* invalidate without write back: dcbi, DCIMVAC */
	KISIM_OP_INVAL_I,	/* invalidate the instruction line: icbi, ICIMVAU */
	KISIM_OP_INVAL_I_ALL,	/* invalidate every instruction line: ICIALLU, ICIALLUIS */
};

#define KISIM_REG_NONE	(-1)
#define KISIM_REG_NEXT_PC (-2)	/* the address of the next instruction (x86 RIP-relative) */

enum kisim_shift {
	KISIM_LSL = 0,		/* by scale alone */
	KISIM_LSR,		/* the index shifted right, logically or arithmetically, */
	KISIM_ASR,		/* in the arch's width, by `shift` (1..32) first */
};

/*
 * An effective address: base + shift(index) * scale + disp, wrapped to the
 * arch's width.
 */
struct kisim_address {
	int8_t base;		/* registers in the encoding's numbering (Decoder.regs), */
	int8_t index;		/* KISIM_REG_NONE where absent (reads as 0) */
	uint8_t shift_type;	/* enum kisim_shift */
	uint8_t shift;
	int32_t scale;		/* negative where the index is subtracted (ARM U=0) */
	int64_t disp;
};

#define KISIM_NO_ADDRESS ((struct kisim_address){ .base = KISIM_REG_NONE, .index = KISIM_REG_NONE })

enum kisim_access_op {
	KISIM_LOAD = 1,
	KISIM_STORE,
};

/*
 * A data access an instruction makes, as the emulator performs it: `count`
 * accesses of `size` bytes at ascending addresses from `at` (LDM, STM, lmw:
 * one per register, as Unicorn reports them).
 */
struct kisim_access {
	struct kisim_address at;
	uint8_t op;		/* enum kisim_access_op */
	uint8_t size;
	uint8_t count;
	uint8_t pad[5];
};

#define KISIM_MAX_ACCESSES	2

/*
 * What the instruction does besides its accesses, for the out-of-order
 * core (sim/native/timing.c): the reference core's table gives each class a
 * latency and an issue resource (ReferenceCore.latencies in arches/<arch>/core.py).
 */
enum kisim_class {
	KISIM_C_ALU = 0,	/* add, logic, move, compare, lea, extend: the simple integer units */
	KISIM_C_SHIFT,		/* shift, rotate; ARM: a data-processing op with a shifted operand */
	KISIM_C_MUL,		/* integer multiply */
	KISIM_C_DIV,		/* integer divide */
	KISIM_C_LOAD,		/* a move from memory: its latency is the access's */
	KISIM_C_STORE,		/* a move to memory */
	KISIM_C_BRANCH,		/* any control transfer (struct kisim_decoded's kind says which) */
	KISIM_C_FENCE,		/* full memory barrier: mfence, dmb, sync (and lwsync on the 7447A) */
	KISIM_C_LFENCE,		/* later instructions wait for it to complete: lfence */
	KISIM_C_SFENCE,		/* orders stores only: sfence, eieio */
	KISIM_C_ATOMIC,		/* locked read-modify-write (x86 lock, xchg with memory) */
	KISIM_C_SYSTEM,		/* special-register moves, CR logic, other system instructions */
	KISIM_C_SELECT,		/* a move on a condition of the flags: x86 cmov */
	KISIM_C_CARRY,		/* add or subtract with the carry flag as an operand: x86 adc, sbb */
	KISIM_C_SERIALIZE,	/* drains the window: struct kisim_decoded's kind KISIM_SERIALIZE */
	KISIM_CLASSES,
};

/*
 * Registers an instruction reads and writes, as bits of a 64-bit mask: bit
 * n < 32 is Decoder.regs[n]; the bits above name what an arch keeps beside
 * its general registers (condition flags, link and count registers).
 */
#define KISIM_R(n)	(1ull << (n))
#define KISIM_R_FLAGS	(1ull << 32)	/* x86 EFLAGS, ARM CPSR's NZCV, PowerPC CR field 0 */
#define KISIM_R_CR(f)	(1ull << (32 + (f)))	/* PowerPC CR field f (0..7) */
#define KISIM_R_LR	(1ull << 40)	/* PowerPC link register */
#define KISIM_R_CTR	(1ull << 41)	/* PowerPC count register */
#define KISIM_R_XER	(1ull << 42)	/* PowerPC XER (carry) */
#define KISIM_R_ALL	(~0ull)

struct kisim_decoded {
	uint8_t kind;		/* enum kisim_kind */
	uint8_t cacheop;	/* enum kisim_cacheop, for KISIM_CACHEOP */
	uint8_t accesses;	/* entries of access[], in the order the instruction makes them */
	uint8_t cond;		/* they happen only if kisim_condition(cond, cond_reg); 0: always */
	uint8_t unmodeled;	/* it accesses memory in a way access[] does not describe */
	int8_t cond_reg;	/* the register cond reads, as the instruction executes */
	uint8_t cls;		/* enum kisim_class */
	uint8_t described;	/* reads and writes below are the instruction's (0: unknown) */
	/* the register masks before the accesses: with the timing model's decode-slot
	 * header they fill the slot's first host cache line, all that an instruction
	 * without accesses reads (sim/native/timing.c, struct kt_decode_slot) */
	uint64_t reads;		/* KISIM_R masks */
	uint64_t writes;
	uint32_t updates;	/* of writes, a base the address generation writes back */
	uint32_t update_reads;	/* what that is computed from (general registers: bits < 32) */
	struct kisim_address at;	/* KISIM_CACHEOP's line */
	struct kisim_access access[KISIM_MAX_ACCESSES];
};

/*
 * `base` is written back with the address (ARM writeback and post-index,
 * PowerPC update forms, x86's rsp by push, pop, call and ret), computed
 * from itself and `offset` (an offset register, or 0): the core has it
 * from its address generation, before the access completes.
 */
static inline void kisim_update(struct kisim_decoded *out, uint64_t base, uint64_t offset)
{
	out->reads |= base | offset;
	out->writes |= base;
	out->updates |= (uint32_t)base;
	out->update_reads |= (uint32_t)(base | offset);
}

/* Append an access to `out` (at most KISIM_MAX_ACCESSES: no instruction makes more). */
static inline void kisim_access(struct kisim_decoded *out, uint8_t op, uint8_t size,
				uint8_t count, struct kisim_address at)
{
	if (out->accesses < KISIM_MAX_ACCESSES)
		out->access[out->accesses++] = (struct kisim_access){ .at = at, .op = op,
								     .size = size, .count = count };
}

/*
 * Classify the instruction of `size` bytes at `code` (memory order, as
 * executed) at guest address `addr`. `mode` is the arch's Decoder.mode_reg
 * at that address (0 when it has none). Return 0 and fill `out`; a
 * non-zero return means "plain". A decoder whose Decoder.accesses is set
 * describes every data access in `out->access` (PC-relative ones with an
 * absolute `disp`); the others leave it empty and the model takes the
 * accesses from Unicorn's memory hooks.
 */
int kisim_decode(const uint8_t *code, uint32_t size, uint64_t addr, uint64_t mode,
		 struct kisim_decoded *out);

/*
 * Where decoded accesses can be conditional (struct kisim_decoded's cond),
 * the decoder also defines whether `cond` passes when the register
 * cond_reg holds `value`.
 */
int kisim_condition(uint8_t cond, uint64_t value);

#endif
