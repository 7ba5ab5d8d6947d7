/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints, after include/linux/tracepoint.h of Linux 2.6.28.
 *
 *	DECLARE_TRACE(name, TP_PROTO(proto), TP_ARGS(args))   in a header
 *	DEFINE_TRACE(name)                                    in one .c file
 *	trace_name(args);                                     at the site
 *
 * Each tracepoint is one struct tracepoint in the section __tracepoints
 * (aligned to 32 bytes), its name in __tracepoints_strings:
 *
 *	{ const char *name; int state; void **funcs; void *hc_probe; }
 *
 * `funcs` is a NULL-terminated array of probes with the tracepoint's own
 * prototype, replaced copy-and-swap by the registrar. `hc_probe` (a kisim
 * addition) is a probe of that prototype which hands the arguments to the
 * host (HC_TRACEPOINT with the tracepoint's address and the arguments as
 * unsigned longs): the host registers it like any other probe.
 *
 * The enable check on `state` is a static branch with CONFIG_JUMP_LABEL
 * (__jump_table key = &tp.state), else an immediate value with
 * CONFIG_IMMEDIATE (__imv var = &tp.state), else a memory load.
 * Without CONFIG_TRACEPOINTS trace_name() is an empty inline.
 */
#ifndef _LINUX_TRACEPOINT_H
#define _LINUX_TRACEPOINT_H

#include <linux/types.h>
#include <linux/immediate.h>
#include <linux/jump_label.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <kisim/hypercall.h>

struct tracepoint {
	const char *name;	/* Tracepoint name */
	int state;		/* State. */
	void **funcs;		/* NULL-terminated probe array, or NULL */
	void *hc_probe;		/* probe forwarding to the host */
} __attribute__((aligned(32)));

#define TP_PROTO(args...)	args
#define TP_ARGS(args...)	args

/* Casts each argument to unsigned long (up to 6 arguments). */
#define __TP_NARG(...)		__TP_NARG_(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define __TP_NARG_(a, b, c, d, e, f, n, ...) n
#define __TP_UL(x)		(unsigned long)(x)
#define __TP_MAP1(a)		__TP_UL(a)
#define __TP_MAP2(a, ...)	__TP_UL(a), __TP_MAP1(__VA_ARGS__)
#define __TP_MAP3(a, ...)	__TP_UL(a), __TP_MAP2(__VA_ARGS__)
#define __TP_MAP4(a, ...)	__TP_UL(a), __TP_MAP3(__VA_ARGS__)
#define __TP_MAP5(a, ...)	__TP_UL(a), __TP_MAP4(__VA_ARGS__)
#define __TP_MAP6(a, ...)	__TP_UL(a), __TP_MAP5(__VA_ARGS__)
#define __TP_CAT(a, b)		a##b
#define __TP_MAPN(n, ...)	__TP_CAT(__TP_MAP, n)(__VA_ARGS__)
#define __TP_LONGS(...)		__TP_MAPN(__TP_NARG(__VA_ARGS__), __VA_ARGS__)

#ifdef CONFIG_TRACEPOINTS

#if defined(CONFIG_JUMP_LABEL)
#define __tracepoint_enabled(tp)	static_branch(&(tp).state)
#elif defined(CONFIG_IMMEDIATE)
#define __tracepoint_enabled(tp)	unlikely(imv_read((tp).state))
#else
#define __tracepoint_enabled(tp)	unlikely(READ_ONCE((tp).state))
#endif

/*
 * Probes run with the arguments of the site. The array pointer is read
 * once: a concurrent replacement is seen whole or not at all.
 */
#define __DO_TRACE(tp, proto, args)					\
	do {								\
		void **it_func;						\
		it_func = READ_ONCE((tp)->funcs);			\
		if (it_func) {						\
			do {						\
				((void (*)(proto))(*it_func))(args);	\
			} while (*(++it_func));				\
		}							\
	} while (0)

/*
 * Connecting probes (kernel/tracepoint.c, 2.6.28): the host does the work
 * (patcher/tracepoint.py) through HC_MODULE; 0 or -errno.
 */
int tracepoint_probe_register(const char *name, void *probe);
int tracepoint_probe_unregister(const char *name, void *probe);

#define DECLARE_TRACE(name, proto, args)				\
	extern struct tracepoint __tracepoint_##name;			\
	static inline __unused int register_trace_##name(void (*probe)(proto))	\
	{								\
		return tracepoint_probe_register(#name, (void *)probe);	\
	}								\
	static inline __unused int unregister_trace_##name(void (*probe)(proto))	\
	{								\
		return tracepoint_probe_unregister(#name, (void *)probe);	\
	}								\
	static __always_inline void trace_##name(proto)			\
	{								\
		if (__tracepoint_enabled(__tracepoint_##name))		\
			__DO_TRACE(&__tracepoint_##name,		\
				TP_PROTO(proto), TP_ARGS(args));	\
	}								\
	static notrace __unused void __tp_hc_##name(proto)		\
	{								\
		unsigned long __args[] = { __TP_LONGS(args) };		\
		hypercall3(HC_TRACEPOINT,				\
			   (unsigned long)&__tracepoint_##name,		\
			   (unsigned long)__args, ARRAY_SIZE(__args));	\
	}

#define DEFINE_TRACE(name)						\
	static const char __tpstrtab_##name[]				\
	__attribute__((section("__tracepoints_strings"))) = #name;	\
	struct tracepoint __tracepoint_##name				\
	__attribute__((section("__tracepoints"), aligned(32))) =	\
		{ __tpstrtab_##name, 0, NULL, (void *)__tp_hc_##name };	\
	NOTRACE_SYMBOL(__tp_hc_##name);					\
	NOKPROBE_SYMBOL(__tp_hc_##name)

#else /* !CONFIG_TRACEPOINTS */

#define DECLARE_TRACE(name, proto, args)				\
	static inline void trace_##name(proto)				\
	{ }

#define DEFINE_TRACE(name)

#endif /* CONFIG_TRACEPOINTS */

#endif
