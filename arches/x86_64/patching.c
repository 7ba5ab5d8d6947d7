// SPDX-License-Identifier: GPL-2.0
/*
 * x86-64 text patching as Linux v5.10 does it (arch/x86/kernel/alternative.c):
 * text_poke() through a writable alias of the page, text_poke_sync() as an
 * IPI running sync_core() on every CPU, and text_poke_bp_batch(): int3
 * first, sync, the tail, sync, the first byte, sync, with
 * poke_int3_handler() emulating the new instruction for a CPU that hits
 * an int3 meanwhile. The interrupt and #BP entries are in the asm below;
 * the IPI goes through the local APIC's ICR (xAPIC, physical destination:
 * arch/x86/kernel/apic/ipi.c __default_send_IPI_dest_field()).
 *
 * Each PC_ABLATE_* macro compiles one step out (or moves it), for the
 * checker's table.
 */
#include "guest.h"
#include "patching.h"

#define INT3_INSN_SIZE		1
#define INT3_INSN_OPCODE	0xCC
#define CALL_INSN_SIZE		5
#define CALL_INSN_OPCODE	0xE8
#define JMP32_INSN_SIZE		5
#define JMP32_INSN_OPCODE	0xE9
#define JMP8_INSN_SIZE		2
#define JMP8_INSN_OPCODE	0xEB

#define X86_EFLAGS_IF		0x200

/* The local APIC (arch/x86/include/asm/apicdef.h) */
#define APIC_BASE		0xFEE00000UL
#define APIC_EOI		0xB0
#define APIC_ICR		0x300
#define APIC_ICR2		0x310
#define APIC_ICR_BUSY		0x01000
#define APIC_DEST_PHYSICAL	0x00000
#define APIC_DM_FIXED		0x00000
#define CALL_FUNCTION_VECTOR	0xfc

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di;
	unsigned long orig_ax;
	unsigned long ip, cs, flags, sp, ss;	/* the hardware's frame */
};

