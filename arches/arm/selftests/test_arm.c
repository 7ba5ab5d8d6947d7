// SPDX-License-Identifier: GPL-2.0
/*
 * ARM kprobes instruction tests: a port of Linux v5.10
 * arch/arm/probes/kprobes/test-arm.c as a kisim guest module, for an A32
 * kernel (Linux builds test-arm.c only without CONFIG_THUMB2_KERNEL). The
 * harness of test-core.c and test-core.h is test_core.h, shared with
 * test_thumb.c; it prints one KTAP line per case (docs/selftest/test-arm.md).
 */
#include "test_core.h"

#define TEST_ISA "32"

/*
 * A case whose instruction clang's assembler does not take in the kernel's
 * spelling (strd with one register, post-indexed register forms): encoded,
 * with the UAL text as its title.
 */
#define TEST_ENC(enc, text, args)					\
	TESTCASE_START(text) args TEST_ARG_END("")			\
	TEST_INSTRUCTION(__inst_arm(enc) "\t@ " text) TESTCASE_END

/* -- the cases (test-arm.c) ------------------------------------------------ */

/*
 * The data-processing families: each operation with every shift form, a
 * register-specified shift, sp and pc operands and immediates; each with
 * its own condition, so the 16 flag scenarios cover the condition too.
 * UAL spelling ("andseq" for the kernel's "andeqs"): kisim assembles with
 * clang's integrated assembler.
 */
#define _DATA_PROCESSING_DNM(op, s, val)					\
	TEST_RR(op s "eq	r0,  r", 1, VAL1, ", r", 2, val, "")		\
	TEST_RR(op s "ne	r1,  r", 1, VAL1, ", r", 2, val, ", lsl #3")	\
	TEST_RR(op s "cs	r2,  r", 3, VAL1, ", r", 2, val, ", lsr #4")	\
	TEST_RR(op s "cc	r3,  r", 3, VAL1, ", r", 2, val, ", asr #5")	\
	TEST_RR(op s "mi	r4,  r", 5, VAL1, ", r", 2, N(val), ", asr #6")	\
	TEST_RR(op s "pl	r5,  r", 5, VAL1, ", r", 2, val, ", ror #7")	\
	TEST_RR(op s "vs	r6,  r", 7, VAL1, ", r", 2, val, ", rrx")	\
	TEST_R(op s "vc	r6,  r", 7, VAL1, ", pc, lsl #3")		\
	TEST_R(op s "vc	r6,  r", 7, VAL1, ", sp, lsr #4")		\
	TEST_R(op s "vc	r6,  pc, r", 7, VAL1, ", asr #5")		\
	TEST_R(op s "vc	r6,  sp, r", 7, VAL1, ", ror #6")		\
	TEST_RRR(op s "hi	r8,  r", 9, VAL1, ", r", 14, val, ", lsl r", 0, 3, "") \
	TEST_RRR(op s "ls	r9,  r", 9, VAL1, ", r", 14, val, ", lsr r", 7, 4, "") \
	TEST_RRR(op s "ge	r10, r", 11, VAL1, ", r", 14, val, ", asr r", 7, 5, "") \
	TEST_RRR(op s "lt	r11, r", 11, VAL1, ", r", 14, N(val), ", asr r", 7, 6, "") \
	TEST_RR(op s "gt	r12, r13, r", 14, val, ", ror r", 14, 7, "")	\
	TEST_RR(op s "le	r14, r", 0, val, ", r13, lsl r", 14, 8, "")	\
	TEST_R(op s "eq	r0,  r", 11, VAL1, ", #0xf5")			\
	TEST_R(op s "ne	r11, r", 0, VAL1, ", #0xf5000000")		\
	TEST_R(op s "	r7,  r", 8, VAL2, ", #0x000af000")		\
	TEST(op s "	r4,  pc, #0x00005a00")

#define DATA_PROCESSING_DNM(op, val)						\
	_DATA_PROCESSING_DNM(op, "", val)					\
	_DATA_PROCESSING_DNM(op, "s", val)

#define DATA_PROCESSING_NM(op, val)						\
	TEST_RR(op "ne	r", 1, VAL1, ", r", 2, val, "")			\
	TEST_RR(op "eq	r", 1, VAL1, ", r", 2, val, ", lsl #3")		\
	TEST_RR(op "cc	r", 3, VAL1, ", r", 2, val, ", lsr #4")		\
	TEST_RR(op "cs	r", 3, VAL1, ", r", 2, val, ", asr #5")		\
	TEST_RR(op "pl	r", 5, VAL1, ", r", 2, N(val), ", asr #6")		\
	TEST_RR(op "mi	r", 5, VAL1, ", r", 2, val, ", ror #7")		\
	TEST_RR(op "vc	r", 7, VAL1, ", r", 2, val, ", rrx")			\
	TEST_R(op "vs	r", 7, VAL1, ", pc, lsl #3")				\
	TEST_R(op "vs	r", 7, VAL1, ", sp, lsr #4")				\
	TEST_R(op "vs	pc, r", 7, VAL1, ", asr #5")				\
	TEST_R(op "vs	sp, r", 7, VAL1, ", ror #6")				\
	TEST_RRR(op "ls	r", 9, VAL1, ", r", 14, val, ", lsl r", 0, 3, "")	\
	TEST_RRR(op "hi	r", 9, VAL1, ", r", 14, val, ", lsr r", 7, 4, "")	\
	TEST_RRR(op "lt	r", 11, VAL1, ", r", 14, val, ", asr r", 7, 5, "")	\
	TEST_RRR(op "ge	r", 11, VAL1, ", r", 14, N(val), ", asr r", 7, 6, "") \
	TEST_RR(op "le	r13, r", 14, val, ", ror r", 14, 7, "")		\
	TEST_RR(op "gt	r", 0, val, ", r13, lsl r", 14, 8, "")		\
	TEST_R(op "eq	r", 11, VAL1, ", #0xf5")				\
	TEST_R(op "ne	r", 0, VAL1, ", #0xf5000000")				\
	TEST_R(op "	r", 8, VAL2, ", #0x000af000")

#define _DATA_PROCESSING_DM(op, s, val)					\
	TEST_R(op s "eq	r0,  r", 1, val, "")					\
	TEST_R(op s "ne	r1,  r", 1, val, ", lsl #3")				\
	TEST_R(op s "cs	r2,  r", 3, val, ", lsr #4")				\
	TEST_R(op s "cc	r3,  r", 3, val, ", asr #5")				\
	TEST_R(op s "mi	r4,  r", 5, N(val), ", asr #6")			\
	TEST_R(op s "pl	r5,  r", 5, val, ", ror #7")				\
	TEST_R(op s "vs	r6,  r", 10, val, ", rrx")				\
	TEST(op s "vs	r7,  pc, lsl #3")					\
	TEST(op s "vs	r7,  sp, lsr #4")					\
	TEST_RR(op s "vc	r8,  r", 7, val, ", lsl r", 0, 3, "")		\
	TEST_RR(op s "hi	r9,  r", 9, val, ", lsr r", 7, 4, "")		\
	TEST_RR(op s "ls	r10, r", 9, val, ", asr r", 7, 5, "")		\
	TEST_RR(op s "ge	r11, r", 11, N(val), ", asr r", 7, 6, "")	\
	TEST_RR(op s "lt	r12, r", 11, val, ", ror r", 14, 7, "")		\
	TEST_R(op s "gt	r14, r13, lsl r", 14, 8, "")			\
	TEST(op s "eq	r0,  #0xf5")						\
	TEST(op s "ne	r11, #0xf5000000")					\
	TEST(op s "	r7,  #0x000af000")					\
	TEST(op s "	r4,  #0x00005a00")

#define DATA_PROCESSING_DM(op, val)						\
	_DATA_PROCESSING_DM(op, "", val)					\
	_DATA_PROCESSING_DM(op, "s", val)

/* Load/store word and unsigned byte, every addressing mode. */
#define LOAD_STORE(byte)							\
	TEST_RP("str" byte "	r", 0, VAL1, ", [r", 1, 24, ", #-2]")		\
	TEST_RP("str" byte "	r", 14, VAL2, ", [r", 13, 0, ", #2]")		\
	TEST_RP("str" byte "	r", 1, VAL1, ", [r", 2, 24, ", #4]!")		\
	TEST_RP("str" byte "	r", 12, VAL2, ", [r", 11, 24, ", #-4]!")	\
	TEST_RP("str" byte "	r", 2, VAL1, ", [r", 3, 24, "], #48")		\
	TEST_RP("str" byte "	r", 10, VAL2, ", [r", 9, 64, "], #-48")	\
	TEST_RP("str" byte "	r", 3, VAL1, ", [r", 13, TEST_MEMORY_SIZE, ", #-" __stringify(MAX_STACK_SIZE) "]!") \
	TEST_UNSUPPORTED("str" byte "	r3, [r13, #-" __stringify(MAX_STACK_SIZE) "-8]!") \
	TEST_RP("str" byte "	r", 4, VAL1, ", [r", 10, TEST_MEMORY_SIZE, ", #-" __stringify(MAX_STACK_SIZE) "-8]!") \
	TEST_RPR("str" byte "	r", 0, VAL1, ", [r", 1, 48, ", -r", 2, 24, "]")	\
	TEST_RPR("str" byte "	r", 14, VAL2, ", [r", 11, 0, ", r", 12, 48, "]") \
	TEST_UNSUPPORTED("str" byte "	r14, [r13, r12]")			\
	TEST_UNSUPPORTED("str" byte "	r14, [r12, r13]")			\
	TEST_RPR("str" byte "	r", 1, VAL1, ", [r", 2, 24, ", r", 3, 48, "]!") \
	TEST_RPR("str" byte "	r", 12, VAL2, ", [r", 11, 48, ", -r", 10, 24, "]!") \
	TEST_RPR("str" byte "	r", 2, VAL1, ", [r", 3, 24, "], r", 4, 48, "")	\
	TEST_RPR("str" byte "	r", 10, VAL2, ", [r", 9, 48, "], -r", 11, 24, "") \
	TEST_RPR("str" byte "	r", 0, VAL1, ", [r", 1, 24, ", r", 2, 32, ", lsl #1]") \
	TEST_RPR("str" byte "	r", 14, VAL2, ", [r", 11, 0, ", r", 12, 32, ", lsr #2]") \
	TEST_UNSUPPORTED("str" byte "	r14, [r13, r12, lsr #2]")		\
	TEST_RPR("str" byte "	r", 1, VAL1, ", [r", 2, 24, ", r", 3, 32, ", asr #3]!") \
	TEST_RPR("str" byte "	r", 12, VAL2, ", [r", 11, 24, ", r", 10, 4, ", ror #31]!") \
	TEST_P("ldr" byte "	r0, [r", 0, 24, ", #-2]")			\
	TEST_P("ldr" byte "	r14, [r", 13, 0, ", #2]")			\
	TEST_P("ldr" byte "	r1, [r", 2, 24, ", #4]!")			\
	TEST_P("ldr" byte "	r12, [r", 11, 24, ", #-4]!")			\
	TEST_P("ldr" byte "	r2, [r", 3, 24, "], #48")			\
	TEST_P("ldr" byte "	r10, [r", 9, 64, "], #-48")			\
	TEST_PR("ldr" byte "	r0, [r", 0, 48, ", -r", 2, 24, "]")		\
	TEST_PR("ldr" byte "	r14, [r", 13, 0, ", r", 12, 48, "]")		\
	TEST_PR("ldr" byte "	r1, [r", 2, 24, ", r", 3, 48, "]!")		\
	TEST_PR("ldr" byte "	r12, [r", 11, 48, ", -r", 10, 24, "]!")	\
	TEST_PR("ldr" byte "	r2, [r", 3, 24, "], r", 4, 48, "")		\
	TEST_PR("ldr" byte "	r10, [r", 9, 48, "], -r", 11, 24, "")		\
	TEST_PR("ldr" byte "	r0, [r", 0, 24, ", r", 2, 32, ", lsl #1]")	\
	TEST_PR("ldr" byte "	r14, [r", 13, 0, ", r", 12, 32, ", lsr #2]")	\
	TEST_PR("ldr" byte "	r1, [r", 2, 24, ", r", 3, 32, ", asr #3]!")	\
	TEST_PR("ldr" byte "	r12, [r", 11, 24, ", r", 10, 4, ", ror #31]!")	\
	TEST("ldr" byte "	r0, [pc, #0]")					\
	TEST_R("ldr" byte "	r12, [pc, r", 14, 0, "]")

