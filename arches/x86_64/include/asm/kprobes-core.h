/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 kprobe hooks for kernel/kprobes.c, after Linux v5.10
 * arch/x86/kernel/kprobes/core.c: the last kernels that single-step the
 * copy with TF (v5.13 replaced it with an int3 after the copy). Boosting is
 * decided at prepare time (prepare_boost: the slot gets a jmp back).
 * Included by kernel/kprobes.c only.
 */
#ifndef _ASM_KPROBES_CORE_H
#define _ASM_KPROBES_CORE_H

/* After int3 the saved ip is one past the breakpoint. */
static __always_inline unsigned long arch_kprobe_trap_addr(struct pt_regs *regs)
{
	return regs->ip - 1;
}

static __always_inline int arch_is_breakpoint(unsigned long addr)
{
	return *(u8 *)addr == BREAKPOINT_INSTRUCTION;
}

static __always_inline void arch_kprobe_retry(struct pt_regs *regs, unsigned long addr)
{
	regs->ip = addr;
}

/* x86 has no conditional breakpoint. */
static __always_inline int arch_kprobe_skip(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

/* built with CONFIG_OPTPROBES (HAVE_OPTPROBES, arches/x86_64/Kconfig) */
#define OPTPROBE_BUFFER_BYTES	256

#ifdef CONFIG_OPTPROBES
/*
 * setup_detour_execution() (arch/x86/kernel/kprobes/opt.c): a probe that
 * optimize_kprobe() has flagged KPROBE_FLAG_OPTIMIZED, even while it waits
 * for the optimizer behind its int3, runs the displaced instructions from
 * its detour buffer, past the template (TMPL_END_IDX bytes: kisim's
 * OPTPROBE_TRAP_RESUME, arches/x86_64/kprobes.py), which jump back.
 */
#define TMPL_END_IDX		216
extern u8 optprobe_buffers[][OPTPROBE_BUFFER_BYTES];

static __always_inline int setup_detour_execution(struct kprobe *p, struct pt_regs *regs)
{
	if (!(p->flags & KPROBE_FLAG_OPTIMIZED))
		return 0;
	regs->ip = (unsigned long)&optprobe_buffers[p->hit_index][TMPL_END_IDX];
	return 1;
}
#else
static __always_inline int setup_detour_execution(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}
#endif

/*
 * setup_singlestep(): the detour's copy (above) for a probe flagged
 * optimized; boost (jump into the slot, which jumps back) when the copy
 * is boostable and there is no post_handler; otherwise set TF, clear IF
 * and single-step the copy. Returns 1 when nothing is left to do.
 */
static __always_inline int arch_setup_singlestep(struct kprobe *p, struct pt_regs *regs,
						 struct kprobe_ctlblk *kcb, int cpu, int reenter)
{
	if (setup_detour_execution(p, regs))
		return 1;
	if (p->ainsn.boostable && !p->post_handler) {
		regs->ip = (unsigned long)p->ainsn.insn;
		return 1;
	}
	kcb->kprobe_status = reenter ? KPROBE_REENTER : KPROBE_HIT_SS;
	kcb->kprobe_saved_flags = regs->flags & X86_EFLAGS_IF;
	regs->flags |= X86_EFLAGS_TF;
	regs->flags &= ~X86_EFLAGS_IF;
	regs->ip = (unsigned long)p->ainsn.insn;
	return 0;
}

static __always_inline int arch_kprobe_ss_done(struct kprobe *p, struct pt_regs *regs)
{
	return 1;
}

/* skip_prefixes(): legacy prefixes, then one REX prefix. */
static __always_inline u8 *skip_prefixes(u8 *insn)
{
	for (;;) {
		switch (*insn) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
		case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
			insn++;
			continue;
		}
		break;
	}
	if ((*insn & 0xf0) == 0x40)
		insn++;
	return insn;
}

/*
 * resume_execution(): the copy ran in the slot; move ip back to the
 * original code, fixing what the copy computed relative to the slot.
 */
