"""x86-64.

Encodings: arch/x86/include/asm/nops.h (BYTES_NOP1..8, P6 nops),
arch/x86/include/asm/kprobes.h (BREAKPOINT_INSTRUCTION 0xcc),
arch/x86/include/asm/text-patching.h (JMP32/JMP8/CALL opcodes).
"""
from __future__ import annotations

from pathlib import Path

from typing import Sequence

import capstone
import keystone
import unicorn
from unicorn import x86_const

from arches.base import (Decoder, Arch, Cost, EncodingError, SpinLoop, TextPort, TextSync,
                         TrapFrame, TrapKind, TrapVector, check_reach, core_costs,
                         split_out_of_line, uc_register_map, write_out_of_line)
from arches.x86_64.dwarf import DWARF_REGS

#: P6_NOP5 (arch/x86/include/asm/nops.h): nopl 0x0(%rax,%rax,1), the ideal 5-byte nop.
P6_NOP5 = bytes.fromhex("0f1f440000")


from arches.x86_64.core import CORE  # noqa: E402  (the reference core: docs/timing.md)

#: v5.10 arch/x86/kernel/alternative.c text_poke_sync() is on_each_cpu(do_sync_core,
#: NULL, 1): kernel/smp.c sends every other online CPU a call-function IPI, whose
#: handler runs do_sync_core(), and runs do_sync_core() on the caller itself with
#: interrupts off, no IPI; sync_core() is an IRET to self
#: (arch/x86/include/asm/sync_core.h). flush_icache_range() does nothing: x86
#: keeps fetch coherent with stores (Intel SDM vol. 3A §8.1.3).
TEXT_SYNC = TextSync(round_local=("serialize",), round_remote=("ipi", "serialize"), flush=(),
                     source="v5.10 arch/x86/kernel/alternative.c text_poke_sync(): "
                            "on_each_cpu(do_sync_core, NULL, 1) (kernel/smp.c); "
                            "arch/x86/include/asm/sync_core.h sync_core()")


REL32 = (-(1 << 31), (1 << 31) - 1)


def _rel(opcode: int, src: int, dst: int, length: int, reach: tuple[int, int]) -> bytes:
    """``opcode rel`` where rel is relative to the end of the instruction."""
    disp = dst - (src + length)
    check_reach("x86_64", src, dst, disp, reach)
    return bytes([opcode]) + disp.to_bytes(length - 1, "little", signed=True)


def encode_jump(src: int, dst: int) -> bytes:
    """``jmp rel32`` (e9), the 5-byte form jump labels patch in."""
    return _rel(0xE9, src, dst, 5, REL32)


def encode_call(src: int, dst: int) -> bytes:
    """``call rel32`` (e8), as mcount call sites use."""
    return _rel(0xE8, src, dst, 5, REL32)


def kprobe_breakpoint(orig: bytes) -> bytes:
    """``int3``, whatever the probed instruction."""
    return b"\xcc"


_REGS = ("rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 "
         "rip rflags").split()



# -- text patching: text_poke_bp (arch/x86/kernel/alternative.c) ----------

INT3 = b"\xcc"
SYSCALL = bytes.fromhex("0f05")    # kisim's hypercall instruction
REG_NUM = ("rax rcx rdx rbx rsp rbp rsi rdi "
            "r8 r9 r10 r11 r12 r13 r14 r15").split()


def _mov_imm(insn: bytes) -> tuple[str, int, int] | None:
    """Decode ``mov $imm, %reg`` (imv sites): (register, width in bytes, value)."""
    i, opsize16, rex = 0, False, 0
    if insn[i:i + 1] == b"\x66":
        opsize16, i = True, i + 1
    if i < len(insn) and 0x40 <= insn[i] <= 0x4F:
        rex, i = insn[i], i + 1
    if i >= len(insn):
        return None
    op, i = insn[i], i + 1
    ext, wide = (rex & 1) << 3, bool(rex & 8)
    if 0xB8 <= op <= 0xBF:
        reg, width, size = (op - 0xB8) | ext, 8 if wide else 2 if opsize16 else 4, 0
    elif 0xB0 <= op <= 0xB7 and (rex or op < 0xB4):
        reg, width, size = (op - 0xB0) | ext, 1, 0
    elif op == 0xC7 and i < len(insn) and insn[i] & 0xF8 == 0xC0:
        reg, width, size, i = (insn[i] & 7) | ext, 8 if wide else 2 if opsize16 else 4, 4, i + 1
    else:
        return None
    size = size or width
    if len(insn) != i + size:
        return None
    value = int.from_bytes(insn[i:], "little", signed=size < width)
    return REG_NUM[reg], width, value & ((1 << 8 * width) - 1)


