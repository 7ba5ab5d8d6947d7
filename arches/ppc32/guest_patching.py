"""32-bit PowerPC: the kernel's own patching code as a guest (``kisim patchcheck --guest``).

The guest C is ``arches/ppc32/patching.c``: v5.10
arch/powerpc/lib/code-patching.c ``patch_instruction()`` (store through the
text_poke_area alias; dcbst on the alias, sync, icbi on the text, sync,
isync), the IPI of arch/powerpc/sysdev/mpic.c ``smp_mpic_message_pass()``
and the external-interrupt entry of arch/powerpc/kernel/head_32.h /
entry_32.S. This module is the hardware around it that the checker plays.

The interrupt controller page, IRQ_BASE: the sending CPU's own MPIC
per-CPU register block (arch/powerpc/include/asm/mpic.h: the block at
MPIC_CPU_BASE + cpu * MPIC_CPU_STRIDE, IPI dispatch n at 0x40 + 0x10 * n).
Every CPU stores to the same addresses; the checker knows the sender. The
guest sends the call-function IPI (PPC_MSG_CALL_FUNCTION = 0) by storing
the target CPU mask to MPIC_CPU_IPI_DISPATCH_0 with ``stwbrx``
(``out_le32()``: MPIC registers are little-endian).

The interrupt entry: Unicorn 2.1.4 gives the host no access to SRR0 and
SRR1 (``unicorn.ppc_const`` has the GPRs, CR, CTR, LR, MSR, PC, XER and
FPSCR only). So :func:`irq_enter` does the part the host can reach: it
stores the interrupted PC and MSR in ``pc_irq_srr[cpu]`` (guest memory)
and sets the MSR an interrupt leaves; ``pc_irq_entry`` then moves them
into SRR0/SRR1 with guest instructions (using SPRG0/1 as the kernel's
EXCEPTION_PROLOG_0 does, so no GPR is borrowed) and continues as v5.10's
kernel-mode EXCEPTION_PROLOG; it returns with ``rfi``.
"""
from __future__ import annotations

from arches.base import FetchSync, GuestCpu, GuestPatching

PATCHING_C = "arches/ppc32/patching.c"
#: The page of the MPIC per-CPU registers (PC_IRQ_BASE in patching.c).
IRQ_BASE = 0xF0000000
#: The external-interrupt entry (vector 0x500) in patching.c.
IRQ_ENTRY = "pc_irq_entry"
#: patch_instruction() plants no breakpoint.
BREAKPOINT_ENTRY = None
#: The step a kernel developer could leave out -> the macro that does so in patching.c.
GUEST_ABLATIONS = {"icbi": "PC_ABLATE_NO_ICBI", "isync": "PC_ABLATE_NO_ISYNC",
                   "dcbst": "PC_ABLATE_NO_DCBST", "sync after dcbst": "PC_ABLATE_NO_SYNC_DCBST",
                   "sync after icbi": "PC_ABLATE_NO_SYNC_ICBI"}

#: The per-CPU save area the entry reads SRR0 and SRR1 from (struct pc_irq_srr[]).
IRQ_SRR = "pc_irq_srr"
IRQ_SRR_BYTES = 8

#: arch/powerpc/include/asm/mpic.h, arch/powerpc/include/asm/smp.h
MPIC_CPU_IPI_DISPATCH_0 = 0x40
MPIC_CPU_IPI_DISPATCH_STRIDE = 0x10
PPC_MSG_CALL_FUNCTION = 0
IPI_DISPATCH = MPIC_CPU_IPI_DISPATCH_0 + PPC_MSG_CALL_FUNCTION * MPIC_CPU_IPI_DISPATCH_STRIDE

#: MSR bits (arch/powerpc/include/asm/reg.h).
MSR_LE, MSR_IP, MSR_ME, MSR_EE, MSR_ILE = 1 << 0, 1 << 6, 1 << 12, 1 << 15, 1 << 16
#: An interrupt keeps ME, IP and ILE, sets LE from ILE and clears every other
#: bit (POW, EE, PR, FP, FE0, SE, BE, FE1, IR, DR, PMM, RI, VEC): the MSR
#: settings of an exception, MPC7450 RISC Microprocessor Family Reference
#: Manual, chapter 4 (Exceptions).
MSR_KEPT_ON_INTERRUPT = MSR_ME | MSR_IP | MSR_ILE

