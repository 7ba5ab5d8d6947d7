"""32-bit ARM (A32 state, little-endian; Thumb code is reached by interworking).

Encodings: arch/arm/kernel/insn.c (__arm_gen_branch: B/BL with a signed
24-bit word offset from pc+8), arch/arm/include/asm/insn.h (arm_gen_nop:
``mov r0, r0``), arch/arm/probes/kprobes/core.h
(KPROBE_ARM_BREAKPOINT_INSTRUCTION 0x07f001f8, condition copied from the
probed instruction by arch_arm_kprobe() in core.c).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from typing import Sequence

import capstone
import keystone
import unicorn
from unicorn import arm_const

from arches.base import (Decoder, Arch, Cost, IsaState, SpinLoop, TextPort,
                         TextSync, TrapKind, TrapVector, check_reach, patch_words,
                         core_costs, uc_register_map)
from arches.arm.dwarf import DWARF_REGS

BRANCH_REACH = (-0x2000000, 0x1FFFFFC)   # +-32 MB
KPROBE_ARM_BREAKPOINT_INSTRUCTION = 0x07F001F8
PSR_T_BIT = 0x20                         # arch/arm/include/uapi/asm/ptrace.h: Thumb state
#: ``push {lr}`` before ``bl __gnu_mcount_nc``: stmdb sp!, {lr} or str lr, [sp, #-4]!
PUSH_LR = (bytes.fromhex("00402de9"), bytes.fromhex("04e02de5"))


from arches.arm.core import CORE  # noqa: E402  (the reference core: docs/timing.md)

#: v5.10 arch/arm/kernel/patch.c patch_text() is __patch_text() under
#: stop_machine_cpuslocked() (generic: one IPI per other CPU), and __patch_text_real()
#: ends with flush_icache_range(), arch/arm/mm/cache-v7.S v7_coherent_kern_range:
#: DCCMVAU per line, dsb, ICIMVAU per line (broadcast to the Inner Shareable domain
#: under the Multiprocessing Extensions, so no IPI), dsb, then one isb on the patching
#: CPU. arch/arm/probes/kprobes/opt-arm.c arch_prepare_optimized_kprobe() copies the
#: detour and calls flush_icache_range(): a sync round outside stop_machine() sends
#: nothing.
TEXT_SYNC = TextSync(round_local=(), round_remote=(), flush=("serialize",),
                     source="v5.10 arch/arm/kernel/patch.c patch_text(), __patch_text_real(); "
                            "arch/arm/mm/cache-v7.S v7_coherent_kern_range; "
                            "arch/arm/probes/kprobes/opt-arm.c arch_prepare_optimized_kprobe()")


def _branch(src: int, dst: int, link: bool) -> bytes:
    disp = dst - (src + 8)
    check_reach("arm", src, dst, disp, BRANCH_REACH, align=4)
    word = 0xEA000000 | (1 << 24 if link else 0) | ((disp >> 2) & 0xFFFFFF)
    return word.to_bytes(4, "little")


def encode_jump(src: int, dst: int) -> bytes:
    """``b dst`` (always condition)."""
    return _branch(src, dst, link=False)


def encode_call(src: int, dst: int) -> bytes:
    """``bl dst``."""
    return _branch(src, dst, link=True)


#: Bit 0 of the address while CPSR.T selects Thumb: Unicorn's PC write (and so
#: ``emu_start``) takes the instruction set from bit 0, as ``bx`` does (ARM ARM
#: A2.3.2 BXWritePC), while the T bit lives in the CPSR, as the kernel keeps it
#: in ``regs->ARM_cpsr`` (arch/arm/include/asm/ptrace.h thumb_mode).
ISA_STATE = IsaState("cpsr", PSR_T_BIT, 1)


def kprobe_breakpoint(orig: bytes) -> bytes:
    """The undefined instruction, with the probed instruction's condition."""
    insn = int.from_bytes(orig, "little")
    cond = 0xE0000000 if insn >= 0xE0000000 else insn & 0xF0000000
    return (KPROBE_ARM_BREAKPOINT_INSTRUCTION | cond).to_bytes(4, "little")


_REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "cpsr"]

_FLUSH_LINE = Cost(5, "arch/arm/mm/cache-v7.S v7_coherent_user_range: dccmvau, dsb, "
                      "icimvau, dsb, isb = 5 instructions per line")


# -- text patching: patch_text (arch/arm/kernel/patch.c) ------------------

def patch_text_batch(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """patch_text for many sites in one stop_machine(): word stores and the flush,
    every CPU serialized on the way out."""
    patch_words("arm", port, sites, ARCH.icache_line, stop_machine=True)


#: ARMv7 ARM (DDI 0406C) A3.5.4, "Concurrent modification and execution of
#: instructions", ARM state: a CPU executing a word another CPU changes is
#: guaranteed the old or the new instruction only when both are B, BL, NOP,
#: BKPT, SVC, HVC or SMC (the same list as ARMv8's B2.6.5, which Linux quotes above
#: aarch64_insn_hotpatch_safe() in arch/arm64/kernel/insn.c). (mask, value) per
#: encoding; B and BL with any condition but 1111 (BLX), NOP the hint.
_CMODX_SAFE = ((0x0E000000, 0x0A000000),      # B, BL (cond != 1111 checked below)
               (0x0FFFFFFF, 0x0320F000),      # NOP
               (0xFFF000F0, 0xE1200070),      # BKPT (always AL)
               (0x0F000000, 0x0F000000),      # SVC
               (0x0FF000F0, 0x01400070),      # HVC
               (0x0FFFFFF0, 0x01600070))      # SMC


def _cmodx_ok(word: bytes) -> bool:
    insn = int.from_bytes(word, "little")
    return insn >> 28 != 0xF and any(insn & mask == value for mask, value in _CMODX_SAFE)


def cmodx_safe(old: bytes, new: bytes) -> bool:
    """Both words are instructions ARMv7 lets another CPU change under execution."""
    return _cmodx_ok(old) and _cmodx_ok(new)


def imv_load_of_zero(insn: bytes, address: int, imv: int, size: int) -> bool:
    """``mov rX, #0`` (A32 data-processing immediate, rotate 0): its 8-bit
    immediate is the instruction's first byte in little-endian memory."""
    word = int.from_bytes(insn, "little")
    # cond 1110, 001 1101 S=0, rn 0000, rotate 0, imm8 0
    return (len(insn) == 4 and (word & 0xFFEF0F00) == 0xE3A00000 and word & 0xFF == 0
            and size == 1 and imv == address)


# Imported here: they use the encoders above.
from arches.arm.ftrace import ArmFtrace  # noqa: E402
from arches.arm.kprobes import ArmKprobes  # noqa: E402
from arches.arm.guest_patching import ArmGuestPatching, Thumb2GuestPatching  # noqa: E402


class ArmOps(ArmFtrace, ArmKprobes, ArmGuestPatching):
    """The 32-bit ARM hooks (:class:`arches.base.ArchOps`)."""

    text_poke_batch = staticmethod(patch_text_batch)
    imv_load_of_zero = staticmethod(imv_load_of_zero)


_A32 = Arch(
    name="arm",
    summary="32-bit ARM (A32), little-endian, fixed 4-byte instructions",
    bits=32,
    endian="little",
    uc_mode=(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_ARM),
    cs_mode=(capstone.CS_ARCH_ARM, capstone.CS_MODE_ARM),
    ks_mode=(keystone.KS_ARCH_ARM, keystone.KS_MODE_ARM),
    uc_regs=uc_register_map(arm_const, "UC_ARM_REG_", {r: r.upper() for r in _REGS}),
    pc="pc",
    sp="sp",
    ra="lr",
    args=("r0", "r1", "r2", "r3"),
    ret="r0",
    insn_align=4,
    max_insn_len=4,
    nops={4: (0xE1A00000).to_bytes(4, "little")},       # mov r0, r0
    alt_nops=((0xE320F000).to_bytes(4, "little"),),       # ARMv6K+ hint nop
    syscall_insn=(0xEF000000).to_bytes(4, "little"),       # svc #0
    traps={
        7: TrapVector(TrapKind.BREAKPOINT, pc_offset=0, length=4),   # bkpt: PC at it
        2: TrapVector(TrapKind.SYSCALL, pc_offset=4, length=4),      # svc: PC past it
    },
    undefined=TrapVector(TrapKind.UNDEFINED, pc_offset=0, length=4),  # udf / e7f001f8
    insn_traps={},
    spin=SpinLoop((0xE2800001).to_bytes(4, "little")        # add r0, r0, #1
                  + (0xEAFFFFFD).to_bytes(4, "little"),      # b 1b
                  counter="r0"),
    branch_reach=BRANCH_REACH,
    encode_jump=encode_jump,
    encode_call=encode_call,
    kprobe_breakpoint=kprobe_breakpoint,
    isa_state=ISA_STATE,
    cmodx_safe=cmodx_safe,
    cmodx_rule="ARMv7: B, BL, NOP, BKPT, SVC, HVC, SMC",
    isa_bits=1,
    isa_names={0: "ARM (A32)", 1: "Thumb"},
    isa_cs_modes={0: (capstone.CS_ARCH_ARM, capstone.CS_MODE_ARM),
                  1: (capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB)},
    ops=ArmOps(),
    dwarf_regs=DWARF_REGS,
    elf_machine="EM_ARM",
    selftests=("test_arm.c",),             # arch/arm/probes/kprobes/Makefile, !THUMB2_KERNEL
    # GNU EABI -pg: `push {lr}; bl __gnu_mcount_nc` (arch/arm/kernel/entry-ftrace.S).
    mcount_symbols=("__gnu_mcount_nc", "mcount"),
    # R_ARM_THM_CALL (10), R_ARM_THM_JUMP24 (30) to an ARM function (ELF for the
    # ARM Architecture 5.6.1): the loader does no interworking.
    mcount_call_refused={10: "unsupported interworking call (Thumb -> ARM)",
                         30: "unsupported interworking call (Thumb -> ARM)"},
    mcount_prologue={"__gnu_mcount_nc": PUSH_LR},
    snippets={
        "demo_setup": "movw r1, #{n}",
        "demo_body": "add r2, r2, r1; subs r1, r1, #1; bne l",
        "bench_kernel": "movw r1, #{nlo}; movt r1, #{nhi}; movw r4, #{dlo}; movt r4, #{dhi}; "
                        "l: and r2, r1, #0xff0; ldr r0, [r4, r2]; add r0, r0, r1; "
                        "str r0, [r4, r2]; bl f; subs r1, r1, #1; bne l; b e; "
                        "f: add r5, r5, #1; bx lr; e: nop",
        "bench_alu": "movw r1, #{nlo}; movt r1, #{nhi}; l: add r0, r0, r1; eor r0, r0, #3; "
                     "subs r1, r1, #1; bne l",
        "checker_count": "add r4, r4, #1",
        "checker_skip": "add r5, r5, #1",
        "checker_body": "add r6, r6, #1; bx lr",
    },
    costs={
        **core_costs(CORE),
        "icache_flush": _FLUSH_LINE,
        "clock_read": Cost(1, "trace clock read = mrc p15 PMCCNTR: one instruction; no published "
                              "latency found, so the model unit (assumption)"),
    },
    text_sync=TEXT_SYNC,
    clock=CORE.clock,
    core=CORE,
    decoder=Decoder(str(Path(__file__).with_name("decode.c")), regs=tuple(f"r{n}" for n in range(13)) + ("sp", "lr", "pc", "cpsr"), mode_reg="cpsr",
                    accesses=True),
    cc_target="arm-linux-musleabi",
    # No NEON/VFP (the guest never enables them); GNU EABI for -pg:
    # `push {lr}; bl __gnu_mcount_nc` as in the Linux ARM kernel.
    cc_flags=("-mcpu=cortex_a15-neon-fpregs", "-marm", "-meabi", "gnu"),
)


# -- CONFIG_THUMB2_KERNEL (arches/arm/thumb2.py) ------------------------------

from arches.arm import thumb2  # noqa: E402
from arches.base import DynamicFtrace  # noqa: E402


class Thumb2Ftrace(DynamicFtrace, names={
        **{name: getattr(ArmFtrace, name) for name in DynamicFtrace.CONSTANTS},
        "ftrace_nop_replace": lambda: thumb2.thumb32(thumb2.POP_W_LR),
        "ftrace_call_replace": thumb2.encode_call}):
    """HAVE_DYNAMIC_FTRACE on a Thumb-2 kernel: ``pop.w {lr}`` idles a site,
    ``bl ftrace_caller`` (T1) enables it (arch/arm/kernel/ftrace.c); the site's
    size, symbols and shape are the A32 kernel's."""


from arches.arm.kprobes_thumb import Thumb2Kprobes  # noqa: E402


class Thumb2Ops(Thumb2Ftrace, Thumb2Kprobes, Thumb2GuestPatching):
    """The hooks of a Thumb-2 kernel: no optprobes (Linux selects
    HAVE_OPTPROBES only ``if !THUMB2_KERNEL``)."""

    imv_load_of_zero = staticmethod(thumb2.imv_load_of_zero)

    @staticmethod
    def text_poke_batch(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
        thumb2.patch_text_batch(port, sites, ARCH.icache_line)


THUMB2 = dataclasses.replace(
    _A32,
    summary="32-bit ARM, a CONFIG_THUMB2_KERNEL build: Thumb-2, 2- and 4-byte instructions",
    uc_mode=(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB),
    cs_mode=(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB),
    ks_mode=(keystone.KS_ARCH_ARM, keystone.KS_MODE_THUMB),
    insn_align=2,
    nops={2: thumb2.thumb16(thumb2.NOP_N), 4: thumb2.thumb32(thumb2.NOP_W)},
    alt_nops=(),
    syscall_insn=thumb2.thumb16(0xDF00),                   # svc #0
    traps={
        7: TrapVector(TrapKind.BREAKPOINT, pc_offset=0, length=2),   # bkpt (T1)
        2: TrapVector(TrapKind.SYSCALL, pc_offset=2, length=2),      # svc (T1)
    },
    undefined=TrapVector(TrapKind.UNDEFINED, pc_offset=0, length=2),  # udf (T1) / 0xde18
    spin=SpinLoop(thumb2.thumb16(0x3001)                    # adds r0, #1
                  + thumb2.thumb16(0xE7FD),                  # b 1b
                  counter="r0"),
    code_isa=1,
    branch_reach=thumb2.BRANCH_REACH,
    encode_jump=thumb2.encode_jump,
    encode_call=thumb2.encode_call,
    kprobe_breakpoint=thumb2.kprobe_breakpoint,
    cmodx_safe=thumb2.cmodx_safe,
    cmodx_rule="ARMv7 Thumb state, read conservatively: 16-bit B, NOP, BKPT, SVC",
    ops=Thumb2Ops(),
    mcount_prologue={"__gnu_mcount_nc": thumb2.PUSH_LR},
    mcount_call_refused={},               # Thumb to Thumb: __gnu_mcount_nc is Thumb here
    cc_target="thumb-linux-musleabi",
    cc_flags=("-mcpu=cortex_a15-neon-fpregs", "-mthumb", "-meabi", "gnu"),
    variant="THUMB2_KERNEL",
    selftests=("test_thumb.c",),            # arch/arm/probes/kprobes/Makefile
)
ARCH = dataclasses.replace(_A32, variants={"THUMB2_KERNEL": THUMB2})

