"""x86-64 kprobes: the arch half of probes/kprobes.py, after Linux v5.10.

arch/x86/kernel/kprobes/core.c: ``arch_prepare_kprobe`` copies the probed
instruction into a slot (``__copy_instruction`` re-targets a RIP-relative
displacement), ``prepare_boost`` appends a ``jmp rel32`` back when
``can_boost`` allows; the hit path itself is guest code
(``arches/x86_64/include/asm/kprobes-core.h``). The hardware parts are
here: the int3 leaves the saved ip one past the breakpoint, the #DB
single-step trap (vector 1, TF) arrives after one instruction, and trap
entry clears TF and IF in the live flags (Intel SDM vol. 3 §6.12.1).
"""
from __future__ import annotations

import functools
from typing import Callable

import capstone
from capstone import x86_const

from arches.base import Kprobes, Optprobes, PublishedHit, TrapFrame
from arches.kprobe import KprobeRefused, Prepared
from arches.x86_64 import INT3, REG_NUM, SYSCALL, encode_call, encode_jump

MAX_INSN_SIZE = 16                  # arch/x86/include/asm/kprobes.h
SLOT_BYTES = MAX_INSN_SIZE          # KPROBE_SLOT_BYTES in asm/kprobes.h
JMP32_INSN_SIZE = 5
TF, IF = 0x100, 0x200
#: struct pt_regs (arch/x86/include/asm/ptrace.h), one register per word; None is saved as 0.
PT_REGS = ("r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
           "rax", "rcx", "rdx", "rsi", "rdi", None, "rip", None, "rflags", "rsp", None)
EXTRA_REGS: dict[str, int] = {}
#: v5.10 arch/x86/kernel/ptrace.c regoffset_table (x86_64), in pt_regs order.
REGS_OFFSET_NAMES = ("r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax",
                     "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss")
#: v5.10 arch/x86/include/asm/ptrace.h regs_get_kernel_argument (x86_64):
#: di, si, dx, cx, r8, r9, then the stack; arch/x86/Kconfig selects
#: HAVE_FUNCTION_ARG_ACCESS_API.
FUNCTION_ARG_REGS = ("di", "si", "dx", "cx", "r8", "r9")
BP_PC_ADVANCE = 1                   # int3 is a trap: the saved ip is past it
SINGLESTEP_INTNO = 1                # #DB
KRETPROBE_TRAMPOLINE_KPROBE = False  # the kretprobe trampoline is plain code, not a kprobe
KPROBES_ON_FTRACE = True            # arch/x86/Kconfig selects HAVE_KPROBES_ON_FTRACE (v5.10)
CAN_PROBE = True                    # kprobes/core.c can_probe(): decode from the function start
INSN_SLOT_FIRST = True              # arch_prepare_kprobe: get_insn_slot, then arch_copy_kprobe
#: v5.10 arch/x86/kernel/kprobes/core.c kretprobe_blacklist[]: __switch_to, which
#: returns on another task's stack; kisim's context switch is __switch_to_asm.
KRETPROBE_BLACKLIST = ("__switch_to", "__switch_to_asm")
_RST = "Documentation/trace/kprobes.rst, 'Probe Overhead'"
_RST_OPT = "Documentation/trace/kprobes.rst, 'Optimized Probe Overhead'"
_PENTIUM_M = "Pentium M 1495 MHz (i386)"
_OPTERON = "Opteron 246 1994 MHz (x86_64)"
_XEON = "Xeon E5410 2.33 GHz (x86-64)"
#: Every x86 hit kprobes.rst times (the i386 Xeon run left out: kisim's x86 is 64-bit).
PUBLISHED = (
    PublishedHit("k", 0.57, _PENTIUM_M, 1495, _RST),
    PublishedHit("r", 0.92, _PENTIUM_M, 1495, _RST),
    PublishedHit("kr", 0.99, _PENTIUM_M, 1495, _RST),
    PublishedHit("k", 0.49, _OPTERON, 1994, _RST),
    PublishedHit("r", 0.80, _OPTERON, 1994, _RST),
    PublishedHit("kr", 0.82, _OPTERON, 1994, _RST),
    PublishedHit("k", 0.99, _XEON, 2330, _RST_OPT),
    PublishedHit("b", 0.43, _XEON, 2330, _RST_OPT),
    PublishedHit("o", 0.06, _XEON, 2330, _RST_OPT),
    PublishedHit("r", 1.24, _XEON, 2330, _RST_OPT),
    PublishedHit("rb", 0.68, _XEON, 2330, _RST_OPT),
    PublishedHit("ro", 0.30, _XEON, 2330, _RST_OPT),
)
STACK_HEADROOM = 0                  # the call pushes the return address itself