/* -- barriers, interrupts, the spin hint (asm/barrier.h, irqflags.h, processor.h) -- */
void smp_mb(void)
{
	__asm__ __volatile__("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
}

void smp_wmb(void)
{
	barrier();		/* x86 keeps stores in order */
}

unsigned long arch_local_irq_save(void)
{
	unsigned long flags;

	__asm__ __volatile__("pushfq; popq %0; cli" : "=r"(flags) :: "memory");
	return flags;
}

void arch_local_irq_restore(unsigned long flags)
{
	if (flags & X86_EFLAGS_IF)
		__asm__ __volatile__("sti" ::: "memory");
}

noinline void cpu_relax(void)
{
	__asm__ __volatile__("rep; nop" ::: "memory");	/* pause */
}

/* -- the local APIC: native_apic_mem_write(), __default_send_IPI_dest_field() -- */
static __always_inline void apic_write(u32 reg, u32 v)
{
	*(volatile u32 *)(APIC_BASE + reg) = v;
}

static __always_inline u32 apic_read(u32 reg)
{
	return *(volatile u32 *)(APIC_BASE + reg);
}

static void __default_send_IPI_dest_field(u32 apicid, int vector)
{
	while (apic_read(APIC_ICR) & APIC_ICR_BUSY)	/* __xapic_wait_icr_idle() */
		cpu_relax();
	apic_write(APIC_ICR2, apicid << 24);		/* SET_APIC_DEST_FIELD(apicid) */
	apic_write(APIC_ICR, APIC_DM_FIXED | APIC_DEST_PHYSICAL | vector);
}

/* native_send_call_func_ipi() -> default_send_IPI_mask_sequence_phys(): one ICR write per CPU */
void arch_send_call_function_ipi_mask(unsigned long mask)
{
	unsigned long flags;
	int cpu;

	local_irq_save(flags);
	for (cpu = 0; cpu < pc_nr_cpus; cpu++)
		if (mask & (1UL << cpu))
			__default_send_IPI_dest_field(cpu, CALL_FUNCTION_VECTOR);
	local_irq_restore(flags);
}

/* sysvec_call_function(): the IPI's C handler, then the EOI (ack_APIC_irq()). */
void sysvec_call_function(void)
{
	generic_smp_call_function_interrupt();
	apic_write(APIC_EOI, 0);
}

/* -- asm/sync_core.h: iret_to_self(), a serializing IRETQ to the next instruction -- */
static __always_inline void sync_core(void)
{
	unsigned int tmp;

	__asm__ __volatile__(
		"mov %%ss, %0\n\t"
		"pushq %q0\n\t"
		"pushq %%rsp\n\t"
		"addq $8, (%%rsp)\n\t"
		"pushfq\n\t"
		"mov %%cs, %0\n\t"
		"pushq %q0\n\t"
		"pushq $1f\n\t"
		"iretq\n\t"
		"1:"
		: "=&r"(tmp) :: "cc", "memory");
}

static __attribute__((__unused__)) void do_sync_core(void *info)
{
	sync_core();
}

void text_poke_sync(void)
{
#ifdef PC_ABLATE_NO_IPI
	sync_core();		/* ablation: only the patching CPU serializes */
#elif defined(PC_ABLATE_NO_WAIT)
	on_each_cpu(do_sync_core, NULL, 0);	/* ablation: the IPI is not waited for */
#else
	on_each_cpu(do_sync_core, NULL, 1);
#endif
}

/* text_poke(): the bytes through the page's writable alias (__text_poke()). */
void text_poke(void *addr, const void *opcode, size_t len)
{
	volatile u8 *to = text_alias(addr);
	const u8 *from = opcode;
	unsigned long flags;
	size_t i;

	local_irq_save(flags);
	for (i = 0; i < len; i++)
		to[i] = from[i];
	local_irq_restore(flags);
}

/* -- text_poke_bp_batch() and poke_int3_handler() -- */
struct bp_patching_desc *bp_desc;

static __always_inline struct bp_patching_desc *try_get_desc(struct bp_patching_desc **descp)
{
	struct bp_patching_desc *desc = READ_ONCE(*descp);	/* rcu_dereference_sched() */
	int refs;

	if (!desc)
		return NULL;
	refs = __atomic_load_n(&desc->refs, __ATOMIC_RELAXED);	/* atomic_inc_not_zero() */
	do {
		if (!refs)
			return NULL;
	} while (!__atomic_compare_exchange_n(&desc->refs, &refs, refs + 1, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return desc;
}

static __always_inline void put_desc(struct bp_patching_desc *desc)
{
	__atomic_sub_fetch(&desc->refs, 1, __ATOMIC_SEQ_CST);
}

static __always_inline void *text_poke_addr(struct text_poke_loc *tp)
{
	return (void *)(PC_TEXT_BASE + tp->rel_addr);
}

static int text_opcode_size(u8 opcode)
{
	switch (opcode) {
	case INT3_INSN_OPCODE:
		return INT3_INSN_SIZE;
	case CALL_INSN_OPCODE:
		return CALL_INSN_SIZE;
	case JMP32_INSN_OPCODE:
		return JMP32_INSN_SIZE;
	case JMP8_INSN_OPCODE:
		return JMP8_INSN_SIZE;
	}
	return 0;
}

/* asm/text-patching.h: int3_emulate_jmp(), int3_emulate_push(), int3_emulate_call() */
static __always_inline void int3_emulate_jmp(struct pt_regs *regs, unsigned long ip)
{
	regs->ip = ip;
}

static __always_inline void int3_emulate_push(struct pt_regs *regs, unsigned long val)
{
	/* The int3 entry left a gap below the interrupted stack (create_gap). */
	regs->sp -= sizeof(unsigned long);
	*(unsigned long *)regs->sp = val;
}

static __always_inline void int3_emulate_call(struct pt_regs *regs, unsigned long func)
{
	int3_emulate_push(regs, regs->ip - INT3_INSN_SIZE + CALL_INSN_SIZE);
	int3_emulate_jmp(regs, func);
}

int poke_int3_handler(struct pt_regs *regs)
{
	struct bp_patching_desc *desc;
	struct text_poke_loc *tp = NULL;
	int lo, hi, ret = 0;
	unsigned long ip;

	__asm__ __volatile__("" ::: "memory");	/* smp_rmb() */
	desc = try_get_desc(&bp_desc);
	if (!desc)
		return 0;
	ip = regs->ip - INT3_INSN_SIZE;
	for (lo = 0, hi = desc->nr_entries; lo < hi; ) {	/* __inline_bsearch() */
		int mid = (lo + hi) / 2;
		unsigned long at = (unsigned long)text_poke_addr(&desc->vec[mid]);

		if (at == ip) {
			tp = &desc->vec[mid];
			break;
		}
		if (ip < at)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!tp)
		goto out_put;
	ip += text_opcode_size(tp->opcode);
	switch (tp->opcode) {
	case INT3_INSN_OPCODE:
		goto out_put;	/* someone else's int3: a kprobe */
	case CALL_INSN_OPCODE:
		int3_emulate_call(regs, ip + tp->rel32);
		break;
	case JMP32_INSN_OPCODE:
	case JMP8_INSN_OPCODE:
		int3_emulate_jmp(regs, ip + tp->rel32);
		break;
	}
	ret = 1;
out_put:
	put_desc(desc);
	return ret;
}

/*
 * exc_int3() (arch/x86/kernel/traps.c): text patching first, then
 * kprobe_int3_handler(), which is the checker's: back to the int3, declined.
 */
void exc_int3(struct pt_regs *regs)
{
	if (poke_int3_handler(regs))
		return;
	regs->ip -= INT3_INSN_SIZE;
	pc_breakpoint_declined[smp_processor_id()] = regs->ip;
}

void text_poke_bp_batch(struct text_poke_loc *tp, unsigned int nr_entries)
{
	struct bp_patching_desc desc = {
		.vec = tp,
		.nr_entries = nr_entries,
		.refs = 1,
	};
	unsigned char int3 = INT3_INSN_OPCODE;
	unsigned int i;
	int do_sync;

#ifndef PC_ABLATE_LATE_DESC
	__atomic_store_n(&bp_desc, &desc, __ATOMIC_RELEASE);	/* smp_store_release() */
	/*
	 * Corresponding read barrier in int3 notifier for making sure the
	 * nr_entries and handler are correctly ordered wrt. patching.
	 */
	smp_wmb();
#endif

#ifdef PC_ABLATE_TAIL_FIRST
	goto tail;	/* ablation: the tail is written before the int3 */
int3:
#endif
	/* First step: add a int3 trap to the address that will be patched. */
	for (i = 0; i < nr_entries; i++) {
		tp[i].old = *(u8 *)text_poke_addr(&tp[i]);
		text_poke(text_poke_addr(&tp[i]), &int3, INT3_INSN_SIZE);
	}
#ifdef PC_ABLATE_LATE_DESC
	__atomic_store_n(&bp_desc, &desc, __ATOMIC_RELEASE);	/* ablation: after the int3s */
#endif
#ifndef PC_ABLATE_NO_SYNC_AFTER_INT3
	text_poke_sync();
#endif
#ifdef PC_ABLATE_TAIL_FIRST
	goto first;
tail:
#endif
	/* Second step: update all but the first byte of the patched range. */
	for (do_sync = 0, i = 0; i < nr_entries; i++) {
		int len = text_opcode_size(tp[i].opcode);

		if (len - INT3_INSN_SIZE > 0) {
			text_poke(text_poke_addr(&tp[i]) + INT3_INSN_SIZE,
				  (const char *)tp[i].text + INT3_INSN_SIZE,
				  len - INT3_INSN_SIZE);
			do_sync++;
		}
	}
	if (do_sync) {
		/*
		 * According to Intel, this core syncing is very likely
		 * not necessary and we'd be safe even without it. But
		 * better safe than sorry (plus there's not only Intel).
		 */
		text_poke_sync();
	}
#ifdef PC_ABLATE_TAIL_FIRST
	goto int3;
first:
#endif
	/* Third step: replace the first byte (int3) by the first byte of replacing opcode. */
	for (do_sync = 0, i = 0; i < nr_entries; i++) {
		if (tp[i].text[0] == INT3_INSN_OPCODE)
			continue;
		text_poke(text_poke_addr(&tp[i]), tp[i].text, INT3_INSN_SIZE);
		do_sync++;
	}
	if (do_sync)
		text_poke_sync();

	/* Remove and synchronize_rcu(), except we have a very primitive refcount based completion. */
	WRITE_ONCE(bp_desc, NULL);	/* RCU_INIT_POINTER */
#ifndef PC_ABLATE_NO_REFS_WAIT
	if (__atomic_sub_fetch(&desc.refs, 1, __ATOMIC_SEQ_CST))	/* !atomic_dec_and_test() */
		while (__atomic_load_n(&desc.refs, __ATOMIC_ACQUIRE))	/* atomic_cond_read_acquire() */
			cpu_relax();
#endif
	pc_release(&desc, sizeof(desc));	/* the stack frame dies */
}

/* text_poke_loc_init(): what the int3 handler emulates; a 5-byte nop as jmp +0. */
void text_poke_loc_init(struct text_poke_loc *tp, const struct pc_site *site)
{
	u32 i;

	tp->rel_addr = site->addr - PC_TEXT_BASE;
	tp->opcode = site->insn[0];
	for (i = 0; i < POKE_MAX_OPCODE_SIZE; i++)
		tp->text[i] = i < site->len ? site->insn[i] : 0;
	switch (tp->opcode) {
	case INT3_INSN_OPCODE:
		break;
	case CALL_INSN_OPCODE:
	case JMP32_INSN_OPCODE:
		__builtin_memcpy(&tp->rel32, &site->insn[1], 4);
		break;
	case JMP8_INSN_OPCODE:
		tp->rel32 = (signed char)site->insn[1];
		break;
	default:		/* NOP2 / NOP5: emulate as a jmp to the next instruction */
		tp->opcode = site->len == JMP8_INSN_SIZE ? JMP8_INSN_OPCODE : JMP32_INSN_OPCODE;
		tp->rel32 = 0;
		break;
	}
}

static struct text_poke_loc tp_vec[16];

/*
 * The checker's batch: out-of-line code with text_poke() alone (an optprobe's
 * detour: arch/x86/kernel/kprobes/opt.c arch_prepare_optimized_kprobe() syncs
 * nothing; no CPU reaches the detour before the jump to it is published, which
 * text_poke_bp_batch() does only after its first sync, and a CPU that takes
 * one of its int3s meanwhile refetches on the iret); a one-byte site as
 * arch_arm_kprobe() / arch_disarm_kprobe() write it (kprobes/core.c:
 * text_poke() of the int3 or the saved opcode, then text_poke_sync()); the
 * rest in one text_poke_bp_batch() (jump labels, ftrace, optimizing a probe).
 */
void arch_patch_batch(const struct pc_site *sites, int nr)
{
	int i, n = 0;

	for (i = 0; i < nr; i++)
		if (sites[i].out_of_line)
			text_poke((void *)sites[i].addr, sites[i].insn, sites[i].len);
	for (i = 0; i < nr; i++) {
		if (sites[i].out_of_line)
			continue;
		if (sites[i].len == INT3_INSN_SIZE) {
			text_poke((void *)sites[i].addr, sites[i].insn, INT3_INSN_SIZE);
			text_poke_sync();
			continue;
		}
		text_poke_loc_init(&tp_vec[n++], &sites[i]);
	}
	if (n)
		text_poke_bp_batch(tp_vec, n);
}

/* A 64-bit code and data segment, for IRETQ (the checker loads GDTR with it). */
const u64 gdt_page[3] __used = { 0, 0x00af9b000000ffffULL, 0x00cf93000000ffffULL };

/*
 * The entries. The hardware (the checker, arches/x86_64/guest_patching.py
 * irq_enter) has pushed SS, RSP, RFLAGS, CS, RIP on the 16-byte aligned
 * stack and cleared IF. #BP first copies that frame 5 words down, so that
 * int3_emulate_push() has room below the interrupted stack (v5.10
 * entry_64.S idtentry create_gap).
 */
#define PUSH_REGS \
	"	pushq	$-1\n" \
	"	pushq	%rdi\n	pushq	%rsi\n	pushq	%rdx\n	pushq	%rcx\n	pushq	%rax\n" \
	"	pushq	%r8\n	pushq	%r9\n	pushq	%r10\n	pushq	%r11\n	pushq	%rbx\n" \
	"	pushq	%rbp\n	pushq	%r12\n	pushq	%r13\n	pushq	%r14\n	pushq	%r15\n"
#define POP_REGS \
	"	popq	%r15\n	popq	%r14\n	popq	%r13\n	popq	%r12\n	popq	%rbp\n" \
	"	popq	%rbx\n	popq	%r11\n	popq	%r10\n	popq	%r9\n	popq	%r8\n" \
	"	popq	%rax\n	popq	%rcx\n	popq	%rdx\n	popq	%rsi\n	popq	%rdi\n" \
	"	addq	$8, %rsp\n"

__asm__(
	"	.text\n"
	"	.globl	asm_exc_int3\n"
	"	.type	asm_exc_int3, @function\n"
	"asm_exc_int3:\n"
	"	.rept	5\n"
	"	pushq	4*8(%rsp)\n"
	"	.endr\n"
	PUSH_REGS
	"	movq	%rsp, %rdi\n"
	"	call	exc_int3\n"
	POP_REGS
	"	iretq\n"
	"	.size	asm_exc_int3, . - asm_exc_int3\n"
	"	.globl	asm_sysvec_call_function\n"
	"	.type	asm_sysvec_call_function, @function\n"
	"asm_sysvec_call_function:\n"
	PUSH_REGS
	"	subq	$8, %rsp\n"
	"	call	sysvec_call_function\n"
	"	addq	$8, %rsp\n"
	POP_REGS
	"	iretq\n"
	"	.size	asm_sysvec_call_function, . - asm_sysvec_call_function\n");
