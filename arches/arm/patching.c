// SPDX-License-Identifier: GPL-2.0
/*
 * 32-bit ARM text patching for the patch checker's guest
 * (patchcheck/guest/guest.h), ported from Linux v5.10, for an A32 kernel and
 * for a CONFIG_THUMB2_KERNEL one (compiled with -mthumb: __thumb2__):
 *
 *  arch/arm/kernel/patch.c		patch_text(), patch_text_stop_machine(),
 *					__patch_text_real(), patch_map()/patch_unmap()
 *  arch/arm/mm/cache-v7.S		v7_coherent_kern_range, which is
 *					flush_icache_range() (asm/cacheflush.h)
 *  arch/arm/probes/kprobes/opt-arm.c	arch_prepare_optimized_kprobe(): a detour
 *					is memcpy()d and flush_icache_range()d,
 *					without stop_machine()
 *  drivers/irqchip/irq-gic.c		gic_ipi_send_mask(): the GICD_SGIR write
 *  arch/arm/kernel/smp.c		enum ipi_msg_type (IPI_CALL_FUNC),
 *					do_handle_IPI()
 *  arch/arm/kernel/entry-armv.S	vector_stub irq, __irq_svc, svc_exit
 *  arch/arm/include/asm/irqflags.h	arch_local_irq_save/restore (ARMv6+)
 *  arch/arm/include/asm/barrier.h	smp_mb()/smp_wmb() on SMP: dmb(ish)/dmb(ishst)
 *
 * Ablations (arches/arm/guest_patching.py GUEST_ABLATIONS), each compiled
 * into the real function:
 *  PC_ABLATE_NO_STOP_MACHINE	patch_text() calls its callback directly
 *  PC_ABLATE_NO_FLUSH		__patch_text_real() skips flush_icache_range()
 *  PC_ABLATE_NO_ISB		flush_icache_range() ends without its isb
 *  PC_ABLATE_NO_DSB_CLEAN	no dsb between the D-cache clean and the I-cache invalidate
 *  PC_ABLATE_HALFWORDS_APART	(Thumb-2) the two halfwords of a 32-bit instruction at
 *				2 mod 4 are each stored and flushed in a stop_machine()
 *				of their own, so the other CPUs run between them
 */
#include "guest.h"
#include "patching.h"

/*
 * asm/unified.h: ARM() and THUMB() keep the instructions of one instruction
 * set; the asm below is assembled in the kernel's (a Thumb-2 kernel's is all
 * Thumb, and its exceptions are taken in Thumb state: proc-v7.S __v7_setup
 * sets SCTLR.TE).
 */
#ifdef __thumb2__
#define THUMB2_KERNEL	1
#define ARM(x...)
#define THUMB(x...)	x
#define PC_ISA		"	.thumb\n"
#else
#define THUMB2_KERNEL	0
#define ARM(x...)	x
#define THUMB(x...)
#define PC_ISA		"	.arm\n"
#endif

/*
 * The GIC distributor: the checker maps this page as PC_IRQ_BASE
 * (arches/arm/guest_patching.py IRQ_BASE). GIC_DIST_SOFTINT is GICD_SGIR
 * (include/linux/irqchip/arm-gic.h).
 */
#define GIC_DIST_BASE		0xF0000000UL
#define GIC_DIST_SOFTINT	0xf00

/*
 * arch/arm/kernel/smp.c: IPI_WAKEUP, IPI_TIMER, IPI_RESCHEDULE,
 * IPI_CALL_FUNC, ...; since v5.10 the IPIs are SGIs 0-7 in that order
 * (set_smp_ipi_range()), so the call-function IPI is SGI 3.
 */
#define IPI_CALL_FUNC		3

/*
 * dcache_line_size / icache_line_size (arch/arm/mm/proc-macros.S) read
 * CTR; the reference core's lines are 32 bytes (arches.base
 * DEFAULT_ICACHE_LINE, ARCH.icache_line).
 */
#define CACHE_LINE_BYTES	32

