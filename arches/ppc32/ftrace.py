"""Dynamic ftrace on 32-bit PowerPC (arch/powerpc/kernel/trace/ftrace.c):
the ``dynamic_ftrace`` capability of :class:`arches.ppc32.Ppc32Ops`.

A ``-pg`` site is ``bl _mcount`` after the prologue saved LR
(MCOUNT_INSN_SIZE 4). Its nop is PPC_INST_NOP (``ori 0,0,0``,
0x60000000); the ``mflr``/``stw`` of the prologue stay, and an idle site
executes just the nop (IDLE_SITE_INSNS 1: every traced function is a
non-leaf anyway). Enabling writes ``bl ftrace_caller``
(ftrace_call_replace is the arch's call encoding). For the SMP patch
checker's site shape, the prologue has saved LR and the stub returns.
"""
from __future__ import annotations

from arches.base import ftrace_capability

#: PPC_INST_NOP (arch/powerpc/include/asm/ppc-opcode.h): ori 0,0,0, big-endian.
PPC_INST_NOP = (0x60000000).to_bytes(4, "big")

FtraceOps = ftrace_capability(nop=PPC_INST_NOP, insn_size=4, mcount="_mcount", idle_insns=1,
                              site_prefix_asm="", stub_asm="blr")
