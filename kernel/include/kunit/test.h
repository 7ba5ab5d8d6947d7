/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small KUnit (include/kunit/test.h of Linux v5.10 onward) for ported
 * self-tests: suites of cases, EXPECT/ASSERT checks, skips, and results
 * printed as KTAP (Documentation/dev-tools/ktap.rst), which selftests/run.py
 * parses. kunit_test_suites() makes the module's init run its suites, as
 * KUnit does when a test module is loaded.
 *
 * Differences from KUnit, all of presentation or mechanism: results are
 * one flat KTAP list per module (KUnit nests cases under a suite line);
 * a failed KUNIT_ASSERT_*() returns from the function it is written in
 * (KUnit ends the case's kthread), so asserts belong in the case
 * functions themselves, as in every ported suite.
 */
#ifndef _KUNIT_TEST_H
#define _KUNIT_TEST_H

#include <linux/kernel.h>
#include <linux/module.h>

enum kunit_status {
	KUNIT_SUCCESS,
	KUNIT_FAILURE,
	KUNIT_SKIPPED,
};

struct kunit {
	const char *name;		/* the running case */
	enum kunit_status status;
	char status_comment[128];	/* the reason of a skip */
	void *priv;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
};

#define KUNIT_CASE(test_name)	{ .run_case = test_name, .name = #test_name }

struct kunit_suite {
	const char *name;
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;
};

/* kernel/kunit.c */
int kunit_run_suites(struct kunit_suite *const *suites, int n);
void kunit_fail_at(struct kunit *test, const char *kind, const char *file, int line,
		   const char *fmt, ...) __printf(5, 6);
void kunit_skip_reason(struct kunit *test, const char *fmt, ...) __printf(2, 3);

#define kunit_test_suites(...)							\
	static struct kunit_suite *const __kunit_suites[] = { __VA_ARGS__ };	\
	static int __init kunit_test_suites_init(void)				\
	{									\
		kunit_run_suites(__kunit_suites, ARRAY_SIZE(__kunit_suites));	\
		return 0;							\
	}									\
	module_init(kunit_test_suites_init)
#define kunit_test_suite(suite)	kunit_test_suites(&suite)

/* Mark the case skipped (KTAP "# SKIP reason") and leave it. */
#define kunit_mark_skipped(test, fmt, ...)	kunit_skip_reason(test, fmt, ##__VA_ARGS__)
#define kunit_skip(test, fmt, ...)					\
	do {								\
		kunit_skip_reason(test, fmt, ##__VA_ARGS__);		\
		return;							\
	} while (0)

#define KUNIT_FAIL_AT(test, kind, fmt, ...)					\
	kunit_fail_at(test, kind, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

#define __KUNIT_BINARY(test, kind, left, op, right, on_fail)			\
	do {									\
		__typeof__(left) __left = (left);				\
		__typeof__(right) __right = (right);				\
		if (!(__left op __right)) {					\
			KUNIT_FAIL_AT(test, kind,				\
				      "Expected %s %s %s, but\n"		\
				      "        %s == %lld (0x%llx)\n"		\
				      "        %s == %lld (0x%llx)",		\
				      #left, #op, #right,			\
				      #left, (long long)__left,			\
				      (unsigned long long)__left,		\
				      #right, (long long)__right,		\
				      (unsigned long long)__right);		\
			on_fail;						\
		}								\
	} while (0)

#define __KUNIT_BOOL(test, kind, cond, want, on_fail)				\
	do {									\
		if (!!(cond) != (want)) {					\
			KUNIT_FAIL_AT(test, kind, "Expected %s to be %s, but is %s",	\
				      #cond, (want) ? "true" : "false",		\
				      (want) ? "false" : "true");		\
			on_fail;						\
		}								\
	} while (0)

#define KUNIT_EXPECT_EQ(t, l, r)	__KUNIT_BINARY(t, "EXPECTATION", l, ==, r, (void)0)
#define KUNIT_EXPECT_NE(t, l, r)	__KUNIT_BINARY(t, "EXPECTATION", l, !=, r, (void)0)
#define KUNIT_EXPECT_LT(t, l, r)	__KUNIT_BINARY(t, "EXPECTATION", l, <, r, (void)0)
#define KUNIT_EXPECT_LE(t, l, r)	__KUNIT_BINARY(t, "EXPECTATION", l, <=, r, (void)0)
#define KUNIT_EXPECT_GT(t, l, r)	__KUNIT_BINARY(t, "EXPECTATION", l, >, r, (void)0)
#define KUNIT_EXPECT_GE(t, l, r)	__KUNIT_BINARY(t, "EXPECTATION", l, >=, r, (void)0)
#define KUNIT_EXPECT_TRUE(t, c)		__KUNIT_BOOL(t, "EXPECTATION", c, true, (void)0)
#define KUNIT_EXPECT_FALSE(t, c)	__KUNIT_BOOL(t, "EXPECTATION", c, false, (void)0)
#define KUNIT_EXPECT_PTR_EQ(t, l, r)	KUNIT_EXPECT_EQ(t, (unsigned long)(l), (unsigned long)(r))
#define KUNIT_EXPECT_NULL(t, p)		KUNIT_EXPECT_PTR_EQ(t, p, NULL)
#define KUNIT_EXPECT_NOT_NULL(t, p)	KUNIT_EXPECT_NE(t, (unsigned long)(p), 0UL)

#define KUNIT_ASSERT_EQ(t, l, r)	__KUNIT_BINARY(t, "ASSERTION", l, ==, r, return)
#define KUNIT_ASSERT_NE(t, l, r)	__KUNIT_BINARY(t, "ASSERTION", l, !=, r, return)
#define KUNIT_ASSERT_LT(t, l, r)	__KUNIT_BINARY(t, "ASSERTION", l, <, r, return)
#define KUNIT_ASSERT_LE(t, l, r)	__KUNIT_BINARY(t, "ASSERTION", l, <=, r, return)
#define KUNIT_ASSERT_GT(t, l, r)	__KUNIT_BINARY(t, "ASSERTION", l, >, r, return)
#define KUNIT_ASSERT_GE(t, l, r)	__KUNIT_BINARY(t, "ASSERTION", l, >=, r, return)
#define KUNIT_ASSERT_TRUE(t, c)		__KUNIT_BOOL(t, "ASSERTION", c, true, return)
#define KUNIT_ASSERT_FALSE(t, c)	__KUNIT_BOOL(t, "ASSERTION", c, false, return)
#define KUNIT_ASSERT_NOT_NULL(t, p)	KUNIT_ASSERT_NE(t, (unsigned long)(p), 0UL)

#define KUNIT_FAIL(t, fmt, ...)		KUNIT_FAIL_AT(t, "EXPECTATION", fmt, ##__VA_ARGS__)

#endif
