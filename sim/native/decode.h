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

struct kisim_decoded {
	uint8_t kind;		/* enum kisim_kind */
	uint8_t cacheop;	/* enum kisim_cacheop, for KISIM_CACHEOP */
	int8_t base;		/* KISIM_CACHEOP's address: base + index * scale + disp, */
	int8_t index;		/* registers in the encoding's numbering (Decoder.regs), */
	uint8_t scale;		/* KISIM_REG_NONE where absent */
	uint8_t pad[3];
	int64_t disp;
};

/*
 * Classify the instruction of `size` bytes at `code` (memory order, as
 * executed). `mode` is the arch's Decoder.mode_reg at that address (0 when
 * it has none). Return 0 and fill `out`; a non-zero return means "plain".
 */
int kisim_decode(const uint8_t *code, uint32_t size, uint64_t mode, struct kisim_decoded *out);

#endif
