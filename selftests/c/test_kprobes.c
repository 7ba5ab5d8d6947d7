// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kprobe self-test of Linux (lib/tests/test_kprobes.c, formerly
 * lib/test_kprobes.c), ported as a kisim guest module against kisim's
 * v5.10 kprobe API. The cases, targets, handlers and expected values are
 * the kernel's; see docs/selftest.md for the list.
 *
 * Every target divides by DIV_FACTOR, so a handler that ran computes a
 * value the test can check; rand1 is drawn once above DIV_FACTOR so that
 * no expected value is 0.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/random.h>
#include <kunit/test.h>

#define DIV_FACTOR 3

/* test_kprobes_init() clears addr and flags so that a probe can be registered again. */
#define KP_CLEAR(p)			\
	do {				\
		(p).addr = NULL;	\
		(p).flags = 0;		\
	} while (0)

static u32 rand1, preh_val, posth_val;
static struct kunit *current_test;

/*
 * Called through pointers, as in the kernel's test, so that no call is
 * inlined away. The pointers are volatile here (not in the kernel's file):
 * clang sees that each is only ever set to one function, calls that
 * function directly, and drops the calls whose (pure) result is unused.
 */
static u32 (*volatile target)(u32 value);
static u32 (*volatile target2)(u32 value);
static u32 (*volatile recursed_target)(u32 value);
static unsigned long (*volatile internal_target)(void);
static unsigned long (*volatile stacktrace_target)(void);
static unsigned long (*volatile stacktrace_driver)(void);
/* [0]: where kprobe_stacktrace_internal_target returns; [1]: kprobe_stacktrace_target. */
static unsigned long target_return_address[2];

static noinline u32 kprobe_target(u32 value)
{
	return value / DIV_FACTOR;
}

static noinline u32 kprobe_recursed_target(u32 value)
{
	return value / DIV_FACTOR;
}

static noinline u32 kprobe_target2(u32 value)
{
	return value / DIV_FACTOR + 1;
}

static noinline unsigned long kprobe_stacktrace_internal_target(void)
{
	if (!target_return_address[0])
		target_return_address[0] = _RET_IP_;
	return target_return_address[0];
}

static noinline unsigned long kprobe_stacktrace_target(void)
{
	if (!target_return_address[1])
		target_return_address[1] = _RET_IP_;
	if (internal_target)
		internal_target();
	return target_return_address[1];
}

static noinline unsigned long kprobe_stacktrace_driver(void)
{
	if (stacktrace_target)
		stacktrace_target();
	return _RET_IP_;	/* uses the frame: keeps the function out of line */
}

/* The first pair of handlers calls the (probed, in test_kprobe_missed) recursed target. */
static int kp_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	KUNIT_EXPECT_FALSE(current_test, preemptible());
	preh_val = recursed_target(rand1);
	return 0;
}

static void kp_post_handler(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	u32 expected = recursed_target(rand1);

	KUNIT_EXPECT_FALSE(current_test, preemptible());
	KUNIT_EXPECT_EQ(current_test, preh_val, expected);
	posth_val = preh_val + DIV_FACTOR;
}

static int kp_pre_handler2(struct kprobe *p, struct pt_regs *regs)
{
	preh_val = rand1 / DIV_FACTOR + 1;
	return 0;
}

static void kp_post_handler2(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	KUNIT_EXPECT_EQ(current_test, preh_val, rand1 / DIV_FACTOR + 1);
	posth_val = preh_val + DIV_FACTOR;
}

static struct kprobe kp = {
	.symbol_name = "kprobe_target",
	.pre_handler = kp_pre_handler,
	.post_handler = kp_post_handler,
};

static struct kprobe kp2 = {
	.symbol_name = "kprobe_target2",
	.pre_handler = kp_pre_handler2,
	.post_handler = kp_post_handler2,
};

static struct kprobe kp_missed = {
	.symbol_name = "kprobe_recursed_target",
	.pre_handler = kp_pre_handler,
	.post_handler = kp_post_handler,
};

static void test_kprobe(struct kunit *test)
{
	current_test = test;
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp));
	target(rand1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_NE(test, 0, preh_val);
	KUNIT_EXPECT_NE(test, 0, posth_val);
}

