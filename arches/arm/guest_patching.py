"""ARM for ``kisim patchcheck --guest``: the hardware around
``arches/arm/patching.c`` (v5.10 arch/arm/kernel/patch.c patch_text()), for
an A32 kernel (:class:`ArmGuestPatching`) and a CONFIG_THUMB2_KERNEL one
(:class:`Thumb2GuestPatching`: the same C compiled to Thumb-2, exceptions
taken in Thumb state, the T32 encodings of the instructions below).

The checker plays a GICv2 distributor and the CPU's IRQ exception entry:

- IPIs: the guest's gic_ipi_send_mask() (drivers/irqchip/irq-gic.c) writes
  GICD_SGIR at distributor offset 0xF00 (:func:`ipi_targets` decodes it;
  GIC architecture spec v2, 4.3.15);
- interrupt entry: ARMv7 ARM (DDI 0406C) B1.9.10, "IRQ exception": IRQ
  mode, CPSR.I and CPSR.A set, ARM state, SPSR_irq the interrupted CPSR,
  LR_irq the preferred return address + 4 (:func:`irq_enter`), then the
  guest's ``__irq_entry`` (a port of entry-armv.S vector_stub irq +
  __irq_svc, returning with ``rfeia``);
- what the CPUs execute that matters to instruction fetch
  (:func:`fetch_sync`): ``isb`` and exception returns (context
  synchronization), ICIMVAU / ICIALLU(IS) (cache-v7.S
  v7_coherent_user_range's ``mcr p15, 0, rX, c7, c5, 1``).
"""
from __future__ import annotations

from arches.base import FetchSync, GuestCpu, GuestPatching

PATCHING_C = "arches/arm/patching.c"
#: The GIC distributor page (patching.c GIC_DIST_BASE).
IRQ_BASE = 0xF000_0000
#: The IRQ vector's code in the guest (patching.c).
IRQ_ENTRY = "__irq_entry"
#: patch_text() plants no breakpoint.
BREAKPOINT_ENTRY = None
GUEST_ABLATIONS = {"stop_machine": "PC_ABLATE_NO_STOP_MACHINE",
                   "flush": "PC_ABLATE_NO_FLUSH",
                   "isb": "PC_ABLATE_NO_ISB",
                   "dsb after clean": "PC_ABLATE_NO_DSB_CLEAN"}

GIC_DIST_SOFTINT = 0xF00             # GICD_SGIR (include/linux/irqchip/arm-gic.h)
IPI_CALL_FUNC = 3                    # arch/arm/kernel/smp.c enum ipi_msg_type (v5.10)

#: arch/arm/include/uapi/asm/ptrace.h
MODE_MASK = 0x1F
IRQ_MODE = 0x12
SVC_MODE = 0x13
PSR_T_BIT = 0x20
PSR_F_BIT = 0x40
PSR_I_BIT = 0x80
PSR_A_BIT = 0x100
PSR_E_BIT = 0x200
PSR_J_BIT = 0x01000000
PSR_IT_MASK = 0x0600FC00             # ITSTATE: bits 26:25 and 15:10

#: The guest's per-CPU IRQ-mode stack (patching.c irq_stacks[cpu], 4 words):
#: word 2 is where vector_stub saves spsr, and where irq_enter leaves it for
#: IRQ_ENTRY_SPSR when the CPU's SPSR is not a register the checker can write.
IRQ_STACKS = "irq_stacks"
IRQ_STACK_BYTES = 16
IRQ_STACK_SPSR = 8
IRQ_ENTRY_SPSR = "__irq_entry_spsr"

_REG_NAMES = tuple(f"r{n}" for n in range(13)) + ("sp", "lr", "pc")

