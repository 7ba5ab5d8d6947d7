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

from arches.base import DynamicFtrace
from arches.x86_64 import P6_NOP5, encode_call

MCOUNT_INSN_SIZE = 5
MCOUNT_ADDR = "mcount"
FTRACE_ADDR = "ftrace_caller"
IDLE_SITE_INSNS = 1
MCOUNT_SITE_PREFIX_ASM = ""
MCOUNT_STUB_ASM = "ret"


def ftrace_nop_replace() -> bytes:
    """The nop an idle site holds (arch/x86/kernel/ftrace.c ftrace_nop_replace)."""
    return P6_NOP5


def ftrace_call_replace(ip: int, addr: int) -> bytes:
    """The call an enabled site holds (arch/x86/kernel/ftrace.c ftrace_call_replace)."""
    return encode_call(ip, addr)


class X86Ftrace(DynamicFtrace, names=globals()):
    """HAVE_DYNAMIC_FTRACE on x86_64."""
