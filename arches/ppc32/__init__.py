"""32-bit PowerPC, big-endian.

Encodings: arch/powerpc/include/asm/ppc-opcode.h (PPC_RAW_NOP = ori 0,0,0),
arch/powerpc/lib/code-patching.c (create_branch: 0x48000000 | offset, LK
bit for bl, reach -0x2000000..0x1fffffc), arch/powerpc/include/asm/probes.h
(BREAKPOINT_INSTRUCTION = tw 31,0,0 = 0x7fe00008).
"""
from __future__ import annotations

from pathlib import Path

from typing import Sequence

import capstone
import keystone
import unicorn
from unicorn import ppc_const

from arches.base import (Decoder, Arch, Cost, SpinLoop, TextPort, TextSync, TrapKind, TrapVector,
                         check_reach, patch_words, core_costs, uc_register_map)
from arches.ppc32.dwarf import DWARF_REGS

#: PPC_INST_NOP (arch/powerpc/include/asm/ppc-opcode.h): ori 0,0,0, big-endian.
PPC_INST_NOP = (0x60000000).to_bytes(4, "big")


from arches.ppc32.core import CORE  # noqa: E402  (the reference core: docs/timing.md)

#: v5.10 arch/powerpc/lib/code-patching.c patch_instruction() sends no IPI:
#: __patch_instruction() stores the word, then dcbst, sync, icbi, sync, isync on the
#: patching CPU alone; icbi is performed on every processor (Power ISA v2.03 Book II
#: §1.8 and §3.2.1 "Instruction Cache Instructions"), and the isync is the only
#: context synchronization. arch_jump_label_transform() (arch/powerpc/kernel/
#: jump_label.c) and arch_arm_kprobe() (arch/powerpc/kernel/kprobes.c) patch through
#: it; no stop_machine().
TEXT_SYNC = TextSync(round_local=(), round_remote=(), flush=("serialize",),
                     source="v5.10 arch/powerpc/lib/code-patching.c __patch_instruction(); "
                            "arch/powerpc/kernel/jump_label.c arch_jump_label_transform(); "
                            "arch/powerpc/kernel/kprobes.c arch_arm_kprobe()")


BRANCH_REACH = (-0x2000000, 0x1FFFFFC)


def _word(value: int) -> bytes:
    return value.to_bytes(4, "big")


def _branch(src: int, dst: int, link: bool) -> bytes:
    disp = dst - src
    check_reach("ppc32", src, dst, disp, BRANCH_REACH, align=4)
    return _word(0x48000000 | (disp & 0x03FFFFFC) | int(link))


def encode_jump(src: int, dst: int) -> bytes:
    """``b dst``."""
    return _branch(src, dst, link=False)


def encode_call(src: int, dst: int) -> bytes:
    """``bl dst``."""
    return _branch(src, dst, link=True)


def kprobe_breakpoint(orig: bytes) -> bytes:
    """``tw 31,0,0``, whatever the probed instruction."""
    return _word(0x7FE00008)


#: Power ISA v2.03 Book II §1.8.1 "Concurrent Modification and Execution of
#: Instructions": an instruction word another processor changes while this one
#: may execute it gives defined results only if every value the word takes is in
#: the "patch class": the I-form branch b, ba, bl, bla (primary opcode 18, any AA
#: and LK) and the preferred no-op ori 0,0,0. Anything else is boundedly undefined.
PATCH_CLASS_OPCODE = 18


def _patch_class(word: bytes) -> bool:
    insn = int.from_bytes(word, "big")
    return insn >> 26 == PATCH_CLASS_OPCODE or word == PPC_INST_NOP


def cmodx_safe(old: bytes, new: bytes) -> bool:
    """Both words are in Book II §1.8.1's patch class."""
    return _patch_class(old) and _patch_class(new)


_REGS = {f"r{i}": str(i) for i in range(32)}
# xer: Unicorn's read omits SO/OV/CA (see arches/ppc32/kprobes.py)
_REGS.update(pc="PC", lr="LR", ctr="CTR", cr="CR", xer="XER", msr="MSR")

_FLUSH_LINE = Cost(5, "arch/powerpc/lib/code-patching.c patch_instruction: dcbst, "
                      "sync, icbi, sync, isync = 5 instructions per line")


# -- text patching: patch_instruction (arch/powerpc/lib/code-patching.c) --