# (mask, value) of each encoding, A32, condition field excluded unless stated.
_ISB = (0xFFFFFFF0, 0xF57FF060)               # isb <option> (unconditional)
_RFE = (0xFE50FFFF, 0xF8100A00)               # rfe{ia,ib,da,db} Rn{!}
_ERET = (0x0FFFFFFF, 0x0160006E)              # eret (Virtualization Extensions)
_DP_IMM_PC_S = (0x0E10F000, 0x0210F000)       # <op>s pc, Rn, #imm
_DP_REG_PC_S = (0x0E10F010, 0x0010F000)       # <op>s pc, Rn, Rm{, shift #n}
_LDM_PC_EXC = (0x0E508000, 0x08508000)        # ldm Rn{!}, {..., pc}^
_CP15ISB = (0x0FFF0FFF, 0x0E070F95)           # mcr p15, 0, Rt, c7, c5, 4 (ARMv6 ISB)
_ICIMVAU = (0x0FFF0FFF, 0x0E070F35)           # mcr p15, 0, Rt, c7, c5, 1
_DCCMVAU = (0x0FFF0FFF, 0x0E070F3B)           # mcr p15, 0, Rt, c7, c11, 1
_ICIALLU = (0x0FFF0FFF, 0x0E070F15)           # mcr p15, 0, Rt, c7, c5, 0
_ICIALLUIS = (0x0FFF0FFF, 0x0E070F11)         # mcr p15, 0, Rt, c7, c1, 0
_DSB = (0xFFFFFFF0, 0xF57FF040)               # dsb <option> (unconditional)
_CP15DSB = (0x0FFF0FFF, 0x0E070F9A)           # mcr p15, 0, Rt, c7, c10, 4 (ARMv6 DSB)
#: TST, TEQ, CMP, CMN: no result, so Rd = pc is not an exception return.
_DP_TESTS = range(8, 12)


def _is(insn: int, encoding: tuple[int, int]) -> bool:
    mask, value = encoding
    return insn & mask == value


def ipi_targets(offset: int, value: int, sender: int, cpus: int,
                page: bytes) -> tuple[int, ...]:
    """The CPUs a store of ``value`` to GICD_SGIR (offset 0xF00) interrupts;
    one write says it all, so ``page`` (the distributor's other registers)
    is not read.

    TargetListFilter, bits 25:24: 0, the CPUs in CPUTargetList (bits 23:16,
    bit n for CPU interface n, which is CPU n here); 1, every CPU but the
    sender; 2, the sender only; 3 is reserved (no CPU). The SGI number
    (bits 3:0; the guest sends IPI_CALL_FUNC, 3) does not change who is
    interrupted. Any other register: no CPU."""
    if offset != GIC_DIST_SOFTINT:
        return ()
    value &= 0xFFFFFFFF
    target_filter = value >> 24 & 3
    if target_filter == 0:
        targets = [cpu for cpu in range(min(cpus, 8)) if value >> (16 + cpu) & 1]
    elif target_filter == 1:
        targets = [cpu for cpu in range(cpus) if cpu != sender]
    elif target_filter == 2:
        targets = [sender] if 0 <= sender < cpus else []
    else:
        targets = []
    return tuple(targets)


def irq_enabled(cpu: GuestCpu) -> bool:
    """CPSR.I clear."""
    return not cpu.reg("cpsr") & PSR_I_BIT


def _spsr_writable() -> bool:
    from arches.arm import ARCH          # noqa: PLC0415  (arches.arm imports this module)
    return "spsr" in ARCH.uc_regs


def irq_enter(cpu: GuestCpu, entry: int, pc: int) -> int:
    """The IRQ exception entry of an A32 kernel (SCTLR.TE clear): ARM state."""
    return _exception_entry(cpu, entry, pc, thumb=0)


def _exception_entry(cpu: GuestCpu, entry: int, pc: int, thumb: int) -> int:
    """ARMv7 IRQ exception entry at ``pc`` (the instruction not yet executed).

    SPSR_irq <- CPSR; CPSR.M <- IRQ, CPSR.I and CPSR.A set, J and ITSTATE
    clear, CPSR.T <- SCTLR.TE (``thumb``: 1 on a Thumb-2 kernel, whose
    proc-v7.S __v7_setup sets TE, "Thumb exceptions"; ARMv7 ARM B1.8.3,
    "Instruction set state on exception entry"), E clear (SCTLR.EE is 0);
    LR_irq <- ``pc`` + 4 in either state (the ARM ARM's table of LR values on
    exception entry). The CPSR is written first: Unicorn's CPSR write switches
    the banked sp, lr and SPSR to IRQ mode's, which the later writes then set.
    The address returned carries the Thumb bit, as Unicorn's PC write takes
    the state from it.

    When the arch's registers include no ``spsr`` (Unicorn's
    UC_ARM_REG_SPSR, the current mode's), SPSR_irq cannot be written from
    here: the interrupted CPSR goes to word 2 of this CPU's IRQ stack
    instead and the CPU goes on at ``__irq_entry_spsr``, which moves it into
    SPSR_irq (``msr spsr_cxsf``) and falls into ``entry``."""
    cpsr = cpu.reg("cpsr")
    irq = cpsr & ~(MODE_MASK | PSR_T_BIT | PSR_J_BIT | PSR_IT_MASK | PSR_E_BIT)
    cpu.set_reg("cpsr", irq | IRQ_MODE | PSR_I_BIT | PSR_A_BIT | (PSR_T_BIT if thumb else 0))
    cpu.set_reg("lr", (pc + 4) & 0xFFFFFFFF)
    if _spsr_writable():
        cpu.set_reg("spsr", cpsr)
        return entry | thumb
    cpu.write_word(cpu.reg("sp") + IRQ_STACK_SPSR, cpsr)
    return cpu.symbol(IRQ_ENTRY_SPSR) | thumb


