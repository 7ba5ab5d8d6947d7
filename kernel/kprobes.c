// SPDX-License-Identifier: GPL-2.0
/*
 * The kprobe hit path, run as guest code so that its instructions are
 * counted exactly. Semantics follow Linux v5.10: kernel/kprobes.c
 * (kprobe_table, get_kprobe, per-CPU current_kprobe), and the arch's
 * kprobe_handler / post handler (arch/x86/kernel/kprobes/core.c,
 * arch/arm/probes/kprobes/core.c, arch/powerpc/kernel/kprobes.c), split
 * into the generic flow below and the arch hooks of <asm/kprobes-core.h>.
 *
 * The machine (probes/kprobes.py) plays the hardware and the trap entry:
 * on the breakpoint it saves the registers into a struct pt_regs on the
 * interrupted stack and calls kprobe_handler(regs); on the single-step
 * trap it calls kprobe_debug_handler(regs). Both return into
 * kprobe_exc_return, whose hypercall is the exception return.
 * Registration is done by the host, which fills kprobe_pool[] (or a
 * module's own struct kprobe, see register_kprobe() below) and links
 * kprobe_table[] (register_kprobe's work is not on the hit path).
 */
#include <linux/types.h>
#include <linux/ftrace.h>
#include <kisim/kprobes.h>
#include <kisim/hypercall.h>
#include <kisim/module.h>
#include <kisim/thread_info.h>
#include <linux/errno.h>
#include <linux/spinlock.h>

#ifdef CONFIG_KPROBES
#include <asm/kprobes-core.h>

struct kprobe *kprobe_table[KPROBE_TABLE_SIZE];
struct kprobe kprobe_pool[KPROBE_POOL];
struct kprobe *current_kprobe[CONFIG_NR_CPUS];
unsigned long kprobe_hits[CONFIG_NR_CPUS][KPROBE_POOL];
struct kprobe_ctlblk kprobe_ctlblk[CONFIG_NR_CPUS];
u8 kprobe_insn_slots[KPROBE_POOL][KPROBE_SLOT_BYTES] __aligned(64);
#ifdef CONFIG_OPTPROBES
/* Detour buffers of optimized probes, one per struct kprobe. */
u8 optprobe_buffers[KPROBE_POOL][OPTPROBE_BUFFER_BYTES] __aligned(64);
#endif

#include <linux/kernel.h>

/* include/linux/hash.h: hash_long(addr, KPROBE_HASH_BITS), as hash_ptr() does. */
static __always_inline unsigned long kprobe_hash(unsigned long addr)
{
#if BITS_PER_LONG == 64
	return (addr * 0x61C8864680B583EBull) >> (64 - KPROBE_HASH_BITS);
#else
	return (u32)(addr * 0x61C88647u) >> (32 - KPROBE_HASH_BITS);
#endif
}

/* kernel/kprobes.c get_kprobe(): walk the hash chain. */
static __always_inline struct kprobe *get_kprobe(unsigned long addr)
{
	struct kprobe *p;

	for (p = kprobe_table[kprobe_hash(addr)]; p; p = p->next)
		if ((unsigned long)p->addr == addr)
			return p;
	return NULL;
}

/*
 * Several kprobes at one address (kernel/kprobes.c register_aggr_kprobe):
 * the hash table holds one aggr_kprobe whose handlers run each enabled
 * probe of its list in turn, with kprobe_instance set to it.
 */
struct kprobe *kprobe_instance[CONFIG_NR_CPUS];

static __always_inline int kprobe_aggrprobe(struct kprobe *p)
{
	return p->pre_handler == aggr_pre_handler;
}

/*
 * Each enabled probe of the aggr_kprobe p's list runs its pre_handler, with
 * kprobe_instance set to it: aggr_pre_handler() stops at the first that
 * returns non-zero (@stop), opt_pre_handler() ignores what they return.
 */
