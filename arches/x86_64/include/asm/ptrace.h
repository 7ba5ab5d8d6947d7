/* SPDX-License-Identifier: GPL-2.0 */
/* x86-64 struct pt_regs fields of the accessors in <kisim/ptrace.h> (arch/x86/include/asm/ptrace.h). */
#ifndef _ASM_PTRACE_H
#define _ASM_PTRACE_H

#include <asm/kprobes.h>

#define PT_REGS_RETURN	ax
#define PT_REGS_IP	ip
#define PT_REGS_SP	sp
#define PT_REGS_FP	bp

#endif
