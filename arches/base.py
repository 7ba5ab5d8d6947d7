"""The declarative shape of one architecture.

An arch module fills in one :class:`Arch`: engine modes, registers, the
kernel's own instruction encodings (as bytes in memory order), where each
trap leaves the PC, and a cost table whose every constant names its source.
Nothing here knows about markers or patching policy; generic code in
``sim/`` and ``patcher/`` reads these facts and calls the hooks.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Mapping


class EncodingError(ValueError):
    """An instruction cannot be encoded: target out of reach or misaligned."""


class TrapKind(enum.Enum):
    """The classes of trap that reach the machine's single dispatcher."""

    BREAKPOINT = "breakpoint"   # int3, bkpt, tw 31,0,0
    TRAP = "trap"               # other conditional/unconditional traps
    UNDEFINED = "undefined"     # ud2, udf (ARM kprobes use e7f001f8)
    SYSCALL = "syscall"         # syscall, svc, sc


@dataclass(frozen=True)
class TrapVector:
    """How Unicorn reports one trap: its kind and where it leaves the PC.

    ``pc_offset`` is the distance from the trapping instruction to the PC
    Unicorn reports (x86 ``int3``: +1, PPC ``tw``: +4, ARM ``bkpt``: 0).
    ``length`` is the trapping instruction's size, used to resume after it.
    ``resume_bias`` is what Unicorn adds to the PC after the hook returns
    (its x86 ``syscall`` helper advances RIP past the instruction only then).
    """

    kind: TrapKind
    pc_offset: int
    length: int
    resume_bias: int = 0


@dataclass(frozen=True)
class Cost:
    """One modeled-cycle constant and where the figure comes from."""

    cycles: float
    source: str


@dataclass(frozen=True)
class SpinLoop:
    """A two-instruction counting loop: ``1: counter += 1; b 1b``.

    The machine parks a CPU here to end its turn early while keeping the
    instruction count exact: after the turn, the loop's own instructions
    are ``2 * counter - (pc != start)`` and are subtracted.
    """

    code: bytes
    counter: str


@dataclass(frozen=True, eq=False)
class Arch:
    """Everything generic code needs to know about one architecture.

    Arches are singletons compared and hashed by identity (``eq=False``).
    """

    name: str
    summary: str
    bits: int
    endian: str                       # "little" or "big"
    uc_mode: tuple[int, int]          # (UC_ARCH_*, UC_MODE_*)
    cs_mode: tuple[int, int]          # (CS_ARCH_*, CS_MODE_*)
    ks_mode: tuple[int, int]          # (KS_ARCH_*, KS_MODE_*)
    uc_regs: Mapping[str, int]        # register name -> Unicorn constant
    pc: str
    sp: str
    ra: str | None                    # link register; None where the call pushes it
    args: tuple[str, ...]
    ret: str
    insn_align: int
    max_insn_len: int
    nops: Mapping[int, bytes]         # size -> the kernel's nop of that size
    alt_nops: tuple[bytes, ...]       # other nops the kernel accepts at sites
    syscall_insn: bytes
    traps: Mapping[int, TrapVector]   # Unicorn interrupt number -> vector
    undefined: TrapVector             # UC_HOOK_INSN_INVALID
    insn_traps: Mapping[int, TrapVector]  # UC_HOOK_INSN instruction id -> vector
    spin: SpinLoop
    branch_reach: tuple[int, int]     # (min, max) displacement of jump/call
    encode_jump: Callable[[int, int], bytes]
    encode_call: Callable[[int, int], bytes]
    kprobe_breakpoint: Callable[[bytes], bytes]
    costs: Mapping[str, Cost]
    cc_target: str                    # zig cc -target triple for the guest kernel
    cc_flags: tuple[str, ...] = field(default=())

    @property
    def word(self) -> int:
        """Bytes in a pointer."""
        return self.bits // 8

    def nop(self, size: int) -> bytes:
        """The kernel's nop of exactly ``size`` bytes."""
        try:
            return self.nops[size]
        except KeyError:
            raise EncodingError(f"{self.name}: no {size}-byte nop "
                                f"(sizes: {sorted(self.nops)})") from None

    def is_nop(self, insn: bytes) -> bool:
        return insn in self.nops.values() or insn in self.alt_nops

    def cost(self, name: str) -> float:
        return self.costs[name].cycles

    def to_int(self, data: bytes) -> int:
        return int.from_bytes(data, self.endian)

    def from_int(self, value: int, size: int) -> bytes:
        return (value & ((1 << (8 * size)) - 1)).to_bytes(size, self.endian)


def check_reach(arch_name: str, src: int, dst: int, disp: int,
                reach: tuple[int, int], align: int = 1) -> None:
    """Raise :class:`EncodingError` unless ``disp`` is encodable."""
    lo, hi = reach
    if disp % align:
        raise EncodingError(f"{arch_name}: branch {src:#x} -> {dst:#x} "
                            f"is not {align}-byte aligned")
    if not lo <= disp <= hi:
        raise EncodingError(f"{arch_name}: branch {src:#x} -> {dst:#x} "
                            f"out of range (displacement {disp:#x}, "
                            f"reach {lo:#x}..{hi:#x})")


def uc_register_map(const_module: object, prefix: str,
                    names: Mapping[str, str]) -> dict[str, int]:
    """Map our register names to Unicorn constants ``prefix + suffix``."""
    return {name: getattr(const_module, prefix + suffix)
            for name, suffix in names.items()}