static __always_inline int run_pre_handlers(struct kprobe *p, struct pt_regs *regs, int stop)
{
	int cpu = smp_processor_id();
	struct kprobe *kp;

	for (kp = p->list; kp; kp = kp->list) {
		if (kp->flags & KPROBE_FLAG_DISABLED)
			continue;
		kprobe_hits[cpu][kp->hit_index]++;
		if (kp->pre_handler) {
			kprobe_instance[cpu] = kp;
			if (kp->pre_handler(kp, regs) && stop)
				return 1;
		}
		kprobe_instance[cpu] = NULL;
	}
	return 0;
}

notrace int aggr_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	return run_pre_handlers(p, regs, 1);
}
NOKPROBE_SYMBOL(aggr_pre_handler);

notrace void aggr_post_handler(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	int cpu = smp_processor_id();
	struct kprobe *kp;

	for (kp = p->list; kp; kp = kp->list) {
		if (kp->post_handler && !(kp->flags & KPROBE_FLAG_DISABLED)) {
			kprobe_instance[cpu] = kp;
			kp->post_handler(kp, regs, flags);
			kprobe_instance[cpu] = NULL;
		}
	}
}
NOKPROBE_SYMBOL(aggr_post_handler);

/* kprobes_inc_nmissed_count(): an aggr_kprobe counts a miss for each of its probes. */
static __always_inline void kprobes_inc_nmissed_count(struct kprobe *p)
{
	struct kprobe *kp;

	if (!kprobe_aggrprobe(p)) {
		p->nmissed++;
		return;
	}
	for (kp = p->list; kp; kp = kp->list)
		kp->nmissed++;
}

static __always_inline void save_previous_kprobe(struct kprobe_ctlblk *kcb, int cpu)
{
	kcb->prev_kprobe = current_kprobe[cpu];
	kcb->prev_status = kcb->kprobe_status;
}

static __always_inline void restore_previous_kprobe(struct kprobe_ctlblk *kcb, int cpu)
{
	current_kprobe[cpu] = kcb->prev_kprobe;
	kcb->kprobe_status = kcb->prev_status;
}

/*
 * The breakpoint handler (x86 kprobe_int3_handler, ARM kprobe_handler,
 * PowerPC kprobe_handler). Returns 1 when the trap was a kprobe's.
 */
notrace int kprobe_handler(struct pt_regs *regs)
{
	unsigned long addr = arch_kprobe_trap_addr(regs);
	int cpu = smp_processor_id();
	struct kprobe_ctlblk *kcb = &kprobe_ctlblk[cpu];
	struct kprobe *p = get_kprobe(addr);

	if (!p) {
		/*
		 * Another CPU removed the probe after this one trapped: the
		 * original instruction is back, so run it again.
		 */
		if (!arch_is_breakpoint(addr)) {
			arch_kprobe_retry(regs, addr);
			return 1;
		}
		return 0;
	}
	if (arch_kprobe_skip(p, regs))
		return 1;
	if (current_kprobe[cpu]) {
		/* A probe hit inside a handler: no handlers, count it missed. */
		if (kcb->kprobe_status == KPROBE_REENTER)
			panic("Unrecoverable kprobe detected.");
		kprobes_inc_nmissed_count(p);
		save_previous_kprobe(kcb, cpu);
		current_kprobe[cpu] = p;
		kcb->kprobe_status = KPROBE_REENTER;
		if (arch_setup_singlestep(p, regs, kcb, cpu, 1))
			restore_previous_kprobe(kcb, cpu);
		return 1;
	}
	current_kprobe[cpu] = p;
	kcb->kprobe_status = KPROBE_HIT_ACTIVE;
	kprobe_hits[cpu][p->hit_index]++;
	if (p->pre_handler && p->pre_handler(p, regs)) {
		/* The handler changed the execution path: no single-step. */
		current_kprobe[cpu] = NULL;
		return 1;
	}
	if (arch_setup_singlestep(p, regs, kcb, cpu, 0)) {
		/* Stepped in the handler (simulated, emulated or boosted). */
		if (p->post_handler) {
			kcb->kprobe_status = KPROBE_HIT_SSDONE;
			p->post_handler(p, regs, 0);
		}
		current_kprobe[cpu] = NULL;
	}
	return 1;
}
NOKPROBE_SYMBOL(kprobe_handler);

