// SPDX-License-Identifier: GPL-2.0
/*
 * lib/test_static_keys.c (Linux v5.10) as a kisim guest module
 * (docs/selftest/static_keys.md). Every entry of the kernel's table is
 * checked in each of its three passes (as built, every key inverted,
 * inverted back): static_key_enabled() must be the entry's state, and the
 * entry's branch must follow the key. Each check is one KTAP line; the
 * kernel stops at the first failure and returns -EINVAL.
 *
 * The kernel makes each entry's test function with a GCC nested function
 * (test_key_func); clang, kisim's compiler, has none, so each is a named
 * function here, with the same key and branch macro.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/jump_label.h>

/* old keys */
struct static_key old_true_key = STATIC_KEY_INIT_TRUE;
struct static_key old_false_key = STATIC_KEY_INIT_FALSE;

/* new api */
DEFINE_STATIC_KEY_TRUE(true_key);
DEFINE_STATIC_KEY_FALSE(false_key);

/* external (static_key_base.c) */
extern struct static_key base_old_true_key;
extern struct static_key base_inv_old_true_key;
extern struct static_key base_old_false_key;
extern struct static_key base_inv_old_false_key;
extern struct static_key_true base_true_key;
extern struct static_key_true base_inv_true_key;
extern struct static_key_false base_false_key;
extern struct static_key_false base_inv_false_key;

struct test_key {
	bool init_state;
	struct static_key *key;
	bool (*test_key)(void);
	const char *name;		/* the KTAP name: key and branch macro */
};

#define test_key_func(fn, key, branch)	static bool fn(void) { return branch(key); }

test_key_func(t0, &old_true_key, static_key_true)
test_key_func(t1, &old_false_key, static_key_false)
test_key_func(t2, &true_key, static_branch_likely)
test_key_func(t3, &true_key, static_branch_unlikely)
test_key_func(t4, &false_key, static_branch_likely)
test_key_func(t5, &false_key, static_branch_unlikely)
test_key_func(t6, &base_old_true_key, static_key_true)
test_key_func(t7, &base_inv_old_true_key, static_key_true)
test_key_func(t8, &base_old_false_key, static_key_false)
test_key_func(t9, &base_inv_old_false_key, static_key_false)
test_key_func(t10, &base_true_key, static_branch_likely)
test_key_func(t11, &base_true_key, static_branch_unlikely)
test_key_func(t12, &base_inv_true_key, static_branch_likely)
test_key_func(t13, &base_inv_true_key, static_branch_unlikely)
test_key_func(t14, &base_false_key, static_branch_likely)
test_key_func(t15, &base_false_key, static_branch_unlikely)
test_key_func(t16, &base_inv_false_key, static_branch_likely)
test_key_func(t17, &base_inv_false_key, static_branch_unlikely)

#define ENTRY(state, k, fn, branch)	{ state, k, fn, #k " " #branch }

static struct test_key static_key_tests[] = {
	/* internal keys - old keys */
	ENTRY(true, &old_true_key, t0, static_key_true),
	ENTRY(false, &old_false_key, t1, static_key_false),
	/* internal keys - new keys */
	ENTRY(true, &true_key.key, t2, static_branch_likely),
	ENTRY(true, &true_key.key, t3, static_branch_unlikely),
	ENTRY(false, &false_key.key, t4, static_branch_likely),
	ENTRY(false, &false_key.key, t5, static_branch_unlikely),
	/* external keys - old keys */
	ENTRY(true, &base_old_true_key, t6, static_key_true),
	ENTRY(false, &base_inv_old_true_key, t7, static_key_true),
	ENTRY(false, &base_old_false_key, t8, static_key_false),
	ENTRY(true, &base_inv_old_false_key, t9, static_key_false),
	/* external keys - new keys */
	ENTRY(true, &base_true_key.key, t10, static_branch_likely),
	ENTRY(true, &base_true_key.key, t11, static_branch_unlikely),
	ENTRY(false, &base_inv_true_key.key, t12, static_branch_likely),
	ENTRY(false, &base_inv_true_key.key, t13, static_branch_unlikely),
	ENTRY(false, &base_false_key.key, t14, static_branch_likely),
	ENTRY(false, &base_false_key.key, t15, static_branch_unlikely),
	ENTRY(true, &base_inv_false_key.key, t16, static_branch_likely),
	ENTRY(true, &base_inv_false_key.key, t17, static_branch_unlikely),
};

#define SIZE	((int)(sizeof(static_key_tests) / sizeof(static_key_tests[0])))

static int case_number;

static void invert_key(struct static_key *key)
{
	if (static_key_enabled(key))
		static_key_disable(key);
	else
		static_key_enable(key);
}

static void invert_keys(struct test_key *keys, int size)
{
	struct static_key *previous = NULL;
	int i;

	for (i = 0; i < size; i++) {
		if (previous != keys[i].key) {
			invert_key(keys[i].key);
			previous = keys[i].key;
		}
	}
}

/* verify_keys(), one KTAP line per entry; -EINVAL if any failed. */
static int verify_keys(struct test_key *keys, int size, bool invert, const char *pass)
{
	int i, ret = 0;
	bool enabled, branch, want;

	for (i = 0; i < size; i++) {
		enabled = static_key_enabled(keys[i].key);
		want = invert ? !keys[i].init_state : keys[i].init_state;
		branch = keys[i].test_key();
		case_number++;
		if (enabled != want || branch != enabled) {
			printk("not ok %d %s (%s) # enabled %d, want %d, branch %d\n",
			       case_number, keys[i].name, pass, enabled, want, branch);
			ret = -EINVAL;
		} else {
			printk("ok %d %s (%s)\n", case_number, keys[i].name, pass);
		}
	}
	return ret;
}

static int __init test_static_key_init(void)
{
	int ret;

	printk("KTAP version 1\n");
	printk("1..%d\n", 3 * SIZE);
	ret = verify_keys(static_key_tests, SIZE, false, "as built");
	invert_keys(static_key_tests, SIZE);
	ret |= verify_keys(static_key_tests, SIZE, true, "inverted");
	invert_keys(static_key_tests, SIZE);
	ret |= verify_keys(static_key_tests, SIZE, false, "inverted back");
	return ret;
}
module_init(test_static_key_init);
