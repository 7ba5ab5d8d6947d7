/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's kprobe core, after Linux v5.10 include/linux/kprobes.h.
 *
 * Registration runs on the host (probes/kprobes.py): it fills a struct
 * kprobe from kprobe_pool[] (or the module's own, when a module calls
 * register_kprobe()), links it into kprobe_table[] and writes the
 * breakpoint through the patcher. A hit runs kprobe_handler()
 * (kernel/kprobes.c) as guest code; every layout here is mirrored there.
 * Not to be included with <linux/syscalls.h>, whose struct pt_regs is the
 * syscall frame.
 */
#ifndef _KISIM_KPROBES_H
#define _KISIM_KPROBES_H

#include <linux/kprobes.h>

#ifdef CONFIG_KPROBES
#include <asm/kprobes.h>	/* struct pt_regs, struct arch_specific_insn */
#include <kisim/ptrace.h>	/* regs_return_value() and the other accessors */

#define KPROBE_HASH_BITS	6	/* kernel/kprobes.c */
#define KPROBE_TABLE_SIZE	(1 << KPROBE_HASH_BITS)
#define KPROBE_POOL		CONFIG_KPROBE_POOL	/* struct kprobe objects the host may hand out */

/* kprobe.flags (include/linux/kprobes.h) */
#define KPROBE_FLAG_GONE	1
#define KPROBE_FLAG_DISABLED	2
#define KPROBE_FLAG_OPTIMIZED	4
#define KPROBE_FLAG_FTRACE	8	/* probe on an mcount site, through ftrace */

/* kprobe_ctlblk.kprobe_status (include/linux/kprobes.h) */
#define KPROBE_HIT_ACTIVE	0x00000001
#define KPROBE_HIT_SS		0x00000002
#define KPROBE_REENTER		0x00000004
#define KPROBE_HIT_SSDONE	0x00000008

struct kprobe;
typedef int (*kprobe_pre_handler_t)(struct kprobe *, struct pt_regs *);
typedef void (*kprobe_post_handler_t)(struct kprobe *, struct pt_regs *, unsigned long);
typedef int (*kprobe_fault_handler_t)(struct kprobe *, struct pt_regs *, int trapnr);

/*
 * Every field is one word: the host reads and writes them by index. A
 * module fills symbol_name (+ offset) or addr, and the handlers, as with
 * v5.10's struct kprobe; register_kprobe() fills the rest.
 */
struct kprobe {
	struct kprobe *next;			/* hlist in kprobe_table[] */
	kprobe_opcode_t *addr;
	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
	kprobe_fault_handler_t fault_handler;	/* v5.10; removed in v5.14 */
	unsigned long flags;
	unsigned long nmissed;
	unsigned long opcode;			/* the probed instruction's first word/byte */
	struct arch_specific_insn ainsn;
	unsigned long hit_index;		/* kisim: this probe's column of kprobe_hits */
	struct kprobe *list;			/* aggr_kprobe: its first probe; a probe in
						 * an aggr_kprobe: the next one (the
						 * kernel's struct list_head list) */
	const char *symbol_name;		/* where to probe: a symbol ... */
	unsigned long offset;			/* ... and an offset into it */
};

/* Return probes (include/linux/kprobes.h, CONFIG_KRETPROBES). */
#define KRETPROBE_POOL		256
/*
 * Bytes the host carves instances from: each is a struct
 * kretprobe_instance followed by rp->data_size bytes of data[] (v5.10
 * kmallocs sizeof(*inst) + rp->data_size), word aligned.
 */
#define KRETPROBE_INSTANCE_BYTES	262144	/* 256 KiB */

struct kretprobe_instance;
typedef int (*kretprobe_handler_t)(struct kretprobe_instance *, struct pt_regs *);

struct kretprobe {
	struct kprobe kp;			/* at entry; pre_handler = pre_handler_kretprobe */
	kretprobe_handler_t handler;
	kretprobe_handler_t entry_handler;
	long maxactive;				/* <= 0: the default, set at registration */
	unsigned long nmissed;
	size_t data_size;			/* bytes of ri->data[] per instance */
	struct kretprobe_instance *free_instances;
	unsigned long lock;			/* spinlock_t, one word for the host */
};