def patch_instruction_batch(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """patch_instruction for many sites: word stores, dcbst/icbi, one sync round."""
    patch_words("ppc32", port, sites, ARCH.icache_line)


def imv_load_of_zero(insn: bytes, address: int, imv: int, size: int) -> bool:
    """``li rX, 0`` (addi rX, 0, 0: opcode 14, rA 0): its SIMM is the low
    half-word, bytes 2..3 in big-endian memory."""
    word = int.from_bytes(insn, "big")
    return (len(insn) == 4 and word >> 26 == 14 and (word >> 16) & 0x1F == 0
            and word & 0xFFFF == 0 and size == 2 and imv == address + 2)


# Imported here: they use the encoders above.
from arches.ppc32.ftrace import Ppc32Ftrace  # noqa: E402
from arches.ppc32.kprobes import Ppc32Kprobes  # noqa: E402
from arches.ppc32.guest_patching import Ppc32GuestPatching  # noqa: E402


class Ppc32Ops(Ppc32Ftrace, Ppc32Kprobes, Ppc32GuestPatching):
    """The 32-bit PowerPC hooks (:class:`arches.base.ArchOps`)."""

    text_poke_batch = staticmethod(patch_instruction_batch)
    imv_load_of_zero = staticmethod(imv_load_of_zero)


ARCH = Arch(
    name="ppc32",
    summary="32-bit PowerPC, big-endian, fixed 4-byte instructions",
    bits=32,
    endian="big",
    uc_mode=(unicorn.UC_ARCH_PPC, unicorn.UC_MODE_PPC32 | unicorn.UC_MODE_BIG_ENDIAN),
    cs_mode=(capstone.CS_ARCH_PPC, capstone.CS_MODE_32 | capstone.CS_MODE_BIG_ENDIAN),
    ks_mode=(keystone.KS_ARCH_PPC, keystone.KS_MODE_PPC32 | keystone.KS_MODE_BIG_ENDIAN),
    uc_regs=uc_register_map(ppc_const, "UC_PPC_REG_", _REGS),
    pc="pc",
    sp="r1",
    ra="lr",
    args=("r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"),
    ret="r3",
    insn_align=4,
    max_insn_len=4,
    nops={4: PPC_INST_NOP},                              # ori 0,0,0
    alt_nops=(),
    syscall_insn=_word(0x44000002),                      # sc
    traps={
        6: TrapVector(TrapKind.BREAKPOINT, pc_offset=4, length=4),   # tw: PC already +4
        8: TrapVector(TrapKind.SYSCALL, pc_offset=4, length=4),      # sc
        # trace interrupt after one instruction under MSR_SE: Unicorn reports
        # the next instruction + 4 (POWERPC_EXCP_TRACE)
        68: TrapVector(TrapKind.TRAP, pc_offset=4, length=0),
        96: TrapVector(TrapKind.UNDEFINED, pc_offset=4, length=4),   # illegal opcode
    },
    undefined=TrapVector(TrapKind.UNDEFINED, pc_offset=0, length=4),
    insn_traps={},
    spin=SpinLoop(_word(0x38630001) + _word(0x4BFFFFFC), counter="r3"),  # addi 3,3,1; b 1b
    branch_reach=BRANCH_REACH,
    encode_jump=encode_jump,
    encode_call=encode_call,
    kprobe_breakpoint=kprobe_breakpoint,
    cmodx_safe=cmodx_safe,
    cmodx_rule="Power ISA v2.03 Book II 1.8.1 patch class: b, ba, bl, bla, ori 0,0,0",
    ops=Ppc32Ops(),
    dwarf_regs=DWARF_REGS,
    elf_machine="EM_PPC",
    selftests=("emulate_step.c",),         # arch/powerpc/lib/Makefile, PPC_EMULATE_SSTEP
    # -pg calls _mcount (arch/powerpc/kernel/trace/ftrace_32.S; ftrace_entry.S since 6.x).
    mcount_symbols=("_mcount",),
    snippets={
        "demo_setup": "li 4, {n}",
        "demo_body": "add 3, 3, 4; addi 4, 4, -1; cmpwi 4, 0; bne l",
        "bench_kernel": "lis 4, {nhi}; ori 4, 4, {nlo}; lis 6, {dhi}; ori 6, 6, {dlo}; "
                        "l: andi. 5, 4, 0xff0; lwzx 3, 6, 5; add 3, 3, 4; stwx 3, 6, 5; bl f; "
                        "addi 4, 4, -1; cmpwi 4, 0; bne l; b e; f: addi 7, 7, 1; blr; e: nop",
        "bench_alu": "lis 4, {nhi}; ori 4, 4, {nlo}; l: add 3, 3, 4; xori 3, 3, 3; "
                     "addi 4, 4, -1; cmpwi 4, 0; bne l",
        "checker_count": "addi 4, 4, 1",
        "checker_skip": "addi 5, 5, 1",
        "checker_body": "addi 6, 6, 1; blr",
    },
    costs={
        **core_costs(CORE),
        "icache_flush": _FLUSH_LINE,
        "clock_read": Cost(1, "trace clock read = mftb: one instruction; no published latency "
                              "found, so the model unit (assumption)"),
    },
    imv_sign_extends=True,               # li rD, SIMM: the 16-bit field is signed
    text_sync=TEXT_SYNC,
    clock=CORE.clock,
    core=CORE,
    decoder=Decoder(str(Path(__file__).with_name("decode.c")), regs=tuple(f"r{n}" for n in range(32)), accesses=True,
                    # QEMU 5's helper_lmw/helper_stmw (target/ppc/mem_helper.c) find the
                    # words in RAM with probe_contiguous() and copy them through the host
                    # pointer, so Unicorn 2.1's memory hooks never see them.
                    unhooked=("lmw", "stmw")),
    cc_target="powerpc-linux-musl",
    # No FPU instructions: the guest never sets MSR[FP].
    cc_flags=("-mcpu=ppc-hard_float",),
)
