/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM kprobe types (Linux v5.10 arch/arm/include/asm/kprobes.h, probes.h,
 * uapi/asm/ptrace.h). The host (arches/arm/kprobes.py) saves and restores
 * struct pt_regs in this order.
 */
#ifndef _ASM_KPROBES_H
#define _ASM_KPROBES_H

#define KPROBE_ARM_BREAKPOINT_INSTRUCTION	0x07f001f8
#define KPROBE_ARM_SLOT		64	/* one CPU's copy: insn, return path, data */
#define KPROBE_ARM_COPIES	8	/* one copy per CPU: the machine has at most 8 */
#define KPROBE_SLOT_BYTES	(KPROBE_ARM_SLOT * KPROBE_ARM_COPIES)

/* How the probed instruction is stepped (arch/arm/probes/kprobes/actions-arm.c). */
#define KPROBE_ARM_EMULATE	0	/* run the copy in this CPU's slot */
#define KPROBE_ARM_SIM_BBL	1	/* simulate_bbl: b, bl */
#define KPROBE_ARM_SIM_BLX2BX	2	/* simulate_blx2bx: bx, blx <reg> */
#define KPROBE_ARM_SIM_LDR_LIT	3	/* ldr rt, [pc, #imm] */
#define KPROBE_ARM_SIM_LDM_PC	4	/* simulate_ldm1stm1: ldmia sp!, {..., pc} */
#define KPROBE_ARM_SIM_NOP	5	/* kprobe_simulate_nop */

typedef u32 kprobe_opcode_t;	/* what kprobe.addr points at */

struct pt_regs {
	unsigned long uregs[18];
};

#define ARM_ORIG_r0	uregs[17]
#define ARM_cpsr	uregs[16]
#define ARM_pc		uregs[15]
#define ARM_lr		uregs[14]
#define ARM_sp		uregs[13]

struct arch_specific_insn {
	unsigned long insn;	/* slot base; CPU n uses insn + n * KPROBE_ARM_SLOT */
	unsigned long kind;	/* KPROBE_ARM_* */
	unsigned long unused[2];
};

#endif
