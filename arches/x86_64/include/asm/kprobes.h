/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 kprobe types (Linux v5.10 arch/x86/include/asm/kprobes.h and
 * asm/ptrace.h). struct pt_regs has the kernel's field order; the host
 * (arches/x86_64/kprobes.py) saves and restores it in the same order.
 */
#ifndef _ASM_KPROBES_H
#define _ASM_KPROBES_H

#define BREAKPOINT_INSTRUCTION	0xcc
#define MAX_INSN_SIZE		16
#define KPROBE_SLOT_BYTES	MAX_INSN_SIZE	/* one get_insn_slot() slot */

#define X86_EFLAGS_TF		0x00000100
#define X86_EFLAGS_IF		0x00000200

typedef u8 kprobe_opcode_t;	/* what kprobe.addr points at */

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};

struct arch_specific_insn {
	u8 *insn;		/* the copy of the probed instruction (a slot) */
	long boostable;		/* 1: the slot ends with a jmp back (prepare_boost) */
	unsigned long len;	/* the probed instruction's length */
	unsigned long unused;
};

#endif