/* The IRQ mode's stack: cpu_init() (arch/arm/kernel/setup.c) points sp_irq
 * at its CPU's struct stack.irq[3]; one 16-byte slot per CPU here, with
 * the per-CPU stacks. guest_patching.py cpu_setup() sets sp_irq to it. */
#define IRQ_STACK_WORDS		4
u32 irq_stacks[PC_NR_CPUS][IRQ_STACK_WORDS]
	__attribute__((section(".stacks"), aligned(8))) __used;

/* -- asm/barrier.h, asm/irqflags.h, asm/processor.h -- */

void smp_mb(void)
{
	__asm__ __volatile__("dmb ish" ::: "memory");
}

void smp_wmb(void)
{
	__asm__ __volatile__("dmb ishst" ::: "memory");
}

unsigned long arch_local_irq_save(void)
{
	unsigned long flags;

	__asm__ __volatile__(
		"	mrs	%0, cpsr	@ arch_local_irq_save\n"
		"	cpsid	i"
		: "=r" (flags) : : "memory", "cc");
	return flags;
}

void arch_local_irq_restore(unsigned long flags)
{
	__asm__ __volatile__(
		"	msr	cpsr_c, %0	@ local_irq_restore"
		: : "r" (flags) : "memory", "cc");
}

/*
 * v5.10 arch/arm/include/asm/processor.h: cpu_relax() is smp_mb() with
 * CONFIG_ARM_ERRATA_754327 (the Cortex-A9's store buffer does not drain by
 * itself; the reference core is a Cortex-A9), barrier() otherwise.
 */
noinline void cpu_relax(void)
{
	__asm__ __volatile__("dmb ish" ::: "memory");
}

/* -- arch/arm/mm/cache-v7.S -- */

/*
 * v7_coherent_kern_range(start, end) falls into v7_coherent_user_range:
 * clean each D line to the point of unification (DCCMVAU), dsb, invalidate
 * each I line (ICIMVAU), invalidate the branch predictor (ALT_SMP: BPIALLIS),
 * dsb, isb. Returns 0 in r0.
 */
#ifdef PC_ABLATE_NO_ISB
#define V7_COHERENT_ISB	""
#else
#define V7_COHERENT_ISB	"	isb\n"
#endif
#ifdef PC_ABLATE_NO_DSB_CLEAN
#define V7_COHERENT_DSB_CLEAN	""
#else
#define V7_COHERENT_DSB_CLEAN	"	dsb	ishst\n"
#endif

__asm__(
	"	.text\n"
	PC_ISA
	"	.align	2\n"
	"	.globl	v7_coherent_kern_range\n"
	"	.type	v7_coherent_kern_range, %function\n"
	"v7_coherent_kern_range:\n"
	"	mov	r2, #32			@ dcache_line_size r2, r3\n"
	"	sub	r3, r2, #1\n"
	"	bic	r12, r0, r3\n"
	"1:	mcr	p15, 0, r12, c7, c11, 1	@ clean D line to the point of unification\n"
	"	add	r12, r12, r2\n"
	"	cmp	r12, r1\n"
	"	blo	1b\n"
	V7_COHERENT_DSB_CLEAN
	"	mov	r2, #32			@ icache_line_size r2, r3\n"
	"	sub	r3, r2, #1\n"
	"	bic	r12, r0, r3\n"
	"2:	mcr	p15, 0, r12, c7, c5, 1	@ invalidate I line\n"
	"	add	r12, r12, r2\n"
	"	cmp	r12, r1\n"
	"	blo	2b\n"
	"	mov	r0, #0\n"
	"	mcr	p15, 0, r0, c7, c1, 6	@ invalidate BTB Inner Shareable\n"
	"	dsb	ishst\n"
	V7_COHERENT_ISB
	"	bx	lr\n"
	"	.size	v7_coherent_kern_range, . - v7_coherent_kern_range\n");

int v7_coherent_kern_range(unsigned long start, unsigned long end);

