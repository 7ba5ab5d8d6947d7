// SPDX-License-Identifier: GPL-2.0
/*
 * arch/powerpc/lib/test_emulate_step.c (Linux v5.10), ported to 32-bit
 * PowerPC as a kisim guest module (docs/selftest/emulate_step.md).
 *
 * Every subtest of the kernel's file is one KTAP line, in the kernel's
 * order. The load/store subtests that run on 32-bit (lwz, lwzx) check
 * emulate_step() the kernel's way (stepped == 1 and the loaded value);
 * the compute subtests (nop, add, add., addc, addc.) compare the emulated
 * registers with the instruction executed natively, GPRs, LR, XER and CR,
 * honouring the kernel's IGNORE_CCR flags. The kernel executes each
 * instruction by patching it into one exec_instr stub; here each
 * instruction has its own stub (exec_<name> below), which holds the same
 * word (PPC_RAW_* of arch/powerpc/include/asm/ppc-opcode.h) as the one
 * given to emulate_step().
 *
 * kisim adds one check per subtest that runs: the instruction executed
 * under a kprobe (registered from here, on the stub's instruction) must
 * leave exactly the registers the unprobed execution leaves.
 *
 * Subtests that do not apply to 32-bit print "# SKIP" with the kernel's
 * reason: 64-bit instructions (ld, std, ldarx/stdcx., divde[.],
 * divdeu[.]; v5.10 builds the file for PPC64 only:
 * obj64-$(CONFIG_KPROBES_SANITY_TEST) in arch/powerpc/lib/Makefile),
 * prefixed instructions (the kernel's own "!CPU_FTR_ARCH_31", and
 * "!CPU_FTR" for paddi), and the
 * FPU, AltiVec and VSX subtests (the kernel's own "CONFIG_PPC_FPU is not
 * set", ... : kisim's PowerPC has none of them).
 */
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/kernel.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define RESULT_REGS	(32 + 3)	/* gpr[], link, xer, ccr: what the kernel compares */
#define IGNORE_CCR	1		/* the kernel's IGNORE_CCR flag */

/* The encodings (asm/ppc-opcode.h): opcode, then RT/RS, RA, RB or D. */
#define PPC_INST_NOP		0x60000000
#define PPC_RAW_LWZ(t, a, i)	(0x80000000 | ((t) << 21) | ((a) << 16) | ((i) & 0xffff))
#define PPC_RAW_X(op, t, a, b)	((op) | ((t) << 21) | ((a) << 16) | ((b) << 11))
#define PPC_RAW_LWZX(t, a, b)	PPC_RAW_X(0x7c00002e, t, a, b)
#define PPC_RAW_ADD(t, a, b)	PPC_RAW_X(0x7c000214, t, a, b)
#define PPC_RAW_ADD_DOT(t, a, b)	PPC_RAW_X(0x7c000215, t, a, b)
#define PPC_RAW_ADDC(t, a, b)	PPC_RAW_X(0x7c000014, t, a, b)
#define PPC_RAW_ADDC_DOT(t, a, b)	PPC_RAW_X(0x7c000015, t, a, b)

/*
 * int exec_<name>(struct pt_regs *regs): load r0, r3-r12, r14-r31, XER and
 * CR from regs, run the one instruction ``insn`` (a constant expression the
 * assembler evaluates) at exec_<name>_insn, store them
 * back (test_emulate_step_exec_instr.S does this for its patched nop).
 * r1 (the stack), r2 and r13 (the ABI's reserved registers) are not used
 * by any subtest and are left alone.
 */
