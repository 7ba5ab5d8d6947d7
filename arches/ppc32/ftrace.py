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

from arches.base import DynamicFtrace
from arches.ppc32 import PPC_INST_NOP, encode_call

MCOUNT_INSN_SIZE = 4
MCOUNT_ADDR = "_mcount"
FTRACE_ADDR = "ftrace_caller"
IDLE_SITE_INSNS = 1
MCOUNT_SITE_PREFIX_ASM = ""
MCOUNT_STUB_ASM = "blr"


def ftrace_nop_replace() -> bytes:
    """The nop an idle site holds (arch/powerpc/kernel/trace/ftrace.c ftrace_nop_replace)."""
    return PPC_INST_NOP


def ftrace_call_replace(ip: int, addr: int) -> bytes:
    """The call an enabled site holds (arch/powerpc/kernel/trace/ftrace.c ftrace_call_replace)."""
    return encode_call(ip, addr)


class Ppc32Ftrace(DynamicFtrace, names=globals()):
    """HAVE_DYNAMIC_FTRACE on ppc32."""
