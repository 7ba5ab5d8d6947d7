/* SPDX-License-Identifier: GPL-2.0 */
/* ARM struct pt_regs fields of the accessors in <kisim/ptrace.h> (arch/arm/include/asm/ptrace.h). */
#ifndef _ASM_PTRACE_H
#define _ASM_PTRACE_H

#include <asm/kprobes.h>

#define PT_REGS_RETURN	uregs[0]	/* r0 */
#define PT_REGS_IP	uregs[15]	/* pc */
#define PT_REGS_SP	uregs[13]	/* sp */
#ifdef CONFIG_THUMB2_KERNEL
#define PT_REGS_FP	uregs[7]	/* the Thumb frame pointer (r7) */
#else
#define PT_REGS_FP	uregs[11]	/* fp (r11) */
#endif

#endif
