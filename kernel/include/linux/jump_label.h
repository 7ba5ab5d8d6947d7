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
 * the nop, `target` the enabled branch's destination, `key` the address of
 * the flag the site tests (a marker's or a tracepoint's `state`).
 * arch_jump_label_transform() turns the nop into a jump to `target`.
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

#ifdef CONFIG_JUMP_LABEL
/* The arch gives its nop and the entry directive (key is operand 0). */
#include <asm/jump_label.h>

static __always_inline bool arch_static_branch(void *key)
{
	__asm__ goto("1:\n\t"
		     JUMP_LABEL_NOP "\n\t"
		     ".pushsection __jump_table, \"aw\"\n\t"
		     JUMP_LABEL_ENTRY "\n\t"
		     ".popsection\n\t"
		     : : "i" (key) : : l_yes);
	return false;
l_yes:
	return true;
}

#define static_branch(key)	arch_static_branch(key)
#else
#define static_branch(key)	unlikely(READ_ONCE(*(key)) != 0)
#endif

/*
 * Static keys (include/linux/jump_label.h and kernel/jump_label.c, v5.10).
 * A key counts its enablers; each site's __jump_table entry names the key
 * with the site's branch in bit 0, as v5.10's jump_entry_is_branch():
 * the site jumps when enabled ^ branch (jump_label_type()).
 * static_branch_unlikely() sites have branch 0 (jump when enabled),
 * static_branch_likely() and static_key_true() sites branch 1 (jump when
 * disabled). As in v5.10, the key's type decides how a site is built: the
 * jump (JUMP_LABEL_JMP) where it starts taken, a static_key_false under
 * static_branch_likely() or a static_key_true under
 * static_branch_unlikely(), the nop otherwise; however the key was
 * initialised (DEFINE_STATIC_KEY_*, STATIC_KEY_*_INIT). jump_label_init()
 * (at module load, kernel/jump_label.c) then finds each listed key's sites
 * already as its count wants them.
 */
struct static_key {
	int enabled;		/* atomic_t: the count; -1 while the first enable patches */
};

struct static_key_true {
	struct static_key key;
};

struct static_key_false {
	struct static_key key;
};

#define STATIC_KEY_INIT_TRUE	{ .enabled = 1 }
#define STATIC_KEY_INIT_FALSE	{ .enabled = 0 }
#define STATIC_KEY_TRUE_INIT	(struct static_key_true) { .key = STATIC_KEY_INIT_TRUE }
#define STATIC_KEY_FALSE_INIT	(struct static_key_false) { .key = STATIC_KEY_INIT_FALSE }

/* kisim: DEFINE_STATIC_KEY_*() list their keys for jump_label_init(). */
#define __STATIC_KEY_LISTED(name)					\
	static struct static_key *const __used				\
	__section("__static_keys") __static_key_##name = &name.key

#define DEFINE_STATIC_KEY_TRUE(name)					\
	struct static_key_true name = { .key = STATIC_KEY_INIT_TRUE };	\
	__STATIC_KEY_LISTED(name)
#define DEFINE_STATIC_KEY_FALSE(name)					\
	struct static_key_false name = { .key = STATIC_KEY_INIT_FALSE };	\
	__STATIC_KEY_LISTED(name)
#define DECLARE_STATIC_KEY_TRUE(name)	extern struct static_key_true name
#define DECLARE_STATIC_KEY_FALSE(name)	extern struct static_key_false name

int static_key_count(struct static_key *key);
void static_key_slow_inc(struct static_key *key);
void static_key_slow_dec(struct static_key *key);
void static_key_enable(struct static_key *key);
void static_key_disable(struct static_key *key);
void jump_label_init(void);

#define static_key_enabled(x)	(static_key_count((struct static_key *)(x)) > 0)

#ifdef CONFIG_JUMP_LABEL
/* A site built as `insn`, whose entry holds key + branch (jump_entry_is_branch()). */
#define __static_branch_site(insn, key, branch)				\
	__asm__ goto("1:\n\t"						\
		     insn "\n\t"						\
		     ".pushsection __jump_table, \"aw\"\n\t"		\
		     JUMP_LABEL_ENTRY "\n\t"					\
		     ".popsection\n\t"					\
		     : : "i" ((char *)(key) + (branch)) : : l_yes)

/* v5.10 arch_static_branch(): the site built as the nop */
static __always_inline bool arch_static_branch_entry(struct static_key *key, bool branch)
{
	__static_branch_site(JUMP_LABEL_NOP, key, branch);
	return false;
l_yes:
	return true;
}

/* v5.10 arch_static_branch_jump(): the site built as the jump */
static __always_inline bool arch_static_branch_jump_entry(struct static_key *key, bool branch)
{
	__static_branch_site(JUMP_LABEL_JMP, key, branch);
	return false;
l_yes:
	return true;
}

/* Neither key type: a link error, as v5.10's ____wrong_branch_error(). */
extern bool ____wrong_branch_error(void);
#define __static_key_is(x, type)	__builtin_types_compatible_p(typeof(*(x)), struct type)

#define static_key_true(key)		likely(!arch_static_branch_entry(key, true))
#define static_key_false(key)		unlikely(arch_static_branch_entry(key, false))
#define static_branch_likely(x)	likely(					\
	__static_key_is(x, static_key_true) ? !arch_static_branch_entry(&(x)->key, true) :	\
	__static_key_is(x, static_key_false) ? !arch_static_branch_jump_entry(&(x)->key, true) : \
	____wrong_branch_error())
#define static_branch_unlikely(x)	unlikely(					\
	__static_key_is(x, static_key_true) ? arch_static_branch_jump_entry(&(x)->key, false) : \
	__static_key_is(x, static_key_false) ? arch_static_branch_entry(&(x)->key, false) :	\
	____wrong_branch_error())
#else
#define static_key_true(key)		likely(static_key_enabled(key))
#define static_key_false(key)		unlikely(static_key_enabled(key))
#define static_branch_likely(x)		likely(static_key_enabled(&(x)->key))
#define static_branch_unlikely(x)	unlikely(static_key_enabled(&(x)->key))
#endif

#define static_branch_inc(x)		static_key_slow_inc(&(x)->key)
#define static_branch_dec(x)		static_key_slow_dec(&(x)->key)
#define static_branch_enable(x)		static_key_enable(&(x)->key)
#define static_branch_disable(x)	static_key_disable(&(x)->key)

#endif
