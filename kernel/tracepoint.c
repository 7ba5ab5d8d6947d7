// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint probe registration for modules (kernel/tracepoint.c, 2.6.28):
 * the host publishes the new probe array (patcher/tracepoint.py) through
 * HC_MODULE. register_trace_<name>() (<linux/tracepoint.h>) calls these.
 */
#include <linux/tracepoint.h>
#include <kisim/hypercall.h>
#include <kisim/module.h>

int tracepoint_probe_register(const char *name, void *probe)
{
	return (int)hypercall3(HC_MODULE, MOD_TRACEPOINT_REGISTER, (unsigned long)name,
			       (unsigned long)probe);
}

int tracepoint_probe_unregister(const char *name, void *probe)
{
	return (int)hypercall3(HC_MODULE, MOD_TRACEPOINT_UNREGISTER, (unsigned long)name,
			       (unsigned long)probe);
}
