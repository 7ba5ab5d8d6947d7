/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ARM kprobes test harness: a port of Linux v5.10
 * arch/arm/probes/kprobes/test-core.c and test-core.h, shared by the
 * guest modules test_arm.c (an A32 kernel's cases, test-arm.c) and
 * test_thumb.c (a CONFIG_THUMB2_KERNEL kernel's, test-thumb.c). Each of
 * them includes this file once and defines TEST_ISA ("32" or "16", the
 * instruction set its cases are written in) and its case functions; this
 * file holds the records, the case macros, the probes and module_init.
 *
 * module_init runs every case, as the kernel's test module does at load
 * time, and prints one KTAP line per case (docs/selftest/test-arm.md,
 * test-thumb.md): "ok", "not ok ... # why", or "ok ... # SKIP refused:
 * <reason>" where the case is a TEST_UNSUPPORTED one and register_kprobe
 * refused it, as the kernel's decoder does (the reason: kprobe_last_refusal,
 * the host's).
 *
 * How a case runs (test-core.c's "TESTING METHODOLOGY"): __test_case_start
 * takes the case's inline data (title, arguments, end record) and jumps to
 * its code; probes on the nop before the instruction ("50:"), after it
 * and at the branch target ("2:") load a register context and record the
 * result; each flag scenario runs once without a probe on the instruction
 * (the reference) and once with one, and the two must agree;
 * __test_case_end_<ISA> decides whether to run the code again.
 */
#ifndef _KISIM_ARM_TEST_CORE_H
#define _KISIM_ARM_TEST_CORE_H

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>

#define VERBOSE 0 /* Set to '1' for more logging of test cases */

/* The instruction set the kernel (and so the harness) is built in. */
#ifdef CONFIG_THUMB2_KERNEL
#define NORMAL_ISA "16"
#else
#define NORMAL_ISA "32"
#endif

/* Flags used in kprobe_test_flags */
#define TEST_FLAG_NO_ITBLOCK	(1<<0)
#define TEST_FLAG_FULL_ITBLOCK	(1<<1)
#define TEST_FLAG_NARROW_INSTR	(1<<2)

/* Set by the Thumb cases (test-thumb.c); 0 for ARM ones. */
static int kprobe_test_flags;
static int kprobe_test_cc_position;

#define TEST_MEMORY_SIZE	256

#define ARG_TYPE_END		0
#define ARG_TYPE_REG		1
#define ARG_TYPE_PTR		2
#define ARG_TYPE_MEM		3
#define ARG_TYPE_REG_MASKED	4

#define ARG_FLAG_UNSUPPORTED	0x01
#define ARG_FLAG_SUPPORTED	0x02
#define ARG_FLAG_THUMB		0x10	/* Must be 16 so TEST_ISA can be used */
#define ARG_FLAG_ARM		0x20	/* Must be 32 so TEST_ISA can be used */

/* asm/probes.h: the most stack a probed store may use below sp. */
#define MAX_STACK_SIZE		64

/* Values used by the cases (test-core.h). */
#define N(val)	(val ^ 0xffffffff)
#define VAL1	0x12345678
#define VAL2	N(VAL1)
#define VAL3	0xa5f801
#define VAL4	N(VAL3)
#define VALM	0x456789ab
#define VALR	0xdeaddead
#define HH1	0x0123fecb
#define HH2	0xa9874567

#define PSR_I_BIT	0x00000080
#define PSR_F_BIT	0x00000040
#define PSR_A_BIT	0x00000100
/*
 * test-core.h: CPSR.A and CPSR.F are not the kernel's to keep (imprecise
 * aborts, Security Extensions), so the results ignore them.
 */
#define PSR_IGNORE_BITS	(PSR_A_BIT | PSR_F_BIT)

/*
 * Instructions given by their encoding (asm/opcodes.h __inst_arm,
 * __inst_thumb16, __inst_thumb32), emitted as code: a 32-bit Thumb
 * encoding is first halfword << 16 | second, as the kernel writes it.
 */
#define __inst_arm(x)		".inst " __stringify(x) "\n\t"
#define __inst_thumb16(x)	".inst.n " __stringify(x) "\n\t"
#define __inst_thumb32(x)	".inst.w " __stringify(x) "\n\t"

#if VERBOSE
#define verbose(fmt, ...) pr_info(fmt, ##__VA_ARGS__)
#else
#define verbose(fmt, ...) no_printk(fmt, ##__VA_ARGS__)
#endif

/*
 * Building blocks of a case (test-core.h). A record is three words (type,
 * register or memory index, value); the end record holds the flags
 * (TEST_ISA, so ARG_FLAG_THUMB or ARG_FLAG_ARM, and the case's own) and the
 * code addresses "50:" (the nop before the instruction), "2:" (a branch
 * target) and "99:" (the end), then the code follows in TEST_ISA. On a
 * Thumb-2 kernel the call is word-aligned, so the code after the data is
 * too: the kernel's "nop  To align 1f" puts an instruction that must be
 * word-aligned (bx pc, a return to ARM code) at a word.
 */
#ifdef CONFIG_THUMB2_KERNEL
#define TEST_CASE_ALIGN	".align 2\n\t"
#else
#define TEST_CASE_ALIGN	""
#endif

#define TESTCASE_START(title)						\
	__asm__ __volatile__ (						\
	".syntax unified\n\t"						\
	TEST_CASE_ALIGN							\
	"bl	__test_case_start\n\t"					\
	".pushsection .rodata\n"					\
	"10:\n\t"							\
	".ascii " #title "\n\t"					\
	".byte	0\n\t"							\
	".popsection\n\t"						\
	".word	10b\n\t"

#define _TEST_ARG(type, reg, val) ".word " #type ", " #reg ", " #val "\n\t"
#define TEST_ARG_REG(reg, val)	_TEST_ARG(1, reg, val)
#define TEST_ARG_PTR(reg, val)	_TEST_ARG(2, reg, val)
#define TEST_ARG_MEM(index, val) _TEST_ARG(3, index, val)
#define TEST_ARG_REG_MASKED(reg, val) _TEST_ARG(4, reg, val)
#define TEST_ARG_END(flags)						\
	".word 0, " TEST_ISA flags ", 50f, 2f, 99f\n\t"			\
	".code " TEST_ISA "\n0:\n\t"

#define TEST_INSTRUCTION(instruction)					\
	"50:	nop\n\t"						\
	"1:	" instruction "\n\t"					\
	"	nop\n\t"

#define TEST_BRANCH_F(instruction)					\
	TEST_INSTRUCTION(instruction)					\
	"	b	99f\n\t"					\
	"2:	nop\n\t"

#define TEST_BRANCH_B(instruction)					\
	"	b	50f\n\t"					\
	"	b	99f\n\t"					\
	"2:	nop\n\t"						\
	"	b	99f\n\t"					\
	TEST_INSTRUCTION(instruction)

#define TEST_BRANCH_FX(instruction, codex)				\
	TEST_INSTRUCTION(instruction)					\
	"	b	99f\n\t"					\
	codex "\n\t"							\
	"	b	99f\n\t"					\
	"2:	nop\n\t"

#define TEST_BRANCH_BX(instruction, codex)				\
	"	b	50f\n\t"					\
	"	b	99f\n\t"					\
	"2:	nop\n\t"						\
	"	b	99f\n\t"					\
	codex "\n\t"							\
	TEST_INSTRUCTION(instruction)

#define TESTCASE_END							\
	"2:\n"								\
	"99:	bl	__test_case_end_" TEST_ISA "\n\t"		\
	".code " NORMAL_ISA "\n\t"					\
	: : : "r0", "r1", "r2", "r3", "ip", "lr", "memory", "cc");

#define TEST_GROUP(title)	printk("# " title "\n");

/*
 * The cases (test-core.h): TEST_{R,P}* take register and pointer
 * arguments, TEST_BF_* and TEST_BB_* branch forwards and backwards,
 * TEST_*X place extra code after the case; TEST_SUPPORTED and
 * TEST_UNSUPPORTED only register the probe.
 */
#define TEST(code)							\
	TESTCASE_START(code) TEST_ARG_END("") TEST_INSTRUCTION(code) TESTCASE_END
#define TEST_UNSUPPORTED(code)						\
	TESTCASE_START(code) TEST_ARG_END("|" __stringify(ARG_FLAG_UNSUPPORTED)) \
	TEST_INSTRUCTION(code) TESTCASE_END
#define TEST_SUPPORTED(code)						\
	TESTCASE_START(code) TEST_ARG_END("|" __stringify(ARG_FLAG_SUPPORTED)) \
	TEST_INSTRUCTION(code) TESTCASE_END

#define TEST_R(c1, r1, v1, c2)						\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_REG(r1, v1) TEST_ARG_END("")	\
	TEST_INSTRUCTION(c1 #r1 c2) TESTCASE_END
#define TEST_RR(c1, r1, v1, c2, r2, v2, c3)				\
	TESTCASE_START(c1 #r1 c2 #r2 c3) TEST_ARG_REG(r1, v1) TEST_ARG_REG(r2, v2) \
	TEST_ARG_END("") TEST_INSTRUCTION(c1 #r1 c2 #r2 c3) TESTCASE_END
#define TEST_RRR(c1, r1, v1, c2, r2, v2, c3, r3, v3, c4)		\
	TESTCASE_START(c1 #r1 c2 #r2 c3 #r3 c4) TEST_ARG_REG(r1, v1)	\
	TEST_ARG_REG(r2, v2) TEST_ARG_REG(r3, v3) TEST_ARG_END("")	\
	TEST_INSTRUCTION(c1 #r1 c2 #r2 c3 #r3 c4) TESTCASE_END
#define TEST_RRRR(c1, r1, v1, c2, r2, v2, c3, r3, v3, c4, r4, v4)	\
	TESTCASE_START(c1 #r1 c2 #r2 c3 #r3 c4 #r4) TEST_ARG_REG(r1, v1) \
	TEST_ARG_REG(r2, v2) TEST_ARG_REG(r3, v3) TEST_ARG_REG(r4, v4)	\
	TEST_ARG_END("") TEST_INSTRUCTION(c1 #r1 c2 #r2 c3 #r3 c4 #r4) TESTCASE_END
#define TEST_P(c1, r1, v1, c2)						\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_PTR(r1, v1) TEST_ARG_END("")	\
	TEST_INSTRUCTION(c1 #r1 c2) TESTCASE_END
#define TEST_PR(c1, r1, v1, c2, r2, v2, c3)				\
	TESTCASE_START(c1 #r1 c2 #r2 c3) TEST_ARG_PTR(r1, v1) TEST_ARG_REG(r2, v2) \
	TEST_ARG_END("") TEST_INSTRUCTION(c1 #r1 c2 #r2 c3) TESTCASE_END
#define TEST_RP(c1, r1, v1, c2, r2, v2, c3)				\
	TESTCASE_START(c1 #r1 c2 #r2 c3) TEST_ARG_REG(r1, v1) TEST_ARG_PTR(r2, v2) \
	TEST_ARG_END("") TEST_INSTRUCTION(c1 #r1 c2 #r2 c3) TESTCASE_END
#define TEST_PRR(c1, r1, v1, c2, r2, v2, c3, r3, v3, c4)		\
	TESTCASE_START(c1 #r1 c2 #r2 c3 #r3 c4) TEST_ARG_PTR(r1, v1)	\
	TEST_ARG_REG(r2, v2) TEST_ARG_REG(r3, v3) TEST_ARG_END("")	\
	TEST_INSTRUCTION(c1 #r1 c2 #r2 c3 #r3 c4) TESTCASE_END
#define TEST_RPR(c1, r1, v1, c2, r2, v2, c3, r3, v3, c4)		\
	TESTCASE_START(c1 #r1 c2 #r2 c3 #r3 c4) TEST_ARG_REG(r1, v1)	\
	TEST_ARG_PTR(r2, v2) TEST_ARG_REG(r3, v3) TEST_ARG_END("")	\
	TEST_INSTRUCTION(c1 #r1 c2 #r2 c3 #r3 c4) TESTCASE_END
#define TEST_RRP(c1, r1, v1, c2, r2, v2, c3, r3, v3, c4)		\
	TESTCASE_START(c1 #r1 c2 #r2 c3 #r3 c4) TEST_ARG_REG(r1, v1)	\
	TEST_ARG_REG(r2, v2) TEST_ARG_PTR(r3, v3) TEST_ARG_END("")	\
	TEST_INSTRUCTION(c1 #r1 c2 #r2 c3 #r3 c4) TESTCASE_END
#define TEST_BF_P(c1, r1, v1, c2)					\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_PTR(r1, v1) TEST_ARG_END("")	\
	TEST_BRANCH_F(c1 #r1 c2) TESTCASE_END
#define TEST_BF(code)							\
	TESTCASE_START(code) TEST_ARG_END("") TEST_BRANCH_F(code) TESTCASE_END
#define TEST_BB(code)							\
	TESTCASE_START(code) TEST_ARG_END("") TEST_BRANCH_B(code) TESTCASE_END
#define TEST_BF_R(c1, r1, v1, c2)					\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_REG(r1, v1) TEST_ARG_END("")	\
	TEST_BRANCH_F(c1 #r1 c2) TESTCASE_END
#define TEST_BB_R(c1, r1, v1, c2)					\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_REG(r1, v1) TEST_ARG_END("")	\
	TEST_BRANCH_B(c1 #r1 c2) TESTCASE_END
#define TEST_BF_RR(c1, r1, v1, c2, r2, v2, c3)				\
	TESTCASE_START(c1 #r1 c2 #r2 c3) TEST_ARG_REG(r1, v1) TEST_ARG_REG(r2, v2) \
	TEST_ARG_END("") TEST_BRANCH_F(c1 #r1 c2 #r2 c3) TESTCASE_END
#define TEST_BF_X(code, codex)						\
	TESTCASE_START(code) TEST_ARG_END("") TEST_BRANCH_FX(code, codex) TESTCASE_END
#define TEST_BB_X(code, codex)						\
	TESTCASE_START(code) TEST_ARG_END("") TEST_BRANCH_BX(code, codex) TESTCASE_END
#define TEST_BF_RX(c1, r1, v1, c2, codex)				\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_REG(r1, v1) TEST_ARG_END("")	\
	TEST_BRANCH_FX(c1 #r1 c2, codex) TESTCASE_END
#define TEST_X(code, codex)						\
	TESTCASE_START(code) TEST_ARG_END("") TEST_INSTRUCTION(code)	\
	"	b	99f\n\t" codex "\n\t" TESTCASE_END
#define TEST_RX(c1, r1, v1, c2, codex)					\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_REG(r1, v1) TEST_ARG_END("")	\
	TEST_INSTRUCTION(c1 __stringify(r1) c2) "	b	99f\n\t" codex "\n\t" \
	TESTCASE_END
#define TEST_RRX(c1, r1, v1, c2, r2, v2, c3, codex)			\
	TESTCASE_START(c1 #r1 c2 #r2 c3) TEST_ARG_REG(r1, v1) TEST_ARG_REG(r2, v2) \
	TEST_ARG_END("") TEST_INSTRUCTION(c1 __stringify(r1) c2 __stringify(r2) c3) \
	"	b	99f\n\t" codex "\n\t" TESTCASE_END
#define TEST_RMASKED(c1, r1, mask, c2)					\
	TESTCASE_START(c1 #r1 c2) TEST_ARG_REG_MASKED(r1, mask) TEST_ARG_END("") \
	TEST_INSTRUCTION(c1 #r1 c2) TESTCASE_END

/*
 * Space directives spread over several lines (test-core.h), so that the
 * compiler's guess of the inline asm's length stays close.
 */
#define TWICE(x)	x x
#define SPACE_0x8	TWICE(".space 4\n\t")
#define SPACE_0x10	TWICE(SPACE_0x8)
#define SPACE_0x20	TWICE(SPACE_0x10)
#define SPACE_0x40	TWICE(SPACE_0x20)
#define SPACE_0x80	TWICE(SPACE_0x40)
#define SPACE_0x100	TWICE(SPACE_0x80)
#define SPACE_0x200	TWICE(SPACE_0x100)
#define SPACE_0x400	TWICE(SPACE_0x200)
#define SPACE_0x800	TWICE(SPACE_0x400)
#define SPACE_0x1000	TWICE(SPACE_0x800)


/* -- the harness (test-core.c) ------------------------------------------ */

struct test_arg {
	u32 type;
	u32 reg;	/* or the memory index */
	u32 val;
};

/* The end record: type ARG_TYPE_END, flags, then the code addresses. */
struct test_arg_end {
	u32 type;
	u32 flags;
	u32 before;	/* "50:": the before probe; the instruction follows */
	u32 branch;	/* "2:": a branch target, or equal to end */
	u32 end;	/* "99:" */
};

struct test_probe {
	struct kprobe kprobe;
	bool registered;
	int hit;
};

static int test_try_count, test_pass_count, test_fail_count, test_skip_count;
static struct pt_regs initial_regs, expected_regs, result_regs;
static u32 expected_memory[TEST_MEMORY_SIZE / sizeof(u32)];
static const char *current_title;
static struct test_arg *current_args;
static u32 *current_stack;
static uintptr_t current_branch_target, current_code_start;
static u32 current_instruction;
static int test_case_run_count, test_instance;
static bool test_case_is_thumb;
static int is_last_scenario;
static int probe_should_run;	/* 0 = no, 1 = yes, -1 = unknown */
static int memory_needs_checking;
static const char *fail_message;
/*
 * The caller's CPSR.I: the kernel's after probe clears I ("enable
 * interrupts in case setup_test_context disabled them"); kisim models no
 * interrupts and its CPUs run with I set, so the after probe puts back
 * the caller's I instead.
 */
static unsigned long caller_psr_i;

#define TEST_CASE_PASSED	-1
#define TEST_CASE_FAILED	-2
#define TEST_CASE_REFUSED	-3
#define APSR_MASK		0xf80f0000
#define PSR_IT_MASK		0x0600fc00

/* asm/ptrace.h: a halfword that starts a 32-bit Thumb instruction. */
static inline int is_wide_instruction(unsigned long instr)
{
	return instr >= 0xe800;
}

/*
 * test_check_cc: the kernel's condition check (arm_check_condition: 0xe
 * and 0xf pass, the latter as "unconditional").
 */
static int test_check_cc(int cc, unsigned long cpsr)
{
	return arm_cond_passes(cc, cpsr);
}

/*
 * The flag scenarios (test-core.c test_context_cpsr). ARM code: N Z C V, GE
 * and Q from the scenario number, 16 scenarios, the probe running when the
 * instruction's condition passes. Thumb code outside an IT block
 * (TEST_FLAG_NO_ITBLOCK): the same 16, the condition at
 * kprobe_test_cc_position if any (B<c>). Thumb code in every IT state
 * (TEST_FLAG_FULL_ITBLOCK): 16 flag values for each ITSTATE of
 * cond_base 0-6 and mask 2-31, then that of "itt al". Other Thumb code:
 * the 16, then four IT states, two whose condition fails.
 */
static unsigned long test_context_cpsr(int scenario)
{
	unsigned long cpsr;

	probe_should_run = 1;

	cpsr = (scenario & 0xf) << 28;	/* N,Z,C,V flags */
	cpsr |= (scenario & 0xf) << 16;	/* GE flags */
	cpsr |= (scenario & 0x1) << 27;	/* Toggle Q flag */

	if (!test_case_is_thumb) {
		probe_should_run = test_check_cc(current_instruction >> 28, cpsr) != 0;
		if (scenario == 15)
			is_last_scenario = true;
	} else if (kprobe_test_flags & TEST_FLAG_NO_ITBLOCK) {
		if (kprobe_test_cc_position) {
			int cc = (current_instruction >> kprobe_test_cc_position) & 0xf;

			probe_should_run = test_check_cc(cc, cpsr) != 0;
		}
		if (scenario == 15)
			is_last_scenario = true;
	} else if (kprobe_test_flags & TEST_FLAG_FULL_ITBLOCK) {
		unsigned int x = scenario >> 4;
		unsigned int cond_base = x % 7;	/* ITSTATE<7:5> */
		unsigned int mask = x / 7 + 2;	/* ITSTATE<4:0>, bits reversed */

		if (mask > 0x1f) {
			/* Finish by testing state from instruction 'itt al' */
			cond_base = 7;
			mask = 0x4;
			if ((scenario & 0xf) == 0xf)
				is_last_scenario = true;
		}
		cpsr |= cond_base << 13;	/* ITSTATE<7:5> */
		cpsr |= (mask & 0x1) << 12;	/* ITSTATE<4> */
		cpsr |= (mask & 0x2) << 10;	/* ITSTATE<3> */
		cpsr |= (mask & 0x4) << 8;	/* ITSTATE<2> */
		cpsr |= (mask & 0x8) << 23;	/* ITSTATE<1> */
		cpsr |= (mask & 0x10) << 21;	/* ITSTATE<0> */
		probe_should_run = test_check_cc((cpsr >> 12) & 0xf, cpsr) != 0;
	} else {
		switch (scenario) {
		case 16: /* Clear NZCV flags and 'it eq' state (false as Z=0) */
			cpsr = 0x00000800;
			probe_should_run = 0;
			break;
		case 17: /* Set NZCV flags and 'it vc' state (false as V=1) */
			cpsr = 0xf0007800;
			probe_should_run = 0;
			break;
		case 18: /* Clear NZCV flags and 'it ls' state (true as C=0) */
			cpsr = 0x00009800;
			break;
		case 19: /* Set NZCV flags and 'it cs' state (true as C=1) */
			cpsr = 0xf0002800;
			is_last_scenario = true;
			break;
		}
	}
	return cpsr;
}

static void setup_test_context(struct pt_regs *regs)
{
	int scenario = test_case_run_count >> 1;
	unsigned long val;
	struct test_arg *args;
	unsigned int i;

	is_last_scenario = false;
	memory_needs_checking = false;

	val = (scenario & 1) ? VALM : ~VALM;
	for (i = 0; i < TEST_MEMORY_SIZE / sizeof(current_stack[0]); ++i)
		current_stack[i] = val + (i << 8);
	if (current_branch_target)
		current_stack[15] = current_branch_target;
	current_stack[13] = (u32)current_stack + 120;

	val = (scenario & 2) ? VALR : ~VALR;
	for (i = 0; i < 13; ++i)
		regs->uregs[i] = val ^ (i << 8);
	regs->ARM_lr = val ^ (14 << 8);
	regs->ARM_cpsr &= ~(APSR_MASK | PSR_IT_MASK);
	regs->ARM_cpsr |= test_context_cpsr(scenario);

	for (args = current_args; args->type != ARG_TYPE_END; ++args) {
		switch (args->type) {
		case ARG_TYPE_REG:
			regs->uregs[args->reg] = args->val;
			break;
		case ARG_TYPE_PTR:
			regs->uregs[args->reg] = (unsigned long)current_stack + args->val;
			memory_needs_checking = true;
			if (args->reg == 13)
				regs->ARM_cpsr |= PSR_I_BIT;
			break;
		case ARG_TYPE_MEM:
			current_stack[args->reg] = args->val;
			break;
		}
	}
}

static void unregister_test_probe(struct test_probe *probe)
{
	if (probe->registered) {
		unregister_kprobe(&probe->kprobe);
		probe->kprobe.flags = 0;
	}
	probe->registered = false;
}

static int register_test_probe(struct test_probe *probe)
{
	int ret;

	BUG_ON(probe->registered);
	probe->kprobe.next = NULL;
	probe->kprobe.symbol_name = NULL;
	probe->kprobe.offset = 0;
	ret = register_kprobe(&probe->kprobe);
	if (ret >= 0) {
		probe->registered = true;
		probe->hit = -1;
	}
	return ret;
}

static int test_before_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	container_of(p, struct test_probe, kprobe)->hit = test_instance;
	return 0;
}

static void test_before_post_handler(struct kprobe *p, struct pt_regs *regs,
				     unsigned long flags)
{
	caller_psr_i = regs->ARM_cpsr & PSR_I_BIT;
	setup_test_context(regs);
	initial_regs = *regs;
	initial_regs.ARM_cpsr &= ~PSR_IGNORE_BITS;
}

static int test_case_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	container_of(p, struct test_probe, kprobe)->hit = test_instance;
	return 0;
}

static int test_after_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct test_arg *args;

	if (container_of(p, struct test_probe, kprobe)->hit == test_instance)
		return 0;
	result_regs = *regs;
	result_regs.ARM_cpsr &= ~PSR_IGNORE_BITS;
	for (args = current_args; args->type != ARG_TYPE_END; ++args)
		if (args->type == ARG_TYPE_REG_MASKED)
			result_regs.uregs[args->reg] &= args->val;
	regs->ARM_sp = (unsigned long)current_stack;	/* undo the case's sp */
	regs->ARM_cpsr = (regs->ARM_cpsr & ~PSR_I_BIT) | caller_psr_i;
	container_of(p, struct test_probe, kprobe)->hit = test_instance;
	return 0;
}

static struct test_probe test_before_probe = {
	.kprobe.pre_handler = test_before_pre_handler,
	.kprobe.post_handler = test_before_post_handler,
};
static struct test_probe test_case_probe = { .kprobe.pre_handler = test_case_pre_handler };
static struct test_probe test_after_probe = { .kprobe.pre_handler = test_after_pre_handler };
static struct test_probe test_after2_probe = { .kprobe.pre_handler = test_after_pre_handler };

static void test_case_cleanup(void)
{
	unregister_test_probe(&test_before_probe);
	unregister_test_probe(&test_case_probe);
	unregister_test_probe(&test_after_probe);
	unregister_test_probe(&test_after2_probe);
}

static void test_case_failed(const char *message)
{
	test_case_cleanup();
	fail_message = message;
}

static void print_registers(const char *what, struct pt_regs *regs)
{
	pr_err("# %s: r0 %08lx r1 %08lx r2 %08lx r3 %08lx r4 %08lx r5 %08lx r6 %08lx\n",
	       what, regs->uregs[0], regs->uregs[1], regs->uregs[2], regs->uregs[3],
	       regs->uregs[4], regs->uregs[5], regs->uregs[6]);
	pr_err("#   r7 %08lx r8 %08lx r9 %08lx r10 %08lx r11 %08lx r12 %08lx\n",
	       regs->uregs[7], regs->uregs[8], regs->uregs[9], regs->uregs[10],
	       regs->uregs[11], regs->uregs[12]);
	pr_err("#   sp %08lx lr %08lx pc %08lx cpsr %08lx\n", regs->ARM_sp, regs->ARM_lr,
	       regs->ARM_pc, regs->ARM_cpsr);
}

static size_t expected_memory_size(u32 *sp)
{
	size_t size = sizeof(expected_memory);
	int offset = (uintptr_t)sp - (uintptr_t)current_stack;

	if (offset > 0)
		size -= offset;
	return size;
}

/*
 * The case's name for its KTAP line: the instruction text with tabs and
 * newlines as spaces and without '#' (in KTAP a '#' starts the directive).
 */
static const char *ktap_name(const char *title)
{
	static char name[128];
	unsigned int i = 0;

	for (; *title && i < sizeof(name) - 1; title++)
		if (*title != '#')
			name[i++] = (*title == '\t' || *title == '\n') ? ' ' : *title;
	name[i] = 0;
	return name;
}

/* The instruction's encoding as the kernel's verbose output prints it. */
static const char *insn_text(void)
{
	static char text[12];

	snprintf(text, sizeof(text), test_case_is_thumb ? "%04x" : "%08x",
		 current_instruction);
	return text;
}

/* The result line of a finished case, in KTAP. */
static void report(void)
{
	const char *name = ktap_name(current_title);

	if (fail_message) {
		printk("not ok %d %s # %s (insn %s, scenario %d)\n", test_try_count,
		       name, fail_message, insn_text(), test_case_run_count >> 1);
	} else if (test_case_run_count == TEST_CASE_REFUSED) {
		printk("ok %d %s # SKIP refused: %s (insn %s)\n", test_try_count, name,
		       kprobe_last_refusal, insn_text());
	} else {
		printk("ok %d %s\n", test_try_count, name);
	}
}

/* The next instruction's address: Thumb code (bit 0 set) by its first halfword. */
static unsigned long next_instruction(unsigned long pc)
{
#ifdef CONFIG_THUMB2_KERNEL
	if ((pc & 1) && !is_wide_instruction(*(u16 *)(pc - 1)))
		return pc + 2;
#endif
	return pc + 4;
}

uintptr_t kprobes_test_case_start(const char **title, u32 *stack)
{
	struct test_arg *args;
	struct test_arg_end *end;
	unsigned long test_code;

	current_title = *title++;
	args = (struct test_arg *)title;
	current_args = args;
	current_stack = stack;
	fail_message = NULL;
	++test_try_count;

	while (args->type != ARG_TYPE_END)
		++args;
	end = (struct test_arg_end *)args;

	/* Code addresses as pointers to code: bit 0 set for Thumb. */
	test_case_is_thumb = end->flags & ARG_FLAG_THUMB;
	test_code = (uintptr_t)(end + 1) | test_case_is_thumb;
	current_code_start = test_code;
	current_branch_target = end->branch != end->end ? end->branch | test_case_is_thumb : 0;

	test_code = end->before | test_case_is_thumb;
	test_before_probe.kprobe.addr = (kprobe_opcode_t *)test_code;

	test_code = next_instruction(test_code);
	test_case_probe.kprobe.addr = (kprobe_opcode_t *)test_code;

	if (test_case_is_thumb) {
		u16 *p = (u16 *)(test_code & ~1);

		current_instruction = p[0];
		if (is_wide_instruction(current_instruction))
			current_instruction = current_instruction << 16 | p[1];
	} else {
		current_instruction = *(u32 *)test_code;
	}

	test_code = next_instruction(test_code);
	test_after_probe.kprobe.addr = (kprobe_opcode_t *)test_code;

	if (kprobe_test_flags & TEST_FLAG_NARROW_INSTR) {
		if (!test_case_is_thumb || is_wide_instruction(current_instruction)) {
			test_case_failed("expected 16-bit instruction");
			goto fail;
		}
	} else if (test_case_is_thumb && !is_wide_instruction(current_instruction)) {
		test_case_failed("expected 32-bit instruction");
		goto fail;
	}

	if (end->flags & ARG_FLAG_UNSUPPORTED) {
		if (register_test_probe(&test_case_probe) < 0) {
			++test_skip_count;
			test_case_run_count = TEST_CASE_REFUSED;
			goto skip;
		}
		test_case_failed("registered probe for unsupported instruction");
		goto fail;
	}
	if (end->flags & ARG_FLAG_SUPPORTED) {
		if (register_test_probe(&test_case_probe) >= 0)
			goto pass;
		test_case_failed("couldn't register probe for supported instruction");
		goto fail;
	}
	if (register_test_probe(&test_before_probe) < 0) {
		test_case_failed("register test_before_probe failed");
		goto fail;
	}
	if (register_test_probe(&test_after_probe) < 0) {
		test_case_failed("register test_after_probe failed");
		goto fail;
	}
	if (current_branch_target) {
		test_after2_probe.kprobe.addr = (kprobe_opcode_t *)current_branch_target;
		if (register_test_probe(&test_after2_probe) < 0) {
			test_case_failed("register test_after2_probe failed");
			goto fail;
		}
	}
	test_case_run_count = 0;
	++test_instance;
	return current_code_start;
pass:
	test_case_run_count = TEST_CASE_PASSED;
	goto skip;
fail:
	test_case_run_count = TEST_CASE_FAILED;
skip:
	/*
	 * A case that does not run goes to its end ("99:"). The kernel goes to
	 * the after probe's instruction, which in the bx pc and Thumb-to-ARM
	 * cases is "bx lr" with lr not yet loaded (no setup_test_context).
	 */
	return end->end | test_case_is_thumb;
}

static bool check_test_results(void)
{
	u32 *mem = (u32 *)result_regs.ARM_sp;

	if (memcmp(&expected_regs, &result_regs, sizeof(expected_regs))) {
		test_case_failed("registers differ");
		goto fail;
	}
	if (memory_needs_checking &&
	    memcmp(expected_memory, mem, expected_memory_size(mem))) {
		test_case_failed("test memory differs");
		goto fail;
	}
	return true;
fail:
	print_registers("initial", &initial_regs);
	print_registers("expected", &expected_regs);
	print_registers("result", &result_regs);
	return false;
}

uintptr_t kprobes_test_case_end(void)
{
	if (test_case_run_count < 0) {
		if (test_case_run_count == TEST_CASE_FAILED)
			goto fail;
		goto pass;
	}
	if (test_before_probe.hit != test_instance) {
		test_case_failed("test_before_handler not run");
		goto fail;
	}
	if (test_after_probe.hit != test_instance && test_after2_probe.hit != test_instance) {
		test_case_failed("test_after_handler not run");
		goto fail;
	}
	if ((test_case_run_count & 1) == 0) {
		/* The run without a probe gives the reference; probe the next one. */
		u32 *mem = (u32 *)result_regs.ARM_sp;

		expected_regs = result_regs;
		memcpy(expected_memory, mem, expected_memory_size(mem));
		if (register_test_probe(&test_case_probe) < 0) {
			test_case_failed("register test_case_probe failed");
			goto fail;
		}
	} else {
		if (probe_should_run == 1 && test_case_probe.hit != test_instance) {
			test_case_failed("test_case_handler not run");
			goto fail;
		}
		if (probe_should_run == 0 && test_case_probe.hit == test_instance) {
			test_case_failed("test_case_handler ran");
			goto fail;
		}
		unregister_test_probe(&test_case_probe);
		if (!check_test_results())
			goto fail;
		if (is_last_scenario)
			goto pass;
	}
	++test_case_run_count;
	++test_instance;
	return current_code_start;
fail:
	++test_fail_count;
	goto end;
pass:
	if (test_case_run_count != TEST_CASE_REFUSED)
		++test_pass_count;
end:
	test_case_cleanup();
	report();
	return 0;
}

/*
 * __test_case_start (lr: the case's data, bit 0 set from Thumb code): keep
 * the caller's sp and r4-r11, take TEST_MEMORY_SIZE bytes of stack as the
 * test memory and run the case's code from where kprobes_test_case_start
 * says. __test_case_end_<ISA>: run it again, or restore and return after
 * the case. On a Thumb-2 kernel the harness is Thumb code, and
 * __test_case_end_32 (the end of a case in ARM code) goes back to Thumb
 * state first, as the kernel's __kprobes_test_case_end_32 does.
 */
#define TEST_CASE_START_ASM						\
	"	.type	__test_case_start, %function\n"			\
	"__test_case_start:\n"						\
	"	mov	r2, sp\n"					\
	"	bic	r3, r2, #7\n"					\
	"	mov	sp, r3\n"					\
	"	stmdb	sp!, {r2-r11}\n"				\
	"	sub	sp, sp, #" __stringify(TEST_MEMORY_SIZE) "\n"	\
	"	bic	r0, lr, #1\n"					\
	"	mov	r1, sp\n"					\
	"	bl	kprobes_test_case_start\n"			\
	"	bx	r0\n"						\
	"	.size	__test_case_start, . - __test_case_start\n"

/* The end of a case in the harness's own instruction set (IT: Thumb only). */
#define TEST_CASE_END_ASM(isa, it)					\
	"	.type	__test_case_end_" isa ", %function\n"		\
	"__test_case_end_" isa ":\n"					\
	"	mov	r4, lr\n"					\
	"	bl	kprobes_test_case_end\n"			\
	"	cmp	r0, #0\n"					\
	it								\
	"	bxne	r0\n"						\
	"	mov	r0, r4\n"					\
	"	add	sp, sp, #" __stringify(TEST_MEMORY_SIZE) "\n"	\
	"	ldmia	sp!, {r2-r11}\n"				\
	"	mov	sp, r2\n"					\
	"	bx	r0\n"						\
	"	.size	__test_case_end_" isa ", . - __test_case_end_" isa "\n"

#ifndef CONFIG_THUMB2_KERNEL
__asm__(
	"	.text\n"
	"	.arm\n"
	TEST_CASE_START_ASM
	TEST_CASE_END_ASM("32", ""));
#else
__asm__(
	"	.text\n"
	"	.syntax unified\n"
	"	.thumb\n"
	"	.align	2\n"
	TEST_CASE_START_ASM
	TEST_CASE_END_ASM("16", "	it	ne\n")
	"	.arm\n"
	"	.align	2\n"
	"	.type	__test_case_end_32, %function\n"
	"__test_case_end_32:\n"
	"	orr	lr, lr, #1	@ will return to Thumb code\n"
	"	ldr	pc, 1f\n"
	"1:\n"
	"	.word	__test_case_end_16\n"
	"	.size	__test_case_end_32, . - __test_case_end_32\n"
	"	.thumb\n");
#endif

/* -- the module (test-core.c run_all_tests) ------------------------------ */

#ifndef CONFIG_THUMB2_KERNEL
static void kprobe_arm_test_cases(void);
#else
static void kprobe_thumb16_test_cases(void);
static void kprobe_thumb32_test_cases(void);
#endif

static int __init run_all_tests(void)
{
	printk("KTAP version 1\n");
#ifndef CONFIG_THUMB2_KERNEL
	printk("# ARM instruction simulation (arch/arm/probes/kprobes/test-arm.c, v5.10)\n");
	kprobe_arm_test_cases();
#else
	printk("# 16-bit Thumb instruction simulation (arch/arm/probes/kprobes/test-thumb.c, v5.10)\n");
	kprobe_thumb16_test_cases();
	printk("# 32-bit Thumb instruction simulation (arch/arm/probes/kprobes/test-thumb.c, v5.10)\n");
	kprobe_thumb32_test_cases();
#endif
	printk("1..%d\n", test_try_count);
	printk("# Totals: pass:%d fail:%d skip:%d\n", test_pass_count, test_fail_count,
	       test_skip_count);
	return 0;
}

static void __exit kprobe_test_exit(void)
{
}

module_init(run_all_tests);
module_exit(kprobe_test_exit);
MODULE_LICENSE("GPL");

#endif
