// SPDX-License-Identifier: GPL-2.0
/*
 * The KUnit executor for ported self-tests (<kunit/test.h>), after
 * lib/kunit/test.c: for each suite, suite_init; for each case, init, the
 * case, exit; one KTAP result line per case. Output goes through printk,
 * which the host captures.
 */
#include <linux/kernel.h>
#include <kunit/test.h>

/* The number of the next KTAP result line (cases of all suites in one list). */
static int kunit_case_number;

void kunit_fail_at(struct kunit *test, const char *kind, const char *file, int line,
		   const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	test->status = KUNIT_FAILURE;
	printk("    # %s: %s FAILED at %s:%d\n    %s\n", test->name, kind, file, line, msg);
}

void kunit_skip_reason(struct kunit *test, const char *fmt, ...)
{
	va_list ap;

	if (test->status == KUNIT_FAILURE)
		return;
	test->status = KUNIT_SKIPPED;
	va_start(ap, fmt);
	vsnprintf(test->status_comment, sizeof(test->status_comment), fmt, ap);
	va_end(ap);
}

static int kunit_count_cases(struct kunit_suite *const *suites, int n)
{
	struct kunit_case *c;
	int i, count = 0;

	for (i = 0; i < n; i++)
		for (c = suites[i]->test_cases; c->run_case; c++)
			count++;
	return count;
}

static void kunit_run_case(struct kunit_suite *suite, struct kunit_case *c, int suite_err)
{
	struct kunit test = { .name = c->name, .status = KUNIT_SUCCESS };

	if (suite_err) {
		kunit_skip_reason(&test, "suite_init failed: %d", suite_err);
	} else {
		int err = suite->init ? suite->init(&test) : 0;

		if (err)
			KUNIT_FAIL_AT(&test, "INIT", "the suite's init returned %d", err);
		else
			c->run_case(&test);
		if (suite->exit)
			suite->exit(&test);
	}
	kunit_case_number++;
	if (test.status == KUNIT_SKIPPED)
		printk("ok %d %s # SKIP %s\n", kunit_case_number, c->name, test.status_comment);
	else
		printk("%s %d %s\n", test.status == KUNIT_SUCCESS ? "ok" : "not ok",
		       kunit_case_number, c->name);
}

int kunit_run_suites(struct kunit_suite *const *suites, int n)
{
	int i;

	printk("KTAP version 1\n1..%d\n", kunit_count_cases(suites, n));
	for (i = 0; i < n; i++) {
		struct kunit_suite *suite = suites[i];
		struct kunit_case *c;
		int err = suite->suite_init ? suite->suite_init(suite) : 0;

		printk("# Subtest: %s\n", suite->name);
		for (c = suite->test_cases; c->run_case; c++)
			kunit_run_case(suite, c, err);
		if (suite->suite_exit && !err)
			suite->suite_exit(suite);
	}
	return 0;
}
