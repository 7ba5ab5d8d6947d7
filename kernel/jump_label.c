// SPDX-License-Identifier: GPL-2.0
/*
 * Static keys (kernel/jump_label.c, v5.10): the enable count and its
 * rules run here, as guest code; rewriting a key's sites
 * (jump_label_update) is the host's text patching (HC_MODULE,
 * MOD_STATIC_KEY_UPDATE: every site of the key becomes the jump or the
 * nop that jump_label_type() gives, in one batch of the arch's protocol).
 */
#include <linux/kernel.h>
#include <linux/jump_label.h>
#include <linux/spinlock.h>
#include <kisim/hypercall.h>
#include <kisim/module.h>

static DEFINE_SPINLOCK(jump_label_lock);
extern struct static_key *const __start___static_keys[], *const __stop___static_keys[];

static void jump_label_update(struct static_key *key)
{
#ifdef CONFIG_JUMP_LABEL
	hypercall2(HC_MODULE, MOD_STATIC_KEY_UPDATE, (unsigned long)key);
#endif
}

/* -1 means the first enable is patching: static_key_enabled() is already true. */
int static_key_count(struct static_key *key)
{
	int n = READ_ONCE(key->enabled);

	return n >= 0 ? n : 1;
}

void static_key_slow_inc(struct static_key *key)
{
	spin_lock(&jump_label_lock);
	if (key->enabled == 0) {
		WRITE_ONCE(key->enabled, -1);
		jump_label_update(key);
		smp_store_release(&key->enabled, 1);
	} else {
		key->enabled++;
	}
	spin_unlock(&jump_label_lock);
}

/* The last decrement patches; below zero is the kernel's warning. */
void static_key_slow_dec(struct static_key *key)
{
	spin_lock(&jump_label_lock);
	if (--key->enabled == 0)
		jump_label_update(key);
	else
		WARN(key->enabled < 0, "jump label: negative count!");
	spin_unlock(&jump_label_lock);
}

void static_key_enable(struct static_key *key)
{
	if (READ_ONCE(key->enabled) > 0) {
		WARN_ON(READ_ONCE(key->enabled) != 1);
		return;
	}
	spin_lock(&jump_label_lock);
	if (key->enabled == 0) {
		WRITE_ONCE(key->enabled, -1);
		jump_label_update(key);
		smp_store_release(&key->enabled, 1);
	}
	spin_unlock(&jump_label_lock);
}

/* Only a key enabled exactly once is turned off; any other count warns and stays. */
void static_key_disable(struct static_key *key)
{
	if (READ_ONCE(key->enabled) != 1) {
		WARN_ON(READ_ONCE(key->enabled) != 0);
		return;
	}
	spin_lock(&jump_label_lock);
	if (key->enabled == 1) {
		WRITE_ONCE(key->enabled, 0);
		jump_label_update(key);
	}
	spin_unlock(&jump_label_lock);
}

/*
 * jump_label_init / jump_label_add_module: the keys DEFINE_STATIC_KEY_*()
 * listed get their sites to their initial type (the jump for a key
 * defined true under static_branch_unlikely(), and so on).
 */
void jump_label_init(void)
{
	struct static_key *const *key;

	for (key = __start___static_keys; key < __stop___static_keys; key++)
		jump_label_update(*key);
}