/*
 * The single-step trap (x86 kprobe_debug_handler, PowerPC
 * post_kprobe_handler): fix up after the out-of-line copy, run the
 * post_handler, and go back to the probed code.
 */
notrace int kprobe_debug_handler(struct pt_regs *regs)
{
	int cpu = smp_processor_id();
	struct kprobe_ctlblk *kcb = &kprobe_ctlblk[cpu];
	struct kprobe *cur = current_kprobe[cpu];

	if (!cur || !arch_kprobe_ss_done(cur, regs))
		return 0;
	arch_resume_singlestep(cur, regs, kcb);
	if (kcb->kprobe_status != KPROBE_REENTER && cur->post_handler) {
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		cur->post_handler(cur, regs, 0);
	}
	if (kcb->kprobe_status == KPROBE_REENTER)
		restore_previous_kprobe(kcb, cpu);
	else
		current_kprobe[cpu] = NULL;
	return 1;
}
NOKPROBE_SYMBOL(kprobe_debug_handler);

#ifdef ARCH_HAS_KPROBE_FAULT_TRAP
/*
 * A fault while a kprobe runs on this CPU (kernel/kprobes.c and the
 * arch's kprobe_fault_handler, v5.10), called by the arch's fault trap
 * (<asm/kprobes-core.h>). A fault of the single-stepped copy cancels the
 * step: the PC goes back to the probe address, the probe is no longer
 * current, and 0 lets the trap handle the fault as if no probe were
 * there. A fault in a pre- or post-handler counts a miss and asks the
 * probe's fault_handler; 1 means it fixed the fault up.
 */
notrace int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	int cpu = smp_processor_id();
	struct kprobe_ctlblk *kcb = &kprobe_ctlblk[cpu];
	struct kprobe *cur = current_kprobe[cpu];

	if (arch_kprobe_fault_in_slot(cur, regs)) {
		arch_kprobe_cancel_singlestep(cur, regs, kcb);
		if (kcb->kprobe_status == KPROBE_REENTER)
			restore_previous_kprobe(kcb, cpu);
		else
			current_kprobe[cpu] = NULL;
	} else if (kcb->kprobe_status == KPROBE_HIT_ACTIVE ||
		   kcb->kprobe_status == KPROBE_HIT_SSDONE) {
		kprobes_inc_nmissed_count(cur);
		if (cur->fault_handler && cur->fault_handler(cur, regs, trapnr))
			return 1;
	}
	return 0;
}
NOKPROBE_SYMBOL(kprobe_fault_handler);

/* aggr_fault_handler(): the fault_handler of the probe whose handler was running. */
notrace int aggr_fault_handler(struct kprobe *p, struct pt_regs *regs, int trapnr)
{
	struct kprobe *cur = kprobe_instance[smp_processor_id()];

	return cur && cur->fault_handler && cur->fault_handler(cur, regs, trapnr);
}
NOKPROBE_SYMBOL(aggr_fault_handler);

notrace int kprobe_host_fault_handler(struct kprobe *p, struct pt_regs *regs, int trapnr)
{
	return hypercall3(HC_KPROBE, KPROBE_HC_FAULT | ((unsigned long)trapnr << KPROBE_HC_SHIFT),
			  (unsigned long)regs, (unsigned long)p);
}
NOKPROBE_SYMBOL(kprobe_host_fault_handler);