static void test_kprobes(struct kunit *test)
{
	struct kprobe *kps[2] = { &kp, &kp2 };

	current_test = test;
	KUNIT_EXPECT_EQ(test, 0, register_kprobes(kps, 2));

	preh_val = posth_val = 0;
	target(rand1);
	KUNIT_EXPECT_NE(test, 0, preh_val);
	KUNIT_EXPECT_NE(test, 0, posth_val);

	preh_val = posth_val = 0;
	target2(rand1);
	KUNIT_EXPECT_NE(test, 0, preh_val);
	KUNIT_EXPECT_NE(test, 0, posth_val);
	unregister_kprobes(kps, 2);
}

/*
 * The handlers call the probed function: both hits from inside them are
 * reentries, which run no handler and count as missed (2).
 */
static void test_kprobe_missed(struct kunit *test)
{
	current_test = test;
	preh_val = posth_val = 0;
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp_missed));
	recursed_target(rand1);
	KUNIT_EXPECT_EQ(test, 2, kp_missed.nmissed);
	KUNIT_EXPECT_NE(test, 0, preh_val);
	KUNIT_EXPECT_NE(test, 0, posth_val);
	unregister_kprobe(&kp_missed);
}

#ifdef CONFIG_KRETPROBES
static u32 krph_val;

static int entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	KUNIT_EXPECT_FALSE(current_test, preemptible());
	krph_val = rand1 / DIV_FACTOR;
	return 0;
}

static int return_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned long ret = regs_return_value(regs);

	KUNIT_EXPECT_FALSE(current_test, preemptible());
	KUNIT_EXPECT_EQ(current_test, ret, rand1 / DIV_FACTOR);
	KUNIT_EXPECT_NE(current_test, krph_val, 0);
	krph_val = rand1;
	return 0;
}

static int return_handler2(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned long ret = regs_return_value(regs);

	KUNIT_EXPECT_EQ(current_test, ret, rand1 / DIV_FACTOR + 1);
	KUNIT_EXPECT_NE(current_test, krph_val, 0);
	krph_val = rand1;
	return 0;
}

static struct kretprobe rp = {
	.handler = return_handler,
	.entry_handler = entry_handler,
	.kp.symbol_name = "kprobe_target",
};

static struct kretprobe rp2 = {
	.handler = return_handler2,
	.entry_handler = entry_handler,
	.kp.symbol_name = "kprobe_target2",
};

static void test_kretprobe(struct kunit *test)
{
	current_test = test;
	KUNIT_EXPECT_EQ(test, 0, register_kretprobe(&rp));
	target(rand1);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, krph_val, rand1);
}

static void test_kretprobes(struct kunit *test)
{
	struct kretprobe *rps[2] = { &rp, &rp2 };

	current_test = test;
	KUNIT_EXPECT_EQ(test, 0, register_kretprobes(rps, 2));

	krph_val = 0;
	target(rand1);
	KUNIT_EXPECT_EQ(test, krph_val, rand1);

	krph_val = 0;
	target2(rand1);
	KUNIT_EXPECT_EQ(test, krph_val, rand1);
	unregister_kretprobes(rps, 2);
}

#ifdef CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE
#include <linux/stacktrace.h>

#define STACK_BUF_SIZE 16
static unsigned long stack_buf[STACK_BUF_SIZE];

/* Index of addr in stack_buf[0..n), or n. */
static int stack_find(unsigned long addr, int n)
{
	int i;

	for (i = 0; i < n && stack_buf[i] != addr; i++)
		;
	return i;
}

/*
 * In the return handler of kprobe_stacktrace_target: the trace passes
 * through the kretprobe trampoline, and must show the real return
 * address instead; a trace from the handler's regs starts there.
 */
static int stacktrace_return_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned long retval = regs_return_value(regs);
	int n;

	KUNIT_EXPECT_FALSE(current_test, preemptible());
	KUNIT_EXPECT_EQ(current_test, retval, target_return_address[1]);

	n = stack_trace_save(stack_buf, STACK_BUF_SIZE, 0);
	KUNIT_EXPECT_NE(current_test, n, 0);
	KUNIT_EXPECT_NE(current_test, stack_find(target_return_address[1], n), n);

	n = stack_trace_save_regs(regs, stack_buf, STACK_BUF_SIZE, 0);
	KUNIT_EXPECT_NE(current_test, n, 0);
	KUNIT_EXPECT_EQ(current_test, stack_buf[0], target_return_address[1]);
	return 0;
}

