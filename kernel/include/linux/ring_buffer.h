/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU ring buffers of sub-buffers, written by the guest's trace probes
 * (kernel/trace_probes.c) and drained by a host consumer (tracing/ring.py),
 * after the relay channels of kmemtrace and LTTng's lib_ring_buffer.
 *
 * Each CPU owns nr_subbufs sub-buffers of subbuf_size bytes in memory the
 * host maps and describes in ring_buffer_channel before the first
 * instruction. Only that CPU writes its buffer (probes run without
 * preemption); the host reads closed sub-buffers at turn boundaries and
 * moves `consumed` forward. Sub-buffers are numbered by a running sequence
 * number; number n lives in slot n % nr_subbufs.
 *
 * Modes (as LTTng's "discard" and "overwrite" channels): when every
 * sub-buffer is full and unconsumed, DISCARD drops the new event and counts
 * it; OVERWRITE reuses the oldest unconsumed sub-buffer and counts its
 * events as overwritten. So for every CPU, at every instant:
 *	produced = recorded + discarded + overwritten (+ events still buffered).
 *
 * Every record is the header below plus a payload of unsigned longs (and
 * 16-byte comm arrays), in the guest's byte order, padded to 8 bytes.
 * The RB_EV_* ids and the payload layouts are read by tracing/events.py.
 * Timestamps come from trace_clock_read(): the HC_CLOCK hypercall, answered
 * with the CPU's modeled clock in nanoseconds (see docs/tracing.md).
 */
#ifndef _LINUX_RING_BUFFER_H
#define _LINUX_RING_BUFFER_H

#include <linux/types.h>

#define RB_MODE_DISCARD		0
#define RB_MODE_OVERWRITE	1

#define RB_COMM_LEN		16

/* Event ids: one per probe (tracing/events.py parses these lines). */
#define RB_EV_KMEM_KMALLOC		0
#define RB_EV_KMEM_CACHE_ALLOC		1
#define RB_EV_KMEM_KFREE		2
#define RB_EV_KMEM_CACHE_FREE		3
#define RB_EV_SCHED_SWITCH		4
#define RB_EV_SCHED_WAKEUP		5
/* The function tracers (kernel/ftrace.c): ip, parent_ip / func, depth. */
#define RB_EV_FUNCTION			6
#define RB_EV_FUNCGRAPH_ENTRY		7
#define RB_EV_FUNCGRAPH_EXIT		8
/* A marker hit (kernel/marker.c marker_probe_ring): name, nargs, args. */
#define RB_EV_MARKER			9
#define RB_MARKER_NAME_LEN		32
#define RB_MARKER_ARGS			8

struct rb_event_header {		/* 32 bytes */
	u64 timestamp;			/* ns of this CPU's modeled clock */
	u16 id;				/* RB_EV_* */
	u16 size;			/* whole record, multiple of 8 */
	s32 tid;			/* current->pid */
	char comm[RB_COMM_LEN];		/* current->comm */
};

struct rb_subbuf_header {		/* 40 bytes, at the start of each slot */
	u64 timestamp_begin;		/* first reservation in it */
	u64 timestamp_end;		/* the switch that closed it */
	u64 events_discarded;		/* this CPU's discarded count at close */
	u32 seq;			/* sequence number */
	u32 data_size;			/* bytes of records after this header */
	u32 nr_events;
	u32 closed;
};

struct rb_cpu {				/* 56 bytes on every arch */
	u64 produced;
	u64 discarded;
	u64 overwritten;
	u32 head;			/* sequence number of the current sub-buffer */
	u32 open;			/* sub-buffer `head` takes records */
	u32 offset;			/* committed bytes in it */
	u32 nr_events;
	u32 consumed;			/* next sequence number the host reads */
	u32 reserved;			/* size of the record being written */
	u8 *base;			/* nr_subbufs * subbuf_size bytes */
} __attribute__((aligned(8)));

struct rb_channel {
	u32 subbuf_size;
	u32 nr_subbufs;
	u32 mode;
	u32 nr_cpus;
	struct rb_cpu cpu[CONFIG_NR_CPUS];
};

extern struct rb_channel ring_buffer_channel;

u64 trace_clock_read(void);
void *ring_buffer_reserve(unsigned int id, unsigned int payload_len);
void ring_buffer_commit(void);
void ring_buffer_commit_filtered(void);

#endif