static __always_inline void arch_resume_singlestep(struct kprobe *p, struct pt_regs *regs,
						   struct kprobe_ctlblk *kcb)
{
	unsigned long *tos = (unsigned long *)regs->sp;
	unsigned long copy_ip = (unsigned long)p->ainsn.insn;
	unsigned long orig_ip = (unsigned long)p->addr;
	u8 *insn = skip_prefixes(p->ainsn.insn);

	regs->flags &= ~X86_EFLAGS_TF;
	switch (insn[0]) {
	case 0x9c:	/* pushf: hide TF, show the saved IF */
		*tos &= ~(X86_EFLAGS_TF | X86_EFLAGS_IF);
		*tos |= kcb->kprobe_saved_flags;
		break;
	case 0xc2: case 0xc3: case 0xca: case 0xcb: case 0xcf: case 0xea:
		goto no_change;		/* ret, lret, iret, jmp far: ip is right */
	case 0xe8:	/* call rel32: fix the pushed return address */
		*tos = orig_ip + (*tos - copy_ip);
		break;
	case 0xff:
		if ((insn[1] & 0x30) == 0x10) {
			/* call indirect: return address only */
			*tos = orig_ip + (*tos - copy_ip);
			goto no_change;
		}
		if ((insn[1] & 0x31) == 0x20 || (insn[1] & 0x31) == 0x21)
			goto no_change;	/* jmp indirect */
		break;
	default:
		break;
	}
	regs->ip += orig_ip - copy_ip;
no_change:
	regs->flags |= kcb->kprobe_saved_flags;
}

/*
 * The exception return: the handlers return here with their result in
 * rax; HC_KPROBE/KPROBE_HC_RETURN restores the saved pt_regs (iretq).
 */
__asm__(
	"	.text\n"
	"	.globl	kprobe_exc_return\n"
	"	.type	kprobe_exc_return, @function\n"
	"kprobe_exc_return:\n"
	"	mov	%rax, %rdx\n"
	"	xor	%esi, %esi\n"
	"	mov	$" __stringify(HC_KPROBE) ", %edi\n"
	"	syscall\n"
	"	ud2\n"
	"	.size	kprobe_exc_return, . - kprobe_exc_return\n");

/* arch_prepare_kretprobe(): at function entry the return address is at sp. */
static __always_inline void arch_prepare_kretprobe(struct kretprobe_instance *ri,
						   struct pt_regs *regs)
{
	unsigned long *sara = (unsigned long *)regs->sp;

	ri->ret_addr = *sara;
	*sara = (unsigned long)&kretprobe_trampoline;
}

/*
 * kretprobe_trampoline: the probed function returns here. Save the
 * return value and the caller-clobbered registers as a struct pt_regs,
 * call trampoline_handler(regs), return to the address it gives back.
 */
__asm__(
	"	.text\n"
	"	.globl	kretprobe_trampoline\n"
	"	.type	kretprobe_trampoline, @function\n"
	"kretprobe_trampoline:\n"
	"	sub	$176, %rsp\n"			/* pt_regs + the return slot */
	"	mov	%rax, 80(%rsp)\n"
	"	mov	%rcx, 88(%rsp)\n"
	"	mov	%rdx, 96(%rsp)\n"
	"	mov	%rsi, 104(%rsp)\n"
	"	mov	%rdi, 112(%rsp)\n"
	"	mov	%rbp, 32(%rsp)\n"		/* regs->bp: the caller's frame, for unwinders */
	"	lea	176(%rsp), %rax\n"
	"	mov	%rax, 152(%rsp)\n"		/* regs->sp */
	"	mov	%rsp, %rdi\n"
	"	call	trampoline_handler\n"
	"	mov	%rax, 168(%rsp)\n"
	"	mov	80(%rsp), %rax\n"
	"	mov	96(%rsp), %rdx\n"
	"	add	$168, %rsp\n"
	"	ret\n"
	"	.globl	kretprobe_trampoline_end\n"	/* where it ends, for the unwinder */
	"kretprobe_trampoline_end:\n"
	"	.size	kretprobe_trampoline, . - kretprobe_trampoline\n");

