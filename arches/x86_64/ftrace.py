"""Dynamic ftrace on x86-64 (arch/x86/kernel/ftrace.c, 2.6.28): the
``dynamic_ftrace`` capability of :class:`arches.x86_64.X86Ops`.

A ``-pg`` site is ``call mcount`` (``e8 rel32``, MCOUNT_INSN_SIZE 5). At
boot it becomes the ideal 5-byte nop, ``0f 1f 44 00 00`` (P6_NOP5, the
first of the nops ftrace_dyn_arch_init tries); enabling writes
``call ftrace_caller`` (ftrace_call_replace is the arch's call encoding).
An idle site still executes its nop (IDLE_SITE_INSNS 1). For the SMP patch
checker's site shape, nothing is pushed before ``call mcount`` and the
stub simply returns.
"""
from __future__ import annotations

from arches.base import ftrace_capability

#: P6_NOP5 (arch/x86/include/asm/nops.h): nopl 0x0(%rax,%rax,1).
P6_NOP5 = bytes.fromhex("0f1f440000")

FtraceOps = ftrace_capability(nop=P6_NOP5, insn_size=5, mcount="mcount", idle_insns=1,
                              site_prefix_asm="", stub_asm="ret")
