/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NOKPROBE_SYMBOL(fn): a function kprobes must never probe (the probe
 * path itself, the hypercall path, the context switch). As in
 * include/asm-generic/kprobes.h, the address goes into the section
 * _kprobe_blacklist (one address per entry); register_kprobe() on any
 * address inside a listed function fails with -EINVAL.
 */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H

#include <linux/types.h>

#define __NOKPROBE_SYMBOL(fname)					\
	static const unsigned long __used				\
	__section("_kprobe_blacklist") __kprobe_blacklist_##fname =	\
		(unsigned long)&fname
#define NOKPROBE_SYMBOL(fname)	__NOKPROBE_SYMBOL(fname)

#endif
