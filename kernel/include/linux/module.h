/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest modules (``--module FILE.c``), after include/linux/module.h of
 * Linux v5.10. A module is linked into the image, as a built-in module
 * (obj-y) is, and its init function is called during boot, before the
 * workload, as do_initcalls() calls a built-in module's. Unlike a built-in
 * module, its exit function is called too: after the workload, last
 * module first, as `rmmod` would unload it.
 *
 * module_init(fn) records { KBUILD_MODNAME, fn } in the section
 * __module_init (module_exit: __module_exit), which kernel/module.c walks.
 * KBUILD_MODNAME is the file's stem, given by kbuild (kbuild/modules.py).
 */
#ifndef _LINUX_MODULE_H
#define _LINUX_MODULE_H

#include <linux/export.h>
#include <linux/init.h>
#include <linux/kernel.h>

struct module_initcall {
	const char *name;
	initcall_t init;
};

struct module_exitcall {
	const char *name;
	exitcall_t exit;
};

#ifndef KBUILD_MODNAME
#define KBUILD_MODNAME "kernel"
#endif

#define module_init(fn)							\
	static const struct module_initcall __used			\
	__section("__module_init") __module_init_##fn = { KBUILD_MODNAME, fn }
#define module_exit(fn)							\
	static const struct module_exitcall __used			\
	__section("__module_exit") __module_exit_##fn = { KBUILD_MODNAME, fn }

/* Module metadata: kisim has no modinfo section to keep them in. */
#define MODULE_LICENSE(s)
#define MODULE_AUTHOR(s)
#define MODULE_DESCRIPTION(s)
#define MODULE_ALIAS(s)
#define MODULE_VERSION(s)

/* kernel/module.c: run every module's init (boot) and exit (shutdown). */
int module_init_all(void);
void module_exit_all(void);

#endif
