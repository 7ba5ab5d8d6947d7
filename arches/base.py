"""The declarative shape of one architecture.

An arch module fills in one :class:`Arch`: engine modes, registers, the
kernel's own instruction encodings (as bytes in memory order), where each
trap leaves the PC, and a cost table whose every constant names its source.
Nothing here knows about markers or patching policy; generic code in
``sim/`` and ``patcher/`` reads these facts and calls the hooks.
"""
from __future__ import annotations

import enum
import inspect
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Mapping, Protocol, Sequence

from arches.kprobe import Prepared


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
    ops: "ArchOps"                    # the kernel-named hooks (checked at registry load)
    elf_machine: str                  # ELF e_machine as pyelftools spells it (EM_*)
    mcount_symbols: tuple[str, ...]   # what -pg makes every traced function call
    snippets: Mapping[str, str]       # named assembly templates (see docs/arches.md)
    costs: Mapping[str, Cost]
    clock: Cost                       # modeled core frequency (Hz) and its source
    cc_target: str                    # zig cc -target triple for the guest kernel
    cc_flags: tuple[str, ...] = field(default=())
    imv_sign_extends: bool = False    # the immediate load sign-extends (PPC li)
    site_len: int = 4                 # bytes of a jump-label / marker site
    # Bytes from an mcount call's first byte to its relocation's r_offset
    # (x86 ``e8 rel32``: the rel32 is one byte in).
    mcount_reloc_offset: int = 0
    # mcount symbol -> the instructions allowed just before its call (ARM
    # ``push {lr}`` before ``bl __gnu_mcount_nc``); absent: no constraint.
    mcount_prologue: Mapping[str, tuple[bytes, ...]] = field(default_factory=dict)
    # The temporary breakpoint ``text_poke_batch`` plants on a multi-byte
    # site's first byte while it rewrites the rest (x86 text_poke_bp: int3);
    # empty where every patch is one single-copy-atomic word store.
    poke_breakpoint: bytes = b""
    # Optional capabilities whose hooks ``ops`` implements (OPTIONAL_CAPABILITIES).
    capabilities: tuple[str, ...] = ()
    # Unicorn interrupt number -> the exception's name, for fault reports of
    # traps no handler owns (x86 vector 0: #DE, divide error).
    exception_names: Mapping[int, str] = field(default_factory=dict)
    # Instruction fetch sees stores once the CPU serializes, with no cache
    # flush (x86); otherwise only lines flush_icache_range covered do.
    icache_coherent: bool = False
    # DWARF register number -> register name (the arch's DWARF ABI supplement),
    # for reading variables at a probe; empty: no line-number probes.
    dwarf_regs: Mapping[int, str] = field(default_factory=dict)

    @property
    def site_nop(self) -> bytes:
        """The nop a dormant jump-label site holds."""
        return self.nop(self.site_len)

    @property
    def word(self) -> int:
        """Bytes in a pointer."""
        return self.bits // 8

    def pad(self, code: bytes, size: int) -> bytes:
        """``code`` followed by the arch's nops up to ``size`` bytes."""
        gap = size - len(code)
        if gap < 0 or gap % self.insn_align:
            raise EncodingError(f"{self.name}: cannot pad {len(code)} bytes to {size}")
        return code + (self.nop(gap) if gap else b"")

    def snippet(self, name: str, **values: int) -> str:
        """The assembly template ``name`` with ``values`` filled in."""
        try:
            template = self.snippets[name]
        except KeyError:
            raise EncodingError(f"{self.name}: no assembly snippet {name!r}") from None
        return template.format(**values)

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


# -- the typed hooks -------------------------------------------------------

