/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/preempt.h without CONFIG_PREEMPT_COUNT (v5.10): kisim's
 * kernel is not preemptible (its scheduler switches tasks only when they
 * block or yield), so preemptible() is constant 0, as there.
 */
#ifndef _LINUX_PREEMPT_H
#define _LINUX_PREEMPT_H

#define preemptible()		0
#define preempt_disable()	barrier()
#define preempt_enable()	barrier()

#endif
