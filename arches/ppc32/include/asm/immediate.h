/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerPC immediate values: `li rX, imm16` (addi rX, 0, imm16). The
 * immediate is the low halfword of the big-endian instruction: at
 * insn + 2, size 2 (Desnoyers' patchset stores it the same way).
 * (linux/immediate.h wraps these in the one-instruction imv_read.)
 */
#ifndef _ASM_IMMEDIATE_H
#define _ASM_IMMEDIATE_H

#define IMV_INSN	"li %0, 0"
#define IMV_ENTRY	".balign 4\n\t.long %1, 1b + 2, 1b, 2"

#endif
