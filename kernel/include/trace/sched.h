/* SPDX-License-Identifier: GPL-2.0 */
/* Scheduler tracepoints (include/trace/sched.h, 2.6.28). */
#ifndef _TRACE_SCHED_H
#define _TRACE_SCHED_H

#include <linux/tracepoint.h>

struct task_struct;

DECLARE_TRACE(sched_switch,
	TP_PROTO(struct task_struct *prev, struct task_struct *next),
	TP_ARGS(prev, next))

DECLARE_TRACE(sched_wakeup,
	TP_PROTO(struct task_struct *p),
	TP_ARGS(p))

#endif
