/* SPDX-License-Identifier: GPL-2.0 */
/* PowerPC struct pt_regs fields of the accessors in <kisim/ptrace.h> (arch/powerpc/include/asm/ptrace.h). */
#ifndef _ASM_PTRACE_H
#define _ASM_PTRACE_H

#include <asm/kprobes.h>

#define PT_REGS_RETURN	gpr[3]
#define PT_REGS_IP	nip
#define PT_REGS_SP	gpr[1]
#define PT_REGS_FP	gpr[1]		/* the back chain starts at r1 */

#endif
