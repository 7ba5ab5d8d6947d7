// SPDX-License-Identifier: GPL-2.0
/*
 * The calls that change a static key (kernel/jump_label.c, v5.10):
 * static_key_slow_inc/dec and static_key_enable/disable. The host does
 * the kernel's work (patcher/jump_label.py: the count, WARN_ON_ONCE, and
 * jump_label_update() through the arch's text-patching protocol, under
 * text_mutex, on this CPU) and stores the new count in key->enabled.
 */
#include <linux/types.h>
#include <linux/jump_label.h>
#include <kisim/hypercall.h>
#include <kisim/module.h>

static void static_key_call(unsigned long op, struct static_key *key)
{
	hypercall2(HC_MODULE, op, (unsigned long)key);
}

void static_key_slow_inc(struct static_key *key)
{
	static_key_call(MOD_STATICKEY_SLOW_INC, key);
}

void static_key_slow_dec(struct static_key *key)
{
	static_key_call(MOD_STATICKEY_SLOW_DEC, key);
}

void static_key_enable(struct static_key *key)
{
	static_key_call(MOD_STATICKEY_ENABLE, key);
}

void static_key_disable(struct static_key *key)
{
	static_key_call(MOD_STATICKEY_DISABLE, key);
}