_Static_assert(CACHE_LINE_BYTES == 32, "v7_coherent_kern_range's mov r2, #32");

/* asm/cacheflush.h: #define flush_icache_range __cpuc_coherent_kern_range */
void flush_icache_range(unsigned long start, unsigned long end)
{
	v7_coherent_kern_range(start, end);
}

/* -- arch/arm/kernel/patch.c -- */

struct patch {
	void *addr;
	unsigned int insn;
};

/*
 * patch_map(): the FIX_TEXT_POKE0 mapping of the text page, taken under
 * raw_spin_lock_irqsave(&patch_lock). One CPU patches here, so the lock
 * is its interrupt masking alone.
 */
static void *patch_map(void *addr, unsigned long *flags)
{
	local_irq_save(*flags);
	return text_alias(addr);
}

static void patch_unmap(unsigned long *flags)
{
	/* clear_fixmap(FIX_TEXT_POKE0); raw_spin_unlock_irqrestore() */
	local_irq_restore(*flags);
}

/*
 * asm/opcodes.h, little-endian: a Thumb opcode holds a 32-bit instruction's
 * first halfword (the one at the lower address) in bits 31:16; in memory
 * each halfword is little-endian, so a word load sees the two swapped.
 */
#define __opcode_is_thumb16(x)	(((x) & 0xFFFF0000) == 0 && \
				 !(((x) & 0xF800) == 0xE800 || ((x) & 0xF000) == 0xF000))
#define __opcode_thumb32_first(x)	((u16)((x) >> 16))
#define __opcode_thumb32_second(x)	((u16)(x))
#define __opcode_thumb32_compose(first, second) \
	((unsigned int)(first) << 16 | (second))
#define __opcode_to_mem_thumb16(x)	((u16)(x))
#define __opcode_to_mem_thumb32(x)	((x) << 16 | (x) >> 16)

/*
 * __patch_text_real(): on an A32 kernel one aligned word store. On a
 * Thumb-2 kernel a 16-bit instruction is one halfword store, a 32-bit one
 * at 0 mod 4 one word store, and a 32-bit one at 2 mod 4 two halfword
 * stores, so between them memory holds half of each instruction: only
 * stop_machine() keeps every other CPU from fetching it. (v5.10 maps the
 * second halfword through FIX_TEXT_POKE1 when it starts the next page; the
 * alias maps the pages in order, so waddr + 2 is that halfword here.)
 */
static void __patch_text_real(void *addr, unsigned int insn, bool remap)
{
	unsigned long uintaddr = (unsigned long)addr;
	unsigned long flags = 0;
	void *waddr = addr;
	int size;

	if (remap)
		waddr = patch_map(addr, &flags);

	if (THUMB2_KERNEL && __opcode_is_thumb16(insn)) {
		*(volatile u16 *)waddr = __opcode_to_mem_thumb16(insn);
		size = sizeof(u16);
	} else if (THUMB2_KERNEL && (uintaddr & 2)) {
		volatile u16 *addrh0 = waddr;
		volatile u16 *addrh1 = (volatile u16 *)((u8 *)waddr + 2);

		*addrh0 = __opcode_to_mem_thumb16(__opcode_thumb32_first(insn));
		*addrh1 = __opcode_to_mem_thumb16(__opcode_thumb32_second(insn));
		size = sizeof(u32);
	} else {
		/* __opcode_to_mem_arm(): little-endian, no swab */
		if (THUMB2_KERNEL)
			insn = __opcode_to_mem_thumb32(insn);
		*(volatile u32 *)waddr = insn;
		size = sizeof(u32);
	}

	if (waddr != addr) {
		/* flush_kernel_vmap_range(): nothing for a v7 VIPT non-aliasing D-cache */
		patch_unmap(&flags);
	}

#ifdef PC_ABLATE_NO_FLUSH
	(void)size;
#else
	flush_icache_range((unsigned long)addr, (unsigned long)addr + size);
#endif
}

static void __patch_text(void *addr, unsigned int insn)
{
	__patch_text_real(addr, insn, true);
}