static noinline void kprobe_arm_test_cases(void)
{
	TEST_GROUP("Data-processing (register), (register-shifted register), (immediate)")

	DATA_PROCESSING_DNM("and", 0xf00f00ff)
	DATA_PROCESSING_DNM("eor", 0xf00f00ff)
	DATA_PROCESSING_DNM("sub", VAL2)
	DATA_PROCESSING_DNM("rsb", VAL2)
	DATA_PROCESSING_DNM("add", VAL2)
	DATA_PROCESSING_DNM("adc", VAL2)
	DATA_PROCESSING_DNM("sbc", VAL2)
	DATA_PROCESSING_DNM("rsc", VAL2)
	DATA_PROCESSING_NM("tst", 0xf00f00ff)
	DATA_PROCESSING_NM("teq", 0xf00f00ff)
	DATA_PROCESSING_NM("cmp", VAL2)
	DATA_PROCESSING_NM("cmn", VAL2)
	DATA_PROCESSING_DNM("orr", 0xf00f00ff)
	DATA_PROCESSING_DM("mov", VAL2)
	DATA_PROCESSING_DNM("bic", 0xf00f00ff)
	DATA_PROCESSING_DM("mvn", VAL2)

	TEST("mov	ip, sp")

	TEST_SUPPORTED("mov	pc, #0x1000")
	TEST_SUPPORTED("mov	sp, #0x1000")
	TEST_SUPPORTED("cmp	pc, #0x1000")
	TEST_SUPPORTED("cmp	sp, #0x1000")

	/* Data-processing with PC and a shift count in a register */
	TEST_UNSUPPORTED(__inst_arm(0xe15c0f1e) "	@ cmp	r12, r14, asl pc")
	TEST_UNSUPPORTED(__inst_arm(0xe1a0cf1e) "	@ mov	r12, r14, asl pc")
	TEST_UNSUPPORTED(__inst_arm(0xe08caf1e) "	@ add	r10, r12, r14, asl pc")
	TEST_UNSUPPORTED(__inst_arm(0xe151021f) "	@ cmp	r1, pc, lsl r2")
	TEST_UNSUPPORTED(__inst_arm(0xe17f0211) "	@ cmn	pc, r1, lsl r2")
	TEST_UNSUPPORTED(__inst_arm(0xe1a0121f) "	@ mov	r1, pc, lsl r2")
	TEST_UNSUPPORTED(__inst_arm(0xe1a0f211) "	@ mov	pc, r1, lsl r2")
	TEST_UNSUPPORTED(__inst_arm(0xe042131f) "	@ sub	r1, r2, pc, lsl r3")
	TEST_UNSUPPORTED(__inst_arm(0xe1cf1312) "	@ bic	r1, pc, r2, lsl r3")
	TEST_UNSUPPORTED(__inst_arm(0xe081f312) "	@ add	pc, r1, r2, lsl r3")

	/* Data-processing with PC as a target and status registers updated */
	TEST_UNSUPPORTED("movs	pc, r1")
	TEST_UNSUPPORTED(__inst_arm(0xe1b0f211) "	@ movs	pc, r1, lsl r2")
	TEST_UNSUPPORTED("movs	pc, #0x10000")
	TEST_UNSUPPORTED("adds	pc, lr, r1")
	TEST_UNSUPPORTED(__inst_arm(0xe09ef211) "	@ adds	pc, lr, r1, lsl r2")
	TEST_UNSUPPORTED("adds	pc, lr, #4")

	/* Data-processing with SP as target */
	TEST("add	sp, sp, #16")
	TEST("sub	sp, sp, #8")
	TEST("bic	sp, sp, #0x20")
	TEST("orr	sp, sp, #0x20")
	TEST_PR("add	sp, r", 10, 0, ", r", 11, 4, "")
	TEST_PRR("add	sp, r", 10, 0, ", r", 11, 4, ", lsl r", 12, 1, "")
	TEST_P("mov	sp, r", 10, 0, "")
	TEST_PR("mov	sp, r", 10, 0, ", lsl r", 12, 0, "")

	/* Data-processing with PC as target */
	TEST_BF("add	pc, pc, #2f-1b-8")
	TEST_BF_R("add	pc, pc, r", 14, 2f-1f-8, "")
	TEST_BF_R("add	pc, r", 14, 2f-1f-8, ", pc")
	TEST_BF_R("mov	pc, r", 0, 2f, "")
	TEST_BF_R("add	pc, pc, r", 14, (2f-1f-8)*2, ", asr #1")
	TEST_BB("sub	pc, pc, #1b-2b+8")
	TEST_BB_R("sub	pc, pc, r", 14, 1f-2f+8, "")
	TEST_BB_R("rsb	pc, r", 14, 1f-2f+8, ", pc")
	TEST_R("add	pc, pc, r", 10, -2, ", lsl #1")

	TEST_GROUP("Miscellaneous instructions")

	TEST_RMASKED("mrs	r", 0, ~PSR_IGNORE_BITS, ", apsr")
	TEST_RMASKED("mrspl	r", 7, ~PSR_IGNORE_BITS, ", apsr")
	TEST_RMASKED("mrs	r", 14, ~PSR_IGNORE_BITS, ", apsr")
	TEST_UNSUPPORTED(__inst_arm(0xe10ff000) "	@ mrs r15, cpsr")
	TEST_UNSUPPORTED("mrs	r0, spsr")
	TEST_UNSUPPORTED("mrs	lr, spsr")

	TEST_UNSUPPORTED("msr	cpsr, r0")
	TEST_UNSUPPORTED("msr	cpsr_f, lr")
	TEST_UNSUPPORTED("msr	spsr, r0")

	TEST_BF_R("bx	r", 0, 2f, "")
	TEST_BB_R("bx	r", 7, 2f, "")
	TEST_BF_R("bxeq	r", 14, 2f, "")

	TEST_R("clz	r0, r", 0, 0x0, "")
	TEST_R("clzeq	r7, r", 14, 0x1, "")
	TEST_R("clz	lr, r", 7, 0xffffffff, "")
	TEST("clz	r4, sp")
	TEST_UNSUPPORTED(__inst_arm(0x016fff10) "	@ clz pc, r0")
	TEST_UNSUPPORTED(__inst_arm(0x016f0f1f) "	@ clz r0, pc")

	TEST_UNSUPPORTED("bxj	r0")

	TEST_BF_R("blx	r", 0, 2f, "")
	TEST_BB_R("blx	r", 7, 2f, "")
	TEST_BF_R("blxeq	r", 14, 2f, "")
	TEST_UNSUPPORTED(__inst_arm(0x0120003f) "	@ blx pc")

	TEST_RR("qadd	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_RR("qaddvs	lr, r", 9, VAL2, ", r", 8, VAL1, "")
	TEST_R("qadd	lr, r", 9, VAL2, ", r13")
	TEST_RR("qsub	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_RR("qsubvs	lr, r", 9, VAL2, ", r", 8, VAL1, "")
	TEST_R("qsub	lr, r", 9, VAL2, ", r13")
	TEST_RR("qdadd	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_RR("qdaddvs	lr, r", 9, VAL2, ", r", 8, VAL1, "")
	TEST_R("qdadd	lr, r", 9, VAL2, ", r13")
	TEST_RR("qdsub	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_RR("qdsubvs	lr, r", 9, VAL2, ", r", 8, VAL1, "")
	TEST_R("qdsub	lr, r", 9, VAL2, ", r13")
	TEST_UNSUPPORTED(__inst_arm(0xe101f050) "	@ qadd pc, r0, r1")
	TEST_UNSUPPORTED(__inst_arm(0xe121f050) "	@ qsub pc, r0, r1")
	TEST_UNSUPPORTED(__inst_arm(0xe141f050) "	@ qdadd pc, r0, r1")
	TEST_UNSUPPORTED(__inst_arm(0xe161f050) "	@ qdsub pc, r0, r1")
	TEST_UNSUPPORTED(__inst_arm(0xe16f2050) "	@ qdsub r2, r0, pc")
	TEST_UNSUPPORTED(__inst_arm(0xe161205f) "	@ qdsub r2, pc, r1")

	TEST_UNSUPPORTED("bkpt	0xffff")
	TEST_UNSUPPORTED("bkpt	0x0000")

	TEST_UNSUPPORTED(__inst_arm(0xe1600070) " @ smc #0")

	TEST_GROUP("Halfword multiply and multiply-accumulate")

#define HALFWORD_MLA(op, pc_enc)						\
	TEST_RRR(op "	r0, r", 1, VAL1, ", r", 2, VAL2, ", r", 3, VAL3, "")	\
	TEST_RRR(op "ge	r7, r", 8, VAL3, ", r", 9, VAL1, ", r", 10, VAL2, "")	\
	TEST_RR(op "	lr, r", 1, VAL2, ", r", 2, VAL3, ", r13")			\
	TEST_UNSUPPORTED(__inst_arm(pc_enc) " @ " op " pc, r1, r2, r3")
	HALFWORD_MLA("smlabb", 0xe10f3281)
	HALFWORD_MLA("smlatb", 0xe10f32a1)
	HALFWORD_MLA("smlabt", 0xe10f32c1)
	HALFWORD_MLA("smlatt", 0xe10f32e1)
	HALFWORD_MLA("smlawb", 0xe12f3281)
	HALFWORD_MLA("smlawt", 0xe12f32c1)
	TEST_UNSUPPORTED(__inst_arm(0xe12032cf) " @ smlawt r0, pc, r2, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe1203fc1) " @ smlawt r0, r1, pc, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe120f2c1) " @ smlawt r0, r1, r2, pc")

#define HALFWORD_MUL(op, pc_enc)						\
	TEST_RR(op "	r0, r", 1, VAL1, ", r", 2, VAL2, "")			\
	TEST_RR(op "ge	r7, r", 8, VAL3, ", r", 9, VAL1, "")			\
	TEST_R(op "	lr, r", 1, VAL2, ", r13")				\
	TEST_UNSUPPORTED(__inst_arm(pc_enc) " @ " op " pc, r1, r2")
	HALFWORD_MUL("smulwb", 0xe12f02a1)
	HALFWORD_MUL("smulwt", 0xe12f02e1)

#define HALFWORD_MLAL(op, pc_lo, pc_hi)					\
	TEST_RRRR(op "	r", 0, VAL1, ", r", 1, VAL2, ", r", 2, VAL3, ", r", 3, VAL4) \
	TEST_RRRR(op "le	r", 8, VAL4, ", r", 9, VAL1, ", r", 10, VAL2, ", r", 11, VAL3) \
	TEST_RRR(op "	r", 14, VAL3, ", r", 7, VAL4, ", r", 5, VAL1, ", r13")	\
	TEST_UNSUPPORTED(__inst_arm(pc_lo) " @ " op " pc, r1, r2, r3")		\
	TEST_UNSUPPORTED(__inst_arm(pc_hi) " @ " op " r1, pc, r2, r3")
	HALFWORD_MLAL("smlalbb", 0xe14f1382, 0xe141f382)
	HALFWORD_MLAL("smlaltb", 0xe14f13a2, 0xe141f3a2)
	HALFWORD_MLAL("smlalbt", 0xe14f13c2, 0xe141f3c2)
	HALFWORD_MLAL("smlaltt", 0xe14f13e2, 0xe140f3e2)
	TEST_UNSUPPORTED(__inst_arm(0xe14013ef) " @ smlalbb r0, r1, pc, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe1401fe2) " @ smlalbb r0, r1, r2, pc")

	HALFWORD_MUL("smulbb", 0xe16f0281)
	HALFWORD_MUL("smultb", 0xe16f02a1)
	HALFWORD_MUL("smulbt", 0xe16f02c1)
	HALFWORD_MUL("smultt", 0xe16f02e1)
	TEST_UNSUPPORTED(__inst_arm(0xe16002ef) " @ smultt r0, pc, r2")
	TEST_UNSUPPORTED(__inst_arm(0xe1600fe1) " @ smultt r0, r1, pc")

	TEST_GROUP("Multiply and multiply-accumulate")

	TEST_RR("mul	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_RR("mulls	r7, r", 8, VAL2, ", r", 9, VAL2, "")
	TEST_R("mul	lr, r", 4, VAL3, ", r13")
	TEST_UNSUPPORTED(__inst_arm(0xe00f0291) " @ mul pc, r1, r2")
	TEST_UNSUPPORTED(__inst_arm(0xe000029f) " @ mul r0, pc, r2")
	TEST_UNSUPPORTED(__inst_arm(0xe0000f91) " @ mul r0, r1, pc")
	TEST_RR("muls	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_RR("mulsls	r7, r", 8, VAL2, ", r", 9, VAL2, "")
	TEST_R("muls	lr, r", 4, VAL3, ", r13")
	TEST_UNSUPPORTED(__inst_arm(0xe01f0291) " @ muls pc, r1, r2")

	TEST_RRR("mla	r0, r", 1, VAL1, ", r", 2, VAL2, ", r", 3, VAL3, "")
	TEST_RRR("mlahi	r7, r", 8, VAL3, ", r", 9, VAL1, ", r", 10, VAL2, "")
	TEST_RR("mla	lr, r", 1, VAL2, ", r", 2, VAL3, ", r13")
	TEST_UNSUPPORTED(__inst_arm(0xe02f3291) " @ mla pc, r1, r2, r3")
	TEST_RRR("mlas	r0, r", 1, VAL1, ", r", 2, VAL2, ", r", 3, VAL3, "")
	TEST_RRR("mlashi	r7, r", 8, VAL3, ", r", 9, VAL1, ", r", 10, VAL2, "")
	TEST_RR("mlas	lr, r", 1, VAL2, ", r", 2, VAL3, ", r13")
	TEST_UNSUPPORTED(__inst_arm(0xe03f3291) " @ mlas pc, r1, r2, r3")

	TEST_RR("umaal	r0, r1, r", 2, VAL1, ", r", 3, VAL2, "")
	TEST_RR("umaalls	r7, r8, r", 9, VAL2, ", r", 10, VAL1, "")
	TEST_R("umaal	lr, r12, r", 11, VAL3, ", r13")
	TEST_UNSUPPORTED(__inst_arm(0xe041f392) " @ umaal pc, r1, r2, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe04f0392) " @ umaal r0, pc, r2, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe0500090) " @ undef")
	TEST_UNSUPPORTED(__inst_arm(0xe05fff9f) " @ undef")

	TEST_RRR("mls	r0, r", 1, VAL1, ", r", 2, VAL2, ", r", 3, VAL3, "")
	TEST_RRR("mlshi	r7, r", 8, VAL3, ", r", 9, VAL1, ", r", 10, VAL2, "")
	TEST_RR("mls	lr, r", 1, VAL2, ", r", 2, VAL3, ", r13")
	TEST_UNSUPPORTED(__inst_arm(0xe06f3291) " @ mls pc, r1, r2, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe060329f) " @ mls r0, pc, r2, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe0603f91) " @ mls r0, r1, pc, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe060f291) " @ mls r0, r1, r2, pc")

	TEST_UNSUPPORTED(__inst_arm(0xe0700090) " @ undef")
	TEST_UNSUPPORTED(__inst_arm(0xe07fff9f) " @ undef")

#define LONG_MUL(op, pc_lo, pc_hi)						\
	TEST_RR(op "	r0, r1, r", 2, VAL1, ", r", 3, VAL2, "")			\
	TEST_RR(op "ls	r7, r8, r", 9, VAL2, ", r", 10, VAL1, "")			\
	TEST_R(op "	lr, r12, r", 11, VAL3, ", r13")				\
	TEST_UNSUPPORTED(__inst_arm(pc_lo) " @ " op " pc, r1, r2, r3")		\
	TEST_UNSUPPORTED(__inst_arm(pc_hi) " @ " op " r1, pc, r2, r3")
	LONG_MUL("umull", 0xe081f392, 0xe08f1392)
	LONG_MUL("umulls", 0xe091f392, 0xe09f1392)
#define LONG_MLA(op, pc_lo, pc_hi)						\
	TEST_RRRR(op "	r", 0, VAL1, ", r", 1, VAL2, ", r", 2, VAL3, ", r", 3, VAL4) \
	TEST_RRRR(op "le	r", 8, VAL4, ", r", 9, VAL1, ", r", 10, VAL2, ", r", 11, VAL3) \
	TEST_RRR(op "	r", 14, VAL3, ", r", 7, VAL4, ", r", 5, VAL1, ", r13")	\
	TEST_UNSUPPORTED(__inst_arm(pc_lo) " @ " op " pc, r1, r2, r3")		\
	TEST_UNSUPPORTED(__inst_arm(pc_hi) " @ " op " r1, pc, r2, r3")
	LONG_MLA("umlal", 0xe0af1392, 0xe0a1f392)
	LONG_MLA("umlals", 0xe0bf1392, 0xe0b1f392)
	LONG_MUL("smull", 0xe0c1f392, 0xe0cf1392)
	LONG_MUL("smulls", 0xe0d1f392, 0xe0df1392)
	LONG_MLA("smlal", 0xe0ef1392, 0xe0e1f392)
	LONG_MLA("smlals", 0xe0ff1392, 0xe0f0f392)
	TEST_UNSUPPORTED(__inst_arm(0xe0f0139f) " @ smlals r0, r1, pc, r3")
	TEST_UNSUPPORTED(__inst_arm(0xe0f01f92) " @ smlals r0, r1, r2, pc")

	TEST_GROUP("Synchronization primitives")

	/* SWP/SWPB: decoded only before ARMv6 (kisim's guest is ARMv7) */
	TEST_UNSUPPORTED(__inst_arm(0xe108e097) " @ swp	lr, r7, [r8]")
	TEST_UNSUPPORTED(__inst_arm(0x610d0091) " @ swpvs	r0, r1, [sp]")
	TEST_UNSUPPORTED(__inst_arm(0xe10cd09e) " @ swp	sp, r14 [r12]")
	TEST_UNSUPPORTED(__inst_arm(0xe102f091) " @ swp pc, r1, [r2]")
	TEST_UNSUPPORTED(__inst_arm(0xe102009f) " @ swp r0, pc, [r2]")
	TEST_UNSUPPORTED(__inst_arm(0xe10f0091) " @ swp r0, r1, [pc]")
	TEST_UNSUPPORTED(__inst_arm(0xe148e097) " @ swpb	lr, r7, [r8]")
	TEST_UNSUPPORTED(__inst_arm(0x614d0091) " @ swpvsb	r0, r1, [sp]")
	TEST_UNSUPPORTED(__inst_arm(0xe142f091) " @ swpb pc, r1, [r2]")

	TEST_UNSUPPORTED(__inst_arm(0xe1100090) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe1200090) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe1300090) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe1500090) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe1600090) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe1700090) " @ unallocated")
	TEST_UNSUPPORTED("ldrex	r2, [sp]")
	TEST_UNSUPPORTED("strexd	r0, r2, r3, [sp]")
	TEST_UNSUPPORTED("ldrexd	r2, r3, [sp]")
	TEST_UNSUPPORTED("strexb	r0, r2, [sp]")
	TEST_UNSUPPORTED("ldrexb	r2, [sp]")
	TEST_UNSUPPORTED("strexh	r0, r2, [sp]")
	TEST_UNSUPPORTED("ldrexh	r2, [sp]")

	TEST_GROUP("Extra load/store instructions")

	TEST_RPR("strh	r", 0, VAL1, ", [r", 1, 48, ", -r", 2, 24, "]")
	TEST_RPR("strheq	r", 14, VAL2, ", [r", 11, 0, ", r", 12, 48, "]")
	TEST_UNSUPPORTED("strheq	r14, [r13, r12]")
	TEST_UNSUPPORTED("strheq	r14, [r12, r13]")
	TEST_RPR("strh	r", 1, VAL1, ", [r", 2, 24, ", r", 3, 48, "]!")
	TEST_RPR("strhne	r", 12, VAL2, ", [r", 11, 48, ", -r", 10, 24, "]!")
	TEST_RPR("strh	r", 2, VAL1, ", [r", 3, 24, "], r", 4, 48, "")
	TEST_RPR("strh	r", 10, VAL2, ", [r", 9, 48, "], -r", 11, 24, "")
	TEST_UNSUPPORTED(__inst_arm(0xe1afc0ba) "	@ strh r12, [pc, r10]!")
	TEST_UNSUPPORTED(__inst_arm(0xe089f0bb) "	@ strh pc, [r9], r11")
	TEST_UNSUPPORTED(__inst_arm(0xe089a0bf) "	@ strh r10, [r9], pc")

	TEST_PR("ldrh	r0, [r", 0, 48, ", -r", 2, 24, "]")
	TEST_PR("ldrhcs	r14, [r", 13, 0, ", r", 12, 48, "]")
	TEST_PR("ldrh	r1, [r", 2, 24, ", r", 3, 48, "]!")
	TEST_PR("ldrhcc	r12, [r", 11, 48, ", -r", 10, 24, "]!")
	TEST_PR("ldrh	r2, [r", 3, 24, "], r", 4, 48, "")
	TEST_PR("ldrh	r10, [r", 9, 48, "], -r", 11, 24, "")
	TEST_UNSUPPORTED(__inst_arm(0xe1bfc0ba) "	@ ldrh r12, [pc, r10]!")
	TEST_UNSUPPORTED(__inst_arm(0xe099f0bb) "	@ ldrh pc, [r9], r11")
	TEST_UNSUPPORTED(__inst_arm(0xe099a0bf) "	@ ldrh r10, [r9], pc")

	TEST_RP("strh	r", 0, VAL1, ", [r", 1, 24, ", #-2]")
	TEST_RP("strhmi	r", 14, VAL2, ", [r", 13, 0, ", #2]")
	TEST_RP("strh	r", 1, VAL1, ", [r", 2, 24, ", #4]!")
	TEST_RP("strhpl	r", 12, VAL2, ", [r", 11, 24, ", #-4]!")
	TEST_RP("strh	r", 2, VAL1, ", [r", 3, 24, "], #48")
	TEST_RP("strh	r", 10, VAL2, ", [r", 9, 64, "], #-48")
	TEST_RP("strh	r", 3, VAL1, ", [r", 13, TEST_MEMORY_SIZE, ", #-" __stringify(MAX_STACK_SIZE) "]!")
	TEST_UNSUPPORTED("strh r3, [r13, #-" __stringify(MAX_STACK_SIZE) "-8]!")
	TEST_RP("strh	r", 4, VAL1, ", [r", 14, TEST_MEMORY_SIZE, ", #-" __stringify(MAX_STACK_SIZE) "-8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe1efc3b0) "	@ strh r12, [pc, #48]!")
	TEST_UNSUPPORTED(__inst_arm(0xe0c9f3b0) "	@ strh pc, [r9], #48")

	TEST_P("ldrh	r0, [r", 0, 24, ", #-2]")
	TEST_P("ldrhvs	r14, [r", 13, 0, ", #2]")
	TEST_P("ldrh	r1, [r", 2, 24, ", #4]!")
	TEST_P("ldrhvc	r12, [r", 11, 24, ", #-4]!")
	TEST_P("ldrh	r2, [r", 3, 24, "], #48")
	TEST_P("ldrh	r10, [r", 9, 64, "], #-48")
	TEST("ldrh	r0, [pc, #0]")
	TEST_UNSUPPORTED(__inst_arm(0xe1ffc3b0) "	@ ldrh r12, [pc, #48]!")
	TEST_UNSUPPORTED(__inst_arm(0xe0d9f3b0) "	@ ldrh pc, [r9], #48")

	TEST_PR("ldrsb	r0, [r", 0, 48, ", -r", 2, 24, "]")
	TEST_PR("ldrsbhi	r14, [r", 13, 0, ", r", 12, 48, "]")
	TEST_PR("ldrsb	r1, [r", 2, 24, ", r", 3, 48, "]!")
	TEST_PR("ldrsbls	r12, [r", 11, 48, ", -r", 10, 24, "]!")
	TEST_PR("ldrsb	r2, [r", 3, 24, "], r", 4, 48, "")
	TEST_PR("ldrsb	r10, [r", 9, 48, "], -r", 11, 24, "")
	TEST_UNSUPPORTED(__inst_arm(0xe1bfc0da) "	@ ldrsb r12, [pc, r10]!")
	TEST_UNSUPPORTED(__inst_arm(0xe099f0db) "	@ ldrsb pc, [r9], r11")

	TEST_P("ldrsb	r0, [r", 0, 24, ", #-1]")
	TEST_P("ldrsbge	r14, [r", 13, 0, ", #1]")
	TEST_P("ldrsb	r1, [r", 2, 24, ", #4]!")
	TEST_P("ldrsblt	r12, [r", 11, 24, ", #-4]!")
	TEST_P("ldrsb	r2, [r", 3, 24, "], #48")
	TEST_P("ldrsb	r10, [r", 9, 64, "], #-48")
	TEST("ldrsb	r0, [pc, #0]")
	TEST_UNSUPPORTED(__inst_arm(0xe1ffc3d0) "	@ ldrsb r12, [pc, #48]!")
	TEST_UNSUPPORTED(__inst_arm(0xe0d9f3d0) "	@ ldrsb pc, [r9], #48")

	TEST_PR("ldrsh	r0, [r", 0, 48, ", -r", 2, 24, "]")
	TEST_PR("ldrshgt	r14, [r", 13, 0, ", r", 12, 48, "]")
	TEST_PR("ldrsh	r1, [r", 2, 24, ", r", 3, 48, "]!")
	TEST_PR("ldrshle	r12, [r", 11, 48, ", -r", 10, 24, "]!")
	TEST_PR("ldrsh	r2, [r", 3, 24, "], r", 4, 48, "")
	TEST_PR("ldrsh	r10, [r", 9, 48, "], -r", 11, 24, "")
	TEST_UNSUPPORTED(__inst_arm(0xe1bfc0fa) "	@ ldrsh r12, [pc, r10]!")
	TEST_UNSUPPORTED(__inst_arm(0xe099f0fb) "	@ ldrsh pc, [r9], r11")

	TEST_P("ldrsh	r0, [r", 0, 24, ", #-1]")
	TEST_P("ldrsheq	r14, [r", 13, 0, ", #1]")
	TEST_P("ldrsh	r1, [r", 2, 24, ", #4]!")
	TEST_P("ldrshne	r12, [r", 11, 24, ", #-4]!")
	TEST_P("ldrsh	r2, [r", 3, 24, "], #48")
	TEST_P("ldrsh	r10, [r", 9, 64, "], #-48")
	TEST("ldrsh	r0, [pc, #0]")
	TEST_UNSUPPORTED(__inst_arm(0xe1ffc3f0) "	@ ldrsh r12, [pc, #48]!")
	TEST_UNSUPPORTED(__inst_arm(0xe0d9f3f0) "	@ ldrsh pc, [r9], #48")

	TEST_UNSUPPORTED("strht	r1, [r2], r3")
	TEST_UNSUPPORTED("ldrht	r1, [r2], r3")
	TEST_UNSUPPORTED("strht	r1, [r2], #48")
	TEST_UNSUPPORTED("ldrht	r1, [r2], #48")
	TEST_UNSUPPORTED("ldrsbt	r1, [r2], r3")
	TEST_UNSUPPORTED("ldrsbt	r1, [r2], #48")
	TEST_UNSUPPORTED("ldrsht	r1, [r2], r3")
	TEST_UNSUPPORTED("ldrsht	r1, [r2], #48")

	TEST_RPR("strd	r", 0, VAL1, ", [r", 1, 48, ", -r", 2, 24, "]")
	TEST_RPR("strdcc	r", 8, VAL2, ", [r", 11, 0, ", r", 12, 48, "]")
	TEST_UNSUPPORTED("strdcc r8, [r13, r12]")
	TEST_UNSUPPORTED("strdcc r8, [r12, r13]")
	TEST_RPR("strd	r", 4, VAL1, ", [r", 2, 24, ", r", 3, 48, "]!")
	TEST_ENC(0x212bc0fa, "strdcs	r12, r13, [r11, -r10]!", TEST_ARG_REG(12, VAL2) TEST_ARG_PTR(11, 48) TEST_ARG_REG(10, 24))
	TEST_ENC(0xe08520f4, "strd	r2, r3, [r5], r4", TEST_ARG_REG(2, VAL1) TEST_ARG_PTR(5, 24) TEST_ARG_REG(4, 48))
	TEST_ENC(0xe009a0f7, "strd	r10, r11, [r9], -r7", TEST_ARG_REG(10, VAL2) TEST_ARG_PTR(9, 48) TEST_ARG_REG(7, 24))
	TEST_UNSUPPORTED(__inst_arm(0xe1afc0fa) "	@ strd r12, [pc, r10]!")

	TEST_PR("ldrd	r0, [r", 0, 48, ", -r", 2, 24, "]")
	TEST_PR("ldrdmi	r8, [r", 13, 0, ", r", 12, 48, "]")
	TEST_PR("ldrd	r4, [r", 2, 24, ", r", 3, 48, "]!")
	TEST_PR("ldrdpl	r6, [r", 11, 48, ", -r", 10, 24, "]!")
	TEST_ENC(0xe08520d4, "ldrd	r2, r3, [r5], r4", TEST_ARG_PTR(5, 24) TEST_ARG_REG(4, 48))
	TEST_ENC(0xe009a0d7, "ldrd	r10, r11, [r9], -r7", TEST_ARG_PTR(9, 48) TEST_ARG_REG(7, 24))
	TEST_UNSUPPORTED(__inst_arm(0xe1afc0da) "	@ ldrd r12, [pc, r10]!")
	TEST_UNSUPPORTED(__inst_arm(0xe089f0db) "	@ ldrd pc, [r9], r11")
	TEST_UNSUPPORTED(__inst_arm(0xe089e0db) "	@ ldrd lr, [r9], r11")
	TEST_UNSUPPORTED(__inst_arm(0xe089c0df) "	@ ldrd r12, [r9], pc")

	TEST_RP("strd	r", 0, VAL1, ", [r", 1, 24, ", #-8]")
	TEST_RP("strdvs	r", 8, VAL2, ", [r", 13, 0, ", #8]")
	TEST_RP("strd	r", 4, VAL1, ", [r", 2, 24, ", #16]!")
	TEST_ENC(0x716bc1f0, "strdvc	r12, r13, [r11, #-16]!", TEST_ARG_REG(12, VAL2) TEST_ARG_PTR(11, 24))
	TEST_RP("strd	r", 2, VAL1, ", [r", 4, 24, "], #48")
	TEST_RP("strd	r", 10, VAL2, ", [r", 9, 64, "], #-48")
	TEST_RP("strd	r", 6, VAL1, ", [r", 13, TEST_MEMORY_SIZE, ", #-" __stringify(MAX_STACK_SIZE) "]!")
	TEST_UNSUPPORTED("strd r6, [r13, #-" __stringify(MAX_STACK_SIZE) "-8]!")
	TEST_RP("strd	r", 4, VAL1, ", [r", 12, TEST_MEMORY_SIZE, ", #-" __stringify(MAX_STACK_SIZE) "-8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe1efc3f0) "	@ strd r12, [pc, #48]!")

	TEST_P("ldrd	r0, [r", 0, 24, ", #-8]")
	TEST_P("ldrdhi	r8, [r", 13, 0, ", #8]")
	TEST_P("ldrd	r4, [r", 2, 24, ", #16]!")
	TEST_P("ldrdls	r6, [r", 11, 24, ", #-16]!")
	TEST_P("ldrd	r2, [r", 5, 24, "], #48")
	TEST_P("ldrd	r10, [r", 9, 6, "], #-48")
	TEST_UNSUPPORTED(__inst_arm(0xe1efc3d0) "	@ ldrd r12, [pc, #48]!")
	TEST_UNSUPPORTED(__inst_arm(0xe0c9f3d0) "	@ ldrd pc, [r9], #48")
	TEST_UNSUPPORTED(__inst_arm(0xe0c9e3d0) "	@ ldrd lr, [r9], #48")

	TEST_GROUP("Miscellaneous")

	TEST("movw	r0, #0")
	TEST("movw	r0, #0xffff")
	TEST("movw	lr, #0xffff")
	TEST_UNSUPPORTED(__inst_arm(0xe300f000) "	@ movw pc, #0")
	TEST_R("movt	r", 0, VAL1, ", #0")
	TEST_R("movt	r", 0, VAL2, ", #0xffff")
	TEST_R("movt	r", 14, VAL1, ", #0xffff")
	TEST_UNSUPPORTED(__inst_arm(0xe340f000) "	@ movt pc, #0")

	TEST_UNSUPPORTED("msr	cpsr, 0x13")
	TEST_UNSUPPORTED("msr	cpsr_f, 0xf0000000")
	TEST_UNSUPPORTED("msr	spsr, 0x13")

	TEST_SUPPORTED("yield")
	TEST("sev")
	TEST("nop")
	TEST("wfi")
	TEST_SUPPORTED("wfe")
	TEST_UNSUPPORTED("dbg #0")

	TEST_GROUP("Load/store word and unsigned byte")

	LOAD_STORE("")
	TEST_P("str	pc, [r", 0, 0, ", #15*4]")
	TEST_UNSUPPORTED("str	pc, [sp, r2]")
	TEST_BF("ldr	pc, [sp, #15*4]")
	TEST_BF_R("ldr	pc, [sp, r", 2, 15*4, "]")

	TEST_P("str	sp, [r", 0, 0, ", #13*4]")
	TEST_UNSUPPORTED("str	sp, [sp, r2]")
	TEST_BF("ldr	sp, [sp, #13*4]")
	TEST_BF_R("ldr	sp, [sp, r", 2, 13*4, "]")

	TEST_UNSUPPORTED(__inst_arm(0xe5af6008) "	@ str r6, [pc, #8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe7af6008) "	@ str r6, [pc, r8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe5bf6008) "	@ ldr r6, [pc, #8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe7bf6008) "	@ ldr r6, [pc, r8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe788600f) "	@ str r6, [r8, pc]")
	TEST_UNSUPPORTED(__inst_arm(0xe798600f) "	@ ldr r6, [r8, pc]")

	LOAD_STORE("b")
	TEST_UNSUPPORTED(__inst_arm(0xe5f7f008) "	@ ldrb pc, [r7, #8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe7f7f008) "	@ ldrb pc, [r7, r8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe5ef6008) "	@ strb r6, [pc, #8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe7ef6008) "	@ strb r6, [pc, r3]!")
	TEST_UNSUPPORTED(__inst_arm(0xe5ff6008) "	@ ldrb r6, [pc, #8]!")
	TEST_UNSUPPORTED(__inst_arm(0xe7ff6008) "	@ ldrb r6, [pc, r3]!")

	TEST_UNSUPPORTED("ldrt	r0, [r1], #4")
	TEST_UNSUPPORTED("ldrt	r1, [r2], r3")
	TEST_UNSUPPORTED("strt	r2, [r3], #4")
	TEST_UNSUPPORTED("strt	r3, [r4], r5")
	TEST_UNSUPPORTED("ldrbt	r4, [r5], #4")
	TEST_UNSUPPORTED("ldrbt	r5, [r6], r7")
	TEST_UNSUPPORTED("strbt	r6, [r7], #4")
	TEST_UNSUPPORTED("strbt	r7, [r8], r9")

	TEST_GROUP("Parallel addition and subtraction")

#define PARALLEL(op, pc_enc)							\
	TEST_RR(op "	r0, r", 0, HH1, ", r", 1, HH2, "")			\
	TEST_RR(op "	r14, r", 12, HH2, ", r", 10, HH1, "")			\
	TEST_UNSUPPORTED(__inst_arm(pc_enc) "	@ " op "	pc, r12, r10")
#define PARALLEL_UNALLOCATED(base)						\
	TEST_UNSUPPORTED(__inst_arm(base | 0x000000b0) " @ unallocated")	\
	TEST_UNSUPPORTED(__inst_arm(base | 0x000fffbf) " @ unallocated")	\
	TEST_UNSUPPORTED(__inst_arm(base | 0x000000d0) " @ unallocated")	\
	TEST_UNSUPPORTED(__inst_arm(base | 0x000fffdf) " @ unallocated")
#define PARALLEL_GROUP(p, base)							\
	PARALLEL(p "add16", base | 0x000cff1a)					\
	PARALLEL(p "asx", base | 0x000cff3a)					\
	PARALLEL(p "sax", base | 0x000cff5a)					\
	PARALLEL(p "sub16", base | 0x000cff7a)					\
	PARALLEL(p "add8", base | 0x000cff9a)					\
	PARALLEL_UNALLOCATED(base)						\
	PARALLEL(p "sub8", base | 0x000cfffa)

	TEST_UNSUPPORTED(__inst_arm(0xe6000010) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe60fffff) " @ unallocated")
	PARALLEL_GROUP("s", 0xe6100000)
	PARALLEL_GROUP("q", 0xe6200000)
	PARALLEL_GROUP("sh", 0xe6300000)
	TEST_UNSUPPORTED(__inst_arm(0xe6400010) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe64fffff) " @ unallocated")
	PARALLEL_GROUP("u", 0xe6500000)
	PARALLEL_GROUP("uq", 0xe6600000)
	PARALLEL_GROUP("uh", 0xe6700000)
	TEST_UNSUPPORTED(__inst_arm(0xe67feffa) "	@ uhsub8	r14, pc, r10")
	TEST_UNSUPPORTED(__inst_arm(0xe67cefff) "	@ uhsub8	r14, r12, pc")

	TEST_GROUP("Packing, unpacking, saturation, and reversal")

	TEST_RR("pkhbt	r0, r", 0, HH1, ", r", 1, HH2, "")
	TEST_RR("pkhbt	r14,r", 12, HH1, ", r", 10, HH2, ", lsl #2")
	TEST_UNSUPPORTED(__inst_arm(0xe68cf11a) "	@ pkhbt	pc, r12, r10, lsl #2")
	/* No shift: assembled as pkhbt r0, r1, r0 (0xe6810010), by GNU as and clang */
	TEST_RR("pkhtb	r0, r", 0, HH1, ", r", 1, HH2, "")
	TEST_RR("pkhtb	r14,r", 12, HH1, ", r", 10, HH2, ", asr #2")
	TEST_UNSUPPORTED(__inst_arm(0xe68cf15a) "	@ pkhtb	pc, r12, r10, asr #2")
	TEST_UNSUPPORTED(__inst_arm(0xe68fe15a) "	@ pkhtb	r14, pc, r10, asr #2")
	TEST_UNSUPPORTED(__inst_arm(0xe68ce15f) "	@ pkhtb	r14, r12, pc, asr #2")
	TEST_UNSUPPORTED(__inst_arm(0xe6900010) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe69fffdf) " @ unallocated")

	TEST_R("ssat	r0, #24, r", 0, VAL1, "")
	TEST_R("ssat	r14, #24, r", 12, VAL2, "")
	TEST_R("ssat	r0, #24, r", 0, VAL1, ", lsl #8")
	TEST_R("ssat	r14, #24, r", 12, VAL2, ", asr #8")
	TEST_UNSUPPORTED(__inst_arm(0xe6b7f01c) "	@ ssat	pc, #24, r12")

	TEST_R("usat	r0, #24, r", 0, VAL1, "")
	TEST_R("usat	r14, #24, r", 12, VAL2, "")
	TEST_R("usat	r0, #24, r", 0, VAL1, ", lsl #8")
	TEST_R("usat	r14, #24, r", 12, VAL2, ", asr #8")
	TEST_UNSUPPORTED(__inst_arm(0xe6f7f01c) "	@ usat	pc, #24, r12")

#define EXTEND(opa, op, pc_enc)						\
	TEST_RR(opa "	r0, r", 0, HH1, ", r", 1, HH2, "")			\
	TEST_RR(opa "	r14,r", 12, HH2, ", r", 10, HH1, ", ror #8")		\
	TEST_R(op "	r8, r", 7, HH1, "")					\
	TEST_UNSUPPORTED(__inst_arm(pc_enc) "	@ " opa "	pc,r12, r10, ror #8")
	EXTEND("sxtab16", "sxtb16", 0xe68cf47a)

	TEST_RR("sel	r0, r", 0, VAL1, ", r", 1, VAL2, "")
	TEST_RR("sel	r14, r", 12, VAL1, ", r", 10, VAL2, "")
	TEST_UNSUPPORTED(__inst_arm(0xe68cffba) "	@ sel	pc, r12, r10")
	TEST_UNSUPPORTED(__inst_arm(0xe68fefba) "	@ sel	r14, pc, r10")
	TEST_UNSUPPORTED(__inst_arm(0xe68cefbf) "	@ sel	r14, r12, pc")

	TEST_R("ssat16	r0, #12, r", 0, HH1, "")
	TEST_R("ssat16	r14, #12, r", 12, HH2, "")
	TEST_UNSUPPORTED(__inst_arm(0xe6abff3c) "	@ ssat16	pc, #12, r12")

	EXTEND("sxtab", "sxtb", 0xe6acf47a)

	TEST_R("rev	r0, r", 0, VAL1, "")
	TEST_R("rev	r14, r", 12, VAL2, "")
	TEST_UNSUPPORTED(__inst_arm(0xe6bfff3c) "	@ rev	pc, r12")

	EXTEND("sxtah", "sxth", 0xe6bcf47a)

	TEST_R("rev16	r0, r", 0, VAL1, "")
	TEST_R("rev16	r14, r", 12, VAL2, "")
	TEST_UNSUPPORTED(__inst_arm(0xe6bfffbc) "	@ rev16	pc, r12")

	EXTEND("uxtab16", "uxtb16", 0xe6ccf47a)

	TEST_R("usat16	r0, #12, r", 0, HH1, "")
	TEST_R("usat16	r14, #12, r", 12, HH2, "")
	TEST_UNSUPPORTED(__inst_arm(0xe6ecff3c) "	@ usat16	pc, #12, r12")
	TEST_UNSUPPORTED(__inst_arm(0xe6ecef3f) "	@ usat16	r14, #12, pc")

	EXTEND("uxtab", "uxtb", 0xe6ecf47a)

	TEST_R("rbit	r0, r", 0, VAL1, "")
	TEST_R("rbit	r14, r", 12, VAL2, "")
	TEST_UNSUPPORTED(__inst_arm(0xe6ffff3c) "	@ rbit	pc, r12")

	EXTEND("uxtah", "uxth", 0xe6fcf47a)
	TEST_UNSUPPORTED(__inst_arm(0xe6fff077) "	@ uxth	pc, r7")
	TEST_UNSUPPORTED(__inst_arm(0xe6ff807f) "	@ uxth	r8, pc")
	TEST_UNSUPPORTED(__inst_arm(0xe6fce47f) "	@ uxtah	r14, r12, pc, ror #8")

	TEST_R("revsh	r0, r", 0, VAL1, "")
	TEST_R("revsh	r14, r", 12, VAL2, "")
	TEST_UNSUPPORTED(__inst_arm(0xe6ffff3c) "	@ revsh	pc, r12")
	TEST_UNSUPPORTED(__inst_arm(0xe6ffef3f) "	@ revsh	r14, pc")

	TEST_UNSUPPORTED(__inst_arm(0xe6900070) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe69fff7f) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe6d00070) " @ unallocated")
	TEST_UNSUPPORTED(__inst_arm(0xe6dfff7f) " @ unallocated")

	TEST_GROUP("Signed multiplies")

#define DUAL_MLA(op, pc_enc)							\
	TEST_RRR(op "	r0, r", 0, HH1, ", r", 1, HH2, ", r", 2, VAL1, "")	\
	TEST_RRR(op "	r14, r", 12, HH2, ", r", 10, HH1, ", r", 8, VAL2, "")	\
	TEST_UNSUPPORTED(__inst_arm(pc_enc) "	@ " op "	pc, r12, r10, r8")
#define DUAL_MUL(op, pc_enc)							\
	TEST_RR(op "	r0, r", 0, HH1, ", r", 1, HH2, "")			\
	TEST_RR(op "	r14, r", 12, HH2, ", r", 10, HH1, "")			\
	TEST_UNSUPPORTED(__inst_arm(pc_enc) "	@ " op "	pc, r12, r10")
	DUAL_MLA("smlad", 0xe70f8a1c)
	DUAL_MLA("smladx", 0xe70f8a3c)
	DUAL_MUL("smuad", 0xe70ffa1c)
	DUAL_MUL("smuadx", 0xe70ffa3c)
	DUAL_MLA("smlsd", 0xe70f8a5c)
	DUAL_MLA("smlsdx", 0xe70f8a7c)
	DUAL_MUL("smusd", 0xe70ffa5c)
	DUAL_MUL("smusdx", 0xe70ffa7c)

	TEST_RRRR("smlald	r", 0, VAL1, ", r", 1, VAL2, ", r", 0, HH1, ", r", 1, HH2)
	TEST_RRRR("smlald	r", 11, VAL2, ", r", 10, VAL1, ", r", 9, HH2, ", r", 8, HH1)
	TEST_UNSUPPORTED(__inst_arm(0xe74af819) "	@ smlald	pc, r10, r9, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe74fb819) "	@ smlald	r11, pc, r9, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe74ab81f) "	@ smlald	r11, r10, pc, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe74abf19) "	@ smlald	r11, r10, r9, pc")

	TEST_RRRR("smlaldx	r", 0, VAL1, ", r", 1, VAL2, ", r", 0, HH1, ", r", 1, HH2)
	TEST_RRRR("smlaldx	r", 11, VAL2, ", r", 10, VAL1, ", r", 9, HH2, ", r", 8, HH1)
	TEST_UNSUPPORTED(__inst_arm(0xe74af839) "	@ smlaldx	pc, r10, r9, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe74fb839) "	@ smlaldx	r11, pc, r9, r8")

#define MOST_SIGNIFICANT(op, pc_enc)						\
	TEST_RRR(op "	r0, r", 0, VAL1, ", r", 1, VAL2, ", r", 2, VAL1, "")	\
	TEST_RRR(op "	r14, r", 12, VAL2, ", r", 10, VAL1, ", r", 8, VAL2, "")	\
	TEST_UNSUPPORTED(__inst_arm(pc_enc) "	@ " op "	pc, r12, r10, r8")
	MOST_SIGNIFICANT("smmla", 0xe75f8a1c)
	MOST_SIGNIFICANT("smmlar", 0xe75f8a3c)
	TEST_RR("smmul	r0, r", 0, VAL1, ", r", 1, VAL2, "")
	TEST_RR("smmul	r14, r", 12, VAL2, ", r", 10, VAL1, "")
	TEST_UNSUPPORTED(__inst_arm(0xe75ffa1c) "	@ smmul	pc, r12, r10")
	TEST_RR("smmulr	r0, r", 0, VAL1, ", r", 1, VAL2, "")
	TEST_RR("smmulr	r14, r", 12, VAL2, ", r", 10, VAL1, "")
	TEST_UNSUPPORTED(__inst_arm(0xe75ffa3c) "	@ smmulr	pc, r12, r10")
	MOST_SIGNIFICANT("smmls", 0xe75f8adc)
	MOST_SIGNIFICANT("smmlsr", 0xe75f8afc)
	TEST_UNSUPPORTED(__inst_arm(0xe75e8aff) "	@ smmlsr	r14, pc, r10, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe75e8ffc) "	@ smmlsr	r14, r12, pc, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe75efafc) "	@ smmlsr	r14, r12, r10, pc")

	TEST_RR("usad8	r0, r", 0, VAL1, ", r", 1, VAL2, "")
	TEST_RR("usad8	r14, r", 12, VAL2, ", r", 10, VAL1, "")
	TEST_UNSUPPORTED(__inst_arm(0xe75ffa1c) "	@ usad8	pc, r12, r10")
	TEST_UNSUPPORTED(__inst_arm(0xe75efa1f) "	@ usad8	r14, pc, r10")
	TEST_UNSUPPORTED(__inst_arm(0xe75eff1c) "	@ usad8	r14, r12, pc")

	TEST_RRR("usada8	r0, r", 0, VAL1, ", r", 1, VAL2, ", r", 2, VAL3, "")
	TEST_RRR("usada8	r14, r", 12, VAL2, ", r", 10, VAL1, ", r", 8, VAL3, "")
	TEST_UNSUPPORTED(__inst_arm(0xe78f8a1c) "	@ usada8	pc, r12, r10, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe78e8a1f) "	@ usada8	r14, pc, r10, r8")
	TEST_UNSUPPORTED(__inst_arm(0xe78e8f1c) "	@ usada8	r14, r12, pc, r8")

	TEST_GROUP("Bit Field")

	TEST_R("sbfx	r0, r", 0, VAL1, ", #0, #31")
	TEST_R("sbfxeq	r14, r", 12, VAL2, ", #8, #16")
	TEST_R("sbfx	r4, r", 10, VAL1, ", #16, #15")
	TEST_UNSUPPORTED(__inst_arm(0xe7aff45c) "	@ sbfx	pc, r12, #8, #16")

	TEST_R("ubfx	r0, r", 0, VAL1, ", #0, #31")
	TEST_R("ubfxcs	r14, r", 12, VAL2, ", #8, #16")
	TEST_R("ubfx	r4, r", 10, VAL1, ", #16, #15")
	TEST_UNSUPPORTED(__inst_arm(0xe7eff45c) "	@ ubfx	pc, r12, #8, #16")
	TEST_UNSUPPORTED(__inst_arm(0xe7efc45f) "	@ ubfx	r12, pc, #8, #16")

	TEST_R("bfc	r", 0, VAL1, ", #4, #20")
	TEST_R("bfcvs	r", 14, VAL2, ", #4, #20")
	TEST_R("bfc	r", 7, VAL1, ", #0, #31")
	TEST_R("bfc	r", 8, VAL2, ", #0, #31")
	TEST_UNSUPPORTED(__inst_arm(0xe7def01f) "	@ bfc	pc, #0, #31")

	TEST_RR("bfi	r", 0, VAL1, ", r", 0, VAL2, ", #0, #31")
	TEST_RR("bfipl	r", 12, VAL1, ", r", 14, VAL2, ", #4, #20")
	TEST_UNSUPPORTED(__inst_arm(0xe7d7f21e) "	@ bfi	pc, r14, #4, #20")

	TEST_UNSUPPORTED(__inst_arm(0x07f000f0) " @ permanently UNDEFINED")
	TEST_UNSUPPORTED(__inst_arm(0x07ffffff) " @ permanently UNDEFINED")

	TEST_GROUP("Branch, branch with link, and block data transfer")

	TEST_P("stmda	r", 0, 16*4, ", {r0}")
	TEST_P("stmdaeq	r", 4, 16*4, ", {r0-r15}")
	TEST_P("stmdane	r", 8, 16*4, "!, {r8-r15}")
	TEST_P("stmda	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_P("stmda	r", 13, 0, "!, {pc}")

	TEST_P("ldmda	r", 0, 16*4, ", {r0}")
	TEST_BF_P("ldmdacs	r", 4, 15*4, ", {r0-r15}")
	TEST_BF_P("ldmdacc	r", 7, 15*4, "!, {r8-r15}")
	TEST_P("ldmda	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_BF_P("ldmda	r", 14, 15*4, "!, {pc}")

	TEST_P("stmia	r", 0, 16*4, ", {r0}")
	TEST_P("stmiami	r", 4, 16*4, ", {r0-r15}")
	TEST_P("stmiapl	r", 8, 16*4, "!, {r8-r15}")
	TEST_P("stmia	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_P("stmia	r", 14, 0, "!, {pc}")

	TEST_P("ldmia	r", 0, 16*4, ", {r0}")
	TEST_BF_P("ldmiavs	r", 4, 0, ", {r0-r15}")
	TEST_BF_P("ldmiavc	r", 7, 8*4, "!, {r8-r15}")
	TEST_P("ldmia	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_BF_P("ldmia	r", 14, 15*4, "!, {pc}")

	TEST_P("stmdb	r", 0, 16*4, ", {r0}")
	TEST_P("stmdbhi	r", 4, 16*4, ", {r0-r15}")
	TEST_P("stmdbls	r", 8, 16*4, "!, {r8-r15}")
	TEST_P("stmdb	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_P("stmdb	r", 13, 4, "!, {pc}")

	TEST_P("ldmdb	r", 0, 16*4, ", {r0}")
	TEST_BF_P("ldmdbge	r", 4, 16*4, ", {r0-r15}")
	TEST_BF_P("ldmdblt	r", 7, 16*4, "!, {r8-r15}")
	TEST_P("ldmdb	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_BF_P("ldmdb	r", 14, 16*4, "!, {pc}")

	TEST_P("stmib	r", 0, 16*4, ", {r0}")
	TEST_P("stmibgt	r", 4, 16*4, ", {r0-r15}")
	TEST_P("stmible	r", 8, 16*4, "!, {r8-r15}")
	TEST_P("stmib	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_P("stmib	r", 13, -4, "!, {pc}")

	TEST_P("ldmib	r", 0, 16*4, ", {r0}")
	TEST_BF_P("ldmibeq	r", 4, -4, ", {r0-r15}")
	TEST_BF_P("ldmibne	r", 7, 7*4, "!, {r8-r15}")
	TEST_P("ldmib	r", 12, 16*4, "!, {r1,r3,r5,r7,r8-r11,r14}")
	TEST_BF_P("ldmib	r", 14, 14*4, "!, {pc}")

	TEST_P("stmdb	r", 13, 16*4, "!, {r3-r12,lr}")
	TEST_P("stmdbeq	r", 13, 16*4, "!, {r3-r12}")
	TEST_P("stmdbne	r", 2, 16*4, ", {r3-r12,lr}")
	TEST_P("stmdb	r", 13, 16*4, "!, {r2-r12,lr}")
	TEST_P("stmdb	r", 0, 16*4, ", {r0-r12}")
	TEST_P("stmdb	r", 0, 16*4, ", {r0-r12,lr}")

	TEST_BF_P("ldmia	r", 13, 5*4, "!, {r3-r12,pc}")
	TEST_P("ldmiacc	r", 13, 5*4, "!, {r3-r12}")
	TEST_BF_P("ldmiacs	r", 2, 5*4, "!, {r3-r12,pc}")
	TEST_BF_P("ldmia	r", 13, 4*4, "!, {r2-r12,pc}")
	TEST_P("ldmia	r", 0, 16*4, ", {r0-r12}")
	TEST_P("ldmia	r", 0, 16*4, ", {r0-r12,lr}")

	TEST_BF("b	2f")
	TEST_BF("bl	2f")
	TEST_BB("b	2b")
	TEST_BB("bl	2b")

	TEST_BF("beq	2f")
	TEST_BF("bleq	2f")
	TEST_BB("bne	2b")
	TEST_BB("blne	2b")

	TEST_BF("bgt	2f")
	TEST_BF("blgt	2f")
	TEST_BB("blt	2b")
	TEST_BB("bllt	2b")

	TEST_GROUP("Supervisor Call, and coprocessor instructions")

	/* Coprocessor instructions (p0/c0 in the text; encoded as the kernel lists them) */
	TEST_UNSUPPORTED(__inst_arm(0xed8d0001) "	@ stc	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed0d0001) "	@ stc	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xedad0001) "	@ stc	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed2d0001) "	@ stc	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xecad0001) "	@ stc	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec2d0001) "	@ stc	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xec8d0001) "	@ stc	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xedcd0001) "	@ stcl	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed4d0001) "	@ stcl	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xeded0001) "	@ stcl	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed6d0001) "	@ stcl	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xeced0001) "	@ stcl	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec6d0001) "	@ stcl	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xeccd0001) "	@ stcl	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xed9d0001) "	@ ldc	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed1d0001) "	@ ldc	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xedbd0001) "	@ ldc	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed3d0001) "	@ ldc	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xecbd0001) "	@ ldc	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec3d0001) "	@ ldc	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xec9d0001) "	@ ldc	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xeddd0001) "	@ ldcl	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed5d0001) "	@ ldcl	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xedfd0001) "	@ ldcl	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed7d0001) "	@ ldcl	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xecfd0001) "	@ ldcl	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec7d0001) "	@ ldcl	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xecdd0001) "	@ ldcl	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xed8f0001) "	@ stc	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed0f0001) "	@ stc	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xedaf0001) "	@ stc	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed2f0001) "	@ stc	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xecaf0001) "	@ stc	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec2f0001) "	@ stc	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xec8f0001) "	@ stc	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xedcf0001) "	@ stcl	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed4f0001) "	@ stcl	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xedef0001) "	@ stcl	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed6f0001) "	@ stcl	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xecef0001) "	@ stcl	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec6f0001) "	@ stcl	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xeccf0001) "	@ stcl	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xed9f0001) "	@ ldc	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed1f0001) "	@ ldc	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xedbf0001) "	@ ldc	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed3f0001) "	@ ldc	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xecbf0001) "	@ ldc	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec3f0001) "	@ ldc	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xec9f0001) "	@ ldc	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xeddf0001) "	@ ldcl	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xed5f0001) "	@ ldcl	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xedff0001) "	@ ldcl	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xed7f0001) "	@ ldcl	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xecff0001) "	@ ldcl	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xec7f0001) "	@ ldcl	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xecdf0001) "	@ ldcl	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xec4e00f0) "	@ mcrr	p0, #15, r0, r14, c0")
	TEST_UNSUPPORTED(__inst_arm(0xec40ef0f) "	@ mcrr	p15, #0, r14, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xec4f00f0) "	@ mcrr	p0, #15, r0, r15, c0")
	TEST_UNSUPPORTED(__inst_arm(0xec40ff0f) "	@ mcrr	p15, #0, r15, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xec5e00f0) "	@ mrrc	p0, #15, r0, r14, c0")
	TEST_UNSUPPORTED(__inst_arm(0xec50ef0f) "	@ mrrc	p15, #0, r14, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xec5f00f0) "	@ mrrc	p0, #15, r0, r15, c0")
	TEST_UNSUPPORTED(__inst_arm(0xec50ff0f) "	@ mrrc	p15, #0, r15, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xeeffffef) "	@ cdp	p15, #15, c15, c15, c15, #7")
	TEST_UNSUPPORTED(__inst_arm(0xee000000) "	@ cdp	p0, #0, c0, c0, c0, #0")
	TEST_UNSUPPORTED(__inst_arm(0xeeefffff) "	@ mcr	p15, #7, r15, c15, c15, #7")
	TEST_UNSUPPORTED(__inst_arm(0xee000010) "	@ mcr	p0, #0, r0, c0, c0, #0")
	TEST_UNSUPPORTED(__inst_arm(0xeeffffff) "	@ mrc	p15, #7, r15, c15, c15, #7")
	TEST_UNSUPPORTED(__inst_arm(0xee100010) "	@ mrc	p0, #0, r0, c0, c0, #0")
	TEST_UNSUPPORTED("svc	0")
	TEST_UNSUPPORTED("svc	0xffffff")
	TEST_UNSUPPORTED("svc	0")

	TEST_GROUP("Unconditional instruction")

	TEST_UNSUPPORTED("srsda	sp, 0x13")
	TEST_UNSUPPORTED("srsdb	sp, 0x13")
	TEST_UNSUPPORTED("srsia	sp, 0x13")
	TEST_UNSUPPORTED("srsib	sp, 0x13")
	TEST_UNSUPPORTED("srsda	sp!, 0x13")
	TEST_UNSUPPORTED("srsdb	sp!, 0x13")
	TEST_UNSUPPORTED("srsia	sp!, 0x13")
	TEST_UNSUPPORTED("srsib	sp!, 0x13")

	TEST_UNSUPPORTED("rfeda	sp")
	TEST_UNSUPPORTED("rfedb	sp")
	TEST_UNSUPPORTED("rfeia	sp")
	TEST_UNSUPPORTED("rfeib	sp")
	TEST_UNSUPPORTED("rfeda	sp!")
	TEST_UNSUPPORTED("rfedb	sp!")
	TEST_UNSUPPORTED("rfeia	sp!")
	TEST_UNSUPPORTED("rfeib	sp!")
	TEST_UNSUPPORTED(__inst_arm(0xf81d0a00) "	@ rfeda	pc")
	TEST_UNSUPPORTED(__inst_arm(0xf91d0a00) "	@ rfedb	pc")
	TEST_UNSUPPORTED(__inst_arm(0xf89d0a00) "	@ rfeia	pc")
	TEST_UNSUPPORTED(__inst_arm(0xf99d0a00) "	@ rfeib	pc")
	TEST_UNSUPPORTED(__inst_arm(0xf83d0a00) "	@ rfeda	pc!")
	TEST_UNSUPPORTED(__inst_arm(0xf93d0a00) "	@ rfedb	pc!")
	TEST_UNSUPPORTED(__inst_arm(0xf8bd0a00) "	@ rfeia	pc!")
	TEST_UNSUPPORTED(__inst_arm(0xf9bd0a00) "	@ rfeib	pc!")

	TEST_X(	"blx	__dummy_thumb_subroutine_even",
		".thumb				\n\t"
		".space 4			\n\t"
		".type __dummy_thumb_subroutine_even, %%function \n\t"
		"__dummy_thumb_subroutine_even:	\n\t"
		"mov	r0, pc			\n\t"
		"bx	lr			\n\t"
		".arm				\n\t"
	)
	TEST(	"blx	__dummy_thumb_subroutine_even")

	TEST_X(	"blx	__dummy_thumb_subroutine_odd",
		".thumb				\n\t"
		".space 2			\n\t"
		".type __dummy_thumb_subroutine_odd, %%function	\n\t"
		"__dummy_thumb_subroutine_odd:	\n\t"
		"mov	r0, pc			\n\t"
		"bx	lr			\n\t"
		".arm				\n\t"
	)
	TEST(	"blx	__dummy_thumb_subroutine_odd")

	TEST_UNSUPPORTED(__inst_arm(0xfd8d0001) "	@ stc2	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd0d0001) "	@ stc2	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfdad0001) "	@ stc2	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd2d0001) "	@ stc2	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfcad0001) "	@ stc2	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc2d0001) "	@ stc2	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfc8d0001) "	@ stc2	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfdcd0001) "	@ stc2l	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd4d0001) "	@ stc2l	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfded0001) "	@ stc2l	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd6d0001) "	@ stc2l	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfced0001) "	@ stc2l	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc6d0001) "	@ stc2l	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfccd0001) "	@ stc2l	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfd9d0001) "	@ ldc2	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd1d0001) "	@ ldc2	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfdbd0001) "	@ ldc2	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd3d0001) "	@ ldc2	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfcbd0001) "	@ ldc2	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc3d0001) "	@ ldc2	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfc9d0001) "	@ ldc2	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfddd0001) "	@ ldc2l	p0, c0, [r13, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd5d0001) "	@ ldc2l	p0, c0, [r13, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfdfd0001) "	@ ldc2l	p0, c0, [r13, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd7d0001) "	@ ldc2l	p0, c0, [r13, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfcfd0001) "	@ ldc2l	p0, c0, [r13], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc7d0001) "	@ ldc2l	p0, c0, [r13], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfcdd0001) "	@ ldc2l	p0, c0, [r13], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfd8f0001) "	@ stc2	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd0f0001) "	@ stc2	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfdaf0001) "	@ stc2	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd2f0001) "	@ stc2	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfcaf0001) "	@ stc2	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc2f0001) "	@ stc2	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfc8f0001) "	@ stc2	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfdcf0001) "	@ stc2l	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd4f0001) "	@ stc2l	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfdef0001) "	@ stc2l	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd6f0001) "	@ stc2l	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfcef0001) "	@ stc2l	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc6f0001) "	@ stc2l	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfccf0001) "	@ stc2l	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfd9f0001) "	@ ldc2	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd1f0001) "	@ ldc2	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfdbf0001) "	@ ldc2	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd3f0001) "	@ ldc2	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfcbf0001) "	@ ldc2	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc3f0001) "	@ ldc2	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfc9f0001) "	@ ldc2	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfddf0001) "	@ ldc2l	p0, c0, [r15, #4]")
	TEST_UNSUPPORTED(__inst_arm(0xfd5f0001) "	@ ldc2l	p0, c0, [r15, #-4]")
	TEST_UNSUPPORTED(__inst_arm(0xfdff0001) "	@ ldc2l	p0, c0, [r15, #4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfd7f0001) "	@ ldc2l	p0, c0, [r15, #-4]!")
	TEST_UNSUPPORTED(__inst_arm(0xfcff0001) "	@ ldc2l	p0, c0, [r15], #4")
	TEST_UNSUPPORTED(__inst_arm(0xfc7f0001) "	@ ldc2l	p0, c0, [r15], #-4")
	TEST_UNSUPPORTED(__inst_arm(0xfcdf0001) "	@ ldc2l	p0, c0, [r15], {1}")
	TEST_UNSUPPORTED(__inst_arm(0xfc4e00f0) "	@ mcrr2	p0, #15, r0, r14, c0")
	TEST_UNSUPPORTED(__inst_arm(0xfc40ef0f) "	@ mcrr2	p15, #0, r14, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xfc4f00f0) "	@ mcrr2	p0, #15, r0, r15, c0")
	TEST_UNSUPPORTED(__inst_arm(0xfc40ff0f) "	@ mcrr2	p15, #0, r15, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xfc5e00f0) "	@ mrrc2	p0, #15, r0, r14, c0")
	TEST_UNSUPPORTED(__inst_arm(0xfc50ef0f) "	@ mrrc2	p15, #0, r14, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xfc5f00f0) "	@ mrrc2	p0, #15, r0, r15, c0")
	TEST_UNSUPPORTED(__inst_arm(0xfc50ff0f) "	@ mrrc2	p15, #0, r15, r0, c15")
	TEST_UNSUPPORTED(__inst_arm(0xfeffffef) "	@ cdp2	p15, #15, c15, c15, c15, #7")
	TEST_UNSUPPORTED(__inst_arm(0xfe000000) "	@ cdp2	p0, #0, c0, c0, c0, #0")
	TEST_UNSUPPORTED(__inst_arm(0xfeefffff) "	@ mcr2	p15, #7, r15, c15, c15, #7")
	TEST_UNSUPPORTED(__inst_arm(0xfe000010) "	@ mcr2	p0, #0, r0, c0, c0, #0")
	TEST_UNSUPPORTED(__inst_arm(0xfeffffff) "	@ mrc2	p15, #7, r15, c15, c15, #7")
	TEST_UNSUPPORTED(__inst_arm(0xfe100010) "	@ mrc2	p0, #0, r0, c0, c0, #0")

	TEST_GROUP("Miscellaneous instructions, memory hints, and Advanced SIMD instructions")

	TEST_UNSUPPORTED("cps	0x13")
	TEST_UNSUPPORTED("cpsie	i")
	TEST_UNSUPPORTED("cpsid	i")
	TEST_UNSUPPORTED("cpsie	i,0x13")
	TEST_UNSUPPORTED("cpsid	i,0x13")
	TEST_UNSUPPORTED("setend	le")
	TEST_UNSUPPORTED("setend	be")

	TEST_P("pli	[r", 0, 0b, ", #16]")
	TEST("pli	[pc, #0]")
	TEST_RR("pli	[r", 12, 0b, ", r", 0, 16, "]")
	TEST_RR("pli	[r", 0, 0b, ", -r", 12, 16, ", lsl #4]")

	TEST_P("pld	[r", 0, 32, ", #-16]")
	TEST("pld	[pc, #0]")
	TEST_PR("pld	[r", 7, 24, ", r", 0, 16, "]")
	TEST_PR("pld	[r", 8, 24, ", -r", 12, 16, ", lsl #4]")

	TEST_SUPPORTED(__inst_arm(0xf590f000) "	@ pldw [r0, #0]")
	TEST_SUPPORTED(__inst_arm(0xf797f000) "	@ pldw	[r7, r0]")
	TEST_SUPPORTED(__inst_arm(0xf798f18c) "	@ pldw	[r8, r12, lsl #3]")

	TEST_UNSUPPORTED("clrex")
	TEST_UNSUPPORTED("dsb")
	TEST_UNSUPPORTED("dmb")
	TEST_UNSUPPORTED("isb")
}
