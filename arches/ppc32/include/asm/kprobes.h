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

typedef u32 kprobe_opcode_t;	/* what kprobe.addr points at */

struct pt_regs {
	unsigned long gpr[32];
	unsigned long nip, msr, orig_gpr3, ctr, link, xer, ccr;
};

struct arch_specific_insn {
	u32 *insn;		/* the copy single-stepped from the slot */
	long boostable;		/* 1: emulate_step() handles it; -1: it cannot */
	unsigned long unused[2];
};

#endif