_MD = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
_MD.detail = True


def decode(code: bytes, addr: int) -> capstone.CsInsn | None:
    """The instruction at ``addr``, or None if it does not decode."""
    return next(_MD.disasm(code, addr, 1), None)


#: The legacy prefixes (Intel SDM vol. 2 §2.1.1), which the kernel's insn decoder
#: (arch/x86/lib/insn.c insn_get_prefixes) takes before a REX prefix and the opcode.
_LEGACY_PREFIXES = frozenset(b"\xf0\xf2\xf3\x2e\x36\x3e\x26\x64\x65\x66\x67")


def _split(insn: capstone.CsInsn) -> tuple[bytes, bytes]:
    """The instruction's legacy prefix bytes, and its bytes from the opcode on (a REX
    prefix skipped), decoded from the encoding as insn.c does: Capstone's ``prefix``
    leaves out a repeated prefix and a mandatory one (``f3`` of ``tzcnt``)."""
    raw = bytes(insn.bytes)
    n = 0
    while n < len(raw) - 1 and raw[n] in _LEGACY_PREFIXES:
        n += 1
    body = raw[n:]
    if len(body) > 1 and 0x40 <= body[0] <= 0x4F:
        body = body[1:]
    return raw[:n], body


def can_boost(insn: capstone.CsInsn) -> bool:
    """can_boost() of Linux v5.10 (arch/x86/kernel/kprobes/core.c), in its order.

    A two-byte opcode (``0f xx``) is decided by ``twobyte_is_boostable``
    alone, before any prefix is looked at (so ``66 2e 0f 1f ..``, the
    alignment nop, is boostable); a three-byte one (``0f 38``, ``0f 3a``)
    never is. A one-byte opcode is refused with a CS-override (``2e``) or
    address-size (``67``) prefix, then decided by its row of the one-byte map.
    The prefix test is 6dd3b8c9f588 ("x86/kprobes: Fix to check non boostable
    prefixes correctly", 2021, taken into the stable series): v5.10.0 looked for
    them in the opcode and its attribute, where they never are.
    """
    prefixes, body = _split(insn)
    opcode = body[0]
    if opcode == 0x0F:
        return body[1] not in (0x38, 0x3A) and _TWOBYTE_BOOSTABLE[body[1] >> 4][body[1] & 15] == "1"
    if 0x2E in prefixes or 0x67 in prefixes:
        return False
    row = opcode & 0xF0
    if row == 0x60:
        return opcode != 0x62
    if row == 0x70:
        return False
    if row == 0x90:
        return opcode != 0x9A
    if row == 0xC0:
        return 0xC1 < opcode < 0xCC or opcode == 0xCF
    if row == 0xD0:
        return opcode in (0xD4, 0xD5, 0xD7)
    if row == 0xE0:
        return bool(opcode & 0x04) or opcode == 0xEA
    if row == 0xF0:
        return opcode == 0xF5 or 0xF7 < opcode < 0xFE
    return opcode != 0x9A


def _is_indirect_jump(insn: capstone.CsInsn) -> bool:
    """opt.c __insn_is_indirect_jump: ``ff /4``, ``ff /5`` or ``ea``, by the opcode
    byte after the prefixes (``41 ff e0``, ``jmp r8``, is one)."""
    _, body = _split(insn)
    return (body[0] == 0xFF and len(body) > 1 and (body[1] >> 3) & 6 == 4) or body[0] == 0xEA


#: v5.10 ``twobyte_is_boostable``: row ``0f x0``..``0f xf``, one flag per second
#: byte (1: boostable), as the kernel's bitmap lists them.
_TWOBYTE_BOOSTABLE = (
    "0011001011000000", "0000000000000001", "1111000000000000", "0100000000000000",
    "1111111111111111", "0000000000000000", "1111111111110011", "0000111100000011",
    "0000000000000000", "1111111111111111", "1101110011011101", "1111111100011111",
    "1100000011111111", "0111010011011101", "0110010011011101", "0111010011101110")


def arch_prepare_kprobe(addr: int, code: bytes, slot: int) -> Prepared:
    """Copy the instruction at ``addr`` into ``slot`` as the kernel does, or refuse it."""
    insn = decode(code, addr)
    if insn is None:
        raise KprobeRefused(f"no valid instruction at {addr:#x}")
    raw = bytes(insn.bytes)
    if raw[0] == INT3[0]:
        raise KprobeRefused("the instruction is an int3 another debugger placed")
    if raw == SYSCALL:
        raise KprobeRefused("syscall is the kisim hypercall instruction")
    copy = _relocated(insn, slot, "the slot")
    boost = can_boost(insn) and MAX_INSN_SIZE - len(raw) >= JMP32_INSN_SIZE
    if boost:
        copy += encode_jump(slot + len(raw), addr + len(raw))
    return Prepared(opcode=raw[0], slot=bytes(copy),
                    ainsn=(slot, int(boost), len(raw), 0), boostable=boost,
                    kind="boosted" if boost else "single-step")


