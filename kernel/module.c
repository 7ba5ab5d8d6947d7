// SPDX-License-Identifier: GPL-2.0
/*
 * Guest modules (<linux/module.h>): each module's init function runs in
 * the init task before the workload, in link order (the order of
 * --module), as do_initcalls() runs built-in modules' (init/main.c,
 * v5.10); a module whose init fails is reported and not unloaded later.
 * After the workload, module_exit_all() runs the loaded modules' exit
 * functions, last module first, as rmmod would (kernel/module.c
 * delete_module).
 *
 * A module function can be the workload (--workload MODULE:FUNC): the
 * host writes its address into module_workload before the first
 * instruction (sim/guest.py) and kernel_init() calls it with the size.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/jump_label.h>

extern const struct module_initcall __start___module_init[], __stop___module_init[];
extern const struct module_exitcall __start___module_exit[], __stop___module_exit[];

/*
 * --workload MODULE:FUNC: unsigned long FUNC(unsigned long size), set by the
 * host; NULL otherwise. Its whole return value is the checksum (64 bits on a
 * 64-bit kernel).
 */
unsigned long (*module_workload)(unsigned long size) __section(".data");

/*
 * The module whose init function is running (NULL otherwise): the host
 * undoes the module API calls made meanwhile if the init fails, as
 * do_init_module()'s failure path frees the module (sim/modinit.py).
 */
const char *module_loading __section(".data");

/* The modules whose init failed and what it returned (read by the host too). */
#define MAX_FAILED_MODULES	64
const char *failed_modules[MAX_FAILED_MODULES] __section(".data");
int failed_module_errors[MAX_FAILED_MODULES] __section(".data");
int nr_failed_modules __section(".data");

static bool module_failed(const char *name)
{
	int i;

	for (i = 0; i < nr_failed_modules; i++)
		if (!strcmp(failed_modules[i], name))
			return true;
	return false;
}

/* Returns how many module init functions failed. */
int module_init_all(void)
{
	const struct module_initcall *call;
	int ret;

	jump_label_init();	/* jump_label_add_module(): the keys' initial text */
	for (call = __start___module_init; call < __stop___module_init; call++) {
		WRITE_ONCE(module_loading, call->name);
		ret = call->init();
		WRITE_ONCE(module_loading, NULL);
		if (ret) {
			/* load_module()'s do_init_module(): the module is not loaded. */
			printk("%s: module init failed: %d\n", call->name, ret);
			if (nr_failed_modules < MAX_FAILED_MODULES) {
				failed_module_errors[nr_failed_modules] = ret;
				failed_modules[nr_failed_modules++] = call->name;
			}
		}
	}
	return nr_failed_modules;
}

void module_exit_all(void)
{
	const struct module_exitcall *call;

	for (call = __stop___module_exit; call-- > __start___module_exit; )
		if (!module_failed(call->name))
			call->exit();
}
