"""The declarative shape of one architecture.

An arch module fills in one :class:`Arch`: engine modes, registers, the
kernel's own instruction encodings (as bytes in memory order), where each
trap leaves the PC, and a cost table whose every constant names its source.
Nothing here knows about markers or patching policy; generic code in
``sim/`` and ``patcher/`` reads these facts and calls the hooks.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import random
from dataclasses import dataclass, field
from typing import Callable, ClassVar, ContextManager, Mapping, NamedTuple, Protocol, Sequence

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


#: How a :class:`Range` is drawn: any integer, a power of two, or any number in it.
RANGE_KINDS = ("int", "pow2", "real")


@dataclass(frozen=True)
class Range:
    """The plausible values of a modelling assumption (a figure no source gives), and
    why those: what ``--vary-assumptions`` draws from."""

    low: float
    high: float
    reason: str
    kind: str = "int"

    def __post_init__(self) -> None:
        if self.kind not in RANGE_KINDS or not 0 <= self.low <= self.high or not self.reason:
            raise ValueError(f"range {self.low}..{self.high} ({self.kind}): low <= high, "
                             f"a kind of {RANGE_KINDS} and a reason")

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    def draw(self, rng: random.Random) -> float:
        """One value, uniformly among those the kind allows."""
        if self.kind == "real":
            return rng.uniform(self.low, self.high)
        if self.kind == "int":
            return rng.randint(int(self.low), int(self.high))
        powers = [1 << b for b in range(64) if self.low <= 1 << b <= self.high]
        return rng.choice(powers)


@dataclass(frozen=True)
class Cost:
    """One modeled-cycle constant and where the figure comes from; ``ranges``: for a
    modelling assumption, ``{"cycles": Range}``."""

    cycles: float
    source: str
    ranges: Mapping[str, Range] = field(default_factory=dict, compare=False)


#: The probe paths Documentation/trace/kprobes.rst times, by its letters.
KPROBE_PATHS = {"k": "kprobe", "b": "boosted kprobe", "o": "optprobe", "r": "kretprobe",
                "rb": "boosted kretprobe", "ro": "optimized kretprobe",
                "kr": "kprobe + kretprobe, one function"}


@dataclass(frozen=True)
class PublishedHit:
    """One probe hit's published time on a real machine of the arch's ISA family:
    ``path`` one of :data:`KPROBE_PATHS`, ``mhz`` the clock ``machine`` names."""

    path: str
    microseconds: float
    machine: str
    mhz: float
    source: str

    def __post_init__(self) -> None:
        if self.path not in KPROBE_PATHS:
            raise ValueError(f"published hit {self.path!r}: paths {sorted(KPROBE_PATHS)}")
        if not any(clock in self.machine for clock in (f"{self.mhz:g} MHz",
                                                       f"{self.mhz / 1000:g} GHz")):
            raise ValueError(f"published hit on {self.machine!r}: "
                             f"its clock is not {self.mhz:g} MHz")

    @property
    def cycles(self) -> float:
        """The hit in cycles of the machine it was timed on."""
        return self.microseconds * self.mhz

    def __str__(self) -> str:
        return f"{self.path} = {self.microseconds:g} us ({self.machine}; {self.source})"


@dataclass(frozen=True)
class CacheLevel:
    """One cache of a reference core: geometry, hit latency, and their source.

    ``holds`` is ``"i"`` (instruction fetch only), ``"d"`` (loads and stores
    only) or ``"u"`` (unified). A ``shared`` level is one instance for every
    CPU of the machine; otherwise each CPU has its own. ``latency`` is the
    load-to-use latency of a hit at this level, in core cycles.
    """

    name: str
    size: int
    line: int
    ways: int
    latency: float
    holds: str
    shared: bool
    source: str
    #: The modelling assumptions among the fields above: field name -> :class:`Range`.
    ranges: Mapping[str, Range] = field(default_factory=dict, compare=False)

    @property
    def sets(self) -> int:
        return self.size // (self.line * self.ways)


@dataclass(frozen=True)
class Predictor:
    """A branch predictor: 2-bit counters indexed gshare-style, a BTB, a return stack.

    ``history_bits`` of global branch history are XORed into the counter
    index (0: a bimodal table indexed by address alone). ``mispredict`` is
    the cycles a wrong direction or target costs.
    """

    counters: int
    history_bits: int
    btb_entries: int
    btb_ways: int
    return_stack: int
    mispredict: float
    source: str
    #: The modelling assumptions among the fields above: field name -> :class:`Range`.
    ranges: Mapping[str, Range] = field(default_factory=dict, compare=False)


#: The instruction classes of the decoders (sim/native/decode.h's enum kisim_class), in order.
INSN_CLASSES = ("alu", "shift", "mul", "div", "load", "store", "branch", "fence", "lfence",
                "sfence", "atomic", "system", "select", "carry", "serialize")


@dataclass(frozen=True)
class Window:
    """The out-of-order window of a reference core (docs/timing.md, "The core").

    ``dispatch`` and ``retire`` entries per cycle; ``rob`` entries of the
    reorder buffer (completion queue); ``store_buffer`` retired stores
    waiting to be written; ``miss_buffers`` L1 data misses outstanding at
    once (0: no limit). ``writeback`` cycles from the registers a base is
    computed from to the base an instruction writes back with its address
    (ARM writeback, PowerPC update forms, x86's stack pointer), which the
    core has from its address generation, not after the access. An entry is
    one decoded instruction, or with ``split_uops`` one micro-operation, a
    core splitting each instruction by port as NetBurst does: one for its
    load, two for its store (address and data), one for the operation
    itself, which a plain move to or from memory has not, and one for a
    base written back; a load-op's load then waits for its address
    registers alone, its operation for the load and its other operands.
    """

    dispatch: float
    retire: float
    rob: int
    store_buffer: int
    miss_buffers: int
    writeback: float
    source: str
    #: The modelling assumptions among the fields above: field name -> :class:`Range`.
    ranges: Mapping[str, Range] = field(default_factory=dict, compare=False)
    split_uops: bool = False


@dataclass(frozen=True)
class Resource:
    """An issue resource: ``units`` identical execution units (ports, pipes)."""

    name: str
    units: int
    source: str


@dataclass(frozen=True)
class Latency:
    """One instruction class on a core: ``latency`` from issue to result (a
    load's adds its access's), ``occupancy`` the cycles it holds a unit of
    ``resource`` (its reciprocal throughput; None where the unit is not
    pipelined: it is busy for the whole latency, which :attr:`busy` gives,
    and a drawn latency keeps it so)."""

    cls: str
    latency: float
    occupancy: float | None
    resource: str
    source: str
    #: The modelling assumptions among the fields above: field name -> :class:`Range`.
    ranges: Mapping[str, Range] = field(default_factory=dict, compare=False)

    @property
    def busy(self) -> float:
        """The cycles one instruction of the class holds its unit."""
        return self.latency if self.occupancy is None else self.occupancy


@dataclass(frozen=True)
class Tlb:
    """A translation lookaside buffer: ``holds`` ``"i"`` (fetches) or ``"d"`` (data)."""

    name: str
    entries: int
    ways: int
    holds: str
    source: str
    #: The modelling assumptions among the fields above: field name -> :class:`Range`.
    ranges: Mapping[str, Range] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class WalkStep:
    """One level of a page walk: the entry of an address is at the tables' base +
    ``offset`` + ((address >> ``shift``) mod ``entries``) x ``size``."""

    shift: int
    entries: int
    size: int
    offset: int


@dataclass(frozen=True)
class PageTables:
    """The pages Linux would map the guest with, and how a TLB miss walks them.

    Memory Linux gives a module (vmalloc) is in ``small`` pages, walked with
    the first ``small_steps`` of ``steps``; everything else is the kernel
    image and its linear map, in ``large`` pages walked with the first
    ``large_steps`` (0: mapped without the TLB, PowerPC's BATs).
    """

    small: int
    large: int
    steps: tuple[WalkStep, ...]
    small_steps: int
    large_steps: int
    source: str


@dataclass(frozen=True)
class ReferenceCore:
    """The named core whose timing the model follows, each figure with its source.

    ``caches`` lists L1I and L1D first, then the outer levels in lookup
    order. ``memory`` is the latency of a miss in every level;
    ``transfer`` that of a line another CPU holds modified (a
    cache-to-cache transfer); ``exception`` one exception entry plus its
    return; ``serialize`` the pipeline drain of a serializing instruction
    (x86 cpuid/iret/mov cr, ARM isb/dsb, PowerPC isync/sync/rfi);
    ``cache_op`` a cache-maintenance instruction beyond the access it
    makes. ``clock`` is the core's frequency in Hz. ``window``,
    ``resources`` and ``latencies`` (one per class of :data:`INSN_CLASSES`
    but ``serialize``, whose latency is ``serialize``) make it out of order;
    ``tlbs`` and ``page_tables`` translate its addresses.
    """

    name: str
    clock: Cost
    caches: tuple[CacheLevel, ...]
    memory: Cost
    transfer: Cost
    predictor: Predictor
    exception: Cost
    serialize: Cost
    cache_op: Cost
    coherence: str = "MESI"
    window: Window | None = None
    resources: tuple[Resource, ...] = ()
    latencies: tuple[Latency, ...] = ()
    tlbs: tuple[Tlb, ...] = ()
    page_tables: PageTables | None = None

    #: The tuples of named parts that may declare ranges, and the field naming each.
    _NAMED_PARTS = (("caches", "name"), ("latencies", "cls"), ("tlbs", "name"))

    def _parts(self) -> list[tuple[str, Cost | CacheLevel | Predictor | Window | Latency | Tlb]]:
        """Every part that may declare ranges, named as :meth:`assumptions` names them."""
        return ([(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)
                 if isinstance(getattr(self, f.name), (Cost, Predictor, Window))]
                + [(f"{group}.{getattr(part, key)}", part)
                   for group, key in self._NAMED_PARTS for part in getattr(self, group)])

    def assumptions(self) -> dict[str, tuple[Range, float]]:
        """Each modelling assumption that declares a range: ``part.field`` (e.g.
        ``predictor.history_bits``, ``caches.L1I.latency``, ``window.rob``,
        ``latencies.div.latency``, ``tlbs.DTLB.entries``) -> (its range, its value)."""
        return {f"{name}.{key}": (r, getattr(part, key))
                for name, part in self._parts() for key, r in part.ranges.items()}

    def with_values(self, values: Mapping[str, float]) -> "ReferenceCore":
        """This core with the assumptions named in ``values`` (as :meth:`assumptions`
        names them) set to those values; everything else, sources included, kept."""
        unknown = set(values) - set(self.assumptions())
        if unknown:
            raise ValueError(f"{self.name}: no assumption {', '.join(sorted(unknown))}")
        parts = dict(self._parts())
        for path, value in values.items():
            name, key = path.rsplit(".", 1)
            parts[name] = dataclasses.replace(parts[name], **{key: value})
        named = {group: tuple(parts[f"{group}.{getattr(part, key)}"]
                              for part in getattr(self, group))
                 for group, key in self._NAMED_PARTS}
        return dataclasses.replace(
            self, **named, **{n: p for n, p in parts.items() if "." not in n})


@dataclass(frozen=True)
class Decoder:
    """The arch's instruction classifier for the timing model, in C.

    ``source`` is a C file beside the arch package defining
    ``kisim_decode()`` (sim/native/decode.h): branch kind, serializing
    instructions and cache maintenance, from the encoding bits as the
    kernel's own decoders read them. ``regs`` names the registers in the
    encoding's numbering (an address operand's base and index);
    ``mode_reg``, when set, is read once per decoded address and passed as
    ``mode`` (ARM: CPSR, whose T bit selects Thumb). ``accesses``: the
    decoder also describes every data access of the instructions, so the
    model computes their addresses from the registers instead of taking
    Unicorn's memory hooks, which keep every guest access off QEMU's fast
    path (docs/timing.md, "Where the data accesses come from").
    ``unhooked`` names (as Capstone does) the instructions whose accesses
    Unicorn's memory hooks do not report, because QEMU makes them in a
    helper; the decoder describes them, so only the hooks' stream lacks them.
    """

    source: str
    regs: tuple[str, ...]
    mode_reg: str | None = None
    accesses: bool = False
    unhooked: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpinLoop:
    """A two-instruction counting loop: ``1: counter += 1; b 1b``.

    The machine parks a CPU here to end its turn early while keeping the
    instruction count exact: after the turn, the loop's own instructions
    are ``2 * counter - (pc != start)`` and are subtracted.
    """

    code: bytes
    counter: str


@dataclass(frozen=True)
class TextSync:
    """What making patched text visible charges each CPU under the arch's v5.10
    primitive, beyond the instructions it runs: cost-table events.

    ``round_local`` and ``round_remote``: one sync round (``TextPort.sync_all``:
    x86 text_poke_sync()), on the patching CPU and on each other CPU (from the
    host, every CPU is another's); ``flush``: one flush_icache_range on the
    patching CPU, beyond its ``icache_flush`` lines (the context synchronization
    it ends with). A stop_machine() is generic (kernel/stop_machine.c: each other
    CPU's stopper is woken, one IPI each). ``source``: the v5.10 code that
    says so."""

    round_local: tuple[str, ...]
    round_remote: tuple[str, ...]
    flush: tuple[str, ...]
    source: str


def core_costs(core: "ReferenceCore") -> dict[str, Cost]:
    """The events every arch costs from its reference core, for :attr:`Arch.costs`:
    ``insn``, the model unit; ``trap``, one exception entry and return, measured
    apart from any kprobe figure (those are what the model is validated against);
    ``ipi``, one interrupt round trip on each CPU at that figure; and ``serialize``,
    a serializing instruction a patching primitive runs, charged outside the timing
    model (``--cycles count``, and the host patcher's modeled ones) at the figure
    the timing model gives it (:attr:`ReferenceCore.serialize`)."""
    return {
        "insn": Cost(1, "model unit: one modeled cycle per retired instruction "
                        "(assumption; no published CPI for this guest)"),
        "trap": Cost(core.exception.cycles, f"{core.name}: exception entry + return. "
                     f"{core.exception.source}"),
        "ipi": Cost(core.exception.cycles, "a cross-CPU sync is one interrupt round trip on "
                    "each CPU: the exception figure above"),
        "serialize": Cost(core.serialize.cycles, "a serializing instruction of the patching "
                          f"code outside the timing model: {core.name}'s. "
                          f"{core.serialize.source}"),
    }


RegisterReader = Callable[[str], int]
"""Reads one of the arch's registers by name (a CPU's or a saved context's)."""


@dataclass(frozen=True)
class IsaState:
    """Where a CPU keeps the instruction set it runs, for Unicorn, which takes it
    from an address's low bits instead: ``bits`` are set in the address to
    start or go on at while register ``reg`` has ``mask`` set (ARM: bit 0 while
    CPSR.T selects Thumb)."""

    reg: str
    mask: int
    bits: int


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
    text_sync: TextSync               # what the patching primitive's syncs charge whom
    clock: Cost                       # modeled core frequency (Hz) and its source
    cc_target: str                    # zig cc -target triple for the guest kernel
    cc_flags: tuple[str, ...] = field(default=())
    imv_sign_extends: bool = False    # the immediate load sign-extends (PPC li)
    site_len: int = 4                 # bytes of a jump-label / marker site
    # HAVE_JUMP_LABEL_BATCH (x86 since v5.3): the sites one text_poke batch takes
    # (arch_jump_label_transform_queue/_apply; a full queue is applied and a new
    # one begun); 0: none, __jump_label_update calls arch_jump_label_transform per site.
    jump_label_batch: int = 0
    # Bytes from an mcount call's first byte to its relocation's r_offset
    # (x86 ``e8 rel32``: the rel32 is one byte in).
    mcount_reloc_offset: int = 0
    # mcount symbol -> the instructions allowed just before its call (ARM
    # ``push {lr}`` before ``bl __gnu_mcount_nc``); absent: no constraint.
    mcount_prologue: Mapping[str, tuple[bytes, ...]] = field(default_factory=dict)
    # Relocation types (numbers) of a module's mcount call that the kernel's
    # module loader refuses, and its words (ARM: a Thumb ``bl`` to the ARM
    # kernel's ``__gnu_mcount_nc``, v5.10 arch/arm/kernel/module.c apply_relocate).
    mcount_call_refused: Mapping[int, str] = field(default_factory=dict)
    # The temporary breakpoint ``text_poke_batch`` plants on a multi-byte
    # site's first byte while it rewrites the rest (x86 text_poke_bp: int3);
    # empty where every patch is one single-copy-atomic word store.
    poke_breakpoint: bytes = b""
    # Unicorn interrupt number -> the exception's name, for fault reports of
    # traps no handler owns (x86 vector 0: #DE, divide error).
    exception_names: Mapping[int, str] = field(default_factory=dict)
    # Instruction fetch sees stores once the CPU serializes, with no cache
    # flush (x86); otherwise only lines flush_icache_range covered do.
    icache_coherent: bool = False
    # DWARF register number -> register name (the arch's DWARF ABI supplement),
    # for reading variables at a probe; empty: no line-number probes.
    dwarf_regs: Mapping[int, str] = field(default_factory=dict)
    # The timing model's reference core (caches, predictor, pipeline events)
    # and the decoder that classifies instructions for it from their
    # encoding bits; None: the arch has count-only machines.
    core: ReferenceCore | None = None
    decoder: "Decoder | None" = None
    # Where a CPU keeps its instruction set (:meth:`resume_address`); None:
    # the arch has one, and a CPU goes on at its PC.
    isa_state: IsaState | None = None
    # ``cmodx_safe(old, new)``: whether the architecture guarantees that a CPU
    # executing a word while another CPU changes it from ``old`` to ``new``
    # runs one of the two (ARMv7 ARM A3.5.4, Power ISA v2.03 Book II 1.8.1:
    # "Concurrent modification and execution of instructions"). None: no such
    # rule beyond the fetch model's pieces (x86: SDM vol. 3A 8.1.3 is modeled
    # byte by byte).
    cmodx_safe: Callable[[bytes, bytes], bool] | None = None
    # The instructions ``cmodx_safe`` allows, as findings name them.
    cmodx_rule: str = ""
    # Low bits of a function symbol's value that name its instruction set,
    # not its address (ELF for the ARM Architecture 5.5.3: bit 0 set for a
    # Thumb function); cleared wherever a symbol becomes an address.
    isa_bits: int = 0
    # Those bits in a pointer to the kernel's own code, in the instruction set
    # it is built for (a Thumb-2 kernel: 1); the spin loop runs in it too.
    code_isa: int = 0
    # Each value of those bits, named for messages (ARM: 0 "ARM (A32)", 1 "Thumb").
    isa_names: Mapping[int, str] = field(default_factory=dict)
    # Capstone's (arch, mode) for code the CPU runs in each of those states.
    isa_cs_modes: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    # Kconfig symbol -> the arch as a kernel built with it runs (ARM
    # THUMB2_KERNEL: Thumb-2 encodings, traps and hooks), same name.
    variants: Mapping[str, "Arch"] = field(default_factory=dict)
    # The Kconfig symbol this arch is the variant for; "" for the base arch.
    variant: str = ""
    # The kernel self-tests ported for a kernel built as this arch (or variant): C
    # files of the package's selftests/ directory, which selftests/ builds as modules
    # (Linux builds ARM's test-arm.c only without THUMB2_KERNEL, test-thumb.c only with it).
    selftests: tuple[str, ...] = ()
    # Whether plain ``char`` is signed in the arch's C ABI (the ``signed:``
    # the kernel prints for char fields, ``is_signed_type(char)``): signed on
    # x86 (System V i386/AMD64 psABI), unsigned on ARM (AAPCS 7.1.1) and
    # PowerPC (SysV PowerPC ABI, 3-2).
    char_signed: bool = False

    def resume_address(self, pc: int, reg: RegisterReader) -> int:
        """The address to start or go on at ``pc`` in the instruction set the
        registers (read by ``reg``) select, as Unicorn takes it for ``emu_start``
        and a PC write (:attr:`isa_state`)."""
        state = self.isa_state
        return pc | state.bits if state is not None and reg(state.reg) & state.mask else pc

    def for_config(self, config: Mapping[str, str]) -> "Arch":
        """The arch a kernel built from ``config`` runs on (:attr:`variants`)."""
        chosen = [v for symbol, v in self.variants.items() if config.get(symbol) == "y"]
        return chosen[0] if chosen else self

    def for_code_isa(self, bits: int) -> "Arch":
        """The arch (or variant) whose kernel code pointers carry ``bits``
        (:attr:`code_isa`): what a bare ELF, with no .config, was built for."""
        return next((v for v in (self, *self.variants.values()) if v.code_isa == bits), self)

    @property
    def capabilities(self) -> tuple[str, ...]:
        """The optional capabilities the arch's ops implement, by name."""
        return tuple(c.NAME for c in capability_classes(self.ops))

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

    @functools.cached_property
    def icache_line(self) -> int:
        """Bytes per line of the reference core's first instruction cache, the unit
        flush_icache_range works in (:data:`DEFAULT_ICACHE_LINE` without a core)."""
        if self.core is None:
            return DEFAULT_ICACHE_LINE
        return next(c.line for c in self.core.caches if c.holds in "iu")

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

    def exception_delivered(self) -> None:
        """The fault now entering a guest handler counts as delivered: the
        engine forgets it, so the CPU's next fault is not escalated to a
        double fault (QEMU target/i386/excp_helper.c check_exception; the
        machine finds the field with the arch's ``contributory_fault``
        snippet, docs/unicorn.md)."""


BreakpointHandler = Callable[[TrapFrame, int], "int | None"]
"""``handler(frame, address)``: the PC to resume at, or None if the
breakpoint at ``address`` is not one the protocol planted."""


class TextPort(Protocol):
    """What a patch protocol may do to the machine.

    ``write_text`` is one store to text (the port asserts the text lock);
    ``sync_all`` is one serializing round on every CPU; ``flush_icache`` is
    flush_icache_range on the patching CPU; ``breakpoint_handler`` installs
    ``handler`` ahead of every other trap handler for the ``with`` block;
    ``stop_machine`` runs its steps with no other CPU running.
    """

    def read(self, addr: int, size: int) -> bytes: ...

    def write_text(self, addr: int, data: bytes) -> None: ...

    def write_data(self, addr: int, data: bytes) -> None: ...

    def sync_all(self) -> None: ...

    def flush_icache(self, begin: int, end: int) -> None: ...

    def breakpoint_handler(self, handler: BreakpointHandler) -> ContextManager[None]: ...

    def stop_machine(self, fn: Callable[[], None]) -> None:
        """kernel/stop_machine.c stop_machine(): run ``fn`` while every other CPU
        spins with interrupts off, then every CPU serializes on its way out."""


TextPokeBatch = Callable[[TextPort, Sequence[tuple[int, bytes]]], None]


class OutOfLine(NamedTuple):
    """A batch entry that is no site: code a site leads to (an optprobe's detour
    buffer), written by this protocol run into text no CPU reaches yet.

    It unpacks as ``(addr, insn)`` like a site. :meth:`patcher.text.TextPatcher.apply`
    puts these entries first in the batch; a correct protocol makes them visible to
    every CPU before it publishes any site that branches to them, as
    arch_prepare_optimized_kprobe writes the detour (x86 ``text_poke``, ARM a copy
    and ``flush_icache_range``) before arch_optimize_kprobes publishes the branch.
    """

    addr: int
    insn: bytes


def split_out_of_line(sites: Sequence[tuple[int, bytes]]
                      ) -> tuple[list[OutOfLine], list[tuple[int, bytes]]]:
    """A batch's :class:`OutOfLine` entries, and its sites."""
    return ([s for s in sites if isinstance(s, OutOfLine)],
            [s for s in sites if not isinstance(s, OutOfLine)])


def write_out_of_line(port: TextPort, code: Sequence[OutOfLine], line: int | None) -> None:
    """Store out-of-line code, flush its lines (``line`` bytes each; None: no flush,
    x86 ``text_poke``) and run one sync round, so every CPU fetches it before a site
    reaches it; nothing if there is none."""
    for addr, insn in code:
        port.write_text(addr, insn)
    if not code:
        return
    if line:
        for begin, end in icache_lines([(a, a + len(c)) for a, c in code], line):
            port.flush_icache(begin, end)
    port.sync_all()


# -- the typed hooks -------------------------------------------------------

class ArchOps(Protocol):
    """The kernel-named hooks every arch implements (one object per arch).

    These are the hooks every arch has (:data:`CAPABILITIES`); the registry
    checks, when it loads an arch, that its ``ops`` has each, callable with
    the parameters declared here. Optional capabilities (:class:`Capability`)
    add theirs through the ops object's classes.
    """

    def text_poke_batch(self, port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
        """Patch live text: x86 text_poke_bp_batch, ARM patch_text, PowerPC
        patch_instruction, for already verified ``(address, new_bytes)`` sites."""

    def imv_load_of_zero(self, insn: bytes, address: int, imv: int, size: int) -> bool:
        """True if ``insn`` at ``address`` loads the immediate 0 into a register
        and its immediate is the ``size`` bytes at ``imv`` (an __imv site)."""


class Capability:
    """An optional capability an arch opts into, as the kernel selects
    HAVE_DYNAMIC_FTRACE, HAVE_KPROBES and HAVE_OPTPROBES per arch.

    A capability is a class: its methods are the hooks, whose signatures the
    registry checks when it loads an arch, and ``CONSTANTS`` the data the
    arch must declare, with their types. An arch declares a capability once,
    in the module that implements it, by subclassing it with that module's
    names::

        class ArmKprobes(Kprobes, Optprobes, names=globals()):
            \"\"\"arch/arm/probes/kprobes/\"\"\"

    The arch's ops class then inherits from that class, and
    :attr:`Arch.capabilities` is read off the ops object.
    """

    NAME: ClassVar[str] = ""
    CONSTANTS: ClassVar[Mapping[str, type | tuple[type, ...]]] = {}

    def __init_subclass__(cls, names: Mapping[str, object] | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if names is None:
            return
        for capability in capability_classes(cls):
            for hook in capability.hooks():
                if hook in names:
                    setattr(cls, hook, staticmethod(names[hook]))
            for constant in capability.CONSTANTS:
                if constant in names:
                    setattr(cls, constant, names[constant])

    @classmethod
    def hooks(cls) -> tuple[str, ...]:
        """The hooks this capability itself declares (its own methods)."""
        return tuple(name for name, value in vars(cls).items()
                     if inspect.isfunction(value) and not name.startswith("_"))


class DynamicFtrace(Capability):
    """HAVE_DYNAMIC_FTRACE (include/linux/ftrace.h; arch/*/kernel/ftrace.c).

    MCOUNT_INSN_SIZE is the bytes of a site; MCOUNT_ADDR / FTRACE_ADDR the
    symbols a compiler call and an enabled site reach, as the kernel's macros
    of those names; IDLE_SITE_INSNS the instructions an idle site still
    executes per call; MCOUNT_SITE_PREFIX_ASM and MCOUNT_STUB_ASM the patch
    checker's site shape (what precedes the site, and an mcount keeping the
    -pg contract)."""

    NAME = "dynamic_ftrace"
    CONSTANTS = {"MCOUNT_INSN_SIZE": int, "MCOUNT_ADDR": str, "FTRACE_ADDR": str,
                 "IDLE_SITE_INSNS": int, "MCOUNT_SITE_PREFIX_ASM": str, "MCOUNT_STUB_ASM": str}

    def ftrace_nop_replace(self) -> bytes:
        """The nop an idle mcount site holds (ftrace_nop_replace)."""
        raise NotImplementedError

    def ftrace_call_replace(self, ip: int, addr: int) -> bytes:
        """The call to ``addr`` an enabled site at ``ip`` holds (ftrace_call_replace)."""
        raise NotImplementedError


class Kprobes(Capability):
    """HAVE_KPROBES (arches/<arch>/kprobes.py, docs/kprobes.md).

    The constants: the guest's struct pt_regs by register (None: a slot
    saved as 0), registers Unicorn reaches by another constant, an
    instruction slot's bytes, the gap the trap entry leaves above pt_regs for
    the callee, how far the breakpoint trap leaves the PC past the
    breakpoint, the single-step trap's number (None: no hardware single-step,
    as on ARM), whether the kretprobe trampoline is itself a kprobe, the
    hits published for the ISA's kprobes (PUBLISHED: :class:`PublishedHit`
    each, which ``kisim validate --experiment kprobes`` compares with), the
    fault traps delivered to kprobe_fault_handler (FAULT_TRAPS: Unicorn
    interrupt -> (guest handler, trap entry); empty where none can be), and
    whether the arch selects HAVE_KPROBES_ON_FTRACE in v5.10
    (KPROBES_ON_FTRACE: a probe on a dynamic ftrace site goes through ftrace;
    without it that probe is refused). These have defaults: TRAP_ENTRY, for an
    arch whose trap entry saves registers in guest code, the guest symbol of that
    exception prologue (entered with the frame in args[0] and the handler in
    args[1]), GUEST_SAVED_REGS, the pt_regs slots only that prologue and
    kprobe_exc_return save and restore (PowerPC XER, whose SO/OV/CA bits are
    not in Unicorn's register read), CAN_PROBE, whether arch_prepare_kprobe
    refuses an address that does not start an instruction by decoding the
    function from its start (v5.10 x86 ``can_probe``: -EILSEQ; ARM and
    PowerPC have no such check), INSN_SLOT_FIRST, whether arch_prepare_kprobe
    takes its instruction slot (``get_insn_slot``, -ENOMEM) before it copies and
    checks the instruction (x86 ``arch_copy_kprobe``), where ARM and PowerPC
    refuse an instruction first, and BACK_CHAIN, whether the ABI's stack frame
    starts with a back chain word the trap entry must zero at the handler's
    stack pointer, the frame STACK_HEADROOM leaves (PowerPC: word 0 of
    STACK_FRAME_OVERHEAD, 0 ends the chain; x86 and ARM frames have none)."""

    NAME = "kprobes"
    CONSTANTS = {"PT_REGS": tuple, "EXTRA_REGS": dict, "SLOT_BYTES": int, "STACK_HEADROOM": int,
                 "BP_PC_ADVANCE": int, "SINGLESTEP_INTNO": (int, type(None)),
                 "KRETPROBE_TRAMPOLINE_KPROBE": bool, "PUBLISHED": tuple, "FAULT_TRAPS": dict,
                 "KPROBES_ON_FTRACE": bool,
                 "TRAP_ENTRY": (str, type(None)), "GUEST_SAVED_REGS": tuple,
                 "CAN_PROBE": bool, "INSN_SLOT_FIRST": bool, "BACK_CHAIN": bool,
                 "REGS_OFFSET_NAMES": tuple,
                 "REGS_OFFSET_ALIASES": dict, "FUNCTION_ARG_REGS": tuple,
                 "KRETPROBE_BLACKLIST": tuple}
    #: v5.10 regs_query_register_offset's names (arch/*/kernel/ptrace.c
    #: regoffset_table), in struct pt_regs word order ("" for a word it does
    #: not name): the kprobe_events %REG names.
    REGS_OFFSET_NAMES: ClassVar[tuple[str, ...]] = ()
    #: Other names regoffset_table gives a word of REGS_OFFSET_NAMES (alias -> name).
    REGS_OFFSET_ALIASES: ClassVar[dict[str, str]] = {}
    #: The registers v5.10 regs_get_kernel_argument reads, first argument
    #: first, where the arch selects HAVE_FUNCTION_ARG_ACCESS_API (else empty:
    #: no kprobe_events $argN).
    FUNCTION_ARG_REGS: ClassVar[tuple[str, ...]] = ()
    #: The functions register_kretprobe refuses (v5.10 kretprobe_blacklist[]); empty
    #: where the arch defines kretprobe_blacklist_size 0 (every arch but x86).
    KRETPROBE_BLACKLIST: ClassVar[tuple[str, ...]] = ()
    TRAP_ENTRY: ClassVar[str | None] = None
    GUEST_SAVED_REGS: ClassVar[tuple[str, ...]] = ()
    CAN_PROBE: ClassVar[bool] = False
    INSN_SLOT_FIRST: ClassVar[bool] = False
    BACK_CHAIN: ClassVar[bool] = False

    def arch_prepare_kprobe(self, addr: int, code: bytes, slot: int) -> Prepared:
        """Copy and decode the instruction at ``addr`` (``code``: its bytes) for the
        instruction slot at ``slot``, or raise KprobeRefused with the reason."""
        raise NotImplementedError

    def arch_trap_entry(self, frame: TrapFrame) -> None:
        """What the hardware's trap entry does to the live registers (x86: clear
        TF and IF; PowerPC: clear MSR_SE and MSR_EE)."""
        raise NotImplementedError

    def condition_passes(self, addr: int, code: bytes, frame: TrapFrame) -> bool:
        """Whether the instruction at ``addr`` executes now (ARM conditions)."""
        raise NotImplementedError

    def describe_ainsn(self, ainsn: tuple[int, ...], post_handler: bool) -> str:
        """How a hit runs the instruction, from the guest's arch_specific_insn."""
        raise NotImplementedError


class Optprobes(Capability):
    """HAVE_OPTPROBES (arch/*/kernel/kprobes/opt*.c): a detour buffer's bytes.

    OPTPROBE_TRAP_RESUME is where in its detour buffer a breakpoint hit of a
    probe flagged KPROBE_FLAG_OPTIMIZED but not yet optimized resumes, past
    the template, at the displaced instructions (x86 setup_detour_execution,
    TMPL_END_IDX); None where the arch's trap path ignores the flag (ARM).
    The guest's <asm/kprobes-core.h> holds the same offset.
    MAX_OPTIMIZED_LENGTH bounds a detoured region (asm/kprobes.h): the
    generic code looks that far back for the optimized probe whose region
    holds an address (get_optimized_kprobe)."""

    NAME = "optprobes"
    CONSTANTS = {"OPTPROBE_BUFFER_BYTES": int, "OPTPROBE_TRAP_RESUME": (int, type(None)),
                 "MAX_OPTIMIZED_LENGTH": int}
    OPTPROBE_TRAP_RESUME: ClassVar[int | None] = None

    def arch_prepare_optimized_kprobe(self, addr: int, function: tuple[int, bytes],
                                      buffer: int, callback: int,
                                      struct: int) -> tuple[bytes, int]:
        """The detour buffer at ``buffer`` and the detoured region's length, or
        KprobeRefused (can_optimize)."""
        raise NotImplementedError

    def arch_optimize_kprobe(self, addr: int, buffer: int, breakpoint: bytes) -> bytes:
        """The jump that replaces ``breakpoint``, the armed breakpoint at ``addr``
        (ARM takes the probed instruction's condition from it)."""
        raise NotImplementedError


class GuestCpu(Protocol):
    """A CPU as the guest-patching hooks see it: registers by name, memory by word,
    and the guest image's symbols (the patch checker's :mod:`patchcheck.guest`)."""

    index: int
    uc: object      # the CPU's Unicorn, for state no register name reaches (x86 GDTR)

    def reg(self, name: str) -> int: ...

    def set_reg(self, name: str, value: int) -> None: ...

    def read_word(self, addr: int) -> int: ...

    def write_word(self, addr: int, value: int) -> None: ...

    def symbol(self, name: str) -> int: ...


class FetchSync(NamedTuple):
    """What an instruction does to instruction fetch, as the patch checker sees it.

    ``kind`` is one of:

    - ``serialize``: x86 a serializing instruction, ARM ``isb`` or an exception
      return, PowerPC ``isync`` or ``rfi``: the CPU refetches;
    - ``clean``: a data-cache clean by address to where instruction fetch reads
      (PowerPC ``dcbst``, ARM ``mcr p15, 0, Rt, c7, c11, 1`` DCCMVAU);
    - ``invalidate``: an instruction-cache invalidation by address, broadcast to
      every CPU (PowerPC ``icbi``, ARM ICIMVAU);
    - ``barrier``: completes the CPU's cache maintenance issued before it (ARM
      ``dsb``, PowerPC ``sync``): until then a ``clean`` or ``invalidate`` may not
      have taken effect for any CPU's fetch.

    For ``clean`` and ``invalidate`` the effective address is the sum of
    ``regs`` (each None for a literal 0); ``regs=()`` means the whole cache
    (ARM ICIALLU, ICIALLUIS)."""

    kind: str
    regs: tuple[str | None, ...] = ()


class GuestPatching(Capability):
    """The kernel's own text-patching code as guest C (``arches/<arch>/patching.c``,
    against ``kernel/patching/guest.h``), and the hardware around it that the
    patch checker plays (``kisim patchcheck --guest``, docs/patchcheck.md) and
    the kernel machine with CONFIG_PATCHING_IN_GUEST (:mod:`sim.self_patching`).

    The constants: PATCHING_C, the arch's C file (relative to the repository);
    IRQ_BASE, the page of the interrupt controller registers the IPI is sent
    through; IRQ_ENTRY, the guest symbol an interrupt vectors to;
    BREAKPOINT_ENTRY, the guest symbol a breakpoint trap vectors to (x86
    ``int3`` into do_int3(), where poke_int3_handler() runs), or None where the
    primitive plants no breakpoint; GUEST_ABLATIONS, each step a kernel
    developer could get wrong -> the macro that compiles it out of the
    arch's C (``-DPC_ABLATE_...``); GUEST_ABLATION_SITES, a step that matters
    only on some site kinds -> those kinds (one of them must be in the loop
    for its ablation to be offered; default: none, every step matters)."""

    NAME = "guest_patching"
    CONSTANTS = {"PATCHING_C": str, "IRQ_BASE": int, "IRQ_ENTRY": str,
                 "BREAKPOINT_ENTRY": (str, type(None)), "GUEST_ABLATIONS": dict,
                 "GUEST_ABLATION_SITES": dict}
    GUEST_ABLATION_SITES: ClassVar[dict[str, tuple[str, ...]]] = {}

    def ipi_targets(self, offset: int, value: int, sender: int, cpus: int,
                    page: bytes) -> tuple[int, ...]:
        """The CPUs interrupted by CPU ``sender``'s store of ``value`` at ``offset``
        into the controller's page (x86 local APIC ICR, ARM GICD_SGIR, PowerPC
        MPIC IPI dispatch); empty for any other register. ``page`` is the page as
        the earlier stores left it (x86: the destination in ICR2)."""
        raise NotImplementedError

    def irq_enabled(self, cpu: GuestCpu) -> bool:
        """Whether the CPU takes an interrupt now (x86 RFLAGS.IF, ARM CPSR.I clear,
        PowerPC MSR[EE])."""
        raise NotImplementedError

    def irq_enter(self, cpu: GuestCpu, entry: int, pc: int) -> int:
        """What the hardware does to take an interrupt at ``pc`` (the next
        instruction): save the return state where the arch saves it, mask
        interrupts; return the address the CPU goes on at (``entry``, or a stub
        that finishes the entry)."""
        raise NotImplementedError

    def cpu_setup(self, cpu: GuestCpu) -> None:
        """The per-CPU state the interrupt entry needs (x86 descriptor table and
        selectors, the ARM IRQ mode's stack), with interrupts enabled."""
        raise NotImplementedError

    def fetch_sync(self, code: bytes) -> FetchSync | None:
        """What the instruction starting ``code`` does to instruction fetch, read
        from its encoding; None for anything else."""
        raise NotImplementedError

    def atomic_store(self, code: bytes) -> bool:
        """Whether the instruction starting ``code`` stores as the second half of an
        atomic read-modify-write (ARM ``strex``, PowerPC ``stwcx.``, x86 a locked
        instruction or ``xchg`` with memory): no other CPU may run between its
        read and its store."""
        raise NotImplementedError


#: capability -> the :class:`ArchOps` hooks it needs. Every arch has these.
CAPABILITIES: dict[str, tuple[str, ...]] = {
    "text_patching": ("text_poke_batch",),
    "tables": ("imv_load_of_zero",),
}

#: The optional capabilities by name, in the order they are reported.
OPTIONAL_CAPABILITIES: dict[str, type[Capability]] = {
    c.NAME: c for c in (DynamicFtrace, Kprobes, Optprobes, GuestPatching)}


def capability_classes(ops: object) -> tuple[type[Capability], ...]:
    """The optional capabilities ``ops`` (an ops object or class) implements."""
    cls = ops if isinstance(ops, type) else type(ops)
    return tuple(c for c in OPTIONAL_CAPABILITIES.values() if issubclass(cls, c))


class ArchDefinitionError(ImportError):
    """An arch package that does not declare what the registry needs."""


def _arity(func: Callable) -> int | None:
    """Positional parameters ``func`` takes (None: it takes ``*args``)."""
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def check_ops(arch_name: str, ops: object) -> None:
    """Raise :class:`ArchDefinitionError` (one line, naming arch and hook)
    unless ``ops`` has every common hook and every hook and constant of the
    capabilities it implements, each hook with the declared arity."""
    for capability, hooks in CAPABILITIES.items():
        for hook in hooks:
            _check_hook(f"arch {arch_name!r}: ops hook {hook!r} ({capability})",
                        getattr(ops, hook, None), getattr(ArchOps, hook))
    for capability in capability_classes(ops):
        for hook in capability.hooks():
            where = f"arch {arch_name!r}: ops hook {hook!r} ({capability.NAME})"
            if getattr(type(ops), hook) is vars(capability)[hook]:
                raise ArchDefinitionError(f"{where} is missing")
            _check_hook(where, getattr(ops, hook), vars(capability)[hook])
        for name, kind in capability.CONSTANTS.items():
            value = getattr(ops, name, None)
            if not isinstance(value, kind):
                names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
                raise ArchDefinitionError(f"arch {arch_name!r}: ops constant {name!r} "
                                          f"({capability.NAME}) must be a {names}, "
                                          f"not {type(value).__name__}")


def _check_hook(where: str, func: object, spec: Callable) -> None:
    if func is None:
        raise ArchDefinitionError(f"{where} is missing")
    if not callable(func):
        raise ArchDefinitionError(f"{where} is a {type(func).__name__}, not a function")
    want = _arity(spec) - 1                  # minus self
    have = _arity(func)
    if want is not None and have is not None and have != want:
        raise ArchDefinitionError(f"{where} takes {have} arguments, expected {want}")


#: flush_icache_range's line where an arch names no reference core: the 32-byte lines of
#: ARMv7's and 32-bit PowerPC's common cores (arch/arm/mm/cache-v7.S, CONFIG_PPC_L1_CACHE_SHIFT 5).
DEFAULT_ICACHE_LINE = 32


def icache_lines(ranges: Sequence[tuple[int, int]], line: int) -> list[tuple[int, int]]:
    """Merge ``[begin, end)`` ranges into line-aligned spans, in address order."""
    spans: list[list[int]] = []
    for begin, end in sorted(ranges):
        begin, end = begin - begin % line, end + (-end) % line
        if spans and begin <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([begin, end])
    return [(b, e) for b, e in spans]


def aligned_word(addr: int, insn: bytes) -> bool:
    """One naturally aligned 32-bit word: what :func:`patch_words` patches by default."""
    return addr % 4 == 0 and len(insn) == 4


def patch_words(arch_name: str, port: TextPort, sites: Sequence[tuple[int, bytes]],
                line: int, *, stop_machine: bool = False,
                valid: Callable[[int, bytes], bool] = aligned_word,
                what: str = "one aligned 32-bit word") -> None:
    """ARM patch_text / PowerPC patch_instruction for a batch of sites.

    Each site is one instruction (``valid``; ``what`` names the rule in the
    refusal). A naturally aligned one is one store, which both arches
    perform single-copy atomically, so another CPU fetches the old word or
    the new one, never a mix; one that is not (a Thumb-2 32-bit instruction
    at 2 mod 4) is two halfword stores, as patch.c ``__patch_text_real``
    writes it. Then flush_icache_range over the written
    lines (``line`` bytes each: the arch's :attr:`Arch.icache_line`) and one
    serializing round on every CPU. With ``stop_machine`` (ARM,
    arch/arm/kernel/patch.c ``patch_text``) the stores and the flush run
    inside stop_machine(), whose return serializes every CPU, because ARMv7
    guarantees old-or-new to a CPU executing a changing word only for a few
    instructions; without it (PowerPC ``patch_instruction``) they run with
    the other CPUs going, then sync, icbi, sync, isync. Every site is checked
    before the first store, so a refused batch writes nothing. :class:`OutOfLine`
    entries are written first (:func:`write_out_of_line`).
    """
    code, sites = split_out_of_line(sites)
    for addr, insn in sites:
        if not valid(addr, insn):
            raise EncodingError(f"{arch_name}: a text patch is {what}; "
                                f"got {len(insn)} bytes at {addr:#x}")
    write_out_of_line(port, code, line)

    def store_and_flush() -> None:
        for addr, insn in sites:
            if addr % len(insn):
                half = len(insn) // 2
                port.write_text(addr, insn[:half])
                port.write_text(addr + half, insn[half:])
            else:
                port.write_text(addr, insn)
        for begin, end in icache_lines([(addr, addr + len(insn)) for addr, insn in sites],
                                       line):
            port.flush_icache(begin, end)
    if stop_machine:
        port.stop_machine(store_and_flush)
    else:
        store_and_flush()
        port.sync_all()