/*
 * The fault self-test (kisim, after lib/test_kprobes.c): a pre_handler
 * and a post_handler that make kprobe_fault_target fault, and a
 * fault_handler that fixes
 * the argument so that the faulting instruction, run again, succeeds.
 */
notrace int kprobe_fault_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	return kprobe_fault_target(KPROBE_FAULT_BAD);
}
NOKPROBE_SYMBOL(kprobe_fault_pre_handler);

notrace void kprobe_fault_post_handler(struct kprobe *p, struct pt_regs *regs,
				       unsigned long flags)
{
	kprobe_fault_target(KPROBE_FAULT_BAD);
}
NOKPROBE_SYMBOL(kprobe_fault_post_handler);

notrace int kprobe_fault_fixup_handler(struct kprobe *p, struct pt_regs *regs, int trapnr)
{
	arch_kprobe_fault_fixup(regs);
	return 1;
}
NOKPROBE_SYMBOL(kprobe_fault_fixup_handler);
#endif

#ifdef CONFIG_OPTPROBES
/*
 * opt_pre_handler(): an optimized probe is always an aggr_kprobe (an
 * optimized_kprobe, kernel/kprobes.c try_to_optimize_kprobe); the
 * pre_handlers of its list run, their results ignored.
 */
notrace void opt_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	run_pre_handlers(p, regs, 0);
}
NOKPROBE_SYMBOL(opt_pre_handler);

/*
 * The detour buffer's call (optimized_callback, arch/x86/kernel/kprobes/
 * opt.c and arch/arm/probes/kprobes/opt-arm.c): the probes' pre_handlers,
 * or nmissed when a kprobe is already running; then whatever stepping the
 * arch's detour leaves to C.
 */
notrace void optimized_callback(struct kprobe *p, struct pt_regs *regs)
{
	int cpu = smp_processor_id();

	arch_optprobe_regs(p, regs);
	if (current_kprobe[cpu]) {
		kprobes_inc_nmissed_count(p);
	} else {
		current_kprobe[cpu] = p;
		kprobe_ctlblk[cpu].kprobe_status = KPROBE_HIT_ACTIVE;
		kprobe_hits[cpu][p->hit_index]++;
		opt_pre_handler(p, regs);
		current_kprobe[cpu] = NULL;
	}
	arch_optprobe_step(p, regs, cpu);
}
NOKPROBE_SYMBOL(optimized_callback);
#endif

#if defined(ARCH_HAS_KPROBES_ON_FTRACE) && defined(CONFIG_DYNAMIC_FTRACE)
/*
 * An ftrace-based kprobe (KPROBE_FLAG_FTRACE; v5.10
 * arch/x86/kernel/kprobes/ftrace.c kprobe_ftrace_handler), called by
 * ftrace_regs_caller: no breakpoint and no single-step. The pre_handler
 * sees regs->ip as after a breakpoint; the post_handler as after the
 * site's nop; a pre_handler that returns non-zero keeps the ip it set,
 * where ftrace_regs_caller returns.
 */
notrace void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
				   struct pt_regs *regs)
{
	int cpu = smp_processor_id();
	struct kprobe *p = get_kprobe(ip);
	unsigned long orig_ip;

	(void)parent_ip;
	if (!p || (p->flags & KPROBE_FLAG_DISABLED))
		return;
	if (current_kprobe[cpu]) {
		kprobes_inc_nmissed_count(p);
		return;
	}
	orig_ip = instruction_pointer(regs);
	instruction_pointer_set(regs, ip + sizeof(kprobe_opcode_t));
	current_kprobe[cpu] = p;
	kprobe_ctlblk[cpu].kprobe_status = KPROBE_HIT_ACTIVE;
	kprobe_hits[cpu][p->hit_index]++;
	if (!p->pre_handler || !p->pre_handler(p, regs)) {
		instruction_pointer_set(regs, ip + KPROBE_FTRACE_INSN_SIZE);
		if (p->post_handler) {
			kprobe_ctlblk[cpu].kprobe_status = KPROBE_HIT_SSDONE;
			p->post_handler(p, regs, 0);
		}
		instruction_pointer_set(regs, orig_ip);
	}
	current_kprobe[cpu] = NULL;
}
NOKPROBE_SYMBOL(kprobe_ftrace_handler);
#endif

