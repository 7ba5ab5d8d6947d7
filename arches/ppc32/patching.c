// SPDX-License-Identifier: GPL-2.0
/*
 * 32-bit PowerPC (classic, big-endian; reference core MPC7447A): the text
 * patching primitive of Linux v5.10, its external-interrupt entry and the
 * IPI it would send, for the patch checker's guest (patchcheck/guest/guest.h).
 *
 *  - patch_instruction(), do_patch_instruction() and __patch_instruction()
 *    after v5.10 arch/powerpc/lib/code-patching.c (CONFIG_STRICT_KERNEL_RWX:
 *    the store goes through the per-CPU text_poke_area that map_patch_area()
 *    maps; here text_alias()). v5.10 patches PowerPC text one word at a time
 *    with no cross-CPU call: arch/powerpc/kernel/trace/ftrace.c overrides
 *    arch_ftrace_update_code() to skip stop_machine(), and jump labels and
 *    kprobes call patch_instruction() directly.
 *  - the IPI: v5.10 arch/powerpc/sysdev/mpic.c smp_mpic_message_pass()
 *    (the smp_ops->message_pass of MPIC boards; v5.10 has no mpic_send_ipi())
 *    writes the target's CPU mask to the sender's per-CPU IPI dispatch
 *    register of the message,
 *    PPC_MSG_CALL_FUNCTION = 0 (arch/powerpc/include/asm/smp.h), through
 *    mpic_cpu_write() = out_le32() (MPIC registers are little-endian).
 *  - interrupts on/off: v5.10 arch/powerpc/include/asm/hw_irq.h, !CONFIG_BOOKE,
 *    !CONFIG_PPC_8xx: mfmsr, then mtmsr with MSR_EE clear; restore is mtmsr.
 *  - the external-interrupt entry (vector 0x500): v5.10
 *    arch/powerpc/kernel/head_32.h EXCEPTION_PROLOG (kernel mode: the frame
 *    goes below r1) and transfer_to_handler / ret_from_except in
 *    arch/powerpc/kernel/entry_32.S, EXC_XFER_LITE (the volatile registers;
 *    the C handler keeps r13-r31 by the ABI, r2 is reserved).
 *
 * The interrupt controller page (PC_IRQ_BASE, arches/ppc32/guest_patching.py
 * IRQ_BASE) is the sending CPU's own MPIC per-CPU register block, as each CPU
 * sees its block at MPIC_CPU_BASE + cpu * MPIC_CPU_STRIDE (v5.10
 * arch/powerpc/include/asm/mpic.h): IPI dispatch n at 0x40 + 0x10 * n.
 * Every CPU stores to the same address; the checker knows the sender.
 */
#include "guest.h"
#include "patching.h"

#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

/* -- arch/powerpc/include/asm/reg.h -- */
#define MSR_EE			0x8000		/* External interrupt enable */

/* -- arch/powerpc/include/asm/mpic.h -- */
#define PC_IRQ_BASE		0xF0000000UL	/* = IRQ_BASE in guest_patching.py */
#define MPIC_CPU_IPI_DISPATCH_0		0x00040
#define MPIC_CPU_IPI_DISPATCH_STRIDE	0x00010
#define PPC_MSG_CALL_FUNCTION	0		/* arch/powerpc/include/asm/smp.h */

/* -- barriers: v5.10 arch/powerpc/include/asm/barrier.h -- */

/* __smp_mb() = mb(): sync */
void smp_mb(void)
{
	__asm__ __volatile__("sync" : : : "memory");
}

/*
 * __smp_wmb(): SMPWMB, which is LWSYNC only for CONFIG_PPC64 and
 * CONFIG_PPC_E500MC; a classic 32-bit SMP kernel gets eieio.
 */
void smp_wmb(void)
{
	__asm__ __volatile__("eieio" : : : "memory");
}

/* v5.10 arch/powerpc/include/asm/processor.h: on ppc32 cpu_relax() is barrier(). */
noinline void cpu_relax(void)
{
	barrier();
}

/* -- arch/powerpc/include/asm/hw_irq.h (classic 32-bit) -- */
static __always_inline unsigned long mfmsr(void)
{
	unsigned long msr;

	__asm__ __volatile__("mfmsr %0" : "=r" (msr) : : "memory");
	return msr;
}

