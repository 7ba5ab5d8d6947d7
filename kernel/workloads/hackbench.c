// SPDX-License-Identifier: GPL-2.0
/*
 * hackbench: HB_GROUPS groups of HB_SENDERS senders and HB_RECEIVERS
 * receivers (receivers created first, as in hackbench). Every sender
 * sends `loops` rounds of one message to each receiver of its group,
 * yielding after each round; a message is a kmalloc'd buffer put on the
 * receiver's pipe, and a receiver sleeps while its pipe is empty.
 *
 *	len(g, s, r, seq) = 16 + (((g*7 + s*3 + r + seq) & 7) << 4)
 *	data[j] = (u8)(s*31 + r*17 + seq*7 + j)
 *	receiver (g, r): acc += mix32(fnv1a(data) ^ (s << 16) ^ (seq << 4) ^ g)
 *	checksum = mix32(fold_results(acc[g*R + r]) + messages)
 *
 * Addition makes each receiver's result independent of arrival order.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <kisim/workload.h>

#define HB_GROUPS	2
#define HB_SENDERS	4
#define HB_RECEIVERS	4

struct hb_msg {
	struct hb_msg *next;
	u32 sender, seq, len;
	u8 data[];
};

struct hb_pipe {
	spinlock_t lock;
	struct hb_msg *head, *tail;
	struct task_struct *waiter;
};

struct hb_actor {
	u32 group, index;
};

static u32 hb_loops;
static struct hb_pipe hb_pipes[HB_GROUPS][HB_RECEIVERS];
static struct hb_actor hb_actors[HB_GROUPS][HB_SENDERS + HB_RECEIVERS];
static u32 hb_results[HB_GROUPS * HB_RECEIVERS];

static void pipe_send(struct hb_pipe *pipe, struct hb_msg *m)
{
	struct task_struct *waiter;

	m->next = NULL;
	spin_lock(&pipe->lock);
	if (pipe->tail)
		pipe->tail->next = m;
	else
		pipe->head = m;
	pipe->tail = m;
	waiter = pipe->waiter;
	pipe->waiter = NULL;
	spin_unlock(&pipe->lock);
	if (waiter)
		wake_up_process(waiter);
}

static struct hb_msg *pipe_recv(struct hb_pipe *pipe)
{
	struct hb_msg *m;

	for (;;) {
		spin_lock(&pipe->lock);
		m = pipe->head;
		if (m) {
			pipe->head = m->next;
			if (!pipe->head)
				pipe->tail = NULL;
			spin_unlock(&pipe->lock);
			return m;
		}
		pipe->waiter = current;
		set_current_state(TASK_INTERRUPTIBLE);
		spin_unlock(&pipe->lock);
		schedule();
	}
}

static int hb_sender(void *arg)
{
	struct hb_actor *a = arg;
	u32 g = a->group, s = a->index, seq, r, j;

	for (seq = 0; seq < hb_loops; seq++) {
		for (r = 0; r < HB_RECEIVERS; r++) {
			u32 len = 16 + (((g * 7 + s * 3 + r + seq) & 7) << 4);
			struct hb_msg *m;

			memory_pressure_walk();
			m = kmalloc(sizeof(*m) + len, GFP_KERNEL);

			if (!m)
				panic("hackbench: out of memory");
			m->sender = s;
			m->seq = seq;
			m->len = len;
			for (j = 0; j < len; j++)
				m->data[j] = (u8)(s * 31 + r * 17 + seq * 7 + j);
			pipe_send(&hb_pipes[g][r], m);
		}
		schedule();
	}
	return 0;
}

static int hb_receiver(void *arg)
{
	struct hb_actor *a = arg;
	u32 g = a->group, r = a->index, acc = 0, n, j;

	for (n = 0; n < HB_SENDERS * hb_loops; n++) {
		struct hb_msg *m = pipe_recv(&hb_pipes[g][r]);
		u32 h = 0x811c9dc5U;

		for (j = 0; j < m->len; j++)
			h = (h ^ m->data[j]) * 0x01000193U;
		acc += mix32(h ^ (m->sender << 16) ^ (m->seq << 4) ^ g);
		kfree(m);
	}
	hb_results[g * HB_RECEIVERS + r] = acc;
	return 0;
}

u32 hackbench_run(u32 loops)
{
	char name[TASK_COMM_LEN];
	u32 g, i;

	hb_loops = loops;
	for (g = 0; g < HB_GROUPS; g++) {
		for (i = 0; i < HB_RECEIVERS; i++) {
			struct hb_actor *a = &hb_actors[g][HB_SENDERS + i];

			spin_lock_init(&hb_pipes[g][i].lock);
			a->group = g;
			a->index = i;
			snprintf(name, sizeof(name), "hb-recv/%u.%u", g, i);
			kernel_thread(hb_receiver, a, name);
		}
		for (i = 0; i < HB_SENDERS; i++) {
			struct hb_actor *a = &hb_actors[g][i];

			a->group = g;
			a->index = i;
			snprintf(name, sizeof(name), "hb-send/%u.%u", g, i);
			kernel_thread(hb_sender, a, name);
		}
	}
	wait_for_children();
	return mix32(fold_results(hb_results, HB_GROUPS * HB_RECEIVERS) +
		     HB_GROUPS * HB_SENDERS * HB_RECEIVERS * loops);
}
