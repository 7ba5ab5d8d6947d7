/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HC_MODULE operations: the parts of the module API (v5.10) whose work
 * kisim does on the host, where the kernel's text patching lives
 * (probes/kprobes.py, patcher/). sim/guest.py parses the MOD_* lines:
 * keep them one per line. Each returns 0 or the kernel's -errno.
 *
 * a2 is the object (struct kprobe *, struct kretprobe *, struct static_key *);
 * a3 is unused.
 */
#ifndef _KISIM_MODULE_H
#define _KISIM_MODULE_H

#define MOD_KPROBE_REGISTER		1	/* register_kprobe(a2) */
#define MOD_KPROBE_UNREGISTER		2	/* unregister_kprobe(a2) */
#define MOD_KPROBE_ENABLE		3	/* enable_kprobe(a2) */
#define MOD_KPROBE_DISABLE		4	/* disable_kprobe(a2) */
#define MOD_KPROBE_REGISTER_RET		5	/* register_kretprobe(a2) */
#define MOD_KPROBE_UNREGISTER_RET	6	/* unregister_kretprobe(a2) */
#define MOD_STATIC_KEY_UPDATE		16	/* jump_label_update(a2): rewrite the key's sites */
#define MOD_MARKER_REGISTER		32	/* marker_probe_register(*a2: name, format, probe, private) */
#define MOD_MARKER_UNREGISTER		33	/* marker_probe_unregister(*a2: name, -, probe, private) */
#define MOD_MARKER_ARM			34	/* marker_arm(a2 = name) */
#define MOD_MARKER_DISARM		35	/* marker_disarm(a2 = name) */
#define MOD_TRACEPOINT_REGISTER		48	/* tracepoint_probe_register(a2 = name, a3 = probe) */
#define MOD_TRACEPOINT_UNREGISTER	49	/* tracepoint_probe_unregister(a2 = name, a3 = probe) */

#endif