#define EXEC_STUB(name, insn)						\
	__asm__("	.text\n"					\
		"	.globl	exec_" #name "\n"			\
		"	.type	exec_" #name ", @function\n"		\
		"exec_" #name ":\n"					\
		"	stwu	1, -96(1)\n"				\
		"	mflr	0\n"					\
		"	stw	0, 100(1)\n"				\
		"	stmw	14, 16(1)\n"				\
		"	stw	3, 8(1)\n"				\
		"	lwz	0, 148(3)\n"				\
		"	mtxer	0\n"					\
		"	lwz	0, 152(3)\n"				\
		"	mtcr	0\n"					\
		"	lwz	0, 0(3)\n"				\
		"	lwz	4, 16(3)\n"				\
		"	lwz	5, 20(3)\n"				\
		"	lwz	6, 24(3)\n"				\
		"	lwz	7, 28(3)\n"				\
		"	lwz	8, 32(3)\n"				\
		"	lwz	9, 36(3)\n"				\
		"	lwz	10, 40(3)\n"				\
		"	lwz	11, 44(3)\n"				\
		"	lwz	12, 48(3)\n"				\
		"	lmw	14, 56(3)\n"				\
		"	lwz	3, 12(3)\n"				\
		"	.globl	exec_" #name "_insn\n"			\
		"exec_" #name "_insn:\n"				\
		"	.long	" __stringify(insn) "\n"		\
		"	stw	31, 12(1)\n"				\
		"	lwz	31, 8(1)\n"				\
		"	stw	0, 0(31)\n"				\
		"	stw	3, 12(31)\n"				\
		"	stw	4, 16(31)\n"				\
		"	stw	5, 20(31)\n"				\
		"	stw	6, 24(31)\n"				\
		"	stw	7, 28(31)\n"				\
		"	stw	8, 32(31)\n"				\
		"	stw	9, 36(31)\n"				\
		"	stw	10, 40(31)\n"				\
		"	stw	11, 44(31)\n"				\
		"	stw	12, 48(31)\n"				\
		"	stmw	14, 56(31)\n"				\
		"	lwz	3, 12(1)\n"				\
		"	stw	3, 124(31)\n"				\
		"	mfxer	3\n"					\
		"	stw	3, 148(31)\n"				\
		"	mfcr	3\n"					\
		"	stw	3, 152(31)\n"				\
		"	lmw	14, 16(1)\n"				\
		"	lwz	0, 100(1)\n"				\
		"	mtlr	0\n"					\
		"	addi	1, 1, 96\n"				\
		"	li	3, 0\n"					\
		"	blr\n"						\
		"	.size	exec_" #name ", . - exec_" #name "\n");	\
	int exec_##name(struct pt_regs *regs);				\
	extern u32 exec_##name##_insn[]

#define LWZ		PPC_RAW_LWZ(5, 3, 0)		/* lwz r5, 0(r3) */
#define LWZX		PPC_RAW_LWZX(5, 3, 4)		/* lwzx r5, r3, r4 */
#define ADD		PPC_RAW_ADD(20, 21, 22)
#define ADD_DOT		PPC_RAW_ADD_DOT(20, 21, 22)
#define ADDC		PPC_RAW_ADDC(20, 21, 22)
#define ADDC_DOT	PPC_RAW_ADDC_DOT(20, 21, 22)

EXEC_STUB(lwz, LWZ);
EXEC_STUB(lwzx, LWZX);
EXEC_STUB(nop, PPC_INST_NOP);
EXEC_STUB(add, ADD);
EXEC_STUB(add_dot, ADD_DOT);
EXEC_STUB(addc, ADDC);
EXEC_STUB(addc_dot, ADDC_DOT);

typedef int (*exec_fn)(struct pt_regs *regs);

static int case_number;

static void ktap(int ok, const char *name, const char *detail)
{
	case_number++;
	printk("%s %d %s%s%s\n", ok ? "ok" : "not ok", case_number, name,
	       detail[0] ? " # " : "", detail);
}

static void skip(const char *name, const char *reason)
{
	case_number++;
	printk("ok %d %s # SKIP %s\n", case_number, name, reason);
}

static unsigned long result_reg(const struct pt_regs *regs, int i)
{
	return i < 32 ? regs->gpr[i] : i == 32 ? regs->link : i == 33 ? regs->xer : regs->ccr;
}

static const char *result_name(int i)
{
	static const char *const extra[] = { "LR", "XER", "CR" };
	static char gpr[8];

	if (i >= 32)
		return extra[i - 32];
	snprintf(gpr, sizeof(gpr), "GPR%d", i);
	return gpr;
}

/* The first register that differs (CR too unless ignore_ccr), as "GPR20 exp ... got ...". */
static int differ(const struct pt_regs *exp, const struct pt_regs *got, int ignore_ccr,
		  char *why, size_t size)
{
	int i;

	for (i = 0; i < RESULT_REGS; i++) {
		if (i == 34 && ignore_ccr)
			continue;
		if (result_reg(exp, i) != result_reg(got, i)) {
			snprintf(why, size, "%s mismatch, exp = 0x%08lx, got = 0x%08lx",
				 result_name(i), result_reg(exp, i), result_reg(got, i));
			return 1;
		}
	}
	return 0;
}

static int probe_hits;

static int count_hit(struct kprobe *p, struct pt_regs *regs)
{
	probe_hits++;
	return 0;
}

/* kisim's check: the instruction under a kprobe leaves what it leaves unprobed. */
static int probed_differs(exec_fn exec, u32 *insn, const struct pt_regs *init,
			  char *why, size_t size)
{
	struct pt_regs unprobed = *init, probed = *init;
	struct kprobe kp = { .addr = (kprobe_opcode_t *)insn, .pre_handler = count_hit };
	int ret;

	exec(&unprobed);
	ret = register_kprobe(&kp);
	if (ret) {
		snprintf(why, size, "register_kprobe: %d", ret);
		return 1;
	}
	probe_hits = 0;
	exec(&probed);
	unregister_kprobe(&kp);
	if (probe_hits != 1) {
		snprintf(why, size, "probe hit %d times", probe_hits);
		return 1;
	}
	if (differ(&unprobed, &probed, 0, why, size)) {
		size_t len = strlen(why);

		snprintf(why + len, size - len, " (probed)");
		return 1;
	}
	return 0;
}

static void init_pt_regs(struct pt_regs *regs)
{
	memset(regs, 0, sizeof(*regs));
	__asm__ volatile("mfmsr %0" : "=r"(regs->msr));
}

/* test_lwz / test_lwzx: stepped == 1 and the value loaded. */
static void test_load(const char *name, u32 instr, exec_fn exec, u32 *insn,
		      struct pt_regs *regs, unsigned long want)
{
	struct pt_regs got = *regs;
	char why[96] = "";
	int stepped = emulate_step(&got, instr);

	if (stepped != 1 || got.gpr[5] != want)
		snprintf(why, sizeof(why), "stepped %d, r5 = 0x%08lx, want 0x%08lx",
			 stepped, got.gpr[5], want);
	else
		probed_differs(exec, insn, regs, why, sizeof(why));
	ktap(!why[0], name, why);
}

static const char *const no64 = "64-bit instruction (v5.10 builds this test for PPC64 only)";

static void run_tests_load_store(void)
{
	static const char *const no31 = "!CPU_FTR_ARCH_31";
	static const char *const nofpu = "CONFIG_PPC_FPU is not set";
	struct pt_regs regs;
	unsigned int a = 0x4545, ax[3] = { 0x0, 0x0, 0x1234 };

	skip("ld", no64);
	skip("pld", no31);
	init_pt_regs(&regs);
	regs.gpr[3] = (unsigned long)&a;
	test_load("lwz", LWZ, exec_lwz, exec_lwz_insn, &regs, a);
	skip("plwz", no31);
	init_pt_regs(&regs);
	regs.gpr[3] = (unsigned long)ax;
	regs.gpr[4] = 8;
	regs.gpr[5] = 0x8765;
	test_load("lwzx", LWZX, exec_lwzx, exec_lwzx_insn, &regs, ax[2]);
	skip("std", no64);
	skip("pstd", no31);
	skip("ldarx / stdcx.", no64);
	skip("lfsx", nofpu);
	skip("stfsx", nofpu);
	skip("plfs", nofpu);
	skip("pstfs", nofpu);
	skip("lfdx", nofpu);
	skip("stfdx", nofpu);
	skip("plfd", nofpu);
	skip("pstfd", nofpu);
	skip("lvx", "CONFIG_ALTIVEC is not set");
	skip("stvx", "CONFIG_ALTIVEC is not set");
	skip("lxvd2x", "CONFIG_VSX is not set");
	skip("stxvd2x", "CONFIG_VSX is not set");
}

struct compute_subtest {
	const char *descr;
	int flags;
	unsigned long ra, rb;		/* gpr[21], gpr[22] (nop: gpr[0]) */
};

struct compute_test {
	const char *mnemonic;
	u32 instr;			/* what emulate_step() is given */
	exec_fn exec;
	u32 *insn;			/* the same word in exec's text */
	const struct compute_subtest *subtests;
	int count;
};

/* The kernel's operand pairs for add/add./addc/addc. (LONG = INT on 32-bit). */
#define OPERANDS(ccr_min, ccr_max)						\
	{ "RA = LONG_MIN, RB = LONG_MIN", ccr_min, S32_MIN, S32_MIN },		\
	{ "RA = LONG_MIN, RB = LONG_MAX", 0, S32_MIN, S32_MAX },		\
	{ "RA = LONG_MAX, RB = LONG_MAX", ccr_max, S32_MAX, S32_MAX },		\
	{ "RA = ULONG_MAX, RB = ULONG_MAX", 0, U32_MAX, U32_MAX },		\
	{ "RA = ULONG_MAX, RB = 0x1", 0, U32_MAX, 0x1 },			\
	{ "RA = INT_MIN, RB = INT_MIN", 0, S32_MIN, S32_MIN },			\
	{ "RA = INT_MIN, RB = INT_MAX", 0, S32_MIN, S32_MAX },			\
	{ "RA = INT_MAX, RB = INT_MAX", 0, S32_MAX, S32_MAX },			\
	{ "RA = UINT_MAX, RB = UINT_MAX", 0, U32_MAX, U32_MAX },		\
	{ "RA = UINT_MAX, RB = 0x1", 0, U32_MAX, 0x1 }
#define LONG_INT_MIN								\
	{ "RA = LONG_MIN | INT_MIN, RB = LONG_MIN | INT_MIN", 0, S32_MIN, S32_MIN }

static const struct compute_subtest nop_tests[] = { { "R0 = LONG_MAX", 0, S32_MAX, 0 } };
static const struct compute_subtest add_tests[] = { OPERANDS(0, 0) };
static const struct compute_subtest add_dot_tests[] = { OPERANDS(IGNORE_CCR, IGNORE_CCR) };
static const struct compute_subtest addc_tests[] = { OPERANDS(0, 0), LONG_INT_MIN };
static const struct compute_subtest addc_dot_tests[] = {
	OPERANDS(IGNORE_CCR, IGNORE_CCR), LONG_INT_MIN
};

#define COMPUTE(m, instr, name, tests)					\
	{ m, instr, exec_##name, exec_##name##_insn, tests, ARRAY_SIZE(tests) }
static const struct compute_test compute_tests[] = {
	COMPUTE("nop", PPC_INST_NOP, nop, nop_tests),
	COMPUTE("add", ADD, add, add_tests),
	COMPUTE("add.", ADD_DOT, add_dot, add_dot_tests),
	COMPUTE("addc", ADDC, addc, addc_tests),
	COMPUTE("addc.", ADDC_DOT, addc_dot, addc_dot_tests),
};

/* run_tests_compute(): emulated (got) against executed (exp), then probed. */
static void run_tests_compute(void)
{
	const struct compute_test *test;
	const struct compute_subtest *sub;
	struct pt_regs init, exp, got;
	char name[80], why[96];
	unsigned int i;
	int j;

	for (i = 0; i < ARRAY_SIZE(compute_tests); i++) {
		test = &compute_tests[i];
		for (j = 0; j < test->count; j++) {
			sub = &test->subtests[j];
			memset(&init, 0, sizeof(init));
			if (test->exec == exec_nop) {
				init.gpr[0] = sub->ra;
			} else {
				init.gpr[21] = sub->ra;
				init.gpr[22] = sub->rb;
			}
			__asm__ volatile("mfmsr %0" : "=r"(init.msr));	/* MSR_KERNEL */
			exp = got = init;
			why[0] = '\0';
			snprintf(name, sizeof(name), "%s: %s", test->mnemonic, sub->descr);
			if (emulate_step(&got, test->instr) != 1)
				snprintf(why, sizeof(why), "emulation failed, instruction = 0x%08x",
					 test->instr);
			else if (test->exec(&exp))
				snprintf(why, sizeof(why), "execution failed");
			else if (!differ(&exp, &got, sub->flags & IGNORE_CCR, why, sizeof(why)))
				probed_differs(test->exec, test->insn, &init, why, sizeof(why));
			ktap(!why[0], name, why);
		}
	}
}

/*
 * The kernel's compute tests after addc.: divde, divde., divdeu, divdeu.
 * (3, 3, 5 and 5 subtests over these operand pairs; divde[.] takes the first
 * three) are Divide Doubleword Extended, 64-bit only: one refused line per
 * subtest. paddi (Power ISA 3.1) is one line, as the kernel prints it when
 * its compute_test's cpu_feature CPU_FTR_ARCH_31 is absent.
 */
static void skip_tests_compute_64(void)
{
	static const char *const mnemonics[] = { "divde", "divde.", "divdeu", "divdeu." };
	static const char *const operands[] = {
		"RA = LONG_MIN, RB = LONG_MIN", "RA = 1L, RB = 0", "RA = LONG_MIN, RB = LONG_MAX",
		"RA = LONG_MAX - 1, RB = LONG_MAX", "RA = LONG_MIN + 1, RB = LONG_MIN",
	};
	char name[80];
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(mnemonics); i++) {
		for (j = 0; j < (i < 2 ? 3 : ARRAY_SIZE(operands)); j++) {
			snprintf(name, sizeof(name), "%s: %s", mnemonics[i], operands[j]);
			skip(name, no64);
		}
	}
	skip("paddi", "!CPU_FTR");
}

static int __init test_emulate_step(void)
{
	printk("KTAP version 1\n");
	printk("1..80\n");
	run_tests_load_store();
	run_tests_compute();
	skip_tests_compute_64();
	return 0;
}
module_init(test_emulate_step);
