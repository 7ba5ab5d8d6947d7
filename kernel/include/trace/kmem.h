/* SPDX-License-Identifier: GPL-2.0 */
/* Slab tracepoints (include/trace/kmemtrace.h, 2.6.30: "kmemtrace: use tracepoints"). */
#ifndef _TRACE_KMEM_H
#define _TRACE_KMEM_H

#include <linux/tracepoint.h>

DECLARE_TRACE(kmalloc,
	TP_PROTO(unsigned long call_site, const void *ptr, size_t bytes_req,
		 size_t bytes_alloc, gfp_t gfp_flags),
	TP_ARGS(call_site, ptr, bytes_req, bytes_alloc, gfp_flags))

DECLARE_TRACE(kmem_cache_alloc,
	TP_PROTO(unsigned long call_site, const void *ptr, size_t bytes_req,
		 size_t bytes_alloc, gfp_t gfp_flags),
	TP_ARGS(call_site, ptr, bytes_req, bytes_alloc, gfp_flags))

DECLARE_TRACE(kfree,
	TP_PROTO(unsigned long call_site, const void *ptr),
	TP_ARGS(call_site, ptr))

DECLARE_TRACE(kmem_cache_free,
	TP_PROTO(unsigned long call_site, const void *ptr),
	TP_ARGS(call_site, ptr))

#endif