/*
 * Optprobes (arch/x86/kernel/kprobes/opt.c, v5.10): the probe's int3 and
 * the next bytes are replaced by a jmp into a detour buffer (written by
 * arches/x86_64/kprobes.py) that saves the registers as a struct pt_regs,
 * calls optimized_callback(p, regs) (kernel/kprobes.c), restores them,
 * runs the displaced
 * instructions and jumps back. No trap at all.
 */

/* optimized_callback() hooks: the handler sees regs as after the int3. */
static __always_inline void arch_optprobe_regs(struct kprobe *p, struct pt_regs *regs)
{
	regs->ip = (unsigned long)p->addr + 1;
	regs->orig_ax = ~0UL;
}

/* The detour itself runs the displaced instructions. */
static __always_inline void arch_optprobe_step(struct kprobe *p, struct pt_regs *regs, int cpu)
{
}

/*
 * KPROBES_ON_FTRACE (x86 selects HAVE_KPROBES_ON_FTRACE in v5.10): a probe
 * on an mcount site is an ftrace-based kprobe, reached through
 * ftrace_regs_caller (entry.S); the site is a 5-byte call or nop.
 */
#define ARCH_HAS_KPROBES_ON_FTRACE
#define KPROBE_FTRACE_INSN_SIZE	5	/* MCOUNT_INSN_SIZE */

/*
 * Faults in a kprobe (Linux v5.10): the kernel-mode part of
 * exc_general_protection (arch/x86/kernel/traps.c) tries the exception
 * table, then, while a kprobe runs on this CPU, kprobe_fault_handler(regs,
 * X86_TRAP_GP); if neither handles it, notify_die and die_addr. kisim
 * delivers #GP only: page faults cannot be made resumable under Unicorn
 * (docs/kprobes.md). The guest has no exception table, so fixup_exception
 * finds nothing; returning 0 is the die, which the machine reports.
 */
#define ARCH_HAS_KPROBE_FAULT_TRAP
#define X86_TRAP_GP		13	/* arch/x86/include/asm/trapnr.h */

notrace int exc_general_protection(struct pt_regs *regs)
{
	if (current_kprobe[smp_processor_id()] && kprobe_fault_handler(regs, X86_TRAP_GP))
		return 1;
	return 0;
}
NOKPROBE_SYMBOL(exc_general_protection);

/* kprobe_fault_handler(): the fault hit the copy being single-stepped. */
static __always_inline int arch_kprobe_fault_in_slot(struct kprobe *p, struct pt_regs *regs)
{
	return regs->ip == (unsigned long)p->ainsn.insn;
}

/*
 * kprobe_fault_handler(), single-step case: the step is cancelled, ip
 * goes back to the probe address, TF is cleared and the flags saved at
 * setup_singlestep() are put back.
 */
static __always_inline void arch_kprobe_cancel_singlestep(struct kprobe *p, struct pt_regs *regs,
							  struct kprobe_ctlblk *kcb)
{
	regs->ip = (unsigned long)p->addr;
	regs->flags &= ~X86_EFLAGS_TF;
	regs->flags |= kcb->kprobe_saved_flags;
}

/*
 * The fault self-test's target (kisim): loads its argument into %ds. A
 * null selector loads; a selector past the end of the GDT raises #GP
 * (Intel SDM vol. 3A, MOV to a segment register), as loadsegment() can.
 */
#define KPROBE_FAULT_BAD	0x1234UL
__asm__(
	"	.text\n"
	"	.globl	kprobe_fault_target\n"
	"	.type	kprobe_fault_target, @function\n"
	"kprobe_fault_target:\n"
	"	mov	%edi, %ds\n"
	"	xor	%eax, %eax\n"
	"	ret\n"
	"	.size	kprobe_fault_target, . - kprobe_fault_target\n");

/* The fault self-test's fixup: a null selector in the argument register. */
static __always_inline void arch_kprobe_fault_fixup(struct pt_regs *regs)
{
	regs->di = 0;
}

#endif
