/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerPC (32-bit) kprobe types (Linux v5.10 arch/powerpc/include/asm/
 * kprobes.h, probes.h, uapi/asm/ptrace.h). The host
 * (arches/ppc32/kprobes.py) saves and restores struct pt_regs in this order.
 */
#ifndef _ASM_KPROBES_H
#define _ASM_KPROBES_H

#define BREAKPOINT_INSTRUCTION	0x7fe00008	/* trap */
#define MAX_INSN_SIZE		2		/* words (prefixed insns are ppc64) */
#define KPROBE_SLOT_BYTES	(MAX_INSN_SIZE * 4)

#define MSR_SE			(1UL << 10)	/* single-step trace */
/* arch/powerpc/lib/sstep.c: the MSR bits mfmsr emulation returns (32-bit). */
#define MSR_MASK		0x87c0ffffUL
/* The host's STACK_HEADROOM (arches/ppc32/kprobes.py): pt_regs lies this far
 * above the stack pointer the handler is entered with. */
#define KPROBE_REGS_ABOVE_SP	16
#define PT_XER			37		/* uapi/asm/ptrace.h: xer's word in pt_regs */
#define XER_SO			0x80000000UL	/* arch/powerpc/lib/sstep.c */
#define XER_OV			0x40000000UL
#define XER_CA			0x20000000UL

typedef u32 kprobe_opcode_t;	/* what kprobe.addr points at */

struct pt_regs {
	unsigned long gpr[32];
	unsigned long nip, msr, orig_gpr3, ctr, link, xer, ccr;
};
_Static_assert(__builtin_offsetof(struct pt_regs, xer) == 4 * PT_XER, "pt_regs layout");

/* arch/powerpc/lib/sstep.c: 1 if emulated (regs updated, nip advanced), else 0. */
int emulate_step(struct pt_regs *regs, u32 instr);

struct arch_specific_insn {
	u32 *insn;		/* the copy single-stepped from the slot */
	long boostable;		/* 1: emulate_step() handles it; -1: it cannot */
	unsigned long unused[2];
};

#endif
