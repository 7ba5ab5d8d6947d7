// SPDX-License-Identifier: GPL-2.0
/*
 * lib/test_static_key_base.c (Linux v5.10) as a kisim guest module: the
 * keys test_static_keys.c uses from "another module", four of them
 * inverted by this module's init. Linked (and so initialised) before
 * static_keys.c, as the kernel loads it first (docs/selftest/static_keys.md).
 */
#include <linux/module.h>
#include <linux/jump_label.h>

/* old keys */
struct static_key base_old_true_key = STATIC_KEY_INIT_TRUE;
struct static_key base_inv_old_true_key = STATIC_KEY_INIT_TRUE;
struct static_key base_old_false_key = STATIC_KEY_INIT_FALSE;
struct static_key base_inv_old_false_key = STATIC_KEY_INIT_FALSE;

/* new keys */
DEFINE_STATIC_KEY_TRUE(base_true_key);
DEFINE_STATIC_KEY_TRUE(base_inv_true_key);
DEFINE_STATIC_KEY_FALSE(base_false_key);
DEFINE_STATIC_KEY_FALSE(base_inv_false_key);

static void invert_key(struct static_key *key)
{
	if (static_key_enabled(key))
		static_key_disable(key);
	else
		static_key_enable(key);
}

static int __init test_static_key_base_init(void)
{
	invert_key(&base_inv_old_true_key);
	invert_key(&base_inv_old_false_key);
	invert_key(&base_inv_true_key.key);
	invert_key(&base_inv_false_key.key);
	return 0;
}
module_init(test_static_key_base_init);
