/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RCU read side and pointer publication of include/linux/rcupdate.h
 * (v5.10), for a non-preemptible kernel: rcu_read_lock() only disables
 * preemption (kisim's kernel never preempts), rcu_assign_pointer() is a
 * release store, rcu_dereference() a READ_ONCE (every kisim arch orders
 * dependent loads). There is no grace-period machinery: synchronize_rcu()
 * and call_rcu() are not provided, so an updater cannot free what readers
 * may still see; use it for data that is published once or never freed.
 */
#ifndef _LINUX_RCUPDATE_H
#define _LINUX_RCUPDATE_H

#include <linux/types.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>

static inline void rcu_read_lock(void)		{ preempt_disable(); }
static inline void rcu_read_unlock(void)	{ preempt_enable(); }
static inline void rcu_read_lock_bh(void)	{ preempt_disable(); }
static inline void rcu_read_unlock_bh(void)	{ preempt_enable(); }
static inline void rcu_read_lock_sched(void)	{ preempt_disable(); }
static inline void rcu_read_unlock_sched(void)	{ preempt_enable(); }

#define RCU_INITIALIZER(v)		(typeof(*(v)) __force __rcu *)(v)
#define RCU_INIT_POINTER(p, v)		WRITE_ONCE(p, RCU_INITIALIZER(v))
#define rcu_assign_pointer(p, v)	smp_store_release(&(p), RCU_INITIALIZER(v))
#define rcu_access_pointer(p)		READ_ONCE(p)
#define rcu_dereference(p)		READ_ONCE(p)
#define rcu_dereference_bh(p)		READ_ONCE(p)
#define rcu_dereference_sched(p)	READ_ONCE(p)
#define rcu_dereference_raw(p)		READ_ONCE(p)
#define rcu_dereference_check(p, c)	READ_ONCE(p)
#define rcu_dereference_protected(p, c)	(p)
#define rcu_pointer_handoff(p)		(p)
#define rcu_read_lock_held()		1

#endif
