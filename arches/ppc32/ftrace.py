"""Dynamic ftrace on 32-bit PowerPC (arch/powerpc/kernel/trace/ftrace.c).

A ``-pg`` site is ``bl _mcount`` after the prologue saved LR
(MCOUNT_INSN_SIZE 4). Its nop is PPC_INST_NOP (``ori 0,0,0``,
0x60000000); the ``mflr``/``stw`` of the prologue stay. Enabling writes
``bl ftrace_caller``.
"""
from __future__ import annotations

from arches.ppc32 import ARCH, encode_call

MCOUNT_INSN_SIZE = 4
MCOUNT_ADDR = "_mcount"
FTRACE_ADDR = "ftrace_caller"
#: Instructions an idle (nop) site still executes per call: the nop (the prologue saves LR anyway: every traced function is a non-leaf).
IDLE_SITE_INSNS = 1


def ftrace_nop_replace() -> bytes:
    return ARCH.nop(MCOUNT_INSN_SIZE)


def ftrace_call_replace(ip: int, addr: int) -> bytes:
    """``bl addr`` at ``ip``."""
    return encode_call(ip, addr)

#: The smallest call-site shape for the SMP patch checker: what comes
#: before the site, and an mcount that keeps the -pg contract (the prologue saved LR already; _mcount returns).
MCOUNT_SITE_PREFIX_ASM = ""
MCOUNT_STUB_ASM = "blr"
