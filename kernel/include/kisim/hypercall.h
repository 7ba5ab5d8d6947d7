/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host hypercall ABI, shared by the guest (C) and the host
 * (sim/guest.py parses the HC_* lines below; keep them one per line).
 *
 * The guest executes its arch's system-call instruction (x86-64 `syscall`,
 * ARM `svc #0`, PowerPC `sc`) with the hypercall number in argument
 * register 0 and up to three arguments in argument registers 1..3
 * (x86-64 rdi; rsi rdx rcx -- ARM r0; r1 r2 r3 -- PowerPC r3; r4 r5 r6).
 * The result comes back in the return register (rax, r0, r3).
 *
 * These are not the guest's own system calls: those are ordinary calls
 * through system_call()/do_syscall() (kernel/syscall.c).
 */
#ifndef _KISIM_HYPERCALL_H
#define _KISIM_HYPERCALL_H

#define HC_EXIT		0	/* a1 = status: this CPU is done; it never returns */
#define HC_WRITE	1	/* a1 = buffer, a2 = length: console output */
#define HC_CHECKSUM	2	/* a1 = u32 checksum of the workload */
#define HC_PANIC	3	/* a1 = NUL-terminated message: the guest gave up */
#define HC_IDLE		4	/* nothing to run: the host may end this CPU's turn */
#define HC_WORKLOAD	5	/* a1 = workload name, a2 = size actually used */
#define HC_MARKER	6	/* a1 = struct marker *, a2 = u64 args[], a3 = count */
#define HC_TRACEPOINT	7	/* a1 = struct tracepoint *, a2 = unsigned long args[], a3 = count */
#define HC_CLOCK	8	/* a1 = u64 *: the host stores this CPU's modeled clock (ns) there */
#define HC_KPROBE	20	/* a1 = KPROBE_HC_* op, a2 = struct pt_regs *, a3 = struct kprobe * */
#define HC_MODULE	21	/* a1 = MOD_* op (kisim/module.h), a2, a3: the module API's host half */
#define HC_KPROBE_EVENT	22	/* a1 = struct pt_regs *, a2 = struct kprobe * (a3 = 0) or
				 * struct kretprobe_instance * (a3 = 1): the host fetches a kprobe
				 * event's record into kprobe_event_record[cpu]; its length, 0 if
				 * the event's filter rejects it (kernel/trace_probes.c) */
#define HC_EVENT_FILTER	23	/* a1 = a reserved ring-buffer record: 1 if its event's filter
				 * keeps it, 0 if not (kernel/ring_buffer.c) */

#define BOOT_PARAMS_MAGIC	0x4b53494d	/* "KSIM" */
/*
 * A built-in workload's name or a module's MODULE:FUNC, and its NUL: v5.10
 * allows a module name of MODULE_NAME_LEN (64 - sizeof(long)) bytes and a
 * symbol of KSYM_NAME_LEN (128), NULs included (include/linux/module.h,
 * include/linux/kallsyms.h): 59 + 1 + 127 + 1 on a 32-bit kernel.
 */
#define WORKLOAD_NAME_LEN	192

#ifndef __ASSEMBLY__
#include <linux/types.h>

/*
 * Written by the host into the symbol `boot_params` before the first
 * instruction runs (layout: u32 magic, u32 size, u32 flags,
 * char workload[WORKLOAD_NAME_LEN]; in the guest's byte order).
 */
struct boot_params {
	u32 magic;
	u32 size;		/* workload size; 0 = the workload's default */
	u32 flags;
	char workload[WORKLOAD_NAME_LEN];
};

extern struct boot_params boot_params;

#include <asm/hypercall.h>

static __always_inline unsigned long hypercall0(unsigned long nr)
{
	return arch_hypercall(nr, 0, 0, 0);
}

static __always_inline unsigned long hypercall1(unsigned long nr, unsigned long a1)
{
	return arch_hypercall(nr, a1, 0, 0);
}

static __always_inline unsigned long hypercall2(unsigned long nr, unsigned long a1,
						unsigned long a2)
{
	return arch_hypercall(nr, a1, a2, 0);
}

static __always_inline unsigned long hypercall3(unsigned long nr, unsigned long a1,
						unsigned long a2, unsigned long a3)
{
	return arch_hypercall(nr, a1, a2, a3);
}
#endif

#endif