struct kretprobe_instance {
	struct kretprobe_instance *next;	/* rp->free_instances or kretprobe_inst_table[] */
	struct kretprobe *rp;			/* NULL once the kretprobe is unregistered */
	unsigned long ret_addr;
	struct task_struct *task;
	unsigned long sp;			/* the stack pointer at entry: which frame
						 * returns through this instance (v5.15 ri->fp) */
	char data[];				/* rp->data_size bytes, the handlers' own */
};

extern struct kretprobe kretprobe_pool[KRETPROBE_POOL];
extern u8 kretprobe_instance_area[KRETPROBE_INSTANCE_BYTES];
extern struct kretprobe_instance *kretprobe_inst_table[KPROBE_TABLE_SIZE];
extern void kretprobe_trampoline(void);
extern void kretprobe_trampoline_end(void);
unsigned long kretprobe_find_ret_addr(struct task_struct *task, unsigned long sp,
				      unsigned long pc);
int pre_handler_kretprobe(struct kprobe *p, struct pt_regs *regs);
unsigned long trampoline_handler(struct pt_regs *regs);

/* Per-CPU state (arch/x86/include/asm/kprobes.h struct kprobe_ctlblk). */
struct kprobe_ctlblk {
	unsigned long kprobe_status;
	unsigned long kprobe_saved_flags;
	struct kprobe *prev_kprobe;
	unsigned long prev_status;
};

extern struct kprobe *kprobe_table[KPROBE_TABLE_SIZE];
extern struct kprobe kprobe_pool[KPROBE_POOL];
extern struct kprobe *current_kprobe[CONFIG_NR_CPUS];
/* kisim's own counter: per CPU, so that it stays exact without atomics. */
extern unsigned long kprobe_hits[CONFIG_NR_CPUS][KPROBE_POOL];
extern struct kprobe_ctlblk kprobe_ctlblk[CONFIG_NR_CPUS];

/* HC_KPROBE operations (kernel/include/kisim/hypercall.h) */
#define KPROBE_HC_RETURN	0	/* exception return: restore the saved pt_regs */
#define KPROBE_HC_PRE		1	/* call the host pre_handler of a2's kprobe */
#define KPROBE_HC_POST		2	/* call the host post_handler */
#define KPROBE_HC_RET		3	/* call the host kretprobe handler of a3's kretprobe */
#define KPROBE_HC_FAULT		4	/* call the host fault_handler of a3's kprobe; the
					 * trap number is in the bits above KPROBE_HC_SHIFT */
#define KPROBE_HC_SHIFT		8

/*
 * The module API (kernel/kprobes.c, v5.10). Registration does the
 * kernel's work on the host (probes/kprobes.py), reached through
 * HC_MODULE: the checks, the instruction slot, text_mutex and the
 * arch's text-patching protocol, run at the point of the call on the
 * calling CPU. The return value is 0 or the kernel's -errno.
 */
int register_kprobe(struct kprobe *p);
void unregister_kprobe(struct kprobe *p);
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);
int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
int register_kretprobes(struct kretprobe **rps, int num);
void unregister_kretprobes(struct kretprobe **rps, int num);
int enable_kprobe(struct kprobe *kp);
int disable_kprobe(struct kprobe *kp);

/* include/linux/kprobes.h: a kretprobe is enabled and disabled by its kprobe. */
static inline int enable_kretprobe(struct kretprobe *rp)
{
	return enable_kprobe(&rp->kp);
}

static inline int disable_kretprobe(struct kretprobe *rp)
{
	return disable_kprobe(&rp->kp);
}

/*
 * kisim's addition: why the last module call above was refused, as the
 * host's one-line reason (the kernel returns the errno and prints
 * nothing), NUL-terminated; for a self-test's "# SKIP" line.
 */
#define KPROBE_REFUSAL_LEN	160
extern char kprobe_last_refusal[KPROBE_REFUSAL_LEN];

int aggr_pre_handler(struct kprobe *p, struct pt_regs *regs);
void aggr_post_handler(struct kprobe *p, struct pt_regs *regs, unsigned long flags);
int kprobe_handler(struct pt_regs *regs);
int kprobe_debug_handler(struct pt_regs *regs);
int kprobe_fault_handler(struct pt_regs *regs, int trapnr);
int kprobe_fault_target(unsigned long value);
int kprobe_empty_pre_handler(struct kprobe *p, struct pt_regs *regs);
void kprobe_empty_post_handler(struct kprobe *p, struct pt_regs *regs, unsigned long flags);
#endif /* CONFIG_KPROBES */

#endif