def int3_emulation(insn: bytes) -> str:
    """What poke_int3_handler does for ``insn``; EncodingError if it cannot.

    Like text_poke_loc_init(): the new instruction of a multi-byte site must
    be one the handler can emulate: call, jmp (rel32 or rel8), a nop, or
    ``mov $imm, %reg`` (immediate values).
    """
    if len(insn) == 5 and insn[0] == 0xE8:
        return "call"
    if (len(insn) == 5 and insn[0] == 0xE9) or (len(insn) == 2 and insn[0] == 0xEB):
        return "jmp"
    if insn in ARCH.nops.values():
        return "nop"
    if _mov_imm(insn) is not None:
        return "mov"
    raise EncodingError(f"x86_64: text_poke_bp cannot emulate {insn.hex(' ')} "
                        "(call, jmp, nop or mov $imm only)")


def poke_int3_handler(port: TextPort, sites: dict[int, bytes],
                      frame: TrapFrame, addr: int) -> int | None:
    """Emulate the new instruction of the site whose temporary int3 was hit.

    Returns where the CPU resumes, or None when ``addr`` is not a site in
    flight (or its new instruction is itself an int3: that one belongs to
    kprobes, as in the kernel).
    """
    insn = sites.get(addr)
    if insn is None or insn == INT3:
        return None
    end = addr + len(insn)
    kind = int3_emulation(insn)
    if kind == "nop":
        return end
    if kind == "mov":
        reg, width, value = _mov_imm(insn)
        if width < 4:                                   # 8/16-bit: merge into the register
            mask = (1 << 8 * width) - 1
            value |= frame.reg(reg) & ~mask
        frame.set_reg(reg, value)
        return end
    target = end + int.from_bytes(insn[1:], "little", signed=True)
    if kind == "call":                                  # int3_emulate_call: push, jump
        sp = frame.reg("rsp") - 8
        port.write_data(sp, end.to_bytes(8, "little"))
        frame.set_reg("rsp", sp)
    return target