def cpu_setup(cpu: GuestCpu) -> None:
    """The IRQ mode's stack (cpu_init(), arch/arm/kernel/setup.c: sp_irq at
    the CPU's ``irq_stacks`` slot), then SVC mode, IRQs enabled, in the
    instruction set the CPU is in (CPSR.T kept: Thumb on a Thumb-2 kernel).

    The SVC sp (the CPU's pc_stacks[] stack) is banked apart and not touched."""
    cpsr = cpu.reg("cpsr") & ~(MODE_MASK | PSR_J_BIT | PSR_IT_MASK)
    cpu.set_reg("cpsr", cpsr | IRQ_MODE | PSR_I_BIT)
    cpu.set_reg("sp", cpu.symbol(IRQ_STACKS) + cpu.index * IRQ_STACK_BYTES)
    cpu.set_reg("cpsr", (cpsr | SVC_MODE) & ~PSR_I_BIT)


def fetch_sync(code: bytes) -> FetchSync | None:
    """What the A32 instruction in ``code`` (4 bytes, little-endian) does to
    instruction fetch:

    - ``serialize``: ``isb`` (any option), the ARMv6 CP15 ISB (``mcr p15, 0,
      Rt, c7, c5, 4``) and the exception returns, which are context
      synchronizing (ARMv7 ARM B3.15 / A3.8.3): ``rfe``, ``eret``, a
      data-processing instruction with S and Rd = pc (``subs pc, lr, #4``,
      ``movs pc, lr``) and ``ldm ..., {..., pc}^``;
    - ``clean``: DCCMVAU (``mcr p15, 0, Rt, c7, c11, 1``), regs ``(Rt,)``;
    - ``invalidate``: ICIMVAU (``mcr p15, 0, Rt, c7, c5, 1``), regs
      ``(Rt,)``, the line holding Rt's address; ICIALLU (``c7, c5, 0``) and
      ICIALLUIS (``c7, c1, 0``), regs ``()``: the whole instruction cache;
    - ``barrier``: ``dsb`` (any option) and the ARMv6 CP15 DSB (``mcr p15, 0,
      Rt, c7, c10, 4``): cache maintenance issued before it is complete only
      when it completes (ARMv7 ARM B2.2.9, "Ordering of cache and branch
      predictor maintenance operations"; A3.8.3, "Data Synchronization Barrier").

    Any condition code but 1111 (that space holds isb, dsb and rfe). None for
    anything else, including ``dmb``, BPIALL(IS) and ``wfe``/``wfi``."""
    if len(code) < 4:
        return None
    insn = int.from_bytes(code[:4], "little")
    if insn >> 28 == 0xF:
        if _is(insn, _ISB) or _is(insn, _RFE):
            return FetchSync("serialize")
        return FetchSync("barrier") if _is(insn, _DSB) else None
    if (_is(insn, _ERET) or _is(insn, _CP15ISB) or _is(insn, _LDM_PC_EXC)
            or ((_is(insn, _DP_IMM_PC_S) or _is(insn, _DP_REG_PC_S))
                and insn >> 21 & 0xF not in _DP_TESTS)):
        return FetchSync("serialize")
    if _is(insn, _CP15DSB):
        return FetchSync("barrier")
    if _is(insn, _DCCMVAU):
        return FetchSync("clean", (_REG_NAMES[insn >> 12 & 0xF],))
    if _is(insn, _ICIMVAU):
        return FetchSync("invalidate", (_REG_NAMES[insn >> 12 & 0xF],))
    if _is(insn, _ICIALLU) or _is(insn, _ICIALLUIS):
        return FetchSync("invalidate", ())
    return None


