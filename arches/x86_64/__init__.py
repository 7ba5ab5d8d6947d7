"""x86-64.

Encodings: arch/x86/include/asm/nops.h (BYTES_NOP1..8, P6 nops),
arch/x86/include/asm/kprobes.h (BREAKPOINT_INSTRUCTION 0xcc),
arch/x86/include/asm/text-patching.h (JMP32/JMP8/CALL opcodes).
"""
from __future__ import annotations

import capstone
import keystone
import unicorn
from unicorn import x86_const

from arches.base import (Arch, Cost, SpinLoop, TrapKind, TrapVector,
                         check_reach, uc_register_map)

REL32 = (-(1 << 31), (1 << 31) - 1)
REL8 = (-128, 127)


def _rel(opcode: int, src: int, dst: int, length: int, reach: tuple[int, int]) -> bytes:
    """``opcode rel`` where rel is relative to the end of the instruction."""
    disp = dst - (src + length)
    check_reach("x86_64", src, dst, disp, reach)
    return bytes([opcode]) + disp.to_bytes(length - 1, "little", signed=True)


def encode_jump(src: int, dst: int) -> bytes:
    """``jmp rel32`` (e9), the 5-byte form jump labels patch in."""
    return _rel(0xE9, src, dst, 5, REL32)


def encode_jump8(src: int, dst: int) -> bytes:
    """``jmp rel8`` (eb), used when a 2-byte site suffices."""
    return _rel(0xEB, src, dst, 2, REL8)


def encode_call(src: int, dst: int) -> bytes:
    """``call rel32`` (e8), as mcount call sites use."""
    return _rel(0xE8, src, dst, 5, REL32)


def kprobe_breakpoint(orig: bytes) -> bytes:
    """``int3``, whatever the probed instruction."""
    return b"\xcc"


_REGS = ("rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 "
         "rip rflags").split()

# Opteron 2 GHz: a kprobe hit (int3 trap + single-step trap) is 0.49 us
# (Documentation/trace/kprobes.rst), i.e. 980 cycles for two traps.
_TRAP = Cost(490, "Documentation/trace/kprobes.rst: kprobe hit 0.49 us on "
                  "Opteron 2 GHz = 980 cycles for int3 + single-step trap; half each")

ARCH = Arch(
    name="x86_64",
    summary="x86-64, little-endian, variable-length instructions",
    bits=64,
    endian="little",
    uc_mode=(unicorn.UC_ARCH_X86, unicorn.UC_MODE_64),
    cs_mode=(capstone.CS_ARCH_X86, capstone.CS_MODE_64),
    ks_mode=(keystone.KS_ARCH_X86, keystone.KS_MODE_64),
    uc_regs=uc_register_map(x86_const, "UC_X86_REG_", {r: r.upper() for r in _REGS}),
    pc="rip",
    sp="rsp",
    ra=None,
    args=("rdi", "rsi", "rdx", "rcx", "r8", "r9"),
    ret="rax",
    insn_align=1,
    max_insn_len=15,
    nops={
        1: bytes.fromhex("90"),
        2: bytes.fromhex("6690"),
        3: bytes.fromhex("0f1f00"),
        4: bytes.fromhex("0f1f4000"),
        5: bytes.fromhex("0f1f440000"),       # P6_NOP5_ATOMIC at jump-label sites
        6: bytes.fromhex("660f1f440000"),
        7: bytes.fromhex("0f1f8000000000"),
        8: bytes.fromhex("0f1f840000000000"),
    },
    alt_nops=(),
    syscall_insn=bytes.fromhex("0f05"),
    traps={
        3: TrapVector(TrapKind.BREAKPOINT, pc_offset=1, length=1),   # int3
        6: TrapVector(TrapKind.UNDEFINED, pc_offset=0, length=2),    # ud2 (#UD)
    },
    undefined=TrapVector(TrapKind.UNDEFINED, pc_offset=0, length=2),
    # Unicorn calls the syscall hook with RIP at the instruction and adds its
    # length afterwards (qemu/target/i386 helper_syscall).
    insn_traps={x86_const.UC_X86_INS_SYSCALL:
                TrapVector(TrapKind.SYSCALL, pc_offset=0, length=2, resume_bias=2)},
    spin=SpinLoop(bytes.fromhex("48ffc0" "ebfb"), counter="rax"),   # inc %rax; jmp 1b
    branch_reach=REL32,
    encode_jump=encode_jump,
    encode_call=encode_call,
    kprobe_breakpoint=kprobe_breakpoint,
    costs={
        "insn": Cost(1, "model unit: one modeled cycle per retired instruction "
                        "(assumption; no published CPI for this guest)"),
        "trap": _TRAP,
        "ipi": Cost(490, "text_poke_sync() IPIs every CPU to run sync_core(); "
                         "modeled as one interrupt round trip, the trap figure above"),
        "icache_flush": Cost(0, "x86 keeps the icache coherent with stores "
                                "(Intel SDM vol. 3 §8.1.3); only serialization is needed"),
    },
    cc_target="x86_64-linux-musl",
    cc_flags=("-mno-red-zone",),
)