static __always_inline void mtmsr(unsigned long msr)
{
	__asm__ __volatile__("mtmsr %0" : : "r" (msr) : "memory");
}

/* arch_local_irq_save(): flags = mfmsr(); SET_MSR_EE(flags & ~MSR_EE) */
unsigned long arch_local_irq_save(void)
{
	unsigned long flags = mfmsr();

	mtmsr(flags & ~MSR_EE);
	return flags;
}

/* arch_local_irq_restore(): mtmsr(flags) (wrtee is CONFIG_BOOKE only) */
void arch_local_irq_restore(unsigned long flags)
{
	mtmsr(flags);
}

/* -- arch/powerpc/sysdev/mpic.c -- */

/* _mpic_write() for mpic_access_mmio_le: out_le32(), a byte-reversed store. */
static __always_inline void out_le32(volatile u32 *addr, u32 val)
{
	__asm__ __volatile__("sync; stwbrx %1,0,%2"
			     : "=m" (*addr) : "r" (val), "r" (addr) : "memory");
}

/*
 * arch_send_call_function_ipi_mask() (arch/powerpc/kernel/smp.c): for each
 * CPU, do_message_pass(cpu, PPC_MSG_CALL_FUNCTION) -> smp_ops->message_pass,
 * which is smp_mpic_message_pass() on MPIC boards (the dual-G4 PowerMacs:
 * core99_smp_ops, arch/powerpc/platforms/powermac/smp.c): the target's
 * mask into this CPU's IPI dispatch register of the message.
 */
static void smp_mpic_message_pass(int cpu, int msg)
{
	u32 physmask = 1U << cpu;	/* get_hard_smp_processor_id(cpu) == cpu */

	out_le32((volatile u32 *)(PC_IRQ_BASE + MPIC_CPU_IPI_DISPATCH_0 +
				  msg * MPIC_CPU_IPI_DISPATCH_STRIDE),
		 physmask);
}

void arch_send_call_function_ipi_mask(unsigned long mask)
{
	int cpu;

	for (cpu = 0; cpu < pc_nr_cpus; cpu++)
		if (mask & (1UL << cpu))
			smp_mpic_message_pass(cpu, PPC_MSG_CALL_FUNCTION);
}

/* -- arch/powerpc/lib/code-patching.c -- */

#ifdef PC_ABLATE_NO_DCBST
#define PATCH_DCBST	""
#else
#define PATCH_DCBST	"dcbst 0, %0\n\t"
#endif
#ifdef PC_ABLATE_NO_ICBI
#define PATCH_ICBI	""
#else
#define PATCH_ICBI	"icbi 0, %1\n\t"
#endif
#ifdef PC_ABLATE_NO_SYNC_DCBST
#define PATCH_SYNC_DCBST	""
#else
#define PATCH_SYNC_DCBST	"sync\n\t"
#endif
#ifdef PC_ABLATE_NO_SYNC_ICBI
#define PATCH_SYNC_ICBI	""
#else
#define PATCH_SYNC_ICBI	"sync\n\t"
#endif
#ifdef PC_ABLATE_NO_ISYNC
#define PATCH_ISYNC	""
#else
#define PATCH_ISYNC	"isync\n\t"
#endif

/*
 * __patch_instruction(): store the word through the alias (patch_addr),
 * push its data-cache line out (dcbst on patch_addr), invalidate the
 * instruction-cache line of the real text (icbi on exec_addr), and
 * discard prefetched instructions (isync).
 */
static int __patch_instruction(u32 *exec_addr, u32 instr, u32 *patch_addr)
{
	/* __put_user_asm_goto(ppc_inst_val(instr), patch_addr, failed, "stw") */
	__asm__ __volatile__("stw %1, 0(%2)"
			     : "=m" (*patch_addr) : "r" (instr), "b" (patch_addr));

	__asm__ __volatile__(PATCH_DCBST PATCH_SYNC_DCBST PATCH_ICBI PATCH_SYNC_ICBI PATCH_ISYNC
			     : : "r" (patch_addr), "r" (exec_addr) : "memory");
	return 0;
}

/*
 * do_patch_instruction(): with interrupts off, map the page at this CPU's
 * text_poke_area (map_patch_area()), patch through it, unmap.
 */
