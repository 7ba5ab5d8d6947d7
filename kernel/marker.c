// SPDX-License-Identifier: GPL-2.0
/*
 * Marker probes living in the guest.
 *
 * __mark_empty_function is what every marker's `call` points at until a
 * probe is connected. marker_probe_hc is the probe the host connects to
 * receive events: it walks the marker's format like vsnprintf does, takes
 * each argument with va_arg at its declared width and hands the host an
 * array of u64 (HC_MARKER: marker address, array, count). %s passes the
 * string's address.
 */
#include <linux/kernel.h>
#include <linux/marker.h>
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <kisim/hypercall.h>

#define MARKER_MAX_ARGS	16

notrace void __mark_empty_function(const struct marker *mdata, void *private,
				   const char *fmt, ...)
{
	(void)mdata; (void)private; (void)fmt;
}
NOTRACE_SYMBOL(__mark_empty_function);
NOKPROBE_SYMBOL(__mark_empty_function);

notrace void marker_probe_hc(const struct marker *mdata, void *private,
			     const char *fmt, ...)
{
	u64 args[MARKER_MAX_ARGS];
	unsigned int n = 0;
	const char *p;
	va_list ap;

	(void)private;
	va_start(ap, fmt);
	for (p = fmt; *p && n < MARKER_MAX_ARGS; p++) {
		int longs = 0, shorts = 0;

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
			else if (*p == 'h')
				shorts++;
			else if (*p == 'z')
				longs = sizeof(size_t) == sizeof(long) ? 1 : 0;
			else
				break;
		}
		switch (*p) {
		case 'd': case 'i':
			if (longs >= 2)
				args[n++] = (u64)va_arg(ap, long long);
			else if (longs == 1)
				args[n++] = (u64)(s64)va_arg(ap, long);
			else
				args[n++] = (u64)(s64)va_arg(ap, int);
			break;
		case 'u': case 'x': case 'X': case 'o': case 'c':
			if (longs >= 2)
				args[n++] = va_arg(ap, unsigned long long);
			else if (longs == 1)
				args[n++] = va_arg(ap, unsigned long);
			else
				args[n++] = va_arg(ap, unsigned int);
			break;
		case 's': case 'p':
			args[n++] = (unsigned long)va_arg(ap, void *);
			break;
		default:
			(void)shorts;
			p--;	/* not a conversion we know: stop here */
			goto out;
		}
		if (!*p)
			break;
	}
out:
	va_end(ap);
	hypercall3(HC_MARKER, (unsigned long)mdata, (unsigned long)args, n);
}
NOTRACE_SYMBOL(marker_probe_hc);
NOKPROBE_SYMBOL(marker_probe_hc);