static int patch_text_stop_machine(void *data)
{
	struct patch *patch = data;

	__patch_text(patch->addr, patch->insn);
	return 0;
}

#ifdef PC_ABLATE_HALFWORDS_APART
/* The unsafe edit's callback: one halfword through the alias, then its flush. */
static int patch_halfword_stop_machine(void *data)
{
	struct patch *patch = data;
	unsigned long flags;
	volatile u16 *waddr = patch_map(patch->addr, &flags);

	*waddr = __opcode_to_mem_thumb16(patch->insn);
	patch_unmap(&flags);
	flush_icache_range((unsigned long)patch->addr, (unsigned long)patch->addr + 2);
	return 0;
}

/* Each halfword of a 32-bit instruction at 2 mod 4 under a stop_machine() of its own. */
static bool patch_halves_apart(void *addr, unsigned int insn)
{
	struct patch first = { addr, __opcode_thumb32_first(insn) };
	struct patch second = { (u8 *)addr + 2, __opcode_thumb32_second(insn) };

	if (!THUMB2_KERNEL || __opcode_is_thumb16(insn) || !((unsigned long)addr & 2))
		return false;
	stop_machine(patch_halfword_stop_machine, &first, NULL);
	stop_machine(patch_halfword_stop_machine, &second, NULL);
	return true;
}
#endif

/* v5.10 calls stop_machine_cpuslocked(): stop_machine() with the hotplug lock held. */
void patch_text(void *addr, unsigned int insn)
{
	struct patch patch = {
		.addr = addr,
		.insn = insn,
	};

#ifdef PC_ABLATE_HALFWORDS_APART
	if (patch_halves_apart(addr, insn))
		return;
#endif
#ifdef PC_ABLATE_NO_STOP_MACHINE
	patch_text_stop_machine(&patch);
#else
	stop_machine(patch_text_stop_machine, &patch, NULL);
#endif
}

/* __mem_to_opcode_arm(): the word at bytes p as a little-endian CPU reads it */
static unsigned int mem_to_opcode_arm(const u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (unsigned int)p[3] << 24;
}

/*
 * The opcode patch_text() takes for a site's new bytes: the A32 word, or the
 * Thumb instruction (__mem_to_opcode_thumb16, or the two halfwords composed).
 */
static unsigned int site_opcode(const struct pc_site *site)
{
	const u8 *p = site->insn;

	if (!THUMB2_KERNEL)
		return mem_to_opcode_arm(p);
	if (site->len == 2)
		return p[0] | p[1] << 8;
	return __opcode_thumb32_compose(p[0] | p[1] << 8, p[2] | p[3] << 8);
}

/*
 * arch_prepare_optimized_kprobe() (opt-arm.c) fills the detour buffer with
 * memcpy() and makes it visible with flush_icache_range(); no CPU runs it
 * until a site branches there, so no stop_machine(). The stores go through
 * the text alias (word by word when aligned, as memcpy() copies), the flush
 * is of the address the CPUs fetch.
 */
static void write_out_of_line(const struct pc_site *site)
{
	unsigned long addr = site->addr;
	u32 i;

	if (!(addr & 3) && !(site->len & 3)) {
		volatile u32 *dst = text_alias((void *)addr);

		for (i = 0; i < site->len; i += 4)
			dst[i / 4] = mem_to_opcode_arm(&site->insn[i]);
	} else {
		volatile u8 *dst = text_alias((void *)addr);

		for (i = 0; i < site->len; i++)
			dst[i] = site->insn[i];
	}
	flush_icache_range(addr, addr + site->len);
}

void arch_patch_batch(const struct pc_site *sites, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (sites[i].out_of_line)
			write_out_of_line(&sites[i]);
	for (i = 0; i < nr; i++)
		if (!sites[i].out_of_line)
			patch_text((void *)sites[i].addr, site_opcode(&sites[i]));
}

/* -- drivers/irqchip/irq-gic.c -- */

