// SPDX-License-Identifier: GPL-2.0
/*
 * Marker probes living in the guest.
 *
 * __mark_empty_function is every marker's `single` probe until one is
 * connected. marker_probe_hc is the probe the host connects to
 * receive events: it walks the marker's format like vsnprintf does, takes
 * each argument with va_arg at its declared width and hands the host an
 * array of u64 (HC_MARKER: marker address, array, count). %s passes the
 * string's address.
 */
#include <linux/kernel.h>
#include <linux/marker.h>
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <linux/ring_buffer.h>
#include <kisim/hypercall.h>
#include <kisim/module.h>

#define MARKER_MAX_ARGS	16

notrace void __mark_empty_function(void *probe_private, void *call_private,
				   const char *fmt, va_list *args)
{
	(void)probe_private; (void)call_private; (void)fmt; (void)args;
}
NOTRACE_SYMBOL(__mark_empty_function);
NOKPROBE_SYMBOL(__mark_empty_function);

/*
 * kernel/marker.c (2.6.27) marker_probe_cb: ptype 0 calls the single
 * probe, ptype 1 each entry of the NULL-terminated multi array, each with
 * a fresh va_list. The host publishes a new array before flipping ptype
 * and frees an old one only after a quiescent state.
 */
notrace void marker_probe_cb(const struct marker *mdata, void *call_private, ...)
{
	va_list args;

	if (!READ_ONCE(mdata->ptype)) {
		marker_probe_func *func = READ_ONCE(mdata->single.func);

		va_start(args, call_private);
		func(mdata->single.probe_private, call_private, mdata->format, &args);
		va_end(args);
	} else {
		struct marker_probe_closure *multi = READ_ONCE(mdata->multi);
		int i;

		for (i = 0; multi[i].func; i++) {
			va_start(args, call_private);
			multi[i].func(multi[i].probe_private, call_private,
				      mdata->format, &args);
			va_end(args);
		}
	}
}
NOTRACE_SYMBOL(marker_probe_cb);
NOKPROBE_SYMBOL(marker_probe_cb);

/*
 * Walk a marker's format as vsnprintf does and take each argument with
 * va_arg at its declared width, widened to u64 (%s and %p: the address);
 * stops at the first conversion it does not know. The number taken.
 */
static notrace unsigned int marker_args(const char *fmt, va_list *args, u64 *argv,
					unsigned int max)
{
	unsigned int n = 0;
	const char *p;
	va_list ap;

	va_copy(ap, *args);
	for (p = fmt; *p && n < max; p++) {
		int longs = 0;

		if (*p != '%')
			continue;
		p++;
		if (*p == '%')
			continue;
		while (*p == '-' || *p == '+' || *p == ' ' || *p == '#' || *p == '0')
			p++;
		while (*p >= '0' && *p <= '9')
			p++;
		for (;; p++) {
			if (*p == 'l')
				longs++;
			else if (*p == 'z')
				longs = sizeof(size_t) == sizeof(long) ? 1 : 0;
			else if (*p != 'h')
				break;
		}
		switch (*p) {
		case 'd': case 'i':
			if (longs >= 2)
				argv[n++] = (u64)va_arg(ap, long long);
			else if (longs == 1)
				argv[n++] = (u64)(s64)va_arg(ap, long);
			else
				argv[n++] = (u64)(s64)va_arg(ap, int);
			break;
		case 'u': case 'x': case 'X': case 'o': case 'c':
			if (longs >= 2)
				argv[n++] = va_arg(ap, unsigned long long);
			else if (longs == 1)
				argv[n++] = va_arg(ap, unsigned long);
			else
				argv[n++] = va_arg(ap, unsigned int);
			break;
		case 's': case 'p':
			argv[n++] = (unsigned long)va_arg(ap, void *);
			break;
		default:
			goto out;	/* not a conversion we know: stop here */
		}
		if (!*p)
			break;
	}
out:
	va_end(ap);
	return n;
}

notrace void marker_probe_hc(void *probe_private, void *call_private,
			     const char *fmt, va_list *args)
{
	u64 argv[MARKER_MAX_ARGS];
	unsigned int n = marker_args(fmt, args, argv, MARKER_MAX_ARGS);

	(void)call_private;
	hypercall3(HC_MARKER, (unsigned long)probe_private, (unsigned long)argv, n);
}
NOTRACE_SYMBOL(marker_probe_hc);
NOKPROBE_SYMBOL(marker_probe_hc);

/*
 * The marker probe that records into this CPU's ring buffer, as the
 * tracepoint probes of kernel/trace_probes.c do: reserve, fill, commit (a
 * full buffer counts the record discarded in ring_buffer_reserve). The
 * host connects it with probe_private = a struct marker of that name.
 * Record: char name[32] (truncated), nargs, then the first
 * RB_MARKER_ARGS arguments as unsigned longs (marker_args' values,
 * truncated to a word; unused slots 0). tracing/events.py reads it.
 */
notrace void marker_probe_ring(void *probe_private, void *call_private,
			       const char *fmt, va_list *args)
{
	const struct marker *m = probe_private;
	u64 argv[RB_MARKER_ARGS];
	unsigned int i, n = marker_args(fmt, args, argv, RB_MARKER_ARGS);
	unsigned long *p = ring_buffer_reserve(RB_EV_MARKER, RB_MARKER_NAME_LEN +
					       (1 + RB_MARKER_ARGS) * sizeof(unsigned long));
	char *name;

	(void)call_private;
	if (!p)
		return;
	name = (char *)p;
	for (i = 0; i < RB_MARKER_NAME_LEN - 1 && m->name[i]; i++)
		name[i] = m->name[i];
	for (; i < RB_MARKER_NAME_LEN; i++)
		name[i] = 0;
	p += RB_MARKER_NAME_LEN / sizeof(unsigned long);
	p[0] = n;
	for (i = 0; i < RB_MARKER_ARGS; i++)
		p[1 + i] = i < n ? (unsigned long)argv[i] : 0;
	ring_buffer_commit();
}
NOTRACE_SYMBOL(marker_probe_ring);
NOKPROBE_SYMBOL(marker_probe_ring);

/* The module API: the host connects and arms (patcher/markers.py, HC_MODULE). */
int marker_probe_register(const char *name, const char *format,
			  marker_probe_func *probe, void *probe_private)
{
	const void *args[4] = { name, format, probe, probe_private };

	return (int)hypercall2(HC_MODULE, MOD_MARKER_REGISTER, (unsigned long)args);
}

int marker_probe_unregister(const char *name, marker_probe_func *probe, void *probe_private)
{
	const void *args[4] = { name, NULL, probe, probe_private };

	return (int)hypercall2(HC_MODULE, MOD_MARKER_UNREGISTER, (unsigned long)args);
}

int marker_arm(const char *name)
{
	return (int)hypercall2(HC_MODULE, MOD_MARKER_ARM, (unsigned long)name);
}

int marker_disarm(const char *name)
{
	return (int)hypercall2(HC_MODULE, MOD_MARKER_DISARM, (unsigned long)name);
}