/* Handlers that do nothing, for measuring the path itself. */
notrace int kprobe_empty_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(kprobe_empty_pre_handler);

notrace void kprobe_empty_post_handler(struct kprobe *p, struct pt_regs *regs,
				       unsigned long flags)
{
}
NOKPROBE_SYMBOL(kprobe_empty_post_handler);

/* Host-callable handlers: a hypercall hands the registers to the host. */
notrace int kprobe_host_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	return hypercall3(HC_KPROBE, KPROBE_HC_PRE, (unsigned long)regs, (unsigned long)p);
}
NOKPROBE_SYMBOL(kprobe_host_pre_handler);

notrace void kprobe_host_post_handler(struct kprobe *p, struct pt_regs *regs,
				      unsigned long flags)
{
	hypercall3(HC_KPROBE, KPROBE_HC_POST, (unsigned long)regs, (unsigned long)p);
}
NOKPROBE_SYMBOL(kprobe_host_post_handler);

/*
 * Return probes (kernel/kprobes.c v5.10): the entry kprobe takes a free
 * instance, saves the return address and points it at
 * kretprobe_trampoline; the trampoline calls trampoline_handler(), which
 * finds the current task's newest instance, runs the handler and returns
 * the real return address. No instance free: rp->nmissed++.
 */
struct kretprobe kretprobe_pool[KRETPROBE_POOL];
u8 kretprobe_instance_area[KRETPROBE_INSTANCE_BYTES] __aligned(sizeof(long));
struct kretprobe_instance *kretprobe_inst_table[KPROBE_TABLE_SIZE];
static DEFINE_SPINLOCK(kretprobe_table_lock);

static __always_inline void recycle_rp_inst(struct kretprobe_instance *ri)
{
	struct kretprobe *rp = ri->rp;

	spin_lock((spinlock_t *)&rp->lock);
	ri->next = rp->free_instances;
	rp->free_instances = ri;
	spin_unlock((spinlock_t *)&rp->lock);
}

notrace int pre_handler_kretprobe(struct kprobe *p, struct pt_regs *regs)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_instance *ri, **bucket;

	spin_lock((spinlock_t *)&rp->lock);
	ri = rp->free_instances;
	if (ri)
		rp->free_instances = ri->next;
	spin_unlock((spinlock_t *)&rp->lock);
	if (!ri) {
		rp->nmissed++;
		return 0;
	}
	ri->rp = rp;
	ri->task = current;
	ri->sp = kernel_stack_pointer(regs);
	if (rp->entry_handler && rp->entry_handler(ri, regs)) {
		recycle_rp_inst(ri);
		return 0;
	}
	arch_prepare_kretprobe(ri, regs);
	bucket = &kretprobe_inst_table[kprobe_hash((unsigned long)ri->task)];
	spin_lock(&kretprobe_table_lock);
	ri->next = *bucket;
	*bucket = ri;
	spin_unlock(&kretprobe_table_lock);
	return 0;
}
NOKPROBE_SYMBOL(pre_handler_kretprobe);