#: Encodings (Power ISA; arch/powerpc/include/asm/ppc-opcode.h).
_OP_XL, _OP_X = 19, 31
_XO_ISYNC, _XO_RFI, _XO_ICBI, _XO_DCBST, _XO_SYNC = 150, 50, 982, 54, 598


def ipi_targets(offset: int, value: int, sender: int, cpus: int,
                page: bytes) -> tuple[int, ...]:
    """A store to MPIC_CPU_IPI_DISPATCH_0 interrupts the CPUs of its mask.

    ``value`` is the register value the MPIC reads, the little-endian
    reading of the bytes ``out_le32()`` stores: what Unicorn's memory-write
    hook reports for the guest's ``stwbrx`` (its source register, before the
    byte reversal). Any other register sends no call-function IPI. The
    dispatch register needs nothing else of the page.
    """
    if offset != IPI_DISPATCH:
        return ()
    return tuple(cpu for cpu in range(cpus) if value >> cpu & 1)


def irq_enabled(cpu: GuestCpu) -> bool:
    """MSR[EE]."""
    return bool(cpu.reg("msr") & MSR_EE)


def irq_enter(cpu: GuestCpu, entry: int, pc: int) -> int:
    """The external interrupt: SRR0 = ``pc`` and SRR1 = MSR go to
    ``pc_irq_srr[cpu]`` for the entry to load, the MSR becomes what an
    interrupt leaves (EE clear); the CPU goes on at ``entry``."""
    msr = cpu.reg("msr")
    save = cpu.symbol(IRQ_SRR) + IRQ_SRR_BYTES * cpu.index
    cpu.write_word(save, pc)
    cpu.write_word(save + 4, msr)
    new = msr & MSR_KEPT_ON_INTERRUPT
    if msr & MSR_ILE:
        new |= MSR_LE
    cpu.set_reg("msr", new)
    return entry


def cpu_setup(cpu: GuestCpu) -> None:
    """MSR[EE] set, the other bits as Unicorn starts them (MSR_IP: 0x40)."""
    cpu.set_reg("msr", cpu.reg("msr") | MSR_EE)


def fetch_sync(code: bytes) -> FetchSync | None:
    """isync and rfi serialize (context synchronizing); icbi invalidates and
    dcbst cleans the line at (rA|0) + rB; ``sync`` (L = 0, the heavyweight
    form; not ``lwsync``) is the barrier that completes them (Power ISA v2.03
    Book II §1.8, "Instruction Storage": the ``sync`` after ``dcbst`` waits
    for the store to reach storage before ``icbi``, the one after ``icbi``
    for the invalidation to be performed on every processor; §3.3.3 ``sync``). ``sc`` is kisim's
    hypercall, not counted; mtmsr is execution- but not context-synchronizing
    on the classic 32-bit cores (the OEA's context-synchronizing operations
    are isync, sc, rfi and exceptions)."""
    if len(code) < 4:
        return None
    word = int.from_bytes(code[:4], "big")
    op, xo = word >> 26, (word >> 1) & 0x3FF
    if op == _OP_XL and xo in (_XO_ISYNC, _XO_RFI):
        return FetchSync("serialize")
    if op == _OP_X and xo == _XO_SYNC and (word >> 21) & 3 == 0:
        return FetchSync("barrier")
    if op == _OP_X and xo in (_XO_ICBI, _XO_DCBST):
        ra, rb = (word >> 16) & 0x1F, (word >> 11) & 0x1F
        return FetchSync("invalidate" if xo == _XO_ICBI else "clean",
                         (f"r{ra}" if ra else None, f"r{rb}"))
    return None


_XO_STCX = (150, 694, 726)                  # stwcx., stbcx., sthcx.


def atomic_store(code: bytes) -> bool:
    """stwcx. (and the byte and halfword forms): the store of a lwarx/stwcx. pair."""
    if len(code) < 4:
        return False
    word = int.from_bytes(code[:4], "big")
    return word >> 26 == _OP_X and (word >> 1) & 0x3FF in _XO_STCX and word & 1 == 1


class Ppc32GuestPatching(GuestPatching, names=globals()):
    """patch_instruction() as guest C, on MPIC-interrupted classic 32-bit cores."""
