/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Jump labels (static branches).
 *
 * static_branch(&flag) is false until the site is patched. With
 * CONFIG_JUMP_LABEL each site is an `asm goto` whose first instruction is
 * the arch's kernel nop (x86-64 5-byte `0f 1f 44 00 00`, ARM `e1a00000`,
 * PowerPC `60000000`), recorded in the section __jump_table as
 *
 *	struct jump_entry { unsigned long code, target, key; };
 *
 * with ABSOLUTE addresses (word-sized, the guest's byte order): `code` is
 * the site, `target` the enabled branch's destination, `key` the address of
 * the flag the site tests (a marker's or a tracepoint's `state`, or a
 * struct static_key), plus 1 for a static_branch_likely() site
 * (v5.10 jump_entry_is_branch()). arch_jump_label_transform() turns the
 * nop into a jump to `target` and back.
 * Without CONFIG_JUMP_LABEL it is a plain load of the flag.
 */
#ifndef _LINUX_JUMP_LABEL_H
#define _LINUX_JUMP_LABEL_H

#include <linux/types.h>

struct jump_entry {
	unsigned long code;
	unsigned long target;
	unsigned long key;
};

/*
 * The static-key API of v5.10 include/linux/jump_label.h, for modules.
 * A site's entry holds the key's address plus its branch bit (1: the
 * site's jump means "false", static_branch_likely), the key's low type
 * bit says whether it started enabled (JUMP_TYPE_TRUE). A site is a jump
 * when enabled ^ branch, else the nop; it is built in its initial state:
 * arch_static_branch() as the nop, arch_static_branch_jump() as the jump.
 * The calls that change a key (kernel/jump_label.c) are done by the host
 * (patcher/jump_label.py), reached through HC_MODULE.
 */
struct static_key {
	atomic_t enabled;
	unsigned long type;		/* JUMP_TYPE_*; the kernel's union with entries */
};

struct static_key_true {
	struct static_key key;
};

struct static_key_false {
	struct static_key key;
};

#define JUMP_TYPE_FALSE		0UL
#define JUMP_TYPE_TRUE		1UL
#define STATIC_KEY_INIT_TRUE	{ .enabled = { 1 }, .type = JUMP_TYPE_TRUE }
#define STATIC_KEY_INIT_FALSE	{ .enabled = { 0 }, .type = JUMP_TYPE_FALSE }
#define STATIC_KEY_TRUE_INIT	(struct static_key_true) { .key = STATIC_KEY_INIT_TRUE, }
#define STATIC_KEY_FALSE_INIT	(struct static_key_false) { .key = STATIC_KEY_INIT_FALSE, }
#define DEFINE_STATIC_KEY_TRUE(name)	struct static_key_true name = STATIC_KEY_TRUE_INIT
#define DEFINE_STATIC_KEY_FALSE(name)	struct static_key_false name = STATIC_KEY_FALSE_INIT

void static_key_slow_inc(struct static_key *key);
void static_key_slow_dec(struct static_key *key);
void static_key_enable(struct static_key *key);
void static_key_disable(struct static_key *key);

static __always_inline int static_key_count(struct static_key *key)
{
	return READ_ONCE(key->enabled.counter);
}

/* Any of struct static_key, static_key_true, static_key_false (key is first). */
#define static_key_enabled(x)	(static_key_count((struct static_key *)(x)) > 0)
#define static_branch_enable(x)		static_key_enable(&(x)->key)
#define static_branch_disable(x)	static_key_disable(&(x)->key)
#define static_branch_inc(x)		static_key_slow_inc(&(x)->key)
#define static_branch_dec(x)		static_key_slow_dec(&(x)->key)

#ifdef CONFIG_JUMP_LABEL
/* The arch gives its nop, its jump and the entry directive (key is operand 0). */
#include <asm/jump_label.h>

static __always_inline bool arch_static_branch(void *key, bool branch)
{
	__asm__ goto("1:\n\t"
		     JUMP_LABEL_NOP "\n\t"
		     ".pushsection __jump_table, \"aw\"\n\t"
		     JUMP_LABEL_ENTRY "\n\t"
		     ".popsection\n\t"
		     : : "i" ((char *)key + branch) : : l_yes);
	return false;
l_yes:
	return true;
}

static __always_inline bool arch_static_branch_jump(void *key, bool branch)
{
	__asm__ goto("1:\n\t"
		     JUMP_LABEL_JMP "\n\t"
		     ".pushsection __jump_table, \"aw\"\n\t"
		     JUMP_LABEL_ENTRY "\n\t"
		     ".popsection\n\t"
		     : : "i" ((char *)key + branch) : : l_yes);
	return false;
l_yes:
	return true;
}

#define static_branch(key)	arch_static_branch(key, false)
#define static_key_false(key)	arch_static_branch(key, false)
#define static_key_true(key)	(!arch_static_branch(key, true))
#define static_branch_likely(x)	likely(__builtin_choose_expr(				\
	__builtin_types_compatible_p(typeof(*(x)), struct static_key_true),		\
	!arch_static_branch(&(x)->key, true), !arch_static_branch_jump(&(x)->key, true)))
#define static_branch_unlikely(x) unlikely(__builtin_choose_expr(			\
	__builtin_types_compatible_p(typeof(*(x)), struct static_key_true),		\
	arch_static_branch_jump(&(x)->key, false), arch_static_branch(&(x)->key, false)))
#else
#define static_branch(key)	unlikely(READ_ONCE(*(key)) != 0)
#define static_key_false(key)	unlikely(static_key_enabled(key))
#define static_key_true(key)	likely(static_key_enabled(key))
#define static_branch_likely(x)	likely(static_key_enabled(&(x)->key))
#define static_branch_unlikely(x) unlikely(static_key_enabled(&(x)->key))
#endif

#endif
