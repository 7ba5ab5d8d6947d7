"""The arch decoders of the timing model (``kisim_decode``, sim/native/decode.h).

Each arch's C decoder is compiled for the host with the host library's
flags (warnings are errors) and checked two ways: hand-written cases of
every kind on every arch, with the address fields of cache maintenance;
and a cross-check against Capstone's instruction groups over every
function of the arch's guest kernel, where each disagreement must be one
of the listed differences in Capstone's grouping.
"""
from __future__ import annotations

import collections
import ctypes
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import capstone
import pytest
from capstone import arm as cs_arm

from arches import ARCHES, Arch
from kbuild import build
from kbuild.host import HOST_CFLAGS
from sim.asm import assemble
from sim.elf import read_elf

REPO = Path(__file__).resolve().parent.parent
HEADER = REPO / "sim" / "native" / "decode.h"
THUMB = 0x20                    # CPSR.T


def _enum(name: str) -> list[str]:
    """The members of ``enum name`` in decode.h in value order, ``KISIM_`` dropped."""
    body = re.search(rf"enum {name} \{{(.*?)\}};", HEADER.read_text(), re.S)
    assert body, f"no enum {name} in {HEADER}"
    members = [m.strip() for m in re.sub(r"/\*.*?\*/", "", body[1], flags=re.S).split(",")]
    members = [m for m in members if m]
    assert members[0].endswith("= 0") and not any("=" in m for m in members[1:])
    return [m.split("=")[0].strip().removeprefix("KISIM_") for m in members]


def _define(name: str) -> int:
    found = re.search(rf"#define {name}\s+\((-?\d+)\)", HEADER.read_text())
    assert found, f"no #define {name} in {HEADER}"
    return int(found[1])


KINDS = _enum("kisim_kind")
SHIFTS = _enum("kisim_shift")
ACCESS_OPS = ["NONE"] + [op for op in re.findall(r"KISIM_(LOAD|STORE)\b", HEADER.read_text())][:2]
CACHEOPS = [op.removeprefix("OP_") for op in _enum("kisim_cacheop")]
NONE = _define("KISIM_REG_NONE")
NEXT_PC = _define("KISIM_REG_NEXT_PC")
MAX_ACCESSES = int(re.search(r"#define KISIM_MAX_ACCESSES\s+(\d+)", HEADER.read_text())[1])


class Address(ctypes.Structure):
    """struct kisim_address."""

    _fields_ = [("base", ctypes.c_int8), ("index", ctypes.c_int8),
                ("shift_type", ctypes.c_uint8), ("shift", ctypes.c_uint8),
                ("scale", ctypes.c_int32), ("disp", ctypes.c_int64)]


class Access(ctypes.Structure):
    """struct kisim_access."""

    _fields_ = [("at", Address), ("op", ctypes.c_uint8), ("size", ctypes.c_uint8),
                ("count", ctypes.c_uint8), ("pad", ctypes.c_uint8 * 5)]


class Decoded(ctypes.Structure):
    """struct kisim_decoded."""

    _fields_ = [("kind", ctypes.c_uint8), ("cacheop", ctypes.c_uint8),
                ("accesses", ctypes.c_uint8), ("cond", ctypes.c_uint8),
                ("unmodeled", ctypes.c_uint8), ("cond_reg", ctypes.c_int8),
                ("cls", ctypes.c_uint8), ("described", ctypes.c_uint8),
                ("reads", ctypes.c_uint64), ("writes", ctypes.c_uint64),
                ("updates", ctypes.c_uint32), ("update_reads", ctypes.c_uint32),
                ("at", Address), ("access", Access * MAX_ACCESSES)]

    @property
    def kind_name(self) -> str:
        return KINDS[self.kind]

    @property
    def address(self) -> tuple[str, int, int, int, int]:
        """``(cacheop, base, index, scale, disp)``."""
        return CACHEOPS[self.cacheop], self.at.base, self.at.index, self.at.scale, self.at.disp

    @property
    def data(self) -> list[tuple]:
        """The accesses as ``(op, size, count, base, index, scale, disp)``; the scale
        only with an index, and a shifted index as ``(..., scale, disp, shift, by)``."""
        out = []
        for a in self.access[:self.accesses]:
            row = (ACCESS_OPS[a.op], a.size, a.count, a.at.base, a.at.index,
                   a.at.scale if a.at.index != NONE else 0, a.at.disp)
            out.append(row + ((SHIFTS[a.at.shift_type], a.at.shift) if a.at.shift_type else ()))
        return out


Decode = Callable[..., Decoded]        # (arch, code, mode=0, address=0)


class Guarded(ctypes.Structure):
    """:class:`Decoded` and bytes after it that the decoder must leave alone: a C struct
    grown past this file's mirror fails the test instead of writing over Python's heap."""

    _fields_ = [("decoded", Decoded), ("guard", ctypes.c_uint8 * 64)]


def decoder_path(arch: Arch) -> Path:
    """The arch's decoder source: its :class:`arches.base.Decoder`'s, else the default."""
    if arch.decoder is not None:
        return Path(arch.decoder.source)
    return REPO / "arches" / arch.name / "decode.c"