def text_poke_bp_batch(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """Patch live text with the int3 protocol: three sync rounds for any batch of
    multi-byte sites.

    1) int3 on byte 0 of every site, sync; 2) bytes 1..n-1, sync; 3) byte 0,
    sync (each round only when it stored something, as v5.10's ``do_sync``). A
    CPU that hits a temporary int3 meanwhile runs :func:`poke_int3_handler`. A
    one-byte site (a kprobe's int3, or the byte it saved) is one atomic store
    and one sync, as arch_arm_kprobe() and arch_disarm_kprobe() write it
    (arch/x86/kernel/kprobes/core.c: text_poke(), text_poke_sync()).
    :class:`~arches.base.OutOfLine` entries (a detour) are written first, as
    arch_prepare_optimized_kprobe ``text_poke``s the detour before
    arch_optimize_kprobes publishes the jump, and synced: v5.10 does not sync
    there (the guest's patching.c does not), but this handler does not model
    the ``iret`` that makes an emulated CPU refetch (docs/patchcheck.md).
    """
    code, sites = split_out_of_line(sites)
    multi = [(addr, insn) for addr, insn in sites if len(insn) > 1]
    for _, insn in multi:
        int3_emulation(insn)                 # refuse before the first store
    write_out_of_line(port, code, None)
    for addr, insn in sites:
        if len(insn) == 1:
            port.write_text(addr, insn)
            port.sync_all()
    if not multi:
        return
    table = dict(multi)
    with port.breakpoint_handler(lambda frame, addr: poke_int3_handler(port, table, frame, addr)):
        for addr, _ in multi:
            port.write_text(addr, INT3)
        port.sync_all()
        for addr, insn in multi:
            port.write_text(addr + 1, insn[1:])
        port.sync_all()
        first = [(addr, insn) for addr, insn in multi if insn[:1] != INT3]
        for addr, insn in first:
            port.write_text(addr, insn[:1])
        if first:
            port.sync_all()


def imv_load_of_zero(insn: bytes, address: int, imv: int, size: int) -> bool:
    """``mov $0, %reg`` whose immediate is the instruction's last ``size`` bytes
    (include/asm-x86/immediate.h in the immediate-values patches)."""
    decoded = _mov_imm(insn)
    return (decoded is not None and decoded[2] == 0 and size in (1, 2, 4)
            and imv == address + len(insn) - size and imv % size == 0)


# Imported here: they use the encoders above.
from arches.x86_64.ftrace import X86Ftrace  # noqa: E402
from arches.x86_64.guest_patching import X86GuestPatching  # noqa: E402
from arches.x86_64.kprobes import X86Kprobes  # noqa: E402


class X86Ops(X86Ftrace, X86Kprobes, X86GuestPatching):
    """The x86-64 hooks (:class:`arches.base.ArchOps`)."""

    text_poke_batch = staticmethod(text_poke_bp_batch)
    imv_load_of_zero = staticmethod(imv_load_of_zero)


ARCH = Arch(
    name="x86_64",
    summary="x86-64, little-endian, variable-length instructions",
    bits=64,
    endian="little",
    char_signed=True,
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
        5: P6_NOP5,                           # P6_NOP5_ATOMIC at jump-label sites
        6: bytes.fromhex("660f1f440000"),
        7: bytes.fromhex("0f1f8000000000"),
        8: bytes.fromhex("0f1f840000000000"),
    },
    alt_nops=(),
    syscall_insn=SYSCALL,
    traps={
        1: TrapVector(TrapKind.TRAP, pc_offset=0, length=0),         # #DB single-step (TF)
        3: TrapVector(TrapKind.BREAKPOINT, pc_offset=1, length=1),   # int3
        6: TrapVector(TrapKind.UNDEFINED, pc_offset=0, length=2),    # ud2 (#UD)
        # #GP is a fault: Unicorn reports it with RIP at the faulting
        # instruction (measured: a segment load of a selector past the GDT).
        13: TrapVector(TrapKind.TRAP, pc_offset=0, length=0),
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
    # v5.10 arch/x86/kernel/alternative.c TP_VEC_MAX: a page of 16-byte
    # struct text_poke_loc (s32 rel_addr, s32 rel32, u8 opcode, u8 text[5], u8 old)
    jump_label_batch=4096 // 16,
    kprobe_breakpoint=kprobe_breakpoint,
    ops=X86Ops(),
    dwarf_regs=DWARF_REGS,
    elf_machine="EM_X86_64",
    # -pg without -mfentry calls mcount; with it, __fentry__ (arch/x86/kernel/ftrace_64.S).
    mcount_symbols=("mcount", "__fentry__"),
    mcount_reloc_offset=1,               # e8 rel32: R_X86_64_PC32 at the rel32
    snippets={
        "demo_setup": "mov rcx, {n}",
        "demo_body": "add rax, rcx; dec rcx; jnz l",
        "bench_kernel": "mov rcx, {n}; mov rsi, {data}; l: mov rdx, rcx; and rdx, 0xff8; "
                        "mov rax, [rsi + rdx]; add rax, rcx; mov [rsi + rdx], rax; call f; "
                        "dec rcx; jnz l; jmp e; f: add rbx, 1; ret; e: nop",
        "bench_alu": "mov rcx, {n}; l: add rax, rcx; xor rax, 3; dec rcx; jnz l",
        "checker_count": "inc r12",
        "checker_skip": "inc r13",
        "checker_body": "inc r14; ret",
        # a #GP: loading a selector past the GDT (sim/inflight.py measures with it)
        "contributory_fault": "mov ax, 0x1234; mov ds, ax",
    },
    costs={
        **core_costs(CORE),
        "icache_flush": Cost(0, "x86 keeps the icache coherent with stores "
                                "(Intel SDM vol. 3 §8.1.3); only serialization is needed"),
        "clock_read": Cost(7, "trace clock read = rdtsc: 6-7 clocks, not pairable, on the Pentium "
                              "(Intel Pentium Instruction Set Reference, RDTSC timing table); "
                              "upper bound"),
    },
    site_len=5,                          # P6_NOP5_ATOMIC <-> jmp rel32
    icache_coherent=True,
    exception_names={0: "divide by zero (#DE, divide error: Intel SDM vol. 3A §6.15, vector 0)",
                     13: "general protection fault (#GP: Intel SDM vol. 3A §6.15, vector 13)"},                # Intel SDM vol. 3A §8.1.3: serialize, no flush
    poke_breakpoint=INT3,
    text_sync=TEXT_SYNC,
    clock=CORE.clock,
    core=CORE,
    decoder=Decoder(str(Path(__file__).with_name("decode.c")), regs=("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"), accesses=True),
    cc_target="x86_64-linux-musl",
    # Kernel code model: no red zone, no SSE/MMX state, no CET endbr.
    cc_flags=("-mno-red-zone", "-mcmodel=small", "-mno-sse", "-mno-sse2", "-mno-mmx",
              "-mno-avx", "-fcf-protection=none"),
)