/*
 * gic_ipi_send_mask() (smp_cross_call(mask, IPI_CALL_FUNC); gic_cpu_map: CPU interface n is
 * CPU n): make the csd visible, then one SGIR write for every target, TargetListFilter 0
 * (the list in bits 23:16), the SGI in bits 3:0.
 */
void arch_send_call_function_ipi_mask(unsigned long mask)
{
	unsigned long map = mask;	/* gic_cpu_map[cpu] == 1 << cpu */

	__asm__ __volatile__("dmb ishst" ::: "memory");		/* dmb(ishst) */
	/* writel_relaxed() */
	__asm__ __volatile__("str %1, %0"
			     : "+Qo" (*(volatile u32 *)(GIC_DIST_BASE + GIC_DIST_SOFTINT))
			     : "r" (map << 16 | IPI_CALL_FUNC));
}

/* -- arch/arm/kernel/entry-armv.S -- */

/*
 * The IRQ vector. The CPU arrives as the hardware leaves it: IRQ mode,
 * CPSR.I and .A set, ARM state (Thumb on a Thumb-2 kernel: SCTLR.TE),
 * SPSR_irq the interrupted CPSR, LR_irq the interrupted PC + 4. As vector_stub irq + __irq_svc: correct the return
 * address, save it and SPSR_irq on the SVC stack (srsdb, where svc_entry
 * keeps them in pt_regs), continue in SVC mode with IRQs masked, save
 * every register the interrupted code may use, align the stack to 8
 * (svc_entry's "tst sp, #4"), run the handler gic_handle_irq() reaches for
 * IPI_CALL_FUNC (do_handle_IPI() -> generic_smp_call_function_interrupt()),
 * clear the exclusive monitor as svc_exit does (a strex to an uninhabited
 * address: "We must avoid clrex due to Cortex-A15 erratum #830321"),
 * restore and return with rfeia (svc_exit's exception return). The GIC
 * CPU interface's IAR read and EOIR write are not modelled: the checker
 * maps only the distributor.
 * smp_processor_id() reads thread_info from the SVC stack, which is the
 * interrupted CPU's pc_stacks[].
 *
 * __irq_entry_spsr is the entry when the host cannot write SPSR_irq: it
 * left the interrupted CPSR in word 2 of the IRQ stack (where vector_stub
 * saves spsr), and this moves it into SPSR_irq first.
 */
__asm__(
	"	.text\n"
	PC_ISA
	"	.align	3\n"
	"	.globl	__irq_entry_spsr\n"
	"	.type	__irq_entry_spsr, %function\n"
	"__irq_entry_spsr:\n"
	"	str	r0, [sp]\n"
	"	ldr	r0, [sp, #8]\n"
	"	msr	spsr_cxsf, r0\n"
	"	ldr	r0, [sp]\n"
	"	.size	__irq_entry_spsr, . - __irq_entry_spsr\n"
	"	.globl	__irq_entry\n"
	"	.type	__irq_entry, %function\n"
	"__irq_entry:\n"
	"	sub	lr, lr, #4\n"
	"	srsdb	sp!, #0x13		@ {lr_irq, spsr_irq} on the SVC stack\n"
	"	cps	#0x13			@ SVC mode, IRQs still masked\n"
	"	push	{r0-r12, lr}\n"
	"	mov	r4, sp\n"
ARM(	"	bic	sp, sp, #7		@ AAPCS: 8-byte aligned at the call\n")
THUMB(	"	bic	r5, r4, #7		@ (T32 has no bic to sp)\n"
	"	mov	sp, r5\n")
	"	bl	generic_smp_call_function_interrupt\n"
	"	mov	sp, r4\n"
	"	sub	r0, sp, #4		@ uninhabited address\n"
	"	strex	r1, r2, [r0]		@ clear the exclusive monitor (svc_exit)\n"
	"	pop	{r0-r12, lr}\n"
	"	rfeia	sp!			@ pc and cpsr back: the exception return\n"
	"	.size	__irq_entry, . - __irq_entry\n");
