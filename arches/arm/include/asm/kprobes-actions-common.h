/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the A32 (asm/kprobes-actions.h) and Thumb (asm/kprobes-actions-thumb.h)
 * kprobe handlers share, after Linux v5.10: the PC write of
 * arch/arm/probes/decode.h (bx_write_pc; on an ARMv7 kernel load_write_pc
 * and alu_write_pc are it), the flag merge the emulate_* handlers end with,
 * and arch/arm/probes/kprobes/actions-common.c: simulate_ldm1stm1,
 * simulate_ldm1_pc, emulate_generic_r0_12_noflags and its r2_14 / ldm_r3_15
 * forms, which kprobe_decode_ldmstm picks for A32 and T32 LDM/STM alike.
 *
 * The kernel loads the registers for an emulated instruction with
 * register-pinned inline asm; here two small asm helpers do it, with the
 * same registers. They assemble as A32 or as Thumb, whichever the kernel
 * is compiled to (a Thumb function's symbol gets bit 0, so that C calls
 * it in Thumb state).
 */
#ifndef _ASM_KPROBES_ACTIONS_COMMON_H
#define _ASM_KPROBES_ACTIONS_COMMON_H

#define PSR_T_BIT	0x00000020
#define APSR_MASK	0xf80f0000	/* N Z C V Q and GE[3:0] */

/* An asm helper's entry: global, a function, and Thumb code on a Thumb kernel. */
#ifdef __thumb__
#define KPROBE_ASM_FUNC(name)						\
	"	.globl	" #name "\n"					\
	"	.type	" #name ", %function\n"				\
	"	.syntax	unified\n"					\
	"	.thumb\n"						\
	"	.thumb_func\n"						\
	#name ":\n"
#else
#define KPROBE_ASM_FUNC(name)						\
	"	.globl	" #name "\n"					\
	"	.type	" #name ", %function\n"				\
	#name ":\n"
#endif

/* r0-r3 for the slot, and the flags it reads and writes. */
struct kprobe_arm_call_regs {
	unsigned long r[4];
	unsigned long cpsr;
};

void kprobe_arm_call(unsigned long fn, struct kprobe_arm_call_regs *c);
void kprobe_arm_generic(unsigned long fn, unsigned long *regs);
NOKPROBE_SYMBOL(kprobe_arm_call);
NOKPROBE_SYMBOL(kprobe_arm_generic);

/*
 * kprobe_arm_call: r0-r3 and APSR from *c, call the slot, store them back
 * (the register/flag traffic of the kernel's emulate_* inline asm).
 * kprobe_arm_generic: r0-r12 from regs[0..12], call the slot, store them
 * back (emulate_generic_r0_12_noflags; sp is never one of them).
 */
__asm__(
	"	.text\n"
	KPROBE_ASM_FUNC(kprobe_arm_call)
	"	push	{r4, lr}\n"
	"	mov	r4, r1\n"
	"	mov	r12, r0\n"
	"	ldr	r0, [r4, #16]\n"
	"	msr	APSR_nzcvqg, r0\n"
	"	ldm	r4, {r0-r3}\n"
	"	blx	r12\n"
	"	stm	r4, {r0-r3}\n"
	"	mrs	r0, apsr\n"
	"	str	r0, [r4, #16]\n"
	"	pop	{r4, pc}\n"
	"	.size	kprobe_arm_call, . - kprobe_arm_call\n"
	KPROBE_ASM_FUNC(kprobe_arm_generic)
	"	push	{r1, r4-r11, lr}\n"
	"	mov	lr, r0\n"
	"	ldm	r1, {r0-r12}\n"
	"	blx	lr\n"
	"	ldr	lr, [sp]\n"
	"	stm	lr, {r0-r12}\n"
	"	pop	{r1, r4-r11, pc}\n"
	"	.size	kprobe_arm_generic, . - kprobe_arm_generic\n");

/* decode.h bx_write_pc; ARMv7 loads and ALU writes of PC interwork. */
static __always_inline void bx_write_pc(unsigned long pcv, struct pt_regs *regs)
{
	if (pcv & 1) {
		regs->ARM_cpsr |= PSR_T_BIT;
		pcv &= ~1UL;
	} else {
		regs->ARM_cpsr &= ~PSR_T_BIT;
		pcv &= ~2UL;
	}
	regs->ARM_pc = pcv;
}

/* The APSR an emulation left (N Z C V Q GE), into the probed context's CPSR. */
static __always_inline void arm_merge_flags(struct pt_regs *regs, unsigned long cpsr)
{
	regs->ARM_cpsr = (regs->ARM_cpsr & ~APSR_MASK) | (cpsr & APSR_MASK);
}

/* actions-common.c simulate_ldm1stm1: LDM/STM in C, any registers. */
static __always_inline void simulate_ldm1stm1(unsigned long insn, struct pt_regs *regs)
{
	int rn = (insn >> 16) & 0xf;
	unsigned long *addr = (unsigned long *)regs->uregs[rn];
	unsigned long list = insn & 0xffff;
	int count = __builtin_popcount(list), up = insn & (1 << 23), pre = insn & (1 << 24);
	int reg;

	if (!up)
		addr -= count;
	addr += (!pre == !up);
	for (reg = 0; reg < 16; reg++) {
		if (!(list & (1 << reg)))
			continue;
		if (insn & (1 << 20))
			regs->uregs[reg] = *addr++;
		else
			*addr++ = regs->uregs[reg];
	}
	if (insn & (1 << 21)) {
		if (!up)
			addr -= count;
		addr -= (!pre == !up);
		regs->uregs[rn] = (unsigned long)addr;
	}
}

/* actions-common.c simulate_ldm1_pc: PC in the list, written as a load does. */
static __always_inline void simulate_ldm1_pc(unsigned long insn, struct pt_regs *regs)
{
	simulate_ldm1stm1(insn, regs);
	bx_write_pc(regs->ARM_pc, regs);	/* load_write_pc */
}

/*
 * emulate_generic_r0_12_noflags and the two that shift the register file
 * (kprobe_decode_ldmstm renamed the slot's Rn and list down by 2 or 3).
 */
static __always_inline void emulate_generic_r0_12_noflags(unsigned long fn, struct pt_regs *regs)
{
	kprobe_arm_generic(fn, regs->uregs);
}

static __always_inline void emulate_generic_r2_14_noflags(unsigned long fn, struct pt_regs *regs)
{
	kprobe_arm_generic(fn, regs->uregs + 2);
}

static __always_inline void emulate_ldm_r3_15(unsigned long fn, struct pt_regs *regs)
{
	kprobe_arm_generic(fn, regs->uregs + 3);
	bx_write_pc(regs->ARM_pc, regs);	/* load_write_pc */
}

#endif
