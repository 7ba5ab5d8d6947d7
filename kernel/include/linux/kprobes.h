/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kprobes, following Linux v5.10 (include/linux/kprobes.h, kernel/kprobes.c).
 *
 * NOKPROBE_SYMBOL(fn): a function kprobes must never probe (the probe
 * path itself, the hypercall path, the context switch). As in
 * include/asm-generic/kprobes.h, the address goes into the section
 * _kprobe_blacklist (one address per entry); register_kprobe() on any
 * address inside a listed function fails with -EINVAL. `__kprobes` puts a
 * function in .kprobes.text, which is refused as a whole (v5.10 still has
 * it: include/asm-generic/kprobes.h).
 *
 * The kprobe API itself (struct kprobe, struct pt_regs) is
 * <kisim/kprobes.h>, kept apart because the guest's syscall path has its
 * own struct pt_regs (<linux/syscalls.h>).
 */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H

#include <linux/types.h>

#define __NOKPROBE_SYMBOL(fname)					\
	static const unsigned long __used				\
	__section("_kprobe_blacklist") __kprobe_blacklist_##fname =	\
		(unsigned long)&fname
#define NOKPROBE_SYMBOL(fname)	__NOKPROBE_SYMBOL(fname)
#define __kprobes	__section(".kprobes.text")

struct task_struct;

/* finish_task_switch(): a dead task's kretprobe instances go back (kernel/kprobes.c) */
#ifdef CONFIG_KPROBES
void kprobe_flush_task(struct task_struct *tk);
#else
static inline void kprobe_flush_task(struct task_struct *tk) { }
#endif

/*
 * A module gets the whole kprobe API here, as with v5.10's header. The
 * kernel's own files include <kisim/kprobes.h> for it (the syscall path
 * has its own struct pt_regs, see above).
 */
#ifdef MODULE
#include <kisim/kprobes.h>
#endif


#endif
