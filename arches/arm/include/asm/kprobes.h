/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM kprobe types (Linux v5.10 arch/arm/include/asm/kprobes.h, probes.h,
 * uapi/asm/ptrace.h). The host (arches/arm/kprobes.py) saves and restores
 * struct pt_regs in this order.
 */
#ifndef _ASM_KPROBES_H
#define _ASM_KPROBES_H

#define KPROBE_ARM_BREAKPOINT_INSTRUCTION	0x07f001f8
/* The Thumb-2 kernel's (probes/kprobes/core.h): UDF #0x18, 16- and 32-bit. */
#define KPROBE_THUMB16_BREAKPOINT_INSTRUCTION	0xde18
#define KPROBE_THUMB32_BREAKPOINT_INSTRUCTION	0xf7f0a018
#define MAX_INSN_SIZE		2	/* the renamed instruction, then mov pc, lr */
#define KPROBE_SLOT_BYTES	(MAX_INSN_SIZE * 4)

/*
 * The kernel's instruction handlers (arch/arm/probes/decode-arm.c,
 * kprobes/actions-arm.c, actions-common.c), numbered as HANDLERS in
 * arches/arm/kprobes.py, which picks one per probe.
 */
#define KPROBE_ARM_PROBES_SIMULATE_NOP	0
#define KPROBE_ARM_PROBES_EMULATE_NONE	1
#define KPROBE_ARM_SIMULATE_BBL	2
#define KPROBE_ARM_SIMULATE_BLX1	3
#define KPROBE_ARM_SIMULATE_BLX2BX	4
#define KPROBE_ARM_SIMULATE_MRS	5
#define KPROBE_ARM_SIMULATE_MOV_IPSP	6
#define KPROBE_ARM_EMULATE_LDRDSTRD	7
#define KPROBE_ARM_EMULATE_LDR	8
#define KPROBE_ARM_EMULATE_STR	9
#define KPROBE_ARM_EMULATE_RD12RN16RM0RS8_RWFLAGS	10
#define KPROBE_ARM_EMULATE_RD12RN16RM0_RWFLAGS_NOPC	11
#define KPROBE_ARM_EMULATE_RD16RN12RM0RS8_RWFLAGS_NOPC	12
#define KPROBE_ARM_EMULATE_RD12RM0_NOFLAGS_NOPC	13
#define KPROBE_ARM_EMULATE_RDLO12RDHI16RN0RM8_RWFLAGS_NOPC	14
#define KPROBE_ARM_EMULATE_GENERIC_R0_12_NOFLAGS	15
#define KPROBE_ARM_EMULATE_GENERIC_R2_14_NOFLAGS	16
#define KPROBE_ARM_EMULATE_LDM_R3_15	17
#define KPROBE_ARM_SIMULATE_LDM1STM1	18
#define KPROBE_ARM_SIMULATE_STM1_PC	19
#define KPROBE_ARM_SIMULATE_LDM1_PC	20

typedef u32 kprobe_opcode_t;	/* what kprobe.addr points at */

struct pt_regs {
	unsigned long uregs[18];
};

#define ARM_ORIG_r0	uregs[17]
#define ARM_cpsr	uregs[16]
#define ARM_pc		uregs[15]
#define ARM_lr		uregs[14]
#define ARM_sp		uregs[13]

/* struct arch_probes_insn (arch/arm/include/asm/probes.h), as kisim fills it. */
struct arch_specific_insn {
	unsigned long insn;			/* slot: insn_fn (0: INSN_GOOD_NO_SLOT) */
	unsigned long handler;			/* insn_handler: KPROBE_ARM_* */
	unsigned long kprobe_direct_exec;	/* opt-arm.c: no PC in register_usage_flags */
	long stack_space;			/* checkers-common.c: bytes of stack stored */
};

/*
 * Whether condition cond passes with these flags (decode.c
 * probes_condition_checks; asm/opcodes.h arm_check_condition).
 */
static __always_inline int arm_cond_passes(unsigned long cond, unsigned long cpsr)
{
	int n = (cpsr >> 31) & 1, z = (cpsr >> 30) & 1, c = (cpsr >> 29) & 1;
	int v = (cpsr >> 28) & 1, r;

	switch (cond >> 1) {
	case 0: r = z; break;
	case 1: r = c; break;
	case 2: r = n; break;
	case 3: r = v; break;
	case 4: r = c && !z; break;
	case 5: r = n == v; break;
	case 6: r = !z && n == v; break;
	default: return 1;
	}
	return (cond & 1) ? !r : r;
}

#endif