static int do_patch_instruction(u32 *addr, u32 instr)
{
	unsigned long flags;
	u32 *patch_addr;
	int err;

	local_irq_save(flags);
	patch_addr = text_alias(addr);		/* text_poke_addr + (kaddr & ~PAGE_MASK) */
	err = __patch_instruction(addr, instr, patch_addr);
	local_irq_restore(flags);
	return err;
}

int patch_instruction(u32 *addr, u32 instr)
{
	return do_patch_instruction(addr, instr);
}

/* ppc_inst(): the site's bytes are the instruction word in memory (big-endian) order. */
static u32 site_word(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void patch_site(const struct pc_site *site)
{
	u32 off;

	for (off = 0; off + 4 <= site->len; off += 4)
		patch_instruction((u32 *)(site->addr + off), site_word(&site->insn[off]));
}

/* The out-of-line code a site leads to first, then the sites, each patch_instruction(). */
void arch_patch_batch(const struct pc_site *sites, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (sites[i].out_of_line)
			patch_site(&sites[i]);
	for (i = 0; i < nr; i++)
		if (!sites[i].out_of_line)
			patch_site(&sites[i]);
}

/* -- the external interrupt (vector 0x500) -- */

/*
 * What the checker's interrupt leaves for the entry (irq_enter() in
 * arches/ppc32/guest_patching.py): Unicorn gives the host no access to
 * SRR0/SRR1, so the host stores the interrupted PC and MSR here, clears
 * MSR[EE] (and the other bits an interrupt clears) and starts the CPU at
 * pc_irq_entry, whose first instructions move them into SRR0/SRR1: from
 * then on the CPU's state is the one the hardware's entry leaves.
 */
struct pc_irq_srr {
	unsigned long srr0;
	unsigned long srr1;
};
struct pc_irq_srr pc_irq_srr[PC_NR_CPUS] __used;

/*
 * The interrupt frame: STACK_FRAME_OVERHEAD (back chain, LR save word) and
 * struct pt_regs (arch/powerpc/include/uapi/asm/ptrace.h: gpr[32], nip,
 * msr, orig_gpr3, ctr, link, xer, ccr, mq, trap, dar, dsisr, result), with
 * the offsets of arch/powerpc/kernel/asm-offsets.c; INT_FRAME_SIZE is a
 * multiple of 16 (the ABI's stack alignment).
 */
#define STACK_FRAME_OVERHEAD	16
#define GPR(n)			(STACK_FRAME_OVERHEAD + 4 * (n))
#define _NIP			GPR(32)
#define _MSR			GPR(33)
#define _CTR			GPR(35)
#define _LINK			GPR(36)
#define _XER			GPR(37)
#define _CCR			GPR(38)
#define INT_FRAME_SIZE		(STACK_FRAME_OVERHEAD + 4 * 44)
#define THREAD_SHIFT		13		/* THREAD_SIZE == 1 << THREAD_SHIFT */
#define TI_CPU			0		/* offsetof(struct thread_info, cpu) */

_Static_assert(1UL << THREAD_SHIFT == THREAD_SIZE, "THREAD_SHIFT");
_Static_assert(INT_FRAME_SIZE % 16 == 0, "INT_FRAME_SIZE");
_Static_assert(sizeof(struct pc_irq_srr) == 8, "pc_irq_srr");

#define S(x)	__stringify(x)

__asm__(
	"	.text\n"
	"	.globl	pc_irq_entry\n"
	"	.type	pc_irq_entry, @function\n"
	"	.p2align 2\n"
	"pc_irq_entry:\n"
	/* EXCEPTION_PROLOG_0: free r10 and r11 into SPRN_SPRG_SCRATCH0/1 */
	"	mtsprg	0, 10\n"
	"	mtsprg	1, 11\n"
	/*
	 * The hardware's half: SRR0/SRR1 from pc_irq_srr[cpu], cpu from the
	 * thread_info at the base of the stack r1 is in. Neither CR nor LR
	 * nor CTR is touched yet.
	 */
	"	rlwinm	11, 1, 0, 0, 31 - " S(THREAD_SHIFT) "\n"
	"	lwz	11, " S(TI_CPU) "(11)\n"
	"	slwi	11, 11, 3\n"
	"	addis	11, 11, pc_irq_srr@ha\n"
	"	addi	11, 11, pc_irq_srr@l\n"
	"	lwz	10, 0(11)\n"
	"	mtsrr0	10\n"
	"	lwz	10, 4(11)\n"
	"	mtsrr1	10\n"
	/*
	 * EXCEPTION_PROLOG_0/1/2 from a kernel-mode interrupt (MSR_PR clear
	 * in SRR1): the frame goes INT_FRAME_SIZE below r1, aligned down to
	 * 16 bytes, its back chain the interrupted r1.
	 */
	"	mfcr	10\n"
	"	addi	11, 1, -" S(INT_FRAME_SIZE) "\n"
	"	rlwinm	11, 11, 0, 0, 27\n"
	"	stw	10, " S(_CCR) "(11)\n"
	"	stw	12, " S(GPR(12)) "(11)\n"
	"	stw	9, " S(GPR(9)) "(11)\n"
	"	mfsprg	10, 0\n"
	"	mfsprg	12, 1\n"
	"	stw	10, " S(GPR(10)) "(11)\n"
	"	stw	12, " S(GPR(11)) "(11)\n"
	"	mflr	10\n"
	"	stw	10, " S(_LINK) "(11)\n"
	"	mfsrr0	12\n"
	"	mfsrr1	9\n"
	"	stw	1, " S(GPR(1)) "(11)\n"
	"	stw	1, 0(11)\n"
	"	mr	1, 11\n"
	"	stw	0, " S(GPR(0)) "(11)\n"
	"	stw	3, " S(GPR(3)) "(11)\n"	/* SAVE_4GPRS(3, r11) */
	"	stw	4, " S(GPR(4)) "(11)\n"
	"	stw	5, " S(GPR(5)) "(11)\n"
	"	stw	6, " S(GPR(6)) "(11)\n"
	"	stw	7, " S(GPR(7)) "(11)\n"	/* SAVE_2GPRS(7, r11) */
	"	stw	8, " S(GPR(8)) "(11)\n"
	/* transfer_to_handler: nip, msr, ctr, xer (XER's SO/OV/CA included) */
	"	stw	12, " S(_NIP) "(11)\n"
	"	stw	9, " S(_MSR) "(11)\n"
	"	mfctr	12\n"
	"	mfxer	10\n"
	"	stw	12, " S(_CTR) "(11)\n"
	"	stw	10, " S(_XER) "(11)\n"
	/* do_IRQ() -> the call-function IPI's handler (smp_ipi_demux_relaxed) */
	"	bl	generic_smp_call_function_interrupt\n"
	/* ret_from_except / restore: the volatile registers, SRR0/SRR1, rfi */
	"	lwz	9, " S(_MSR) "(1)\n"
	"	lwz	12, " S(_NIP) "(1)\n"
	"	lwz	0, " S(GPR(0)) "(1)\n"
	"	lwz	3, " S(GPR(3)) "(1)\n"
	"	lwz	4, " S(GPR(4)) "(1)\n"
	"	lwz	5, " S(GPR(5)) "(1)\n"
	"	lwz	6, " S(GPR(6)) "(1)\n"
	"	lwz	7, " S(GPR(7)) "(1)\n"
	"	lwz	8, " S(GPR(8)) "(1)\n"
	"	lwz	10, " S(_XER) "(1)\n"
	"	lwz	11, " S(_CTR) "(1)\n"
	"	mtxer	10\n"
	"	mtctr	11\n"
	"	lwz	10, " S(_LINK) "(1)\n"
	"	mtlr	10\n"
	"	lwz	10, " S(_CCR) "(1)\n"
	"	mtcrf	0xff, 10\n"
	"	mtsrr0	12\n"
	"	mtsrr1	9\n"
	"	lwz	9, " S(GPR(9)) "(1)\n"
	"	lwz	10, " S(GPR(10)) "(1)\n"
	"	lwz	11, " S(GPR(11)) "(1)\n"
	"	lwz	12, " S(GPR(12)) "(1)\n"
	"	lwz	1, " S(GPR(1)) "(1)\n"
	"	rfi\n"
	"	.size	pc_irq_entry, . - pc_irq_entry\n");
