/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Code markers, after include/linux/marker.h of Linux 2.6.24 (Desnoyers),
 * with the 2.6.27 probe closures (single/multi, marker_probe_cb).
 *
 *	trace_mark(name, "fmt", args...)
 *
 * places a named site whose arguments follow a printf format, checked by
 * the compiler through __mark_check_format(). Each site owns one
 *
 *	struct marker { name, format, state, ptype, call, single, multi }
 *
 * in the section __markers (aligned to 8 bytes), its strings in
 * __markers_strings, laid out as in 2.6.27. While `state` is 0 the site
 * costs an enable check and a not-taken branch; `call` is always
 * marker_probe_cb, which runs `single` (ptype 0) or every entry of the
 * NULL-terminated `multi` array (ptype 1).
 *
 * The enable check is, in order of preference:
 *   CONFIG_IMMEDIATE  an immediate-value load (linux/immediate.h): the
 *                     __imv entry's `var` is &marker.state;
 *   CONFIG_JUMP_LABEL a static branch (linux/jump_label.h): the
 *                     __jump_table entry's `key` is &marker.state;
 *   otherwise         a load of marker.state from memory.
 * Without CONFIG_MARKERS a site compiles to nothing but the format check.
 */
#ifndef _LINUX_MARKER_H
#define _LINUX_MARKER_H

#include <linux/types.h>
#include <linux/immediate.h>
#include <linux/jump_label.h>

struct marker;

/* 2.6.27: a probe takes its own private data, the site's, the format and
 * the site's arguments as a va_list. */
typedef void marker_probe_func(void *probe_private, void *call_private,
			       const char *fmt, va_list *args);

struct marker_probe_closure {
	marker_probe_func *func;	/* Callback */
	void *probe_private;		/* Private probe data */
};

struct marker {
	const char *name;	/* Marker name */
	const char *format;	/* Marker format string, describing the
				 * variable argument list. */
	char state;		/* Marker state. */
	char ptype;		/* probe type : 0 : single, 1 : multi */
	void (*call)(const struct marker *mdata, void *call_private, ...);
	struct marker_probe_closure single;
	struct marker_probe_closure *multi;	/* NULL-terminated when ptype */
} __attribute__((aligned(8)));

/* The empty probe every marker starts with. */
/*
 * Connecting probes (kernel/marker.c, 2.6.24-2.6.27): the host does the
 * work (patcher/markers.py) through HC_MODULE; 0 or -errno.
 */
int marker_probe_register(const char *name, const char *format,
			  marker_probe_func *probe, void *probe_private);
int marker_probe_unregister(const char *name, marker_probe_func *probe, void *probe_private);
int marker_arm(const char *name);
int marker_disarm(const char *name);

extern marker_probe_func __mark_empty_function;
/* The probe that hands a marker's arguments to the host (HC_MARKER);
 * its probe_private is the struct marker. */
extern marker_probe_func marker_probe_hc;
/* What every site calls: single.func, or each probe of multi. */
extern void marker_probe_cb(const struct marker *mdata, void *call_private, ...);

#ifdef CONFIG_MARKERS

#if defined(CONFIG_IMMEDIATE)
#define __marker_enabled(m)	unlikely(imv_read((m).state))
#elif defined(CONFIG_JUMP_LABEL)
#define __marker_enabled(m)	static_branch(&(m).state)
#else
#define __marker_enabled(m)	unlikely(READ_ONCE((m).state))
#endif

#define __trace_mark(name, call_private, format, args...)		\
	do {								\
		static const char __mstrtab_name_##name[]		\
		__attribute__((section("__markers_strings")))		\
		= #name;						\
		static const char __mstrtab_format_##name[]		\
		__attribute__((section("__markers_strings")))		\
		= format;						\
		static struct marker __mark_##name			\
		__attribute__((section("__markers"), aligned(8))) =	\
		{ __mstrtab_name_##name, __mstrtab_format_##name,	\
		  0, 0, marker_probe_cb,				\
		  { __mark_empty_function, NULL }, NULL };		\
		__mark_check_format(format, ## args);			\
		if (__marker_enabled(__mark_##name)) {			\
			(*__mark_##name.call)				\
				(&__mark_##name, call_private, ## args);	\
		}							\
	} while (0)

#else /* !CONFIG_MARKERS */

#define __trace_mark(name, call_private, format, args...)		\
		__mark_check_format(format, ## args)

#endif /* CONFIG_MARKERS */

/**
 * trace_mark - Marker
 * @name: marker name, not quoted.
 * @format: format string
 * @args...: variable argument list
 *
 * Places a marker.
 */
#define trace_mark(name, format, args...) \
	__trace_mark(name, NULL, format, ## args)

#define MARK_NOARGS " "

/* To be used for string format validity checking with gcc */
static inline void __printf(1, 2) __mark_check_format(const char *fmt, ...)
{
	(void)fmt;
}

#endif