_STREX = (0x0F900FF0, 0x01800F90)             # strex, strexd, strexb, strexh


def atomic_store(code: bytes) -> bool:
    """STREX{,D,B,H} (any condition): the store of an ldrex/strex pair."""
    return len(code) >= 4 and _is(int.from_bytes(code[:4], "little"), _STREX)


class ArmGuestPatching(GuestPatching, names=globals()):
    """v5.10 arch/arm/kernel/patch.c on the guest (arches/arm/patching.c)."""


# -- CONFIG_THUMB2_KERNEL: the same C in Thumb-2 ------------------------------------
#
# (mask, value) of each T32 encoding, the two halfwords composed as
# __opcode_thumb32_compose does (first halfword in bits 31:16; ARMv7 ARM A8.8).
_T32_ISB = (0xFFFFFFF0, 0xF3BF8F60)           # isb <option> (T1)
_T32_DSB = (0xFFFFFFF0, 0xF3BF8F40)           # dsb <option> (T1)
_T32_RFE = ((0xFFD0FFFF, 0xE810C000),         # rfedb Rn{!} (T1)
            (0xFFD0FFFF, 0xE990C000))         # rfeia Rn{!} (T2)
_T32_SUBS_PC_LR = (0xFFFFFF00, 0xF3DE8F00)    # subs pc, lr, #imm8 (T1; eret is #0)
_T32_STREX = ((0xFFF00000, 0xE8400000),       # strex (T1)
              (0xFFF000C0, 0xE8C00040))       # strexb, strexh, strexd (T1)
#: MCR (T1), 1110 1110 in bits 31:24, is A32's MCR with the condition field
#: 1110: its bits 27:0 are the A32 encoding's.
_T32_COPROC = 0xEE


def _t32(code: bytes) -> int | None:
    """The 32-bit Thumb instruction at the start of ``code``, composed; None for
    a 16-bit one (none of them touches instruction fetch or is a strex)."""
    first = int.from_bytes(code[:2], "little")
    if len(code) < 4 or first < 0xE800:          # thumb2.is_wide_instruction
        return None
    return first << 16 | int.from_bytes(code[2:4], "little")


def thumb_fetch_sync(code: bytes) -> FetchSync | None:
    """:func:`fetch_sync` for the T32 encodings: ``isb``, ``rfe`` and ``subs pc, lr,
    #imm`` (Thumb's exception return, ``eret`` among them) serialize; DCCMVAU
    cleans; ICIMVAU, ICIALLU(IS) invalidate; ``dsb`` and the CP15 DSB are
    barriers; the CP15 ISB serializes. Thumb has no ``ldm ..., {pc}^`` and no
    data-processing ``<op>s pc``."""
    insn = _t32(code)
    if insn is None:
        return None
    if (_is(insn, _T32_ISB) or any(_is(insn, rfe) for rfe in _T32_RFE)
            or _is(insn, _T32_SUBS_PC_LR)):
        return FetchSync("serialize")
    if _is(insn, _T32_DSB):
        return FetchSync("barrier")
    if insn >> 24 != _T32_COPROC:
        return None
    return fetch_sync(insn.to_bytes(4, "little"))      # the CP15 operations, as in A32


def thumb_atomic_store(code: bytes) -> bool:
    """STREX{,B,H,D} (T32): the store of an ldrex/strex pair."""
    insn = _t32(code)
    return insn is not None and any(_is(insn, strex) for strex in _T32_STREX)


def thumb_irq_enter(cpu: GuestCpu, entry: int, pc: int) -> int:
    """:func:`irq_enter` with SCTLR.TE set: the vector runs in Thumb state."""
    return _exception_entry(cpu, entry, pc, thumb=1)


class Thumb2GuestPatching(GuestPatching, names={
        **globals(), "fetch_sync": thumb_fetch_sync, "atomic_store": thumb_atomic_store,
        "irq_enter": thumb_irq_enter,
        "GUEST_ABLATIONS": {**GUEST_ABLATIONS,
                            "halfwords apart": "PC_ABLATE_HALFWORDS_APART"}}):
    """patch.c on a Thumb-2 kernel (arches/arm/patching.c built with -mthumb): a
    32-bit instruction at 2 mod 4 is two halfword stores under stop_machine()."""
