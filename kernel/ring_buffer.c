// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU ring buffer (layout and protocol in <linux/ring_buffer.h>).
 *
 * Reserve/commit as in LTTng's lib_ring_buffer: reserve reads the clock,
 * switches sub-buffers when the record does not fit (closing the old one
 * with its end time and the discarded counter, which becomes the CTF
 * packet's cumulative events_discarded), and returns where to write the
 * payload; commit publishes it. Only the owning CPU writes records; the
 * host consumer reads closed sub-buffers and moves ->consumed between any
 * two instructions, which only the overwrite push has to race (rb_switch).
 */
#include <linux/kernel.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <kisim/hypercall.h>

/* Filled by the host before boot; subbuf_size == 0 means tracing is off. */
struct rb_channel ring_buffer_channel;

notrace u64 trace_clock_read(void)
{
	u64 ns = 0;

	hypercall1(HC_CLOCK, (unsigned long)&ns);
	return ns;
}
NOTRACE_SYMBOL(trace_clock_read);
NOKPROBE_SYMBOL(trace_clock_read);

static notrace struct rb_subbuf_header *rb_subbuf(struct rb_channel *ch, struct rb_cpu *b,
						  u32 seq)
{
	return (struct rb_subbuf_header *)(b->base + (seq % ch->nr_subbufs) * ch->subbuf_size);
}

static notrace void rb_switch_out(struct rb_channel *ch, struct rb_cpu *b, u64 ts)
{
	struct rb_subbuf_header *h = rb_subbuf(ch, b, b->head);

	h->timestamp_end = ts;
	h->events_discarded = b->discarded;
	h->data_size = b->offset;
	h->nr_events = b->nr_events;
	h->closed = 1;
	barrier();		/* the host reads a sub-buffer once head has passed it */
	b->head++;
	b->open = 0;
}

static notrace void rb_switch_in(struct rb_channel *ch, struct rb_cpu *b, u64 ts)
{
	struct rb_subbuf_header *h = rb_subbuf(ch, b, b->head);

	h->timestamp_begin = ts;
	h->seq = b->head;
	h->closed = 0;
	b->offset = 0;
	b->nr_events = 0;
	b->open = 1;
}

/*
 * Open a new sub-buffer; false if the record is discarded. The host
 * consumer may run between any two instructions and move ->consumed to
 * ->head, so in overwrite mode the writer pushes the reader with a
 * cmpxchg, as lib_ring_buffer's writer does: if the host took the oldest
 * sub-buffer meanwhile, the cmpxchg fails and nothing is counted twice.
 */
static notrace noinline bool rb_switch(struct rb_channel *ch, struct rb_cpu *b, u64 ts)
{
	u32 consumed;

	if (b->open)
		rb_switch_out(ch, b, ts);
	while (b->head - (consumed = READ_ONCE(b->consumed)) >= ch->nr_subbufs) {
		u32 lost;

		if (ch->mode == RB_MODE_DISCARD) {
			b->discarded++;
			return false;
		}
		lost = rb_subbuf(ch, b, consumed)->nr_events;
		if (__atomic_compare_exchange_n(&b->consumed, &consumed, consumed + 1, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			b->overwritten += lost;
	}
	rb_switch_in(ch, b, ts);
	return true;
}
NOTRACE_SYMBOL(rb_switch);
NOKPROBE_SYMBOL(rb_switch);

notrace void *ring_buffer_reserve(unsigned int id, unsigned int payload_len)
{
	struct rb_channel *ch = &ring_buffer_channel;
	struct rb_cpu *b = &ch->cpu[smp_processor_id()];
	struct task_struct *tsk = current;
	struct rb_event_header *ev;
	u32 room = ch->subbuf_size - sizeof(struct rb_subbuf_header);
	u32 size = (sizeof(*ev) + payload_len + 7) & ~7u;
	u64 ts = trace_clock_read();

	b->produced++;
	if (unlikely(!b->open || b->offset + size > room) && !rb_switch(ch, b, ts))
		return NULL;
	ev = (struct rb_event_header *)((u8 *)(rb_subbuf(ch, b, b->head) + 1) + b->offset);
	ev->timestamp = ts;
	ev->id = id;
	ev->size = size;
	if (tsk) {
		ev->tid = (s32)tsk->pid;
		__builtin_memcpy(ev->comm, tsk->comm, RB_COMM_LEN);
	} else {
		ev->tid = 0;
		__builtin_memset(ev->comm, 0, RB_COMM_LEN);
	}
	b->reserved = size;
	return ev + 1;
}
NOTRACE_SYMBOL(ring_buffer_reserve);
NOKPROBE_SYMBOL(ring_buffer_reserve);

notrace void ring_buffer_commit(void)
{
	struct rb_cpu *b = &ring_buffer_channel.cpu[smp_processor_id()];

	b->offset += b->reserved;
	b->nr_events++;
}
NOTRACE_SYMBOL(ring_buffer_commit);
NOKPROBE_SYMBOL(ring_buffer_commit);

/*
 * The commit of an event that has a filter: the host runs the event's filter
 * on the reserved record (HC_EVENT_FILTER, tracing/filter.py). A rejected
 * record is not committed: its reservation is taken back (->produced does
 * not count it) and the next record reuses its bytes, so it never reaches
 * the buffer's data, as the kernel's trace_buffered_event keeps a rejected
 * event out of the ring buffer (kernel/trace/trace.c).
 */
notrace void ring_buffer_commit_filtered(void)
{
	struct rb_channel *ch = &ring_buffer_channel;
	struct rb_cpu *b = &ch->cpu[smp_processor_id()];
	const u8 *rec = (const u8 *)(rb_subbuf(ch, b, b->head) + 1) + b->offset;

	if (!hypercall1(HC_EVENT_FILTER, (unsigned long)rec)) {
		b->produced--;
		return;
	}
	ring_buffer_commit();
}
NOTRACE_SYMBOL(ring_buffer_commit_filtered);
NOKPROBE_SYMBOL(ring_buffer_commit_filtered);