def condition_passes(addr: int, code: bytes, cpu: TrapFrame) -> bool:
    """Every instruction executes when reached (no predication)."""
    return True


def arch_trap_entry(cpu: TrapFrame) -> None:
    """Trap entry through an interrupt gate clears TF and IF (SDM vol. 3 §6.12.1.2)."""
    cpu.set_reg("rflags", cpu.reg("rflags") & ~(TF | IF))


def describe_ainsn(ainsn: tuple[int, ...], post_handler: bool) -> str:
    """How a hit runs: boosted (jump back from the slot; never with a post_handler) or TF."""
    return "boosted" if ainsn[1] and not post_handler else "single-step (TF)"


# -- optprobes (arch/x86/kernel/kprobes/opt.c, v5.10) ------------------------

OPTPROBE_BUFFER_BYTES = 256          # asm/kprobes-core.h
MAX_OPTIMIZED_LENGTH = 16 + 4        # asm/kprobes.h: MAX_INSN_SIZE + DISP32_SIZE
# The detour saves every pt_regs GPR slot (struct pt_regs order, 8 bytes each).
_GPR_SLOTS = [(i * 8, name) for i, name in enumerate(PT_REGS[:15])]
_FLAGS_SLOT, _SP_SLOT, _FRAME = 144, 152, 168     # pt_regs flags, sp; the frame below rsp
# opt.c assembles its template into the kernel and copies its bytes, so
# kisim writes the bytes too (SDM vol. 2 ch. 2: REX, ModRM, SIB, each
# displacement in its shortest form); a test checks them against an assembler.
_REX_W, _REX_R = 0x48, 0x04
_PUSHFQ, _POPFQ, _POP_RAX = b"\x9c", b"\x9d", b"\x58"
_MOV_RSI_RSP = bytes.fromhex("4889e6")          # mov rsi, rsp: regs


def _rsp_operand(opcode: bytes, reg: int, disp: int, wide: bool = True) -> bytes:
    """``opcode reg, [rsp + disp]`` (or ``[rsp + disp], reg``): the base rsp needs a SIB;
    ``wide`` is REX.W, a 64-bit operand where the default is 32."""
    rex = bytes([_REX_W | (_REX_R if reg >= 8 else 0)]) if wide else b""
    mod = 0 if disp == 0 else 1 if -128 <= disp < 128 else 2
    size = (0, 1, 4)[mod]
    return (rex + opcode + bytes([mod << 6 | (reg & 7) << 3 | 4, 0x24])
            + disp.to_bytes(size, "little", signed=True))


def _gprs(opcode: bytes) -> bytes:
    return b"".join(_rsp_operand(opcode, REG_NUM.index(name), off) for off, name in _GPR_SLOTS)


def _template(struct: int, buffer: int, callback: int) -> bytes:
    """optprobe_template_entry: save pt_regs below rsp, ``optimized_callback(op, regs)``,
    restore; ``lea``, not sub/add, around the saved flags keeps the probed code's flags."""
    lea, mov_store, mov_load, push = b"\x8d", b"\x89", b"\x8b", b"\xff"
    rax, rsp = REG_NUM.index("rax"), REG_NUM.index("rsp")
    head = (_rsp_operand(lea, rsp, -_FRAME) + _gprs(mov_store) + _PUSHFQ + _POP_RAX
            + _rsp_operand(mov_store, rax, _FLAGS_SLOT) + _rsp_operand(lea, rax, _FRAME)
            + _rsp_operand(mov_store, rax, _SP_SLOT)
            + bytes([_REX_W, 0xB8 + REG_NUM.index("rdi")]) + struct.to_bytes(8, "little")
            + _MOV_RSI_RSP)
    return (head + encode_call(buffer + len(head), callback)
            + _rsp_operand(push, 6, _FLAGS_SLOT, wide=False)    # ff /6: push r/m64
            + _POPFQ + _gprs(mov_load)
            + _rsp_operand(lea, rsp, _FRAME))


#: TMPL_END_IDX (asm/kprobes-core.h): the template's length, where the displaced
#: instructions start, and where setup_detour_execution sends a breakpoint hit of a
#: probe queued for the optimizer (the template does not depend on its arguments).
OPTPROBE_TRAP_RESUME = len(_template(0, 0, 0))


