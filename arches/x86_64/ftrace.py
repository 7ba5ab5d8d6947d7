"""Dynamic ftrace on x86-64 (arch/x86/kernel/ftrace.c, 2.6.28).

A ``-pg`` site is ``call mcount`` (``e8 rel32``, MCOUNT_INSN_SIZE 5). At
boot it becomes the ideal 5-byte nop, ``0f 1f 44 00 00`` (P6_NOP5, the
first of the nops ftrace_dyn_arch_init tries); enabling writes
``call ftrace_caller``.
"""
from __future__ import annotations

from arches.x86_64 import ARCH, encode_call

MCOUNT_INSN_SIZE = 5
MCOUNT_ADDR = "mcount"          # what the compiler's calls reach
FTRACE_ADDR = "ftrace_caller"
#: Instructions an idle (nop) site still executes per call: the 5-byte nop.
IDLE_SITE_INSNS = 1   # what an enabled site calls


def ftrace_nop_replace() -> bytes:
    """The nop an idle site holds (ftrace_nop_replace)."""
    return ARCH.nop(MCOUNT_INSN_SIZE)


def ftrace_call_replace(ip: int, addr: int) -> bytes:
    """``call addr`` at ``ip`` (ftrace_call_replace)."""
    return encode_call(ip, addr)

#: The smallest call-site shape for the SMP patch checker: what comes
#: before the site, and an mcount that keeps the -pg contract (nothing is pushed before ``call mcount``; mcount returns).
MCOUNT_SITE_PREFIX_ASM = ""
MCOUNT_STUB_ASM = "ret"