notrace unsigned long trampoline_handler(struct pt_regs *regs)
{
	struct task_struct *task = current;
	struct kretprobe_instance *ri, **link, **bucket;
	int cpu = smp_processor_id();
	unsigned long ret;

	bucket = &kretprobe_inst_table[kprobe_hash((unsigned long)task)];
	spin_lock(&kretprobe_table_lock);
	for (ri = *bucket; ri && ri->task != task; ri = ri->next)
		;
	spin_unlock(&kretprobe_table_lock);
	if (!ri)
		panic("kretprobe: no instance for this return");
	ret = ri->ret_addr;
	/*
	 * v5.15 __kretprobe_trampoline_handler: the handler sees the real
	 * return address in regs, and the instance stays listed while it
	 * runs, so that a stack trace from the handler can resolve the
	 * trampoline (kretprobe_find_ret_addr).
	 */
	instruction_pointer_set(regs, ret);
	if (ri->rp && ri->rp->handler) {
		current_kprobe[cpu] = &ri->rp->kp;
		kprobe_ctlblk[cpu].kprobe_status = KPROBE_HIT_ACTIVE;
		ri->rp->handler(ri, regs);
		current_kprobe[cpu] = NULL;
	}
	spin_lock(&kretprobe_table_lock);
	for (link = bucket; *link != ri; link = &(*link)->next)
		;
	*link = ri->next;
	spin_unlock(&kretprobe_table_lock);
	if (ri->rp)		/* an unregistered kretprobe's instance is dropped */
		recycle_rp_inst(ri);
	return ret;
}
NOKPROBE_SYMBOL(trampoline_handler);

/*
 * v5.15 kretprobe_find_ret_addr(), for the unwinder: if pc is in the
 * trampoline, the real return address of the frame entered at stack
 * pointer sp, which is that of the current task's newest instance whose
 * function was entered at or above sp (deeper calls are newer and lower).
 */
notrace unsigned long kretprobe_find_ret_addr(struct task_struct *task, unsigned long sp,
					      unsigned long pc)
{
	struct kretprobe_instance *ri;

	if (pc < (unsigned long)kretprobe_trampoline ||
	    pc >= (unsigned long)kretprobe_trampoline_end)
		return pc;
	spin_lock(&kretprobe_table_lock);
	for (ri = kretprobe_inst_table[kprobe_hash((unsigned long)task)]; ri; ri = ri->next)
		if (ri->task == task && ri->sp >= sp)
			break;
	spin_unlock(&kretprobe_table_lock);
	return ri ? ri->ret_addr : pc;
}
NOKPROBE_SYMBOL(kretprobe_find_ret_addr);
NOKPROBE_SYMBOL(kretprobe_trampoline);

/*
 * v5.10 kprobe_busy_begin/end: a probe hit while this CPU runs kprobes' own
 * bookkeeping is missed, as inside a handler (kprobe_handler() sees a
 * current kprobe).
 */
static struct kprobe kprobe_busy;

static __always_inline void kprobe_busy_begin(int cpu)
{
	preempt_disable();
	current_kprobe[cpu] = &kprobe_busy;
	kprobe_ctlblk[cpu].kprobe_status = KPROBE_HIT_ACTIVE;
}

static __always_inline void kprobe_busy_end(int cpu)
{
	current_kprobe[cpu] = NULL;
	preempt_enable();
}

/*
 * v5.10 kprobe_flush_task(), called by finish_task_switch() once `tk` is
 * dead: a task that died inside a probed call never returns through the
 * trampoline, so its instances go back to their kretprobes (an
 * unregistered kretprobe's are dropped, as the trampoline drops them).
 */
void kprobe_flush_task(struct task_struct *tk)
{
	struct kretprobe_instance *ri, **link;
	int cpu = smp_processor_id();

	kprobe_busy_begin(cpu);
	link = &kretprobe_inst_table[kprobe_hash((unsigned long)tk)];
	spin_lock(&kretprobe_table_lock);
	while ((ri = *link)) {
		if (ri->task != tk) {
			link = &ri->next;
			continue;
		}
		*link = ri->next;
		if (ri->rp)
			recycle_rp_inst(ri);
	}
	spin_unlock(&kretprobe_table_lock);
	kprobe_busy_end(cpu);
}
NOKPROBE_SYMBOL(kprobe_flush_task);

