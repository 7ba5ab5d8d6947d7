/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own text-patching code, built as C for the CPUs it patches:
 * into the patch checker's guest (kisim patchcheck --guest,
 * docs/patchcheck.md) and, with CONFIG_PATCHING_IN_GUEST, into the guest
 * kernel itself (docs/machine.md, "The kernel patches itself").
 *
 * This header is the contract between four parts:
 *
 *  - generic C (kernel/patching/smp.c, entry.c): cross-CPU function calls
 *    and stop_machine() after Linux v5.10 kernel/smp.c and
 *    kernel/stop_machine.c, and the entry the host calls;
 *  - the arch's C (arches/<arch>/patching.c): the v5.10 primitive
 *    (x86 text_poke_bp_batch(), ARM patch_text(), PowerPC
 *    patch_instruction()), its interrupt entry in asm, the IPI it sends;
 *  - the patch checker (patchcheck/guest.py), which plays the hardware
 *    around a small image of these files: it delivers interrupts, turns
 *    stores through the text alias into stores other CPUs fetch piece by
 *    piece, and observes the serializing and cache-maintenance
 *    instructions the CPUs execute;
 *  - the kernel machine (sim/self_patching.py), which plays the same
 *    hardware around the guest kernel built with these files.
 *
 * Memory. PC_TEXT_BASE is the first byte of patchable text and
 * PC_TEXT_ALIAS a second, writable mapping of it, as v5.10's text_poke()
 * temporary mm (x86), FIX_TEXT_POKE0 (ARM patch_map()) and text_poke_area
 * (PowerPC map_patch_area()). The checker's image (patchcheck/guest/guest.lds)
 * patches one page at 0x10000 and is itself at 1 MiB; the kernel build
 * passes -DPC_TEXT_BASE (the kernel's load address), -DPC_TEXT_ALIAS and
 * -DPC_NR_CPUS (CONFIG_NR_CPUS). PC_IRQ_BASE, the arch's interrupt
 * controller page, is the arch's (arches/<arch>/guest_patching.py).
 */
#ifndef _PC_GUEST_H
#define _PC_GUEST_H

#ifndef PC_TEXT_BASE
#define PC_TEXT_BASE	0x10000UL	/* the checker's loop page */
#endif
#ifndef PC_TEXT_ALIAS
#define PC_TEXT_ALIAS	0x80000UL
#endif
#ifndef PC_NR_CPUS
#define PC_NR_CPUS	4
#endif
#define THREAD_SIZE	8192		/* each CPU's stack: thread_info at its base */

#ifndef __ASSEMBLY__

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned long size_t;
typedef _Bool bool;
#define true 1
#define false 0
#define NULL ((void *)0)

#define barrier()		__asm__ __volatile__("" ::: "memory")
#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define __always_inline		inline __attribute__((__always_inline__))
#define noinline		__attribute__((__noinline__))
#define __used			__attribute__((__used__))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* One text change the checker hands the guest (struct pc_site[] in memory). */
#define PC_INSN_MAX	16
struct pc_site {
	unsigned long addr;		/* where, in PC_TEXT_BASE's page */
	u32 len;			/* bytes of insn */
	u32 out_of_line;		/* 1: code a site leads to (an optprobe's detour),
					   written before any site of the batch */
	u8 insn[PC_INSN_MAX];		/* the new bytes */
};

/* thread_info at the base of each THREAD_SIZE-aligned stack (the host fills it). */
struct thread_info {
	u32 cpu;
};

static __always_inline struct thread_info *current_thread_info(void)
{
	unsigned long sp = (unsigned long)__builtin_frame_address(0);

	return (struct thread_info *)(sp & ~(unsigned long)(THREAD_SIZE - 1));
}

static __always_inline int smp_processor_id(void)
{
	return current_thread_info()->cpu;
}

/* The number of CPUs, set by the host before the first CPU runs. */
extern volatile int pc_nr_cpus;

/*
 * cpu_online_mask: bit n set while CPU n takes part in cross-CPU calls.
 * The checker sets every CPU's bit; a kernel CPU sets its own once it can
 * take interrupts (pc_cpu_online(), from start_kernel()). A CPU that is not
 * online is neither sent IPIs nor waited for, as in v5.10 before
 * set_cpu_online(): a caller that is not online still runs the function
 * itself (stop_machine() before SMP bring-up).
 */
extern volatile unsigned long pc_online;
void pc_cpu_online(int cpu);

/*
 * A breakpoint the arch's breakpoint entry finds no patching handler for
 * (x86 do_int3() when poke_int3_handler() declines) is not the guest's: the
 * entry writes its address here and returns to it, and the checker gives
 * the trap to the next handler, kprobes (kisim's, on the host).
 */
extern unsigned long pc_breakpoint_declined[PC_NR_CPUS];

/* A writable alias of a text address (patch_map(), kmap of the text page). */
static __always_inline void *text_alias(const void *addr)
{
	return (void *)(PC_TEXT_ALIAS + ((unsigned long)addr - PC_TEXT_BASE));
}

/* -- kernel/smp.c and kernel/stop_machine.c (kernel/patching/smp.c) -- */
typedef void (*smp_call_func_t)(void *info);
typedef int (*cpu_stop_fn_t)(void *data);

void smp_call_function(smp_call_func_t func, void *info, int wait);
void on_each_cpu(smp_call_func_t func, void *info, int wait);
int stop_machine(cpu_stop_fn_t fn, void *data, const void *cpus);
/* The IPI's handler; the arch's interrupt entry calls it. */
void generic_smp_call_function_interrupt(void);

/* -- what each arch's patching.c provides -- */
/* the interrupt controller writes: bit n of mask for CPU n (a cpumask) */
void arch_send_call_function_ipi_mask(unsigned long mask);
unsigned long arch_local_irq_save(void);	/* cli / cpsid i / wrteei 0 */
void arch_local_irq_restore(unsigned long flags);
void cpu_relax(void);				/* out of line: the checker sees a spin
						   wait as a call of it */
void arch_patch_batch(const struct pc_site *sites, int nr);	/* the v5.10 primitive */

/*
 * The protocol is done with [p, p + size), a descriptor other CPUs' handlers
 * may have read (x86 text_poke_bp_batch()'s bp_patching_desc, on its stack,
 * once the refs wait is over). A no-op; the patch checker poisons the range
 * (POISON_FREE), and another CPU that reads it afterwards is a finding.
 */
void pc_release(const void *p, size_t size);

#define local_irq_save(flags)	((flags) = arch_local_irq_save())
#define local_irq_restore(flags) arch_local_irq_restore(flags)

/* Memory barriers the arch's patching.c defines as the kernel does. */
void smp_mb(void);
void smp_wmb(void);

#endif /* __ASSEMBLY__ */
#endif /* _PC_GUEST_H */
