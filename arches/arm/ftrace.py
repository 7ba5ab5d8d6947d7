"""Dynamic ftrace on 32-bit ARM (arch/arm/kernel/ftrace.c, entry-ftrace.S):
the ``dynamic_ftrace`` capability of :class:`arches.arm.ArmOps`.

A ``-pg`` site with the GNU EABI is ``push {lr}; bl __gnu_mcount_nc``;
the ``bl`` is the recorded site (MCOUNT_INSN_SIZE 4). Its nop is
``pop {lr}`` (0xe8bd4000, ARM mode), which undoes the push, so an idle
site still costs the push and the pop (IDLE_SITE_INSNS 2). Enabling
writes ``bl ftrace_caller`` (ftrace_call_replace is the arch's call
encoding). For the SMP patch checker's site shape, ``push {lr}`` precedes
the ``bl`` and the stub pops it and returns.
"""
from __future__ import annotations

from arches.base import ftrace_capability

#: pop {lr} (ldmia sp!, {lr}): the NOP for the push {lr} / bl __gnu_mcount_nc pair.
POP_LR = (0xE8BD4000).to_bytes(4, "little")

FtraceOps = ftrace_capability(nop=POP_LR, insn_size=4, mcount="__gnu_mcount_nc", idle_insns=2,
                              site_prefix_asm="push {lr}",
                              stub_asm="mov ip, lr; pop {lr}; bx ip")