class ArchOps(Protocol):
    """The kernel-named hooks every arch implements (one object per arch).

    Hooks come in capabilities (:data:`CAPABILITIES`); the registry checks,
    when it loads an arch, that its ``ops`` has every hook of every
    capability, callable with the parameters declared here. Hooks of later
    capabilities (dynamic ftrace) are specified in docs/arches.md
    and join this protocol and :data:`CAPABILITIES` with their first
    implementation.
    """

    def text_poke_batch(self, port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
        """Patch live text: x86 text_poke_bp_batch, ARM patch_text, PowerPC
        patch_instruction, for already verified ``(address, new_bytes)`` sites."""

    def imv_load_of_zero(self, insn: bytes, address: int, imv: int, size: int) -> bool:
        """True if ``insn`` at ``address`` loads the immediate 0 into a register
        and its immediate is the ``size`` bytes at ``imv`` (an __imv site)."""

    # dynamic_ftrace (include/linux/ftrace.h; the arch's constants below are
    # class attributes of the ops object, see FTRACE_CONSTANTS)
    def ftrace_nop_replace(self) -> bytes:
        """The nop an idle mcount site holds (arch/*/kernel/ftrace.c ftrace_nop_replace)."""

    def ftrace_call_replace(self, ip: int, addr: int) -> bytes:
        """The call to ``addr`` an enabled site at ``ip`` holds (ftrace_call_replace)."""

    # -- kprobes (HAVE_KPROBES): arches/<arch>/kprobes.py, docs/kprobes.md. The
    # arch's data (PT_REGS, SLOT_BYTES, ...) are attributes of the same object.
    def arch_prepare_kprobe(self, addr: int, code: bytes, slot: int) -> Prepared:
        """Copy and decode the instruction at ``addr`` (``code``: its bytes) for the
        instruction slot at ``slot``, or raise KprobeRefused with the reason."""

    def arch_trap_entry(self, frame: TrapFrame) -> None:
        """What the hardware's trap entry does to the live registers (x86: clear
        TF and IF; PowerPC: clear MSR_SE and MSR_EE)."""

    def condition_passes(self, addr: int, code: bytes, frame: TrapFrame) -> bool:
        """Whether the instruction at ``addr`` executes now (ARM conditions)."""

    def describe_ainsn(self, ainsn: tuple[int, ...], post_handler: bool) -> str:
        """How a hit runs the instruction, from the guest's arch_specific_insn."""

    # -- optprobes (HAVE_OPTPROBES)
    def arch_prepare_optimized_kprobe(self, addr: int, function: tuple[int, bytes],
                                      buffer: int, callback: int,
                                      struct: int) -> tuple[bytes, int]:
        """The detour buffer at ``buffer`` and the detoured region's length, or
        KprobeRefused (can_optimize)."""

    def arch_optimize_kprobe(self, addr: int, buffer: int) -> bytes:
        """The jump that replaces the breakpoint at ``addr``."""


#: capability -> the :class:`ArchOps` hooks it needs. Every arch has these.
CAPABILITIES: dict[str, tuple[str, ...]] = {
    "text_patching": ("text_poke_batch",),
    "tables": ("imv_load_of_zero",),
}

#: Capabilities an arch opts into (``Arch.capabilities``), as the kernel's
#: HAVE_KPROBES, HAVE_OPTPROBES, HAVE_DYNAMIC_FTRACE are selected per arch:
#: capability -> hooks. Each joins here with its first implementation
#: (docs/arches.md lists the planned hooks and signatures).
OPTIONAL_CAPABILITIES: dict[str, tuple[str, ...]] = {
    "dynamic_ftrace": ("ftrace_nop_replace", "ftrace_call_replace"),
    "kprobes": ("arch_prepare_kprobe", "arch_trap_entry", "condition_passes",
                "describe_ainsn"),
    "optprobes": ("arch_prepare_optimized_kprobe", "arch_optimize_kprobe"),
}

#: The constants a dynamic_ftrace ops object declares, with their types:
#: MCOUNT_INSN_SIZE (bytes of a site), MCOUNT_ADDR / FTRACE_ADDR (the
#: symbols a compiler call and an enabled site reach, as the kernel's
#: macros of those names), IDLE_SITE_INSNS (instructions an idle site still
#: executes per call), and the checker's site shape (MCOUNT_SITE_PREFIX_ASM
#: before the site, MCOUNT_STUB_ASM an mcount keeping the -pg contract).
FTRACE_CONSTANTS: dict[str, type] = {
    "MCOUNT_INSN_SIZE": int, "MCOUNT_ADDR": str, "FTRACE_ADDR": str, "IDLE_SITE_INSNS": int,
    "MCOUNT_SITE_PREFIX_ASM": str, "MCOUNT_STUB_ASM": str,
}

#: The constants a kprobes ops object declares (docs/kprobes.md): the guest's
#: struct pt_regs by register (None: a slot saved as 0), registers Unicorn
#: reaches by another constant, an instruction slot's bytes, the gap the trap
#: entry leaves above pt_regs for the callee, how far the breakpoint trap
#: leaves the PC past the breakpoint, whether the kretprobe trampoline is
#: itself a kprobe, the published figure, and the fault traps delivered to
#: kprobe_fault_handler (FAULT_TRAPS; empty where none can be); optprobes add a detour
#: buffer's bytes. (SINGLESTEP_INTNO, the single-step trap's number, may be
#: None: no hardware single-step on ARM.) Optional: TRAP_ENTRY, the guest
#: symbol of the arch's exception prologue (entered with the frame in args[0]
#: and the handler in args[1]), and GUEST_SAVED_REGS, the pt_regs slots only
#: that prologue and kprobe_exc_return save and restore (PowerPC XER: its
#: SO/OV/CA bits are not in Unicorn's register read).
KPROBE_CONSTANTS: dict[str, type] = {
    "PT_REGS": tuple, "EXTRA_REGS": dict, "SLOT_BYTES": int, "STACK_HEADROOM": int,
    "BP_PC_ADVANCE": int, "KRETPROBE_TRAMPOLINE_KPROBE": bool, "PUBLISHED": str,
    "FAULT_TRAPS": dict,
}

#: capability -> constants (name -> type) its ops object must declare.
CAPABILITY_CONSTANTS: dict[str, dict[str, type]] = {
    "dynamic_ftrace": FTRACE_CONSTANTS, "kprobes": KPROBE_CONSTANTS,
    "optprobes": {"OPTPROBE_BUFFER_BYTES": int},
}


def ftrace_capability(*, nop: bytes, insn_size: int, mcount: str, idle_insns: int,
                      site_prefix_asm: str, stub_asm: str,
                      ftrace_addr: str = "ftrace_caller") -> type:
    """A mixin for an arch's ops: the dynamic_ftrace constants and
    ``ftrace_nop_replace`` returning ``nop`` (ftrace_call_replace is the
    arch's call encoding, which the ops class adds itself)."""
    def ftrace_nop_replace() -> bytes:
        return nop
    return type("FtraceOps", (), {
        "__doc__": f"dynamic_ftrace: {insn_size}-byte sites calling {mcount}, nop {nop.hex()}",
        "MCOUNT_INSN_SIZE": insn_size, "MCOUNT_ADDR": mcount, "FTRACE_ADDR": ftrace_addr,
        "IDLE_SITE_INSNS": idle_insns, "MCOUNT_SITE_PREFIX_ASM": site_prefix_asm,
        "MCOUNT_STUB_ASM": stub_asm, "ftrace_nop_replace": staticmethod(ftrace_nop_replace)})


class ArchDefinitionError(ImportError):
    """An arch package that does not declare what the registry needs."""


def _arity(func: Callable) -> int | None:
    """Positional parameters ``func`` takes (None: it takes ``*args``)."""
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def required_hooks(arch_name: str, opted: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Every capability's hooks an arch must have: the common ones and those it opts into."""
    unknown = [c for c in opted if c not in OPTIONAL_CAPABILITIES]
    if unknown:
        raise ArchDefinitionError(f"arch {arch_name!r}: unknown capability {unknown[0]!r} "
                                  f"(known: {', '.join(OPTIONAL_CAPABILITIES) or 'none yet'})")
    return {**CAPABILITIES, **{c: OPTIONAL_CAPABILITIES[c] for c in opted}}


def check_ops(arch_name: str, ops: object, capabilities: Mapping[str, tuple[str, ...]]) -> None:
    """Raise :class:`ArchDefinitionError` (one line, naming arch and hook)
    unless ``ops`` has every hook of ``capabilities`` with the right arity."""
    for capability, hooks in capabilities.items():
        for hook in hooks:
            func = getattr(ops, hook, None)
            where = f"arch {arch_name!r}: ops hook {hook!r} ({capability})"
            if func is None:
                raise ArchDefinitionError(f"{where} is missing")
            if not callable(func):
                raise ArchDefinitionError(f"{where} is a {type(func).__name__}, "
                                          "not a function")
            spec = getattr(ArchOps, hook, None)
            want = _arity(spec) - 1 if spec is not None else None   # minus self
            have = _arity(func)
            if want is not None and have is not None and have != want:
                raise ArchDefinitionError(f"{where} takes {have} arguments, "
                                          f"expected {want}")
        for name, kind in CAPABILITY_CONSTANTS.get(capability, {}).items():
            value = getattr(ops, name, None)
            if not isinstance(value, kind):
                raise ArchDefinitionError(f"arch {arch_name!r}: ops constant {name!r} "
                                          f"({capability}) must be a {kind.__name__}, "
                                          f"not {type(value).__name__}")


def capability_ops(namespace: Mapping[str, object], capabilities: Sequence[str],
                   data: Sequence[str] = ()) -> type:
    """A mixin for an arch's ops class: the hooks of ``capabilities`` (as static
    methods), their constants and the ``data`` names, from a module's ``namespace``."""
    hooks = [h for c in capabilities for h in OPTIONAL_CAPABILITIES[c]]
    names = [*data, *(n for c in capabilities for n in CAPABILITY_CONSTANTS.get(c, {}))]
    body: dict[str, object] = {name: namespace[name] for name in names}
    body.update({name: staticmethod(namespace[name]) for name in hooks})
    return type("+".join(capabilities), (), body)


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