def compile_decoder(arch: Arch, out_dir: Path) -> ctypes.CDLL:
    """The arch's decoder built as a host library with the pinned zig."""
    lib = out_dir / "decode.so"
    proc = subprocess.run([sys.executable, "-m", "ziglang", "cc", *HOST_CFLAGS,
                           "-I", str(HEADER.parent), "-o", str(lib), str(decoder_path(arch))],
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"{arch.name}: decoder does not compile:\n{proc.stderr}"
    dll = ctypes.CDLL(str(lib))
    dll.kisim_decode.argtypes = (ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint64,
                                 ctypes.c_uint64, ctypes.POINTER(Guarded))
    dll.kisim_decode.restype = ctypes.c_int
    return dll


@pytest.fixture(scope="module")
def decode(tmp_path_factory: pytest.TempPathFactory) -> Decode:
    """``decode(arch, code, mode)``: each arch's decoder, compiled on first use."""
    libs: dict[str, ctypes.CDLL] = {}

    def run(arch: Arch, code: bytes, mode: int = 0, address: int = 0) -> Decoded:
        if arch.name not in libs:
            libs[arch.name] = compile_decoder(arch, tmp_path_factory.mktemp(arch.name))
        out = Guarded()
        ctypes.memset(out.guard, 0xA5, len(out.guard))
        assert libs[arch.name].kisim_decode(code, len(code), address, mode,
                                            ctypes.byref(out)) == 0
        assert bytes(out.guard) == b"\xa5" * len(out.guard), \
            "struct kisim_decoded is larger in decode.h than Decoded here"
        return out.decoded
    return run


# -- hand-written cases ----------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One instruction and the decoder's expected answer.

    ``insn`` is assembly (Keystone), a 32-bit word in the arch's byte order,
    or bytes in memory order; ``address`` is a CACHEOP's
    ``(cacheop, base, index, scale, disp)``.
    """

    arch: str
    insn: str | int | bytes
    kind: str
    mode: int = 0
    address: tuple[str, int, int, int, int] | None = None

    @property
    def id(self) -> str:
        text = self.insn.hex(" ") if isinstance(self.insn, bytes) else \
            f"{self.insn:#010x}" if isinstance(self.insn, int) else self.insn
        return f"{self.arch}-{text}" + (f"-mode{self.mode:#x}" if self.mode else "")

    def code(self) -> bytes:
        arch = ARCHES[self.arch]
        if isinstance(self.insn, bytes):
            return self.insn
        if isinstance(self.insn, int):
            return arch.from_int(self.insn, 4)
        return assemble(arch, self.insn)


def _cases(arch: str, rows: list[tuple], mode: int = 0) -> list[Case]:
    """Cases from ``(insn, kind)`` and ``(insn, "CACHEOP", address)`` rows."""
    return [Case(arch, row[0], row[1], mode, row[2] if len(row) > 2 else None) for row in rows]


X86_64 = [
    # SDM vol. 2 table: jcc rel8 and rel32, loop, jrcxz, a ds-hinted jcc
    ("je 0x10", "COND"), ("jne 0x1000", "COND"), ("loop 0x10", "COND"),
    ("jrcxz 0x10", "COND"), (bytes.fromhex("3e7405"), "COND"),
    ("jmp 0x10", "JUMP"), ("jmp 0x1000", "JUMP"), (bytes.fromhex("f2e900000000"), "JUMP"),
    ("call 0x1000", "CALL"), (bytes.fromhex("f2e800000000"), "CALL"),
    (bytes.fromhex("2ee800000000"), "CALL"),
    # ff /4, /5 (far); notrack (3e) jmp rax
    ("jmp rax", "JUMP_IND"), ("jmp r11", "JUMP_IND"),
    ("jmp qword ptr [r11*8 + 0x106428]", "JUMP_IND"), (bytes.fromhex("3effe0"), "JUMP_IND"),
    (bytes.fromhex("ff28"), "JUMP_IND"),
    # ff /2, /3 (far)
    ("call r11", "CALL_IND"), ("call qword ptr [rip + 0x20]", "CALL_IND"),
    ("call qword ptr [rax]", "CALL_IND"), (bytes.fromhex("ff18"), "CALL_IND"),
    # ret, ret imm16, rep ret, far ret (retf, retfq)
    ("ret", "RET"), ("ret 8", "RET"), (bytes.fromhex("f3c3"), "RET"),
    (bytes.fromhex("cb"), "RET"), (bytes.fromhex("48cb"), "RET"),
    ("int3", "TRAP"), ("int 0x80", "TRAP"), ("syscall", "TRAP"), ("sysenter", "TRAP"),
    ("ud2", "TRAP"), (bytes.fromhex("f1"), "TRAP"), (bytes.fromhex("0fb900"), "TRAP"),
    # SDM vol. 3 §8.3 serializing instructions; 0f 01 e8 is SERIALIZE itself
    ("iretq", "SERIALIZE"), (bytes.fromhex("cf"), "SERIALIZE"), ("cpuid", "SERIALIZE"),
    ("mov cr3, rax", "SERIALIZE"), ("mov dr7, rax", "SERIALIZE"), ("lgdt [rax]", "SERIALIZE"),
    ("lidt [rax]", "SERIALIZE"), ("lldt ax", "SERIALIZE"), ("ltr ax", "SERIALIZE"),
    ("invlpg [rdi]", "SERIALIZE"), ("wrmsr", "SERIALIZE"), ("wbinvd", "SERIALIZE"),
    ("invd", "SERIALIZE"), (bytes.fromhex("0f01e8"), "SERIALIZE"),
    # not serializing: mov to CR8 (§8.3), swapgs, rdtscp, fences, xsaveopt (0f ae /6, no 66)
    ("mov cr8, rax", "PLAIN"), ("swapgs", "PLAIN"), ("rdtscp", "PLAIN"), ("lfence", "PLAIN"),
    ("sfence", "PLAIN"), ("xsaveopt [rax]", "PLAIN"), ("mov rax, cr3", "PLAIN"),
    ("sgdt [rax]", "PLAIN"), ("nop", "PLAIN"), ("rdmsr", "PLAIN"),
    (bytes.fromhex("662e0f1f840000000000"), "PLAIN"), (bytes.fromhex("c5f877"), "PLAIN"),
    (bytes.fromhex("0fae"), "PLAIN"), (bytes.fromhex("ff"), "PLAIN"),   # truncated
    (bytes.fromhex("0fae3d0001"), "PLAIN"),                            # truncated disp32
    # clflush, clflushopt (66), clwb (66 0f ae /6): ModRM, SIB, REX.B/X, RIP-relative
    ("clflush [rax + rbx*4 + 0x10]", "CACHEOP", ("FLUSH_D", 0, 3, 4, 0x10)),
    ("clflush [rip + 0x100]", "CACHEOP", ("FLUSH_D", NEXT_PC, NONE, 1, 0x100)),
    (bytes.fromhex("410fae3d00010000"), "CACHEOP", ("FLUSH_D", NEXT_PC, NONE, 1, 0x100)),
    ("clflush [rbp]", "CACHEOP", ("FLUSH_D", 5, NONE, 1, 0)),
    ("clflush [r13]", "CACHEOP", ("FLUSH_D", 13, NONE, 1, 0)),
    ("clflush [rsp + rbp - 0x80]", "CACHEOP", ("FLUSH_D", 4, 5, 1, -0x80)),
    ("clflush [rcx*4 + 0x1000]", "CACHEOP", ("FLUSH_D", NONE, 1, 4, 0x1000)),
    (bytes.fromhex("0fae3c2500100000"), "CACHEOP", ("FLUSH_D", NONE, NONE, 1, 0x1000)),
    (bytes.fromhex("420fae3c2500100000"), "CACHEOP", ("FLUSH_D", NONE, 12, 1, 0x1000)),
    ("clflush [r12 + 0x7f]", "CACHEOP", ("FLUSH_D", 12, NONE, 1, 0x7F)),
    ("clflushopt [r12]", "CACHEOP", ("FLUSH_D", 12, NONE, 1, 0)),
    ("clwb [r13 + r14*8 - 8]", "CACHEOP", ("CLEAN_D", 13, 14, 8, -8)),
    ("clwb [rip - 0x40]", "CACHEOP", ("CLEAN_D", NEXT_PC, NONE, 1, -0x40)),
]

ARM = [
    # A5.5 B, BL; conditional calls and indirect branches are predicted as COND
    ("bne 0x100", "COND"), ("bleq 0x100", "COND"), ("bxne r3", "COND"), ("blxgt r3", "COND"),
    ("ldrne pc, [r3]", "COND"),
    ("b 0x100", "JUMP"), (0xEAFFFFFE, "JUMP"),
    ("bl 0x100", "CALL"), ("blx 0x100", "CALL"), (0xFB000000, "CALL"),
    ("bx r3", "JUMP_IND"), ("ldr pc, [r3]", "JUMP_IND"), ("ldr pc, [r7, r6, lsl #2]", "JUMP_IND"),
    ("ldr pc, [sp, #4]", "JUMP_IND"), ("ldm r0, {r1, pc}", "JUMP_IND"),
    ("add pc, pc, r0, lsl #2", "JUMP_IND"), ("mov pc, r3", "JUMP_IND"),
    ("blx r3", "CALL_IND"), ("blx lr", "CALL_IND"),
    ("bx lr", "RET"), ("pop {r4, pc}", "RET"), ("pop {pc}", "RET"), ("mov pc, lr", "RET"),
    ("ldm sp, {r4, pc}", "RET"),
    ("bxne lr", "COND_RET"), ("ldmeq sp!, {r4, pc}", "COND_RET"), ("moveq pc, lr", "COND_RET"),
    ("pophs {pc}", "COND_RET"),
    # the kprobe breakpoint (any cond), UDF, SVC, BKPT, SMC
    (0xE7F001F8, "TRAP"), (0x07F001F8, "TRAP"), ("udf #0", "TRAP"), ("svc #0", "TRAP"),
    ("svceq #0", "TRAP"), ("bkpt #1", "TRAP"), (0xE1600070, "TRAP"),
    # exception returns (B9.3), barriers, CP15ISB/CP15DSB
    ("movs pc, lr", "SERIALIZE"), ("subs pc, lr, #4", "SERIALIZE"), ("isb", "SERIALIZE"),
    ("dsb", "SERIALIZE"), ("ldm sp, {r0-r3, pc}^", "SERIALIZE"), ("rfeia sp!", "SERIALIZE"),
    (0xEE070F95, "SERIALIZE"), (0xEE070F9A, "SERIALIZE"),
    # DMB, BPIALL, CP15DMB, TLBIALL, MRC, loads of other registers, cmp with pc
    ("dmb", "PLAIN"), (0xEE070FD5, "PLAIN"), (0xEE070FBA, "PLAIN"), (0xEE080F17, "PLAIN"),
    ("mrc p15, 0, r0, c7, c5, 1", "PLAIN"), ("mov r0, r0", "PLAIN"),
    ("ldr r0, [pc, #4]", "PLAIN"), ("cmp pc, r0", "PLAIN"), ("str pc, [sp]", "PLAIN"),
    ("pop {r4, r5}", "PLAIN"), ("movw r0, #1", "PLAIN"), ("msr cpsr_c, r0", "PLAIN"),
    (b"\x00\x00", "PLAIN"),                                           # truncated
    # B4.2.1 CP15 c7 maintenance by MVA: base Rt
    ("mcr p15, 0, r0, c7, c5, 1", "CACHEOP", ("INVAL_I", 0, NONE, 1, 0)),
    ("mcr p15, 0, r0, c7, c5, 0", "CACHEOP", ("INVAL_I_ALL", NONE, NONE, 1, 0)),
    ("mcr p15, 0, r0, c7, c1, 0", "CACHEOP", ("INVAL_I_ALL", NONE, NONE, 1, 0)),
    ("mcr p15, 0, r3, c7, c6, 1", "CACHEOP", ("INVAL_D", 3, NONE, 1, 0)),
    ("mcr p15, 0, r1, c7, c10, 1", "CACHEOP", ("CLEAN_D", 1, NONE, 1, 0)),
    ("mcr p15, 0, r1, c7, c11, 1", "CACHEOP", ("CLEAN_D", 1, NONE, 1, 0)),
    ("mcr p15, 0, r2, c7, c14, 1", "CACHEOP", ("FLUSH_D", 2, NONE, 1, 0)),
    ("mcrne p15, 0, r12, c7, c14, 1", "CACHEOP", ("FLUSH_D", 12, NONE, 1, 0)),
]

THUMB_CASES = [
    # A6.2 16-bit: memory order, little-endian halfwords
    (bytes.fromhex("00d0"), "COND"), (bytes.fromhex("fed1"), "COND"),      # beq, bne
    (bytes.fromhex("00b1"), "COND"), (bytes.fromhex("08b9"), "COND"),      # cbz, cbnz
    (bytes.fromhex("00e0"), "JUMP"), (bytes.fromhex("fee7"), "JUMP"),      # b
    (bytes.fromhex("1847"), "JUMP_IND"), (bytes.fromhex("9f46"), "JUMP_IND"),   # bx r3, mov pc, r3
    (bytes.fromhex("9f44"), "JUMP_IND"),                                   # add pc, r3
    (bytes.fromhex("9847"), "CALL_IND"), (bytes.fromhex("f047"), "CALL_IND"),   # blx r3, blx lr
    (bytes.fromhex("7047"), "RET"), (bytes.fromhex("10bd"), "RET"),        # bx lr, pop {r4, pc}
    (bytes.fromhex("f746"), "RET"),                                        # mov pc, lr
    (bytes.fromhex("18de"), "TRAP"), (bytes.fromhex("00df"), "TRAP"),      # kprobe udf, svc
    (bytes.fromhex("00be"), "TRAP"),                                       # bkpt
    (bytes.fromhex("00bf"), "PLAIN"), (bytes.fromhex("10b5"), "PLAIN"),    # nop, push {r4, lr}
    (bytes.fromhex("10bc"), "PLAIN"), (bytes.fromhex("08bf"), "PLAIN"),    # pop {r4}, it eq
    (bytes.fromhex("0020"), "PLAIN"),                                      # movs r0, #0
    # A6.3 32-bit: first halfword first
    (bytes.fromhex("00f000f8"), "CALL"), (bytes.fromhex("00f000e8"), "CALL"),   # bl, blx
    (bytes.fromhex("00f000b8"), "JUMP"),                                   # b.w
    (bytes.fromhex("00f00080"), "COND"), (bytes.fromhex("40f00080"), "COND"),   # beq.w, bne.w
    (bytes.fromhex("bde81080"), "RET"), (bytes.fromhex("5df804fb"), "RET"),     # pop.w {r4, pc}
    (bytes.fromhex("d3f800f0"), "JUMP_IND"), (bytes.fromhex("d0e801f0"), "JUMP_IND"),  # ldr.w pc, tbb
    (bytes.fromhex("90e80280"), "JUMP_IND"), (bytes.fromhex("5df804fc"), "JUMP_IND"),  # ldm, ldr pc,[sp,#-4]
    (bytes.fromhex("f0f718a0"), "TRAP"), (bytes.fromhex("f0f700a0"), "TRAP"),   # kprobe udf.w
    (bytes.fromhex("bff36f8f"), "SERIALIZE"), (bytes.fromhex("bff34f8f"), "SERIALIZE"),  # isb, dsb
    (bytes.fromhex("def3048f"), "SERIALIZE"),                              # subs pc, lr, #4
    (bytes.fromhex("bff35f8f"), "PLAIN"), (bytes.fromhex("4ff00000"), "PLAIN"),  # dmb, mov.w
    (bytes.fromhex("00f0"), "PLAIN"),                                      # truncated bl
    (bytes.fromhex("07ee350f"), "CACHEOP", ("INVAL_I", 0, NONE, 1, 0)),    # mcr ... c7, c5, 1
    (bytes.fromhex("07ee3e2f"), "CACHEOP", ("FLUSH_D", 2, NONE, 1, 0)),    # mcr ... c7, c14, 1
    (bytes.fromhex("07fe350f"), "PLAIN"),                                  # mcr2: not CP15 c7
]

# In an IT block (CPSR IT[7:0] at bits 15:10 and 26:25): `it eq` leaves IT = 0x08.
IT_EQ = THUMB | (0x08 >> 2) << 10
IT_AL = THUMB | 0x1D3 | (0xE8 >> 2) << 10      # and SVC mode, IRQs masked: no condition
THUMB_IT_CASES = [
    (bytes.fromhex("7047"), "COND_RET"), (bytes.fromhex("00e0"), "COND"),
    (bytes.fromhex("9847"), "COND"), (bytes.fromhex("00f000f8"), "COND"),
    (bytes.fromhex("00be"), "TRAP"),
]

PPC32 = [
    # Book I §2.4: bc with BO not 1z1zz; conditional bcl/bclrl/bcctrl predicted as COND
    ("beq 0, 0x100", "COND"), ("bdnz 0x100", "COND"), ("bnectr", "COND"), ("beqctrl", "COND"),
    ("bdnzl 0x100", "COND"), ("bnelrl", "COND"),
    ("b 0x100", "JUMP"), ("ba 0x100", "JUMP"), (0x42800100, "JUMP"),       # bc 20,0 (always)
    ("bl 0x100", "CALL"), ("bla 0x100", "CALL"), ("bcl 20, 31, 4", "CALL"),
    ("bctr", "JUMP_IND"), (0x4EA00420, "JUMP_IND"),                        # BO 10101: always
    ("bctrl", "CALL_IND"), ("blrl", "CALL_IND"),
    ("blr", "RET"), (0x4EB00020, "RET"),
    ("beqlr", "COND_RET"), ("bnelr", "COND_RET"), (0x4E000020, "COND_RET"),  # bdnzlr
    ("sc", "TRAP"), ("trap", "TRAP"), (0x7FE00008, "TRAP"), ("twi 0, 0, 0", "TRAP"),
    ("tweq 3, 4", "TRAP"),
    ("isync", "SERIALIZE"), ("sync", "PLAIN"), ("lwsync", "PLAIN"), ("rfi", "SERIALIZE"),
    ("mtmsr 3", "SERIALIZE"),
    ("eieio", "PLAIN"), ("dcbt 0, 3", "PLAIN"), ("dcbtst 0, 3", "PLAIN"), ("dcbz 0, 3", "PLAIN"),
    ("mfmsr 3", "PLAIN"), ("mtctr 3", "PLAIN"), ("nop", "PLAIN"), ("li 3, 0", "PLAIN"),
    (b"\x4e\x80\x00", "PLAIN"),                                          # truncated
    # Book II cache management: EA = (rA|0) + rB
    ("dcbst 0, 3", "CACHEOP", ("CLEAN_D", NONE, 3, 1, 0)),
    ("icbi 4, 5", "CACHEOP", ("INVAL_I", 4, 5, 1, 0)),
    ("dcbf 6, 7", "CACHEOP", ("FLUSH_D", 6, 7, 1, 0)),
    ("dcbi 0, 8", "CACHEOP", ("INVAL_D", NONE, 8, 1, 0)),
    ("dcbf 31, 0", "CACHEOP", ("FLUSH_D", 31, 0, 1, 0)),
]

CASES = (_cases("x86_64", X86_64) + _cases("arm", ARM) + _cases("arm", THUMB_CASES, THUMB)
         + _cases("arm", THUMB_CASES, IT_AL) + _cases("arm", THUMB_IT_CASES, IT_EQ)
         + _cases("ppc32", PPC32))
NO_SUCH_KIND = {"x86_64": {"COND_RET"}}


def test_every_kind_and_cacheop_has_cases() -> None:
    for arch in {c.arch for c in CASES}:
        kinds = {c.kind for c in CASES if c.arch == arch}
        missing = set(KINDS) - NO_SUCH_KIND.get(arch, set()) - kinds
        assert not missing, f"{arch}: no case of {missing}"
    ops = {c.address[0] for c in CASES if c.address}
    assert ops == set(CACHEOPS) - {"NONE"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hand_cases(case: Case, decode: Decode) -> None:
    """The kind, and for CACHEOP the address; everything else zeroed."""
    got = decode(ARCHES[case.arch], case.code(), case.mode)
    assert got.kind_name == case.kind
    assert got.address == (case.address or ("NONE", NONE, NONE, 0, 0))


# -- data accesses (Decoder.accesses) ----------------------------------------

L, S = "LOAD", "STORE"
AT = 0x1000                     # the address the access cases decode at
SP_X86, RSP, RBP, RSI, RDI, RCX = 4, 4, 5, 6, 7, 1
SP_ARM, CPSR = 13, 16

#: (arch, insn, mode, [(op, size, count, base, index, scale, disp[, shift, by])],
#:  cond, unmodeled), each after the manual section its decoder cites.
ACCESS_CASES = [
    # SDM vol. 2: ModRM/SIB, RIP-relative, moffs; read-modify-write loads then stores
    ("x86_64", "mov rax, qword ptr [rbx + rcx*8 + 0x10]", 0, [(L, 8, 1, 3, 1, 8, 0x10)], 0, 0),
    ("x86_64", "mov dword ptr [rsp - 8], eax", 0, [(S, 4, 1, RSP, NONE, 0, -8)], 0, 0),
    ("x86_64", "mov word ptr [r13], 1", 0, [(S, 2, 1, 13, NONE, 0, 0)], 0, 0),
    ("x86_64", "add qword ptr [rdi], rax", 0,
     [(L, 8, 1, RDI, NONE, 0, 0), (S, 8, 1, RDI, NONE, 0, 0)], 0, 0),
    ("x86_64", "cmp byte ptr [rsi], 0", 0, [(L, 1, 1, RSI, NONE, 0, 0)], 0, 0),
    ("x86_64", "movzx eax, word ptr [rip + 0x20]", 0, [(L, 2, 1, NEXT_PC, NONE, 0, 0x20)], 0, 0),
    ("x86_64", "lock cmpxchg qword ptr [rdi], rsi", 0,
     [(L, 8, 1, RDI, NONE, 0, 0), (S, 8, 1, RDI, NONE, 0, 0)], 0, 0),
    ("x86_64", "xchg dword ptr [rdx], eax", 0,
     [(L, 4, 1, 2, NONE, 0, 0), (S, 4, 1, 2, NONE, 0, 0)], 0, 0),
    ("x86_64", "sete byte ptr [rax]", 0, [(S, 1, 1, 0, NONE, 0, 0)], 0, 0),
    ("x86_64", "movabs al, byte ptr [0x1122334455667788]", 0,
     [(L, 1, 1, NONE, NONE, 0, 0x1122334455667788)], 0, 0),
    ("x86_64", "push rbp", 0, [(S, 8, 1, RSP, NONE, 0, -8)], 0, 0),
    ("x86_64", "pop rbx", 0, [(L, 8, 1, RSP, NONE, 0, 0)], 0, 0),
    ("x86_64", "call 0x2000", 0, [(S, 8, 1, RSP, NONE, 0, -8)], 0, 0),
    ("x86_64", "ret", 0, [(L, 8, 1, RSP, NONE, 0, 0)], 0, 0),
    ("x86_64", "call qword ptr [rax]", 0,
     [(L, 8, 1, 0, NONE, 0, 0), (S, 8, 1, RSP, NONE, 0, -8)], 0, 0),
    ("x86_64", "leave", 0, [(L, 8, 1, RBP, NONE, 0, 0)], 0, 0),
    ("x86_64", "push gs", 0, [(S, 8, 1, RSP, NONE, 0, -8)], 0, 0),
    ("x86_64", "movsb byte ptr [rdi], byte ptr [rsi]", 0,
     [(L, 1, 1, RSI, NONE, 0, 0), (S, 1, 1, RDI, NONE, 0, 0)], 0, 0),
    ("x86_64", "rep stosq qword ptr [rdi], rax", 0, [(S, 8, 1, RDI, NONE, 0, 0)], 1, 0),
    ("x86_64", "lea rax, [rbx + 8]", 0, [], 0, 0),
    ("x86_64", "nop dword ptr [rax]", 0, [], 0, 0),
    ("x86_64", "clflush [rax]", 0, [], 0, 0),
    ("x86_64", "mov eax, dword ptr fs:[0x10]", 0, [], 0, 1),
    ("x86_64", "fld dword ptr [rax]", 0, [], 0, 1),
    # ARM ARM A5.3, A5.2.8, A5.2.10, A5.5: PC reads as the address + 8
    ("arm", "ldr r0, [r1, #4]", 0, [(L, 4, 1, 1, NONE, 0, 4)], 0, 0),
    ("arm", "ldr r0, [r1, -r2, lsl #2]", 0, [(L, 4, 1, 1, 2, -4, 0)], 0, 0),
    ("arm", "ldr r0, [r1], #4", 0, [(L, 4, 1, 1, NONE, 0, 0)], 0, 0),
    ("arm", "strb r3, [r2, r1, asr #13]", 0, [(S, 1, 1, 2, 1, 1, 0, "ASR", 13)], 0, 0),
    ("arm", "ldr r0, [r1, r2, lsr #32]", 0, [(L, 4, 1, 1, 2, 1, 0, "LSR", 32)], 0, 0),
    ("arm", "ldr r0, [r1, r2, ror #3]", 0, [], 0, 1),
    ("arm", "ldr r0, [pc, #4]", 0, [(L, 4, 1, NONE, NONE, 0, AT + 12)], 0, 0),
    ("arm", "push {r4, r5, lr}", 0, [(S, 4, 3, SP_ARM, NONE, 0, -12)], 0, 0),
    ("arm", "pop {r4, pc}", 0, [(L, 4, 2, SP_ARM, NONE, 0, 0)], 0, 0),
    ("arm", "ldmib r0, {r1, r2}", 0, [(L, 4, 2, 0, NONE, 0, 4)], 0, 0),
    ("arm", "stmda r0, {r1, r2}", 0, [(S, 4, 2, 0, NONE, 0, -4)], 0, 0),
    ("arm", "ldrd r2, r3, [r0, #8]", 0, [(L, 4, 2, 0, NONE, 0, 8)], 0, 0),
    ("arm", "strh r1, [r0, #-2]", 0, [(S, 2, 1, 0, NONE, 0, -2)], 0, 0),
    ("arm", "ldrsb r1, [r0, r2]", 0, [(L, 1, 1, 0, 2, 1, 0)], 0, 0),
    ("arm", "ldrex r1, [r0]", 0, [(L, 4, 1, 0, NONE, 0, 0)], 0, 0),
    ("arm", "strex r2, r1, [r0]", 0, [(L, 4, 1, 0, NONE, 0, 0), (S, 4, 1, 0, NONE, 0, 0)], 0, 0),
    ("arm", "ldrexd r2, r3, [r0]", 0, [(L, 8, 1, 0, NONE, 0, 0)], 0, 0),
    ("arm", "ldrne r0, [r1]", 0, [(L, 4, 1, 1, NONE, 0, 0)], 0x11, 0),
    ("arm", "pld [r0]", 0, [], 0, 0),
    ("arm", "vldr d0, [r0]", 0, [], 0, 1),
    # A6.2.4, A6.3.5-A6.3.10: Thumb literals read Align(PC, 4), PC the address + 4
    ("arm", bytes.fromhex("0148"), THUMB, [(L, 4, 1, NONE, NONE, 0, AT + 8)], 0, 0),
    ("arm", bytes.fromhex("10b5"), THUMB, [(S, 4, 2, SP_ARM, NONE, 0, -8)], 0, 0),
    ("arm", bytes.fromhex("10bd"), THUMB, [(L, 4, 2, SP_ARM, NONE, 0, 0)], 0, 0),
    ("arm", bytes.fromhex("8868"), THUMB, [(L, 4, 1, 1, NONE, 0, 8)], 0, 0),      # ldr r0, [r1, #8]
    ("arm", bytes.fromhex("8854"), THUMB, [(S, 1, 1, 1, 2, 1, 0)], 0, 0),         # strb r0, [r1, r2]
    ("arm", bytes.fromhex("d1f80800"), THUMB, [(L, 4, 1, 1, NONE, 0, 8)], 0, 0),  # ldr.w r0, [r1, #8]
    ("arm", bytes.fromhex("2df8020d"), THUMB, [(S, 2, 1, SP_ARM, NONE, 0, -2)], 0, 0),  # strh r0, [sp, #-2]!
    ("arm", bytes.fromhex("2de91040"), THUMB, [(S, 4, 2, SP_ARM, NONE, 0, -8)], 0, 0),  # push.w {r4, lr}
    ("arm", bytes.fromhex("d0e801f0"), THUMB, [(L, 1, 1, 0, 1, 1, 0)], 0, 0),     # tbb [r0, r1]
    ("arm", bytes.fromhex("50e8001f"), THUMB, [(L, 4, 1, 0, NONE, 0, 0)], 0, 0),  # ldrex r1, [r0]
    ("arm", bytes.fromhex("91f800f0"), THUMB, [], 0, 0),                          # pld [r1]
    ("arm", bytes.fromhex("0868"), IT_EQ, [(L, 4, 1, 1, NONE, 0, 0)], 0x10, 0),   # ldr in `it eq`
    # Power ISA Book I §3.3: EA = (rA|0) + d or + rB; lmw/stmw one word per register
    ("ppc32", "lwz 3, 8(1)", 0, [(L, 4, 1, 1, NONE, 0, 8)], 0, 0),
    ("ppc32", "stwu 1, -16(1)", 0, [(S, 4, 1, 1, NONE, 0, -16)], 0, 0),
    ("ppc32", "lbz 3, 0(0)", 0, [(L, 1, 1, NONE, NONE, 0, 0)], 0, 0),
    ("ppc32", "lhau 3, -2(4)", 0, [(L, 2, 1, 4, NONE, 0, -2)], 0, 0),
    ("ppc32", "stmw 14, 16(1)", 0, [(S, 4, 18, 1, NONE, 0, 16)], 0, 0),
    ("ppc32", "lmw 30, 8(1)", 0, [(L, 4, 2, 1, NONE, 0, 8)], 0, 0),
    ("ppc32", "lwzx 3, 4, 5", 0, [(L, 4, 1, 4, 5, 1, 0)], 0, 0),
    ("ppc32", "stbx 3, 0, 5", 0, [(S, 1, 1, NONE, 5, 1, 0)], 0, 0),
    ("ppc32", "lwarx 3, 0, 4", 0, [(L, 4, 1, NONE, 4, 1, 0)], 0, 0),
    ("ppc32", "stwcx. 3, 0, 4", 0, [(L, 4, 1, NONE, 4, 1, 0), (S, 4, 1, NONE, 4, 1, 0)], 0, 0),
    ("ppc32", "dcbz 0, 3", 0, [], 0, 1),
    ("ppc32", "dcbf 0, 3", 0, [], 0, 0),
    ("ppc32", "li 3, 0", 0, [], 0, 0),
]


def _access_id(case: tuple) -> str:
    arch, insn, mode = case[:3]
    text = insn.hex(" ") if isinstance(insn, bytes) else insn
    return f"{arch}-{text}" + (f"-mode{mode:#x}" if mode else "")


@pytest.mark.parametrize("case", ACCESS_CASES, ids=_access_id)
def test_access_cases(case: tuple, decode: Decode) -> None:
    arch_name, insn, mode, data, cond, unmodeled = case
    arch = ARCHES[arch_name]
    code = insn if isinstance(insn, bytes) else assemble(arch, insn)
    got = decode(arch, code, mode, AT)
    assert (got.data, got.cond, got.unmodeled) == (data, cond, unmodeled)


def test_every_arch_describes_its_accesses_and_has_access_cases() -> None:
    assert {c[0] for c in ACCESS_CASES} == {a.name for a in ARCHES.values()
                                            if a.decoder and a.decoder.accesses}


#: ARM conditions (A8.3) against CPSR flags N, Z, C, V (bits 31..28).
CONDITIONS = [(0x0, 0x4, 1), (0x0, 0x0, 0), (0x1, 0x4, 0), (0x2, 0x2, 1), (0x3, 0x0, 1),
              (0x8, 0x2, 1), (0x8, 0x6, 0), (0xa, 0x9, 1), (0xa, 0x8, 0), (0xb, 0x8, 1),
              (0xc, 0x0, 1), (0xc, 0x4, 0), (0xd, 0x4, 1), (0xe, 0x0, 1)]


@pytest.mark.parametrize("cond, nzcv, passes", CONDITIONS)
def test_arm_conditions(cond: int, nzcv: int, passes: int, tmp_path: Path) -> None:
    lib = compile_decoder(ARCHES["arm"], tmp_path)
    assert lib.kisim_condition(ctypes.c_uint8(0x10 | cond), ctypes.c_uint64(nzcv << 28)) == passes


# -- Capstone cross-check over the guest kernels -----------------------------

#: Capstone's group -> the decoder kinds that agree with it (None: no branch group)
AGREES: dict[int | None, set[str]] = {
    capstone.CS_GRP_CALL: {"CALL", "CALL_IND"},
    capstone.CS_GRP_RET: {"RET", "COND_RET"},
    capstone.CS_GRP_IRET: {"SERIALIZE"},
    capstone.CS_GRP_INT: {"TRAP"},
    capstone.CS_GRP_JUMP: {"COND", "JUMP", "JUMP_IND", "COND_RET"},
    None: {"PLAIN", "SERIALIZE", "CACHEOP"},
}


def capstone_group(insn: capstone.CsInsn) -> int | None:
    """The first of call, ret, iret, int, jump among ``insn``'s groups, else None."""
    return next((g for g in AGREES if g is not None and insn.group(g)), None)


@dataclass(frozen=True)
class Known:
    """A disagreement that is Capstone's grouping: its group, our kinds, which insns."""

    group: int | None
    kinds: frozenset[str]
    matches: Callable[[capstone.CsInsn], bool]
    why: str


def _ppc_link(insn: capstone.CsInsn) -> bool:
    return bool(insn.bytes[3] & 1)            # LK, bit 31


KNOWN: dict[str, tuple[Known, ...]] = {
    "x86_64": (
        Known(None, frozenset({"TRAP"}), lambda i: i.mnemonic in ("ud0", "ud1", "ud2"),
              "Capstone puts ud0/ud1/ud2 (#UD) in no group"),
    ),
    "arm": (
        Known(capstone.CS_GRP_JUMP, frozenset({"RET", "COND_RET"}), lambda i: i.op_str == "lr",
              "Capstone groups bx lr as a jump, not a return"),
        Known(None, frozenset({"RET", "COND_RET", "JUMP_IND", "COND"}),
              lambda i: cs_arm.ARM_REG_PC in i.regs_access()[1],
              "Capstone gives loads of pc (pop/ldm {pc}, ldr pc, mov pc) no group"),
        Known(None, frozenset({"TRAP"}), lambda i: i.mnemonic == "udf",
              "Capstone puts udf (the kprobe breakpoint) in no group"),
    ),
    "ppc32": (
        Known(capstone.CS_GRP_JUMP, frozenset({"CALL", "CALL_IND"}), _ppc_link,
              "Capstone puts PPC branches with LK=1 in the jump group, not call"),
        Known(capstone.CS_GRP_JUMP, frozenset({"RET"}), lambda i: i.mnemonic == "blr",
              "Capstone puts blr in the jump group, not ret"),
        Known(None, frozenset({"TRAP"}),
              lambda i: i.mnemonic == "sc" or i.mnemonic.startswith(("tw", "trap")),
              "Capstone puts sc, tw and twi in no group"),
    ),
}


@pytest.mark.parametrize("name", sorted(ARCHES))
def test_agrees_with_capstone_over_the_kernel(name: str, decode: Decode) -> None:
    """Every instruction of every function of the guest kernel (ARM: A32, as
    built): the decoder's kind matches Capstone's group or a :data:`KNOWN`
    difference, which are counted."""
    arch = ARCHES[name]
    image = read_elf(build(name).elf)
    text = image.sections[".text"]
    cs = capstone.Cs(*arch.cs_mode)
    cs.detail = True
    explained: collections.Counter[str] = collections.Counter()
    unexplained: list[str] = []
    total = 0
    for start, size, function in image.functions:
        code = text.data[start - text.addr:start - text.addr + size]
        insns = list(cs.disasm(code, start))
        assert sum(i.size for i in insns) == size, f"{function}: Capstone stopped early"
        total += len(insns)
        for insn in insns:
            kind = decode(arch, bytes(insn.bytes), 0).kind_name
            group = capstone_group(insn)
            if kind in AGREES[group]:
                continue
            known = next((k for k in KNOWN.get(name, ()) if k.group == group and kind in k.kinds
                          and k.matches(insn)), None)
            if known:
                explained[known.why] += 1
            else:
                unexplained.append(f"{insn.address:#x} {function}: {insn.mnemonic} "
                                   f"{insn.op_str} ({insn.bytes.hex()}): Capstone "
                                   f"{cs.group_name(group) if group else 'no group'}, "
                                   f"decoder {kind}")
    print(f"{name}: {total} instructions; explained: {dict(explained)}")
    assert not unexplained, "\n".join(unexplained[:20])


#: Where the decoder's data accesses and Capstone's memory operands differ by design:
#: implicit stack and block transfers (no memory operand in Capstone), indexed PowerPC
#: forms (Capstone lists rA and rB as registers), and operands that only name an
#: address (lea, the hint nops).
STACK_AND_BLOCK = ("push", "pop", "call", "ret", "pushfq", "popfq", "ldm", "stm")
ACCESS_KNOWN: dict[str, Callable[[capstone.CsInsn, bool], bool]] = {
    "x86_64": lambda i, ours: (ours and i.mnemonic in STACK_AND_BLOCK)
    or (not ours and i.mnemonic in ("lea", "nop")),
    "arm": lambda i, ours: ours and i.mnemonic.startswith(STACK_AND_BLOCK),
    "ppc32": lambda i, ours: ours and i.mnemonic.rstrip(".").endswith(("x", "cx")),
}
#: Capstone's ARM names for r9-r12.
ARM_ALIASES = {"sb": "r9", "sl": "r10", "fp": "r11", "ip": "r12"}


@pytest.mark.parametrize("name", sorted(ARCHES))
def test_accesses_agree_with_capstone_over_the_kernel(name: str, decode: Decode) -> None:
    """Every instruction of the guest kernel: the decoder describes (or flags as
    unmodeled) an access exactly where Capstone sees a memory operand, but for
    :data:`ACCESS_KNOWN`; and where both do, the base register is the same
    (RIP: the next instruction; an ARM PC base: folded into the displacement)."""
    arch = ARCHES[name]
    image = read_elf(build(name).elf)
    text = image.sections[".text"]
    cs = capstone.Cs(*arch.cs_mode)
    cs.detail = True
    regs = arch.decoder.regs
    special = {"rip": NEXT_PC, "pc": NONE}
    wrong, checked = [], 0
    for start, size, function in image.functions:
        code = text.data[start - text.addr:start - text.addr + size]
        for insn in cs.disasm(code, start):
            got = decode(arch, bytes(insn.bytes), 0, insn.address)
            mems = [op.mem for op in insn.operands if op.type == capstone.CS_OP_MEM]
            ours = bool(got.accesses or got.unmodeled)
            if bool(mems) != ours and not ACCESS_KNOWN[name](insn, ours):
                wrong.append(f"{insn.address:#x} {insn.mnemonic} {insn.op_str}: "
                             f"Capstone {'a' if mems else 'no'} memory operand")
            elif mems and got.accesses:
                checked += 1
                cs_base = insn.reg_name(mems[0].base) if mems[0].base else None
                cs_base = ARM_ALIASES.get(cs_base, cs_base) if name == "arm" else cs_base
                want = special.get(cs_base, regs.index(cs_base) if cs_base in regs else NONE)
                if want not in {a.at.base for a in got.access[:got.accesses]}:
                    wrong.append(f"{insn.address:#x} {insn.mnemonic} {insn.op_str}: base "
                                 f"{cs_base}, decoder {got.data}")
    assert checked > 1000
    assert not wrong, "\n".join(wrong[:20])


# ---- classes and registers (the out-of-order core's dependencies) ----

CLASSES = [c.removeprefix("C_") for c in _enum("kisim_class")[:-1]]   # KISIM_CLASSES: the count
FLAGS_BIT = 32
#: Capstone's names of the general registers' parts, by the register they are part of.
X86_PARTS = {
    **{f"{p}{s}": f"r{p}{'x' if p in 'abcd' else ''}"
       for p in ("a", "b", "c", "d") for s in ("l", "h", "x")},
    **{f"e{p}x": f"r{p}x" for p in "abcd"},
    **{f"{p}": f"r{p}" for p in ("si", "di", "sp", "bp")},
    **{f"{p}l": f"r{p}" for p in ("si", "di", "sp", "bp")},
    **{f"e{p}": f"r{p}" for p in ("si", "di", "sp", "bp")},
    **{f"r{n}{s}": f"r{n}" for n in range(8, 16) for s in ("d", "w", "b")},
}


def _bits(mask: int) -> set[int]:
    return {n for n in range(64) if mask >> n & 1}


def _capstone_regs(arch: Arch, names: list[str]) -> set[int]:
    """Capstone's register names as our register numbers (general registers only)."""
    regs = arch.decoder.regs
    out = set()
    for name in filter(None, names):
        name = ARM_ALIASES.get(name, name) if arch.name == "arm" else name
        name = X86_PARTS.get(name, name) if arch.name == "x86_64" else name
        if name in regs and name not in ("pc", "cpsr"):
            out.add(regs.index(name))
    return out


CLASS_CASES = [
    ("x86_64", "add rax, rbx", "ALU", {0, 3}, {0, FLAGS_BIT}),
    ("x86_64", "div rbx", "DIV", {0, 2, 3}, {0, 2, FLAGS_BIT}),
    ("x86_64", "imul rcx, rdx", "MUL", {1, 2}, {1, FLAGS_BIT}),
    ("x86_64", "mov rax, [rbx + rcx*8]", "LOAD", {1, 3}, {0}),
    ("x86_64", "mfence", "FENCE", set(), set()),
    ("x86_64", "lock add dword ptr [rsp], 1", "ATOMIC", {4}, {FLAGS_BIT}),
    ("x86_64", "jne 0x10", "BRANCH", {FLAGS_BIT}, set()),
    ("x86_64", "shl rdx, 3", "SHIFT", {2, FLAGS_BIT}, {2, FLAGS_BIT}),
    # popf writes IF and TF as well as the arithmetic flags: microcoded, costed as the
    # system class; pushf is a store of the flags
    ("x86_64", "popfq", "SYSTEM", {4}, {4, FLAGS_BIT}),
    ("x86_64", "pushfq", "STORE", {4, FLAGS_BIT}, {4}),
    # Encodings 4-7 without REX are ah, ch, dh, bh only in a byte operand (SDM vol. 2
    # table 3-1); elsewhere esp, ebp, esi, edi. A loop counter in esi is not rdx.
    ("x86_64", "add esi, -1", "ALU", {6}, {6, FLAGS_BIT}),
    ("x86_64", "xor edi, ebp", "ALU", {5, 7}, {7, FLAGS_BIT}),
    # An 8- or 16-bit destination keeps the register's other bits, so its old value
    # is read (SDM vol. 1 3.4.1.1; the P4 renames whole registers); a 32-bit one
    # zero-extends and reads nothing.
    ("x86_64", "mov ah, 0", "ALU", {0}, {0}),
    ("x86_64", "mov sil, 0", "ALU", {6}, {6}),
    ("x86_64", "mov ax, 5", "ALU", {0}, {0}),
    ("x86_64", "mov eax, 5", "ALU", set(), {0}),
    ("x86_64", "mov bx, word ptr [rax]", "LOAD", {0, 3}, {3}),
    ("x86_64", "mov ebx, dword ptr [rax]", "LOAD", {0}, {3}),
    ("x86_64", "movzx ax, bl", "ALU", {0, 3}, {0}),
    ("x86_64", "movzx eax, dh", "ALU", {2}, {0}),
    ("x86_64", "movzx esi, si", "ALU", {6}, {6}),
    ("x86_64", "sete bh", "ALU", {3, FLAGS_BIT}, {3}),
    ("x86_64", "add ch, bl", "ALU", {1, 3}, {1, FLAGS_BIT}),
    # xor or sub of a 32- or 64-bit register with itself is 0 whatever it held: the
    # P4 does not wait for it (IA-32 optimization manual 248966, "Clearing
    # Registers"); an 8- or 16-bit one merges, and and/or/cmp are no idioms
    ("x86_64", "xor eax, eax", "ALU", set(), {0, FLAGS_BIT}),
    ("x86_64", "xor r9, r9", "ALU", set(), {9, FLAGS_BIT}),
    ("x86_64", "sub ecx, ecx", "ALU", set(), {1, FLAGS_BIT}),
    ("x86_64", bytes.fromhex("33c0"), "ALU", set(), {0, FLAGS_BIT}),   # xor eax, eax, 33 /r
    ("x86_64", "xor al, al", "ALU", {0}, {0, FLAGS_BIT}),
    ("x86_64", "xor ax, ax", "ALU", {0}, {0, FLAGS_BIT}),
    ("x86_64", "and eax, eax", "ALU", {0}, {0, FLAGS_BIT}),
    ("x86_64", "xor eax, ecx", "ALU", {0, 1}, {0, FLAGS_BIT}),
    # cmov reads the flags and keeps its destination when it does not move; adc and
    # sbb read the carry: classes of their own, which the P4 runs slowly (core.py)
    ("x86_64", "cmovne eax, ecx", "SELECT", {0, 1, FLAGS_BIT}, {0}),
    ("x86_64", "cmove rdx, qword ptr [rsi]", "SELECT", {2, 6, FLAGS_BIT}, {2}),
    ("x86_64", "adc rax, rbx", "CARRY", {0, 3, FLAGS_BIT}, {0, FLAGS_BIT}),
    ("x86_64", "sbb ecx, 5", "CARRY", {1, FLAGS_BIT}, {1, FLAGS_BIT}),
    ("x86_64", "adc al, 1", "CARRY", {0, FLAGS_BIT}, {0, FLAGS_BIT}),
    ("x86_64", "sete al", "ALU", {0, FLAGS_BIT}, {0}),
    ("arm", "adds r0, r1, r2", "ALU", {1, 2}, {0, FLAGS_BIT}),
    ("arm", "addeq r0, r1, r2", "ALU", {0, 1, 2, FLAGS_BIT}, {0}),
    ("arm", "add r0, r1, r2, lsl #2", "SHIFT", {1, 2}, {0}),
    ("arm", "mul r0, r1, r2", "MUL", {1, 2}, {0}),
    ("arm", 0xe730f110, "DIV", {0, 1}, {0}),               # udiv r0, r0, r1
    ("arm", "ldr r0, [r1, #4]!", "LOAD", {1}, {0, 1}),
    ("arm", "push {r4, lr}", "STORE", {4, 13, 14}, {13}),
    ("arm", "dmb ish", "FENCE", set(), set()),
    ("ppc32", "add 3, 4, 5", "ALU", {4, 5}, {3}),
    ("ppc32", "divwu 3, 4, 5", "DIV", {4, 5}, {3}),
    ("ppc32", "lwzu 3, 8(4)", "LOAD", {4}, {3, 4}),
    ("ppc32", "cmpwi 7, 3, 0", "ALU", {3}, {FLAGS_BIT + 7}),
    ("ppc32", "sync", "FENCE", set(), set()),
    ("ppc32", "eieio", "SFENCE", set(), set()),
]


@pytest.mark.parametrize("case", CLASS_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_class_and_registers(case: tuple, decode: Decode) -> None:
    """The class, register reads and writes (flags as bit 32, PowerPC CR field f as 32 + f)."""
    name, insn, cls, reads, writes = case
    arch = ARCHES[name]
    code = arch.from_int(insn, 4) if isinstance(insn, int) else \
        insn if isinstance(insn, bytes) else assemble(arch, insn)
    got = decode(arch, code)
    assert (CLASSES[got.cls], got.described) == (cls, 1)
    assert (_bits(got.reads), _bits(got.writes)) == (reads, writes)


#: A base written back with the address (struct kisim_decoded's updates), and what it
#: is computed from; a base that is also loaded is the data's, not written back.
UPDATE_CASES = [
    ("x86_64", "pop rbx", {4}, {4}),
    ("x86_64", "push rbx", {4}, {4}),
    ("x86_64", "call 0x100", {4}, {4}),
    ("x86_64", "ret", {4}, {4}),
    ("x86_64", "leave", {4}, {5}),
    ("x86_64", "pop rsp", set(), set()),
    ("x86_64", "mov rax, qword ptr [rsp + 8]", set(), set()),
    ("arm", "ldr r0, [r1], r2", {1}, {1, 2}),
    ("arm", "ldr r0, [r1, #4]!", {1}, {1}),
    ("arm", "str r0, [r1], #4", {1}, {1}),
    ("arm", "ldr r0, [r1, #4]", set(), set()),
    ("arm", "push {r4, lr}", {13}, {13}),
    ("arm", 0xe8b10006, set(), set()),             # ldm r1!, {r1, r2} (UNPREDICTABLE)
    # Thumb (bytes, run in Thumb state): ldmia r2!, {r0, r1}; pop {r4, pc}; ldmia r2!,
    # {r2, r3}, whose base is loaded
    ("arm", bytes.fromhex("03ca"), {2}, {2}),
    ("arm", bytes.fromhex("10bd"), {13}, {13}),
    ("arm", bytes.fromhex("0cca"), set(), set()),
    ("ppc32", "lwzu 3, 8(4)", {4}, {4}),
    ("ppc32", "lwzux 3, 4, 5", {4}, {4, 5}),
    ("ppc32", "stwu 1, -16(1)", {1}, {1}),
    ("ppc32", "lwz 3, 8(4)", set(), set()),
]


@pytest.mark.parametrize("case", UPDATE_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_a_base_written_back_and_its_sources(case: tuple, decode: Decode) -> None:
    """The registers an instruction writes back with its address, among those it
    writes, and the registers that write-back is computed from, among those it reads."""
    name, insn, updates, sources = case
    arch = ARCHES[name]
    if isinstance(insn, bytes):
        got = decode(arch, insn, THUMB)
    else:
        got = decode(arch, arch.from_int(insn, 4) if isinstance(insn, int)
                     else assemble(arch, insn))
    assert (_bits(got.updates), _bits(got.update_reads)) == (updates, sources)
    assert got.updates & ~got.writes == 0 and got.update_reads & ~got.reads == 0


def _zeroing_idiom(insn) -> bool:
    """x86 xor or sub of a 32- or 64-bit register with itself."""
    ops = insn.operands
    return (insn.mnemonic in ("xor", "sub") and len(ops) == 2
            and all(o.type == capstone.CS_OP_REG for o in ops)
            and ops[0].reg == ops[1].reg and ops[0].size in (4, 8))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ARCHES))
def test_registers_agree_with_capstone_over_the_kernel(name: str, decode: Decode) -> None:
    """Every instruction of the guest kernel the decoder describes reads and writes at
    least the general registers Capstone says it does (a missing dependency would let
    the core run it early); nine in ten of them are described."""
    arch = ARCHES[name]
    image = read_elf(build(name).elf)
    text = image.sections[".text"]
    cs = capstone.Cs(*arch.cs_mode)
    cs.detail = True
    wrong, described, total = [], 0, 0
    for start, size, function in image.functions:
        code = text.data[start - text.addr:start - text.addr + size]
        for insn in cs.disasm(code, start):
            got = decode(arch, bytes(insn.bytes), 0, insn.address)
            total += 1
            if not got.described:
                continue
            described += 1
            if insn.mnemonic.startswith("nop"):
                continue                        # its operand is not used
            try:
                read, written = insn.regs_access()
            except capstone.CsError:            # PowerPC: only the operands' registers
                named = [insn.reg_name(op.reg) for op in insn.operands
                         if op.type == capstone.CS_OP_REG]
                named += [insn.reg_name(op.mem.base) for op in insn.operands
                          if op.type == capstone.CS_OP_MEM and op.mem.base]
                if not _capstone_regs(arch, named) <= _bits(got.reads | got.writes):
                    wrong.append(f"{insn.address:#x} {insn.mnemonic} {insn.op_str}: "
                                 f"decoder {sorted(_bits(got.reads | got.writes))}")
                continue
            want_r = _capstone_regs(arch, [insn.reg_name(r) for r in read])
            if _zeroing_idiom(insn):            # reads nothing: CLASS_CASES
                want_r -= _capstone_regs(arch, [insn.reg_name(insn.operands[0].reg)])
            want_w = _capstone_regs(arch, [insn.reg_name(r) for r in written])
            if not want_r <= _bits(got.reads) or not want_w <= _bits(got.writes):
                wrong.append(f"{insn.address:#x} {insn.mnemonic} {insn.op_str}: Capstone "
                             f"{sorted(want_r)}/{sorted(want_w)}, decoder "
                             f"{sorted(_bits(got.reads))}/{sorted(_bits(got.writes))}")
    assert described >= 0.9 * total, f"{described} of {total} described"
    assert not wrong, f"{len(wrong)} disagree:\n" + "\n".join(wrong[:30])
