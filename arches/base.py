"""The declarative shape of one architecture.

An arch module fills in one :class:`Arch`: engine modes, registers, the
kernel's own instruction encodings (as bytes in memory order), where each
trap leaves the PC, and a cost table whose every constant names its source.
Nothing here knows about markers or patching policy; generic code in
``sim/`` and ``patcher/`` reads these facts and calls the hooks.
"""
from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Mapping, Protocol, Sequence


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
    clock: Cost                       # modeled core frequency (Hz) and its source
    cc_target: str                    # zig cc -target triple for the guest kernel
    cc_flags: tuple[str, ...] = field(default=())
    imv_sign_extends: bool = False    # the immediate load sign-extends (PPC li)
    site_len: int = 4                 # bytes of a jump-label / marker site
    # Instruction fetch sees stores once the CPU serializes, with no cache
    # flush (x86); otherwise only lines flush_icache_range covered do.
    icache_coherent: bool = False

    @property
    def site_nop(self) -> bytes:
        """The nop a dormant jump-label site holds."""
        return self.nop(self.site_len)

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

    @property
    def clock_hz(self) -> int:
        """The modeled core frequency that turns modeled cycles into time."""
        return int(self.clock.cycles)

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


# -- text patching: the port the per-arch protocols write through ---------
#
# Each arch module defines its protocol under the kernel's name
# (x86 ``text_poke_bp_batch``, ARM ``patch_text``, PowerPC
# ``patch_instruction``) and exports it to generic code as
# ``text_poke_batch(port, sites)``, where ``sites`` is a sequence of
# ``(address, new_bytes)`` already verified and reserved by the patcher.
# The protocols see the machine only through a :class:`TextPort`, so this
# package never imports ``sim`` or ``patcher``.

class TrapFrame(Protocol):
    """The registers of the CPU that hit a temporary breakpoint."""

    def reg(self, name: str) -> int: ...

    def set_reg(self, name: str, value: int) -> None: ...


BreakpointHandler = Callable[[TrapFrame, int], "int | None"]
"""``handler(frame, address)``: the PC to resume at, or None if the
breakpoint at ``address`` is not one the protocol planted."""


class TextPort(Protocol):
    """What a patch protocol may do to the machine.

    ``write_text`` is one store to text (the port asserts the text lock);
    ``sync_all`` is one serializing round on every CPU; ``flush_icache`` is
    flush_icache_range on the patching CPU; ``breakpoint_handler`` installs
    ``handler`` ahead of every other trap handler for the ``with`` block.
    """

    def read(self, addr: int, size: int) -> bytes: ...

    def write_text(self, addr: int, data: bytes) -> None: ...

    def write_data(self, addr: int, data: bytes) -> None: ...

    def sync_all(self) -> None: ...

    def flush_icache(self, begin: int, end: int) -> None: ...

    def breakpoint_handler(self, handler: BreakpointHandler) -> ContextManager[None]: ...


TextPokeBatch = Callable[[TextPort, Sequence[tuple[int, bytes]]], None]


def arch_hook(arch: Arch, name: str) -> Callable:
    """The per-arch hook ``name`` defined in ``arches/<arch.name>/__init__.py``."""
    module = importlib.import_module(f"arches.{arch.name}")
    try:
        return getattr(module, name)
    except AttributeError:
        raise NotImplementedError(f"{arch.name}: no {name} hook") from None


def icache_lines(ranges: Sequence[tuple[int, int]], line: int = 32) -> list[tuple[int, int]]:
    """Merge ``[begin, end)`` ranges into line-aligned spans, in address order."""
    spans: list[list[int]] = []
    for begin, end in sorted(ranges):
        begin, end = begin - begin % line, end + (-end) % line
        if spans and begin <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([begin, end])
    return [(b, e) for b, e in spans]


def patch_words(arch_name: str, port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """ARM patch_text / PowerPC patch_instruction for a batch of sites.

    Each site is one naturally aligned 32-bit store, which both arches
    perform single-copy atomically, so another CPU fetches the old word or
    the new one, never a mix. Then flush_icache_range over the written
    lines and one serializing round on every CPU (ARM: stop_machine's
    return; PowerPC: sync, icbi, sync, isync). Every site is checked before
    the first store, so a refused batch writes nothing.
    """
    for addr, insn in sites:
        if addr % 4 or len(insn) != 4:
            raise EncodingError(f"{arch_name}: a text patch is one aligned 32-bit word; "
                                f"got {len(insn)} bytes at {addr:#x}")
    for addr, insn in sites:
        port.write_text(addr, insn)
    for begin, end in icache_lines([(addr, addr + 4) for addr, _ in sites]):
        port.flush_icache(begin, end)
    port.sync_all()