def _relocated(insn: capstone.CsInsn, dest: int, where: str) -> bytes:
    """__copy_instruction: ``insn`` to run at ``dest`` (in ``where``), a RIP-relative
    displacement re-targeted, or KprobeRefused where it does not reach."""
    raw = bytearray(insn.bytes)
    if any(op.type == x86_const.X86_OP_MEM and op.mem.base == x86_const.X86_REG_RIP
           for op in insn.operands):
        disp = int.from_bytes(raw[insn.disp_offset:insn.disp_offset + 4], "little", signed=True)
        new = disp + insn.address - dest
        if not -(1 << 31) <= new < (1 << 31):
            raise KprobeRefused(f"the RIP-relative displacement does not reach from {where}")
        raw[insn.disp_offset:insn.disp_offset + 4] = new.to_bytes(4, "little", signed=True)
    return bytes(raw)


def _branch_target(insn: capstone.CsInsn) -> int | None:
    if insn.group(x86_const.X86_GRP_JUMP) or insn.group(x86_const.X86_GRP_CALL):
        op = insn.operands[0] if insn.operands else None
        if op is not None and op.type == x86_const.X86_OP_IMM:
            return op.imm
    return None


@functools.lru_cache(maxsize=16)
def _function_insns(start: int, code: bytes) -> tuple[capstone.CsInsn, ...]:
    """A function's instructions: every probe registered in it prepares its detour
    from the same original text (with CONFIG_OPTPROBES, each registration does)."""
    return tuple(_MD.disasm(code, start))


def arch_prepare_optimized_kprobe(addr: int, function: tuple[int, bytes], buffer: int,
                                  callback: int, struct: int) -> tuple[bytes, int]:
    """The detour buffer and the length of the detoured region, or KprobeRefused.

    can_optimize(): the region (whole instructions covering the 5-byte jmp)
    lies inside the function, every instruction in it is boostable
    (copy_optimized_instructions), the function has no indirect jump, and
    no branch in it targets bytes 1.. of the region.
    """
    start, code = function
    insns = _function_insns(start, code)
    region, length = [], 0
    for insn in insns:
        if insn.address < addr:
            continue
        if length >= JMP32_INSN_SIZE:
            break
        if not can_boost(insn):
            raise KprobeRefused(f"{insn.mnemonic} in the detoured region cannot be relocated")
        region.append(insn)
        length += insn.size
    if length < JMP32_INSN_SIZE:
        raise KprobeRefused("the detoured region would cross the end of the function")
    for insn in insns:
        if _is_indirect_jump(insn):
            raise KprobeRefused("the function has an indirect jump")
        target = _branch_target(insn)
        if target is not None and addr < target < addr + length:
            raise KprobeRefused(f"a branch at {insn.address:#x} jumps into the detoured region")
    buf = bytearray(_template(struct, buffer, callback))
    for insn in region:
        buf += _relocated(insn, buffer + len(buf), "the detour")
    buf += encode_jump(buffer + len(buf), addr + length)
    if len(buf) > OPTPROBE_BUFFER_BYTES:
        raise KprobeRefused("the detour does not fit its buffer")
    return bytes(buf), length


def arch_optimize_kprobe(addr: int, buffer: int, breakpoint: bytes) -> bytes:
    """The jmp rel32 that replaces the int3 and the next four bytes."""
    return encode_jump(addr, buffer)


X86_TRAP_GP = 13                    # arch/x86/include/asm/trapnr.h


def gp_delivered(cpu: TrapFrame) -> None:
    """Entry to the #GP handler: trap entry, and the fault counts as delivered.

    Without the second part, Unicorn reports the CPU's next #GP as a double
    fault and the one after it as a triple fault (measured on Unicorn 2.1.4).
    """
    arch_trap_entry(cpu)
    cpu.exception_delivered()


#: Fault traps the machine delivers to the guest: Unicorn interrupt -> (the
#: guest's trap handler, the trap entry). #GP (vector 13) enters
#: exc_general_protection (arch/x86/kernel/traps.c), which calls
#: kprobe_fault_handler while a kprobe runs. Page faults are not delivered
#: (docs/kprobes.md).
FAULT_TRAPS: dict[int, tuple[str, Callable[[TrapFrame], None]]] = {
    X86_TRAP_GP: ("exc_general_protection", gp_delivered)}


class X86Kprobes(Kprobes, Optprobes, names=globals()):
    """HAVE_KPROBES, HAVE_OPTPROBES on x86_64: this module's hooks and constants."""
