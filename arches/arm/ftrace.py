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

from arches.base import DynamicFtrace
from arches.arm import encode_call

#: pop {lr} (ldmia sp!, {lr}): the NOP for the push {lr} / bl __gnu_mcount_nc pair.
POP_LR = (0xE8BD4000).to_bytes(4, "little")

MCOUNT_INSN_SIZE = 4
MCOUNT_ADDR = "__gnu_mcount_nc"
FTRACE_ADDR = "ftrace_caller"
IDLE_SITE_INSNS = 2
MCOUNT_SITE_PREFIX_ASM = "push {lr}"
MCOUNT_STUB_ASM = "mov ip, lr; pop {lr}; bx ip"


def ftrace_nop_replace() -> bytes:
    """The nop an idle site holds (arch/arm/kernel/ftrace.c ftrace_nop_replace)."""
    return POP_LR


def ftrace_call_replace(ip: int, addr: int) -> bytes:
    """The call an enabled site holds (arch/arm/kernel/ftrace.c ftrace_call_replace)."""
    return encode_call(ip, addr)


class ArmFtrace(DynamicFtrace, names=globals()):
    """HAVE_DYNAMIC_FTRACE on arm."""
