// SPDX-License-Identifier: GPL-2.0
/*
 * ARM kprobes instruction tests: a port of Linux v5.10
 * arch/arm/probes/kprobes/test-arm.c, with the harness of test-core.c and
 * test-core.h re-implemented below, as a kisim guest module.
 *
 * module_init runs every case, as the kernel's test module does at load
 * time, and prints one KTAP line per case (docs/selftest/test-arm.md):
 * "ok", "not ok ... # why", or "ok ... # SKIP refused" where the case is a
 * TEST_UNSUPPORTED one and register_kprobe refused it, as the kernel's
 * decoder does (the host keeps the reason).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>


#define TEST_MEMORY_SIZE	256

#define ARG_TYPE_END		0
#define ARG_TYPE_REG		1
#define ARG_TYPE_PTR		2
#define ARG_TYPE_MEM		3
#define ARG_TYPE_REG_MASKED	4

#define ARG_FLAG_UNSUPPORTED	0x01
#define ARG_FLAG_SUPPORTED	0x02

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
#define PSR_IGNORE_BITS	(PSR_A_BIT | PSR_F_BIT)

#define TESTCASE_START(title)						\
	__asm__ __volatile__ (						\
	".syntax unified\n\t"						\
	"bl	__test_case_start\n\t"					\
	".pushsection .rodata\n"					\
	"10:\n\t"							\
	".ascii " #title "\n\t"					\
	".byte	0\n\t"							\
	".popsection\n\t"						\
	".word	10b\n\t"

#define TEST_ARG_REG(reg, val)	".word 1, " #reg ", " #val "\n\t"
#define TEST_ARG_PTR(reg, val)	".word 2, " #reg ", " #val "\n\t"
#define TEST_ARG_MEM(index, val) ".word 3, " #index ", " #val "\n\t"
#define TEST_ARG_REG_MASKED(reg, val) ".word 4, " #reg ", " #val "\n\t"
#define TEST_ARG_END(flags)	".word 0, 0" flags ", 50f, 2f, 99f\n\t"

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
	"99:	bl	__test_case_end\n\t"				\
	: : : "r0", "r1", "r2", "r3", "ip", "lr", "memory", "cc");

#define TEST_GROUP(title)

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

/* An instruction given by its encoding (the kernel's __inst_arm). */
#define __inst_arm(x)	".inst " __stringify(x) "\n\t"


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
static int is_last_scenario, probe_should_run, memory_needs_checking;
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

/* decode.c probes_condition_checks: does condition cc pass with these flags? */
static int test_check_cc(int cc, unsigned long cpsr)
{
	int n = (cpsr >> 31) & 1, z = (cpsr >> 30) & 1, c = (cpsr >> 29) & 1;
	int v = (cpsr >> 28) & 1, r;

	switch (cc >> 1) {
	case 0: r = z; break;
	case 1: r = c; break;
	case 2: r = n; break;
	case 3: r = v; break;
	case 4: r = c && !z; break;
	case 5: r = n == v; break;
	case 6: r = !z && n == v; break;
	default: return 1;
	}
	return (cc & 1) ? !r : r;
}

/* The 16 flag scenarios of ARM code: N Z C V, GE and Q from the scenario number. */
static unsigned long test_context_cpsr(int scenario)
{
	unsigned long cpsr;

	cpsr = (scenario & 0xf) << 28;
	cpsr |= (scenario & 0xf) << 16;
	cpsr |= (scenario & 0x1) << 27;
	probe_should_run = test_check_cc(current_instruction >> 28, cpsr) != 0;
	if (scenario == 15)
		is_last_scenario = true;
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

/* The result line of a finished case, in KTAP. */
static void report(void)
{
	if (fail_message) {
		printk("not ok %d %s # %s (scenario %d)\n", test_try_count, current_title,
		       fail_message, test_case_run_count >> 1);
	} else if (test_case_run_count == TEST_CASE_REFUSED) {
		printk("ok %d %s # SKIP refused\n", test_try_count, current_title);
	} else {
		printk("ok %d %s\n", test_try_count, current_title);
	}
}

uintptr_t kprobes_test_case_start(const char **title, u32 *stack)
{
	struct test_arg *args;
	struct test_arg_end *end;

	current_title = *title++;
	args = (struct test_arg *)title;
	current_args = args;
	current_stack = stack;
	fail_message = NULL;
	++test_try_count;

	while (args->type != ARG_TYPE_END)
		++args;
	end = (struct test_arg_end *)args;
	current_code_start = (uintptr_t)(end + 1);
	current_branch_target = end->branch != end->end ? end->branch : 0;
	test_before_probe.kprobe.addr = (kprobe_opcode_t *)end->before;
	test_case_probe.kprobe.addr = (kprobe_opcode_t *)(end->before + 4);
	current_instruction = *(u32 *)(end->before + 4);
	test_after_probe.kprobe.addr = (kprobe_opcode_t *)(end->before + 8);

	if (end->flags & ARG_FLAG_UNSUPPORTED) {
		if (register_test_probe(&test_case_probe) < 0) {
			++test_skip_count;
			test_case_run_count = TEST_CASE_REFUSED;
			return end->before + 8;
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
	return end->before + 8;
fail:
	test_case_run_count = TEST_CASE_FAILED;
	return end->before + 8;
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
 * __test_case_start (lr: the case's data): keep the caller's sp and
 * r4-r11, take TEST_MEMORY_SIZE bytes of stack as the test memory and
 * run the case's code from where kprobes_test_case_start says.
 * __test_case_end: run it again, or restore and return after the case.
 */
__asm__(
	"	.text\n"
	"	.arm\n"
	"	.type	__test_case_start, %function\n"
	"__test_case_start:\n"
	"	mov	r2, sp\n"
	"	bic	r3, r2, #7\n"
	"	mov	sp, r3\n"
	"	stmdb	sp!, {r2-r11}\n"
	"	sub	sp, sp, #" __stringify(TEST_MEMORY_SIZE) "\n"
	"	mov	r0, lr\n"
	"	mov	r1, sp\n"
	"	bl	kprobes_test_case_start\n"
	"	bx	r0\n"
	"	.size	__test_case_start, . - __test_case_start\n"
	"	.type	__test_case_end, %function\n"
	"__test_case_end:\n"
	"	mov	r4, lr\n"
	"	bl	kprobes_test_case_end\n"
	"	cmp	r0, #0\n"
	"	bxne	r0\n"
	"	mov	r0, r4\n"
	"	add	sp, sp, #" __stringify(TEST_MEMORY_SIZE) "\n"
	"	ldmia	sp!, {r2-r11}\n"
	"	mov	sp, r2\n"
	"	bx	r0\n"
	"	.size	__test_case_end, . - __test_case_end\n");

/* -- the cases (test-arm.c) ------------------------------------------------ */

static noinline void kprobe_arm_test_cases(void)
{
	TEST_RR("add	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_RR("addeq	r0, r", 1, VAL1, ", r", 2, VAL2, "")
	TEST_R("add	r6, r", 7, VAL1, ", pc, lsl #3")
	TEST("mov	lr, pc")
	TEST_BF_R("bx	r", 0, 2f, "")
	TEST_P("str	r0, [r", 13, 64, ", #-64]")
	TEST_UNSUPPORTED("msr	cpsr, r0")
}

static int __init run_all_tests(void)
{
	printk("KTAP version 1\n");
	printk("# ARM instruction simulation (arch/arm/probes/kprobes/test-arm.c, v5.10)\n");
	kprobe_arm_test_cases();
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