#ifdef ARCH_KRETPROBE_TRAMPOLINE_KPROBE
/* The trampoline is a kprobe (PowerPC): its pre_handler jumps to the real return. */
notrace int trampoline_probe_handler(struct kprobe *p, struct pt_regs *regs)
{
	arch_kretprobe_return(regs, trampoline_handler(regs));
	return 1;
}
NOKPROBE_SYMBOL(trampoline_probe_handler);
#endif

notrace int kretprobe_empty_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(kretprobe_empty_handler);

notrace int kretprobe_host_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return hypercall3(HC_KPROBE, KPROBE_HC_RET, (unsigned long)regs, (unsigned long)ri->rp);
}
NOKPROBE_SYMBOL(kretprobe_host_handler);

/*
 * A probe target and a handler that calls it, for the reentry self-test
 * (after lib/test_kprobes.c): a probe on kprobe_reentry_target hit from inside
 * kprobe_reentry_pre_handler is a reentry and counts as missed.
 */
noinline u32 kprobe_reentry_target(u32 value)
{
	return value * 3;
}

notrace int kprobe_reentry_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	return kprobe_reentry_target(1) != 3;
}
NOKPROBE_SYMBOL(kprobe_reentry_pre_handler);

/*
 * The module API (kernel/kprobes.c, v5.10). The single-probe calls are the
 * host's work (HC_MODULE): resolving symbol_name + offset, the checks, the
 * slot, linking and arming under text_mutex with the arch's protocol. The
 * batch calls are the kernel's loops over them.
 */
char kprobe_last_refusal[KPROBE_REFUSAL_LEN];

static __always_inline long kprobe_module_call(unsigned long op, void *obj)
{
	return (long)hypercall2(HC_MODULE, op, (unsigned long)obj);
}

int register_kprobe(struct kprobe *p)
{
	return (int)kprobe_module_call(MOD_KPROBE_REGISTER, p);
}

void unregister_kprobe(struct kprobe *p)
{
	kprobe_module_call(MOD_KPROBE_UNREGISTER, p);
}

int enable_kprobe(struct kprobe *kp)
{
	return (int)kprobe_module_call(MOD_KPROBE_ENABLE, kp);
}

int disable_kprobe(struct kprobe *kp)
{
	return (int)kprobe_module_call(MOD_KPROBE_DISABLE, kp);
}

int register_kretprobe(struct kretprobe *rp)
{
	return (int)kprobe_module_call(MOD_KPROBE_REGISTER_RET, rp);
}

void unregister_kretprobe(struct kretprobe *rp)
{
	kprobe_module_call(MOD_KPROBE_UNREGISTER_RET, rp);
}

/* register_kprobes(): all or none; a failure unregisters the ones done. */
int register_kprobes(struct kprobe **kps, int num)
{
	int i, ret = 0;

	if (num <= 0)
		return -EINVAL;
	for (i = 0; i < num; i++) {
		ret = register_kprobe(kps[i]);
		if (ret < 0) {
			if (i > 0)
				unregister_kprobes(kps, i);
			break;
		}
	}
	return ret;
}

void unregister_kprobes(struct kprobe **kps, int num)
{
	int i;

	for (i = 0; i < num; i++)
		unregister_kprobe(kps[i]);
}

int register_kretprobes(struct kretprobe **rps, int num)
{
	int i, ret = 0;

	if (num <= 0)
		return -EINVAL;
	for (i = 0; i < num; i++) {
		ret = register_kretprobe(rps[i]);
		if (ret < 0) {
			if (i > 0)
				unregister_kretprobes(rps, i);
			break;
		}
	}
	return ret;
}

void unregister_kretprobes(struct kretprobe **rps, int num)
{
	int i;

	for (i = 0; i < num; i++)
		unregister_kretprobe(rps[i]);
}

extern void kprobe_exc_return(void);
NOKPROBE_SYMBOL(kprobe_exc_return);
#endif /* CONFIG_KPROBES */