/*
 * In the return handler of kprobe_stacktrace_internal_target, while
 * kprobe_stacktrace_target's return is probed too: two trampoline
 * entries, each resolved to its own return address, in order.
 */
static int stacktrace_internal_return_handler(struct kretprobe_instance *ri,
					      struct pt_regs *regs)
{
	unsigned long retval = regs_return_value(regs);
	int i, n;

	KUNIT_EXPECT_FALSE(current_test, preemptible());
	KUNIT_EXPECT_EQ(current_test, retval, target_return_address[0]);

	n = stack_trace_save(stack_buf, STACK_BUF_SIZE, 0);
	KUNIT_EXPECT_NE(current_test, n, 0);
	i = stack_find(target_return_address[0], n - 1);
	if (i < n - 1)
		KUNIT_EXPECT_EQ(current_test, stack_buf[i + 1], target_return_address[1]);
	KUNIT_EXPECT_NE(current_test, i, n);

	n = stack_trace_save_regs(regs, stack_buf, STACK_BUF_SIZE, 0);
	KUNIT_EXPECT_NE(current_test, n, 0);
	KUNIT_EXPECT_EQ(current_test, stack_buf[0], target_return_address[0]);
	KUNIT_EXPECT_EQ(current_test, stack_buf[1], target_return_address[1]);
	return 0;
}

static struct kretprobe rp3 = {
	.handler = stacktrace_return_handler,
	.kp.symbol_name = "kprobe_stacktrace_target",
};

static struct kretprobe rp4 = {
	.handler = stacktrace_internal_return_handler,
	.kp.symbol_name = "kprobe_stacktrace_internal_target",
};

static void test_stacktrace_on_kretprobe(struct kunit *test)
{
	unsigned long myretaddr = _RET_IP_;

	current_test = test;
	/* A first run records the return addresses; it also shows the driver is not inlined. */
	KUNIT_ASSERT_NE(test, myretaddr, stacktrace_driver());
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp3));
	KUNIT_ASSERT_NE(test, myretaddr, stacktrace_driver());
	unregister_kretprobe(&rp3);
}

static void test_stacktrace_on_nested_kretprobe(struct kunit *test)
{
	unsigned long myretaddr = _RET_IP_;
	struct kretprobe *rps[2] = { &rp3, &rp4 };

	current_test = test;
	KUNIT_ASSERT_EQ(test, 0, register_kretprobes(rps, 2));
	KUNIT_ASSERT_NE(test, myretaddr, stacktrace_driver());
	unregister_kretprobes(rps, 2);
}
#endif /* CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE */
#endif /* CONFIG_KRETPROBES */

static int kprobes_test_init(struct kunit *test)
{
	KP_CLEAR(kp);
	KP_CLEAR(kp2);
	KP_CLEAR(kp_missed);
#ifdef CONFIG_KRETPROBES
	KP_CLEAR(rp.kp);
	KP_CLEAR(rp2.kp);
#ifdef CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE
	KP_CLEAR(rp3.kp);
	KP_CLEAR(rp4.kp);
#endif
#endif
	target = kprobe_target;
	target2 = kprobe_target2;
	recursed_target = kprobe_recursed_target;
	stacktrace_target = kprobe_stacktrace_target;
	internal_target = kprobe_stacktrace_internal_target;
	stacktrace_driver = kprobe_stacktrace_driver;
	rand1 = get_random_u32_above(DIV_FACTOR);
	return 0;
}

static struct kunit_case kprobes_testcases[] = {
	KUNIT_CASE(test_kprobe),
	KUNIT_CASE(test_kprobes),
	KUNIT_CASE(test_kprobe_missed),
#ifdef CONFIG_KRETPROBES
	KUNIT_CASE(test_kretprobe),
	KUNIT_CASE(test_kretprobes),
#ifdef CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE
	KUNIT_CASE(test_stacktrace_on_kretprobe),
	KUNIT_CASE(test_stacktrace_on_nested_kretprobe),
#endif
#endif
	{}
};

static struct kunit_suite kprobes_test_suite = {
	.name = "kprobes_test",
	.init = kprobes_test_init,
	.test_cases = kprobes_testcases,
};

kunit_test_suites(&kprobes_test_suite);

MODULE_DESCRIPTION("simple sanity test for k*probes");
MODULE_LICENSE("GPL");
