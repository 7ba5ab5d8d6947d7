"""Dynamic ftrace on 32-bit ARM (arch/arm/kernel/ftrace.c).

A ``-pg`` site with the GNU EABI is ``push {lr}; bl __gnu_mcount_nc``;
the ``bl`` is the recorded site (MCOUNT_INSN_SIZE 4). Its nop is
``pop {lr}`` (0xe8bd4000, ARM mode), which undoes the push, so an idle
site still costs the push and the pop. Enabling writes
``bl ftrace_caller``.
"""
from __future__ import annotations

from arches.arm import ARCH, encode_call

MCOUNT_INSN_SIZE = 4
MCOUNT_ADDR = "__gnu_mcount_nc"
FTRACE_ADDR = "ftrace_caller"
#: Instructions an idle (nop) site still executes per call: the compiler's push {lr} and the pop {lr} nop.
IDLE_SITE_INSNS = 2

#: pop {lr} (ldmia sp!, {lr}): NOP for the push {lr} / bl __gnu_mcount_nc pair.
_POP_LR = 0xE8BD4000


def ftrace_nop_replace() -> bytes:
    return ARCH.from_int(_POP_LR, MCOUNT_INSN_SIZE)


def ftrace_call_replace(ip: int, addr: int) -> bytes:
    """``bl addr`` at ``ip``."""
    return encode_call(ip, addr)

#: The smallest call-site shape for the SMP patch checker: what comes
#: before the site, and an mcount that keeps the -pg contract (``push {lr}`` precedes the ``bl``; __gnu_mcount_nc pops it and returns).
MCOUNT_SITE_PREFIX_ASM = "push {lr}"
MCOUNT_STUB_ASM = "mov ip, lr; pop {lr}; bx ip"
