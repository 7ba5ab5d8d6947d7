"""Kprobes on a running guest, after Linux v5.10 (kernel/kprobes.c).

Who does what:

- **Host, at registration** (not on the hit path): ``register_kprobe``
  resolves ``symbol_name+offset``, refuses what the kernel refuses (not an
  instruction boundary, the blacklist, an instruction the arch cannot
  probe, text another patcher owns), runs the arch's
  ``arch_prepare_kprobe`` (``arches/<arch>/kprobes.py``) to fill an
  instruction slot, fills a ``struct kprobe`` of the guest's
  ``kprobe_pool[]``, links it into ``kprobe_table[]`` and arms the
  breakpoint with ``arch_arm_kprobe`` through the patcher (text_mutex and
  the arch's cross-CPU protocol).
- **Machine, on a hit** (the hardware and the trap entry): the breakpoint
  trap and the single-step trap are charged from the arch's cost table;
  the registers are saved as the guest's ``struct pt_regs`` below the
  interrupted stack pointer, and the CPU calls the guest's
  ``kprobe_handler`` or ``kprobe_debug_handler``, which return into
  ``kprobe_exc_return``; its hypercall is the exception return, which
  restores the (possibly changed) registers.
- **Guest, on a hit** (every instruction counted): the hash lookup, the
  per-CPU current kprobe and status, the handlers, single-step setup,
  simulation or emulation, fix-ups, reentry and ``nmissed``
  (``kernel/kprobes.c``, ``arches/<arch>/include/asm/kprobes-core.h``).

Handlers are guest functions (a symbol name) or host callables
``handler(kp, regs)`` (``fault_handler(kp, regs, trapnr)``), which the
guest reaches through a hypercall (``kprobe_host_pre_handler``); ``regs``
reads and writes the saved ``struct pt_regs`` by register name. A
``fault_handler`` is accepted only where the machine delivers a fault the
kernel passes to ``kprobe_fault_handler`` (the ops' ``FAULT_TRAPS``:
x86 #GP); see docs/kprobes.md.
"""
from __future__ import annotations

import bisect
import functools
import itertools
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from struct import Struct
from typing import Callable, Iterator

import capstone
from elftools.elf.elffile import ELFFile

from arches import Arch, ArchOps, TrapKind
from arches.kprobe import KprobeRefused, Prepared
from patcher.errors import PatchError
from patcher.ftrace import Ftrace, ftrace_for
from patcher.rcu import GracePeriods
from patcher.tables import Tables, load_tables
from patcher.text import TextPatcher
from sim.elf import SymbolError
from sim.errors import ConfigError
from sim.guest import ERRNO, Guest, register_module_service
from sim.hypercall import Resume
from sim.machine import UNHANDLED, Cpu, Trap, TrapPriority

#: The guest header's constants, parsed so that C and Python cannot drift apart.
KPROBES_H = Path(__file__).resolve().parent.parent / "kernel/include/kisim/kprobes.h"
_DEFINES = {name: int(value, 0) for name, value in re.findall(
    r"^#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", KPROBES_H.read_text(), re.M)}
#: struct kprobe, one word per field (kernel/include/kisim/kprobes.h).
FIELDS = ("next", "addr", "pre_handler", "post_handler", "fault_handler", "flags", "nmissed",
          "opcode",
          "ainsn0", "ainsn1", "ainsn2", "ainsn3", "hit_index", "list", "symbol_name", "offset")
#: The fields a module fills before register_kprobe (kept as the module wrote them).
CALLER_FIELDS = ("symbol_name", "offset")
#: struct kretprobe after its struct kprobe, and struct kretprobe_instance.
RP_FIELDS = ("handler", "entry_handler", "maxactive", "nmissed", "data_size", "free_instances",
             "lock")
#: struct kretprobe_instance's words; ``data[]`` (rp->data_size bytes) follows them.
RI_FIELDS = ("next", "rp", "ret_addr", "task", "sp")
KRETPROBE_POOL = _DEFINES["KRETPROBE_POOL"]
KRETPROBE_INSTANCE_BYTES = _DEFINES["KRETPROBE_INSTANCE_BYTES"]
KPROBE_HASH_BITS = _DEFINES["KPROBE_HASH_BITS"]
FLAG_DISABLED, FLAG_OPTIMIZED, FLAG_FTRACE = (
    _DEFINES[f"KPROBE_FLAG_{n}"] for n in ("DISABLED", "OPTIMIZED", "FTRACE"))
KPROBE_HC_RETURN, KPROBE_HC_PRE, KPROBE_HC_POST, KPROBE_HC_RET, KPROBE_HC_FAULT = (
    _DEFINES[f"KPROBE_HC_{n}"] for n in ("RETURN", "PRE", "POST", "RET", "FAULT"))
KPROBE_HC_SHIFT = _DEFINES["KPROBE_HC_SHIFT"]
#: Bytes left free below the interrupted stack pointer before pt_regs: ARM
#: emulates stack stores of up to 64 bytes in place
#: (arch/arm/probes/kprobes/core.c MAX_STACK_SIZE), x86-64 kernel code has
#: no red zone.
STACK_GAP = 128
#: Exception returns in a row by one CPU to the same armed breakpoint before
#: kisim stops the run: a pre_handler that returns non-zero ("I changed the
#: PC", so no single-step) but leaves the PC at the probe re-enters it forever,
#: in v5.10 as here. A stand-in for the run's instruction budget, which such a
#: loop would take an hour to exhaust (~1 ms of host time per re-entry).
MAX_REENTRIES = 1000
#: The optimizer runs OPTIMIZE_DELAY jiffies after it is kicked (kernel/kprobes.c);
#: a jiffy at the default HZ=250 (kernel/Kconfig.hz) is 4 ms.
OPTIMIZE_DELAY = 5
TICK_NSEC = 1_000_000_000 // 250
#: How a hit runs while its probe waits for the optimizer, where the arch's trap path
#: already takes the detour (x86 setup_detour_execution): :meth:`Kprobes.kind`.
QUEUED_PATH = "breakpoint, then the detour's copy (queued for the optimizer)"
#: Symbols of kernel/kprobes.c the host needs.
GUEST_SYMBOLS = ("kprobe_table", "kprobe_pool", "kprobe_insn_slots", "kprobe_handler",
                 "kprobe_debug_handler", "kprobe_exc_return", "kprobe_host_pre_handler",
                 "kprobe_host_post_handler", "current_kprobe", "kprobe_hits",
                 "kretprobe_pool", "kretprobe_instance_area", "kretprobe_trampoline",
                 "pre_handler_kretprobe", "kretprobe_host_handler", "aggr_pre_handler",
                 "aggr_post_handler", "kretprobe_inst_table")

#: A Kprobe's pre_handler or post_handler (see :meth:`Kprobes._handler_addr`): a guest
#: function by symbol name, a guest address (a module's function), a host callable
#: ``handler(kp, regs)`` (a falsy result reads as 0), or None (no handler).
Handler = str | int | Callable[["Kprobe", "KprobeRegs"], "int | None"] | None
#: A Kprobe's fault_handler: the same, a host callable ``fault_handler(kp, regs, trapnr)``.
FaultHandler = str | int | Callable[["Kprobe", "KprobeRegs", int], "int | None"] | None


def hash_ptr(addr: int, word_bits: int) -> int:
    """include/linux/hash.h hash_ptr(addr, KPROBE_HASH_BITS) on a ``word_bits``-bit
    arch (hash_64 or hash_32, by the size of a long)."""
    if word_bits == 64:
        return ((addr * 0x61C8864680B583EB) & (2**64 - 1)) >> (64 - KPROBE_HASH_BITS)
    return ((addr * 0x61C88647) & 0xFFFFFFFF) >> (32 - KPROBE_HASH_BITS)


def _signed(value: int, bits: int) -> int:
    """A guest word read as a C long."""
    return value - (1 << bits) if value >> (bits - 1) else value


def _data_in_text(elf: str | os.PathLike[str]) -> tuple[tuple[int, int], ...]:
    """[begin, end) of data inside code: the ``$d`` mapping symbols (ELF for the
    ARM Architecture §5.5.5), each running to the next mapping symbol. Read once
    per file (path, size, mtime): every kprobe user of one kernel asks."""
    st = os.stat(elf)
    return _mapped_data(os.path.realpath(elf), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _mapped_data(elf: str, _size: int, _mtime: int) -> tuple[tuple[int, int], ...]:
    marks = []
    with open(elf, "rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        for sym in symtab.iter_symbols() if symtab is not None else ():
            if sym.name[:2] in ("$a", "$d", "$t", "$x") and sym["st_shndx"] != "SHN_UNDEF":
                marks.append((sym["st_value"], sym.name[:2]))
    marks.sort()
    return tuple((addr, nxt) for (addr, kind), (nxt, _) in zip(marks, marks[1:] + [(1 << 64, "")])
                 if kind == "$d")


def arch_kprobes(arch: Arch) -> ArchOps:
    """The arch's kprobe hooks and data (its ``ops``), if it has HAVE_KPROBES."""
    if "kprobes" not in arch.capabilities:
        raise ConfigError(f"kprobe: {arch.name} has no kprobes (HAVE_KPROBES)")
    return arch.ops


def _check_fields(obj: object, ints: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """What the caller fills in has the kernel's types: a wrong type is one TypeError line
    (register_kprobe would read garbage); ``optional`` ones may also be None."""
    name = type(obj).__name__
    if obj.symbol_name is not None and not isinstance(obj.symbol_name, str):
        raise TypeError(f"{name}.symbol_name must be a str or None, not "
                        f"{type(obj.symbol_name).__name__}")
    for field_name in ints:
        value = getattr(obj, field_name)
        if value is None and field_name in optional:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}.{field_name} must be an int"
                            f"{' or None' if field_name in optional else ''}, not "
                            f"{type(value).__name__}")


@dataclass(frozen=True)
class BlacklistEntry:
    """One entry of v5.10's kprobe_blacklist (struct kprobe_blacklist_entry): the
    addresses [start, end) of one function, and why it is listed."""

    start: int
    end: int
    name: str
    why: str


@dataclass(eq=False)
class Kprobe:
    """struct kprobe as the caller fills it: ``symbol_name`` + ``offset`` or ``addr``."""

    symbol_name: str | None = None
    offset: int = 0
    addr: int | None = None
    pre_handler: Handler = None
    post_handler: Handler = None
    #: v5.10 ``fault_handler(kp, regs, trapnr)``: a fault in this probe's
    #: handlers; non-zero means it fixed the fault up (kprobe_fault_handler).
    fault_handler: FaultHandler = None
    #: KPROBE_FLAG_DISABLED: the caller's to set (registered disarmed), then
    #: disable_kprobe's and enable_kprobe's; unregistering leaves it set.
    disabled: bool = False
    probe_type: str = "k"                       # "r": the entry probe of a kretprobe
    # Filled by register_kprobe, afresh each time (:data:`_FILLED`).
    index: int = -1
    struct: int = 0
    slot: int = 0
    orig: bytes = b""
    breakpoint: bytes = b""
    boostable: bool = False
    optimized: bool = False
    #: KPROBE_FLAG_FTRACE: on an mcount site, reached through ftrace (no breakpoint).
    ftrace: bool = False
    opt_jump: bytes = b""
    opt_region: int = 0
    opt_orig: bytes = b""
    owner: "Kprobes | None" = field(default=None, repr=False)
    # register_aggr_kprobe: an aggr_kprobe's probes; a probe's aggr_kprobe.
    members: list["Kprobe"] = field(default_factory=list, repr=False)
    aggr: "Kprobe | None" = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_fields(self, ("offset", "addr"), optional=("addr",))

    def _refill(self) -> None:
        """What an earlier registration filled in goes (register_kprobe initialises
        the struct's own fields: a struct may be registered again once
        unregistered, as lib/test_kprobes.c does)."""
        fresh = Kprobe()
        for name in _FILLED:
            setattr(self, name, getattr(fresh, name))

    @property
    def top(self) -> "Kprobe":
        """The aggr_kprobe that holds this probe, or the probe itself: what
        kprobe_table holds, what is armed and optimized."""
        return self.aggr or self

    @property
    def nmissed(self) -> int:
        """Hits while another kprobe was running on that CPU (handlers skipped)."""
        return _owner(self).read_field(self, "nmissed")

    @property
    def hits(self) -> int:
        """Hits that ran the handlers (kisim's per-CPU kprobe_hits, summed)."""
        return _owner(self).hits(self)

    def describe(self) -> str:
        where = self.owner.guest.image.symbol_at(self.addr) if self.owner else None
        return f"{where[0]}+{where[1]:#x}" if where else f"{self.addr:#x}"


#: What register_kprobe fills in: the fields from ``index`` on.
_FILLED = tuple(itertools.dropwhile(lambda name: name != "index", (f.name for f in fields(Kprobe))))


def _owner(probe: "Kprobe | Kretprobe") -> "Kprobes":
    """The manager ``probe`` was registered with: -EINVAL before it was."""
    if probe.owner is None:
        raise PatchError("EINVAL", f"{type(probe).__name__.lower()} is not registered")
    return probe.owner


@dataclass(eq=False)
class Kretprobe:
    """struct kretprobe: a return probe on a function entry.

    ``handler(rp, regs)`` runs when the function returns (``regs`` holds
    the return value in the arch's return register); a guest
    ``entry_handler(ri, regs)`` that returns non-zero gives the instance
    back and no return is probed for that call; ``maxactive <= 0`` takes
    the kernel's default (one instance per possible CPU without
    CONFIG_PREEMPTION); each instance carries ``data_size`` bytes of
    ``ri->data[]``; ``disabled`` is ``rp->kp.flags``' KPROBE_FLAG_DISABLED (the
    entry probe is registered disarmed, as trace_kprobe registers a disabled event).
    """

    symbol_name: str | None = None
    offset: int = 0
    addr: int | None = None
    handler: Handler = None
    entry_handler: str | int | None = None
    maxactive: int = 0
    #: Bytes of ``ri->data[]`` each instance carries for the handlers (v5.10).
    data_size: int = 0
    disabled: bool = False
    kp: Kprobe | None = field(default=None, repr=False)
    struct: int = 0
    owner: "Kprobes | None" = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_fields(self, ("offset", "addr", "maxactive", "data_size"), optional=("addr",))

    @property
    def nmissed(self) -> int:
        """Entries that found no free instance (the handler did not run for them)."""
        return _owner(self).read_rp(self, "nmissed")


class _Extents:
    """The free byte ranges of kretprobe_instance_area, taken first fit.

    v5.10 kmallocs each instance at register_kretprobe and kfrees it once
    the kretprobe is unregistered and the instance is back (free_rp_inst,
    or the trampoline for one in flight); kisim's kernel carves them from
    one static area, so the host keeps what is free of it.
    """

    def __init__(self, size: int) -> None:
        self.free: list[tuple[int, int]] = [(0, size)]      # (offset, bytes), by offset

    def largest(self) -> int:
        return max((n for _, n in self.free), default=0)

    def take(self, size: int) -> int:
        """The offset of ``size`` bytes, from the first range that holds them."""
        i, (start, n) = next((i, r) for i, r in enumerate(self.free) if r[1] >= size)
        if n == size:
            del self.free[i]
        else:
            self.free[i] = (start + size, n - size)
        return start

    def give(self, start: int, size: int) -> None:
        """Free ``size`` bytes at ``start``, merged with the ranges beside them."""
        i = bisect.bisect(self.free, (start, size))
        self.free.insert(i, (start, size))
        if i + 1 < len(self.free) and start + size == self.free[i + 1][0]:
            self.free[i] = (start, size + self.free.pop(i + 1)[1])
        if i > 0 and sum(self.free[i - 1]) == start:
            self.free[i - 1] = (self.free[i - 1][0], self.free[i - 1][1] + self.free.pop(i)[1])


class KprobeRegs:
    """The saved ``struct pt_regs`` of a hit, by register name (host handlers)."""

    def __init__(self, kprobes: Kprobes, frame: int, cpu: int = -1) -> None:
        self._k = kprobes
        self.frame = frame
        self.cpu = cpu                          # the CPU that hit the probe

    def _offset(self, name: str) -> int:
        try:
            return self._k.ops.PT_REGS.index(name) * self._k.arch.word
        except ValueError:
            raise KeyError(f"{self._k.arch.name} pt_regs has no {name}") from None

    def __getitem__(self, name: str) -> int:
        return self._k.machine.read_word(self.frame + self._offset(name))

    def __setitem__(self, name: str, value: int) -> None:
        self._k.machine.write_word(self.frame + self._offset(name), value)


class Kprobes:
    """The kprobe manager of one guest: the kernel's kprobe API, and the trap path."""

    def __init__(self, guest: Guest, text: TextPatcher | None = None,
                 tables: Tables | None = None,
                 optimize_delay_ns: int = OPTIMIZE_DELAY * TICK_NSEC) -> None:
        self.guest = guest
        self.machine = guest.machine
        self.arch: Arch = guest.arch
        self.ops = arch_kprobes(self.arch)
        symbols = guest.image.symbols
        missing = [name for name in GUEST_SYMBOLS if name not in symbols]
        if missing:
            raise ConfigError(f"{guest.elf}: no {missing[0]}: the kernel was built "
                              "without CONFIG_KPROBES")
        self.sym = {name: symbols[name] for name in GUEST_SYMBOLS}
        # what the guest calls through a pointer: with a Thumb function's bit 0
        self.fn = {name: symbols.pointer(name) for name in
                   ("kprobe_exc_return", "aggr_pre_handler", "aggr_post_handler")}
        self.text = text if text is not None else TextPatcher(self.machine)
        self.tables = tables if tables is not None else load_tables(guest.image, self.arch)
        self.blacklist_entries = self._populate_kprobe_blacklist()
        self.probes: dict[int, Kprobe] = {}
        self._addrs: list[int] = []               # the keys of probes, sorted
        self._by_struct: dict[int, Kprobe] = {}
        #: CONFIG_KPROBE_POOL: the struct kprobe entries the guest has room for
        (pool,) = symbols.candidates("kprobe_pool")
        self.pool = pool.size // (len(FIELDS) * self.arch.word)
        self._free = list(range(self.pool))
        self._free_rp = list(range(KRETPROBE_POOL))
        self._ri_area = _Extents(KRETPROBE_INSTANCE_BYTES)
        # struct -> its instances' (offset, bytes) and its kretprobe_pool index, if pooled
        self._rp_blocks: dict[int, tuple[int, int, int | None]] = {}
        # instances of unregistered kretprobes past their grace period, some still in flight
        self._orphans: list[tuple[int, int]] = []
        self._rcu = GracePeriods(guest)
        self._caller: int | None = None           # the CPU of a guest module's call
        self._trampoline_handler = next((start, start + size) for start, size, name
                                        in guest.image.functions if name == "trampoline_handler")
        self._rp_by_struct: dict[int, Kretprobe] = {}
        self.optimize_delay_ns = optimize_delay_ns
        #: CONFIG_OPTPROBES on an arch (and build) with optprobes: every kprobe that
        #: can be is an optimized_kprobe (kernel/kprobes.c try_to_optimize_kprobe)
        self.optprobes = has_optprobes(guest)
        #: The debug.kprobes-optimization sysctl (kprobes_allow_optimization): on
        #: by default; :meth:`set_optimization` is its handler
        self.allow_optimization = self.optprobes
        #: How far before an address a probe's saved text may start: its breakpoint
        #: (one instruction), or its optimized region (get_optimized_kprobe)
        self.reach = max(self.arch.max_insn_len,
                         self.ops.MAX_OPTIMIZED_LENGTH if self.optprobes else 0)
        # kernel/kprobes.c optimizing_list (a dict as an ordered set, in queueing
        # order): list_add() puts each probe at its head, so the optimizer takes
        # the newest first (_do_optimize)
        self._optimizing: dict[Kprobe, None] = {}
        self._optimizer_due: int | None = None    # when the delayed optimizer work runs
        self._sites: set[int] = set()             # every address ever armed
        # Per CPU, the open trap frames: (pt_regs address, the fault trap's
        # number, or None for a breakpoint or single-step trap).
        self._frames: list[list[tuple[int, int | None]]] = [[] for _ in self.machine.cpus]
        # The arch's fault traps (intno -> the guest's trap handler), when
        # the kernel was built with them.
        self._fault_traps = {intno: (symbols[name], entry)
                             for intno, (name, entry) in self.ops.FAULT_TRAPS.items()
                             if name in symbols}
        self._returned: dict[int, int] = {}       # CPU -> where its last exception return went
        self._reentries: dict[int, tuple[int, int]] = {}  # CPU -> (breakpoint, returns to it)
        # The arch's guest prologue, if its trap entry has one (TRAP_ENTRY), and
        # the registers only it and kprobe_exc_return save and restore.
        entry = self.ops.TRAP_ENTRY
        self._trap_entry = symbols[entry] if entry else None
        self._guest_saved = frozenset(self.ops.GUEST_SAVED_REGS)
        self._frame_layout()
        # ftrace_location(): the dynamic ftrace records, when the kernel has them.
        self._mcount = sorted(site.address for site in self.tables.mcount
                              if guest.ftrace_boot is not None)
        self._ftrace: Ftrace | None = None
        self._data = _data_in_text(guest.elf)
        # each function's instruction-set bits (a Thumb function's in an ARM kernel)
        self._isa = {s.addr: s.isa for s in symbols.entries if s.kind == "func"}
        self._md = capstone.Cs(*self.arch.cs_mode)
        guest.hypercalls.register("HC_KPROBE", self._hypercall)
        guest.services["KPROBE"] = self._module_call      # the module API's host half
        self.refusals: list[str] = []             # why module calls were refused
        self.machine.add_trap_handler(self._on_trap, TrapPriority.KPROBES)
        #: What arch_init_kprobes registers at boot: PowerPC's kretprobe_trampoline,
        #: a kprobe whose pre_handler takes every probed return.
        self.arch_probes: tuple[Kprobe, ...] = ()
        if self.ops.KRETPROBE_TRAMPOLINE_KPROBE:
            self.arch_probes = (self._register(Kprobe(
                symbol_name="kretprobe_trampoline", pre_handler="trampoline_probe_handler"),
                blacklist=False),)

    # -- the guest's struct kprobe ----------------------------------------
    def _field_addr(self, struct: int, name: str) -> int:
        """The address of field ``name`` of the guest's struct kprobe at ``struct``."""
        return struct + FIELDS.index(name) * self.arch.word

    def read_field(self, kp: Kprobe, name: str) -> int:
        return self.machine.read_word(self._field_addr(kp.struct, name))

    def _hit_counter(self, cpu: int, kp: Kprobe) -> int:
        """The address of ``kprobe_hits[cpu][kp->hit_index]``."""
        return self.sym["kprobe_hits"] + (cpu * self.pool + kp.index) * self.arch.word

    def hits(self, kp: Kprobe) -> int:
        return sum(self.machine.read_word(self._hit_counter(cpu, kp))
                   for cpu in range(len(self.machine.cpus)))

    def kind(self, kp: Kprobe) -> str:
        """How a hit runs the instruction, from the guest's arch_specific_insn now."""
        top = kp.top
        if top.ftrace:
            return "ftrace"
        if top in self._optimizing and self.ops.OPTPROBE_TRAP_RESUME is not None:
            return QUEUED_PATH
        ainsn = tuple(self.read_field(top, f"ainsn{i}") for i in range(4))
        return self.ops.describe_ainsn(ainsn, top.post_handler is not None)

    def _write_field(self, kp: Kprobe, name: str, value: int) -> None:
        self.machine.write_word(self._field_addr(kp.struct, name), value)

    def _bucket(self, addr: int) -> int:
        return self.sym["kprobe_table"] + hash_ptr(addr, self.arch.bits) * self.arch.word

    def _handler_addr(self, handler: object, host_stub: str, what: str) -> int:
        if handler is None:
            return 0
        if isinstance(handler, int):            # a guest address (a module's function)
            return handler
        if callable(handler):
            return self.guest.image.symbols.pointer(host_stub)
        if self._lookup(str(handler)) is None:
            raise PatchError("ENOENT", f"{what} {handler!r} is not a guest symbol")
        return self.guest.image.symbols.pointer(str(handler))   # as the guest calls it

    def _lookup(self, name: str) -> int | None:
        """kallsyms_lookup_name(): ``NAME`` or ``MODULE:NAME``; a name several
        modules define is EINVAL, naming them (kisim does not pick one)."""
        try:
            return self.guest.image.symbols.get(name)
        except SymbolError as err:
            raise PatchError("EINVAL", f"kprobe: {err}") from None

    def recover(self, addr: int, size: int) -> bytes:
        """Text as it was before any of our breakpoints (recover_probed_instruction)."""
        code = bytearray(self.machine.read(addr, size))
        for kp in self._near(addr - self.reach, addr + size):
            orig = kp.opt_orig if kp.optimized else kp.orig
            if not kp.disabled and kp.addr < addr + size and addr < kp.addr + len(orig):
                # an optimized region may start before addr (__recover_optprobed_insn)
                lo, hi = max(addr, kp.addr), min(addr + size, kp.addr + len(orig))
                code[lo - addr:hi - addr] = orig[lo - kp.addr:hi - kp.addr]
        return bytes(code)

    # -- checks (kernel/kprobes.c check_kprobe_address_safe, arch can_probe)
    def resolve(self, kp: Kprobe) -> int:
        """The probed address: ``addr``, or ``symbol_name + offset``; both or neither
        is EINVAL (v5.10 kernel/kprobes.c:_kprobe_addr)."""
        if kp.symbol_name is not None and kp.addr is not None:
            raise PatchError("EINVAL", "kprobe: give symbol_name or addr, not both")
        if kp.symbol_name is not None:
            base = self._lookup(kp.symbol_name)
            if base is None:
                raise PatchError("ENOENT", f"kprobe: no symbol {kp.symbol_name!r}")
        elif kp.addr is None:
            raise PatchError("EINVAL", "kprobe: give symbol_name or addr")
        else:
            base = kp.addr
        # a Thumb-2 kernel: core.c arch_prepare_kprobe "addr &= ~1" (a function
        # pointer's bit, or an odd offset: the probe goes at offset - 1)
        return (base + kp.offset) & ~self.arch.code_isa

    def _function(self, addr: int) -> tuple[int, int, str]:
        """The function ``addr`` is in, as kallsyms sizes it (its padding included:
        v5.10 can_probe() and can_optimize() take kallsyms_lookup_size_offset())."""
        found = self.guest.image.kallsyms_lookup(addr)
        if found is None:
            raise PatchError("EINVAL", f"kprobe: {addr:#x} is not in a kernel text function")
        return found

    def _check_address(self, addr: int, blacklist: bool = True) -> None:
        """In v5.10's order: kernel text (:meth:`_function`), then
        check_kprobe_address_safe (the ftrace site, the blacklist, the boot entry and
        text others reserve: -EINVAL), then arch_prepare_kprobe (the instruction set
        and alignment, -EINVAL; can_probe, -EILSEQ), and data in text (kisim refuses a
        literal pool: docs/kprobes.md)."""
        start, size, name = self._function(addr)
        where = f"kprobe: {name}+{addr - start:#x}"
        site = self.ftrace_location(addr)
        if site is not None:                    # arch_check_ftrace_location
            if not self.ops.KPROBES_ON_FTRACE:
                raise PatchError("EINVAL", f"{where} is an ftrace (mcount) site and "
                                           f"{self.arch.name} has no KPROBES_ON_FTRACE")
            if addr != site:
                raise PatchError("EILSEQ", f"{where} is inside the ftrace (mcount) site "
                                           f"at {site:#x} (arch_check_ftrace_location)")
        why = self.within_kprobe_blacklist(addr) if blacklist else None
        if why is not None:
            raise PatchError("EINVAL", f"{where} is blacklisted ({why})")
        if start <= self.guest.image.entry < start + size:
            raise PatchError("EINVAL", f"{where} is entry text (the boot entry runs before "
                                       "it has a stack)")
        owner = self.reserved_by(addr, 1)
        if owner is not None:
            raise PatchError("EINVAL", f"{where} is {owner} (check_kprobe_address_safe)")
        isa = self._isa.get(start, self.arch.code_isa)
        if isa != self.arch.code_isa:       # arch_prepare_kprobe decodes the kernel's own set
            names = self.arch.isa_names
            raise PatchError("EINVAL", f"{where} is {names[isa]} code: this kernel's kprobes "
                                       f"decode {names[self.arch.code_isa]} instructions only "
                                       "(arch_prepare_kprobe)")
        if addr % self.arch.insn_align:
            raise PatchError("EINVAL", f"{where} is not an instruction boundary (misaligned)")
        if self.ops.CAN_PROBE:              # x86 can_probe(): decode from the function start
            code = self.recover(start, size)
            boundary = None
            for boundary, _, _, _ in self._md.disasm_lite(code, start):
                if boundary >= addr:
                    break
            if boundary != addr:            # arch_prepare_kprobe: !can_probe() is -EILSEQ
                raise PatchError("EILSEQ", f"{where} is not an instruction boundary (can_probe)")
        at = bisect.bisect_right(self._data, (addr, float("inf"))) - 1
        if at >= 0 and self._data[at][0] <= addr < self._data[at][1]:
            raise PatchError("EINVAL", f"{where} is data in text (a literal pool), not an "
                                       "instruction")

    def _populate_kprobe_blacklist(self) -> list[BlacklistEntry]:
        """populate_kprobe_blacklist (v5.10 kernel/kprobes.c): each NOKPROBE_SYMBOL
        function in _kprobe_blacklist's order, then the functions of .kprobes.text
        by address (kprobe_add_area_blacklist). Each runs from its entry for the
        size kallsyms gives it (kprobe_add_ksym_blacklist): up to the next symbol,
        so the padding after a function is blacklisted with it."""
        image = self.guest.image
        entries = []
        for fn in self.tables.nokprobe:
            _, size, name = image.kallsyms_lookup(fn.address)
            entries.append(BlacklistEntry(fn.address, fn.address + size, name,
                                          f"NOKPROBE_SYMBOL({fn.name})"))
        first, end = self._kprobes_text
        functions = image.functions         # by address: the range is a slice of it
        for start, _, _ in functions[bisect.bisect_left(functions, (first,)):
                                     bisect.bisect_left(functions, (end,))]:
            _, size, name = image.kallsyms_lookup(start)
            entries.append(BlacklistEntry(start, start + size, name, "in .kprobes.text"))
        return entries

    @functools.cached_property
    def _kprobes_text(self) -> tuple[int, int]:
        """[__kprobes_text_start, __kprobes_text_end): the __kprobes functions
        (kernel/kernel.lds, as v5.10's KPROBES_TEXT places them)."""
        symbols = self.guest.image.symbols
        return symbols["__kprobes_text_start"], symbols["__kprobes_text_end"]

    def within_kprobe_blacklist(self, addr: int) -> str | None:
        """Why v5.10's within_kprobe_blacklist() holds for ``addr``, or None: in
        .kprobes.text (arch_within_kprobe_blacklist), in an entry of the list, or
        in a compiler's copy of a listed function (``NAME.suffix``: NAME's entry)."""
        first, end = self._kprobes_text
        if first <= addr < end:
            return "in .kprobes.text"
        found = next((e.why for e in self.blacklist_entries if e.start <= addr < e.end), None)
        if found is not None:
            return found
        at = self.guest.image.symbol_at(addr)
        if at is None or "." not in at[0]:
            return None
        # kprobe_lookup_name() (kallsyms_lookup_name): the first of that name
        base = self.guest.image.symbols.candidates(at[0].partition(".")[0])
        return self.within_kprobe_blacklist(base[0].addr) if base else None

    def blacklist(self) -> list[str]:
        """debugfs kprobes/blacklist (kprobe_blacklist_seq_show): ``0x%px-0x%px\\t%ps``,
        each entry's range and function, in the list's order."""
        width = self.arch.bits // 4
        return [f"0x{e.start:0{width}x}-0x{e.end:0{width}x}\t{e.name}"
                for e in self.blacklist_entries]

    def reserved_by(self, addr: int, length: int) -> str | None:
        """Who else owns text in ``[addr, addr+length)``: a static key's site
        (jump_label_text_reserved), an immediate value's, or text another
        mechanism holds now; None if nobody (ftrace sites are ftrace_location's)."""
        end = addr + length
        if any(e.code < end and addr < e.code + len(e.insn) for e in self.tables.jump_entries):
            return "a static key's jump label site (jump_label_text_reserved)"
        if any(e.insn < end and addr < e.insn + e.length
               for e in self.tables.imv):
            return "an immediate value's site (imv)"
        others = [o for o in self.text.owners(addr, length) if o not in ("kprobe", "ftrace")]
        return f"reserved by {others[0]}" if others else None

    def ftrace_location(self, addr: int) -> int | None:
        """The dynamic ftrace site covering ``addr`` (kernel/trace/ftrace.c
        ftrace_location: any byte of the call), or None."""
        at = bisect.bisect_right(self._mcount, addr) - 1
        if at >= 0 and addr < self._mcount[at] + self.arch.ops.MCOUNT_INSN_SIZE:
            return self._mcount[at]
        return None

    def ftrace_location_range(self, start: int, end: int) -> int | None:
        """The first dynamic ftrace site in ``[start, end]`` (kernel/trace/ftrace.c,
        inclusive end), or None; always None in a kernel without dynamic ftrace."""
        at = bisect.bisect_left(self._mcount, start)
        return self._mcount[at] if at < len(self._mcount) and self._mcount[at] <= end else None

    @property
    def dynamic_ftrace(self) -> bool:
        """The kernel has dynamic ftrace records (CONFIG_DYNAMIC_FTRACE)."""
        return bool(self._mcount)

    def ftrace(self) -> Ftrace:
        """The guest's ftrace, which ftrace-based kprobes (KPROBE_FLAG_FTRACE) go through."""
        if self._ftrace is None:
            self._ftrace = ftrace_for(self.guest, self.tables)
        return self._ftrace

    # -- the API ------------------------------------------------------------
    def register_kprobe(self, kp: Kprobe) -> Kprobe:
        """Check, prepare, link and arm one kprobe; PatchError with a one-line reason."""
        return self._register(kp)

    def _register(self, kp: Kprobe, struct: int | None = None, blacklist: bool = True) -> Kprobe:
        if kp.owner is self and self._registered(kp):
            raise PatchError("EINVAL", "kprobe: this kprobe is already registered "
                                       "(check_kprobe_rereg)")
        kp._refill()
        addr = self.resolve(kp)
        self._check_address(addr, blacklist)
        kp.ftrace = self.ftrace_location(addr) is not None
        old = self.probes.get(addr)
        if old is not None and len(self._free) < (1 if old.members else 2):
            raise self._enomem()                # alloc_aggr_kprobe
        pre = self._handler_addr(kp.pre_handler, "kprobe_host_pre_handler", "pre_handler")
        post = self._handler_addr(kp.post_handler, "kprobe_host_post_handler", "post_handler")
        fault = self._fault_handler_addr(kp)
        if old is not None:
            return self._register_aggr(old, kp, struct, (pre, post, fault))
        prepared = self._prepare(kp, addr, self._free[0] if self._free else None, struct)
        self._write_struct(kp, prepared, (pre, post, fault),
                           self.machine.read_word(self._bucket(addr)))
        self.machine.write_word(self._bucket(addr), kp.struct)
        self.probes[addr] = kp
        bisect.insort(self._addrs, addr)
        self._by_struct[kp.struct] = kp
        if not kp.disabled:
            self._arm(kp)
        self.try_to_optimize_kprobe(kp)
        return kp

    def _fault_handler_addr(self, kp: Kprobe) -> int:
        """The fault_handler's address; refused where no fault reaches
        kprobe_fault_handler (the arch's v5.10 callers are page faults)."""
        if kp.fault_handler is None:
            return 0
        if not self._fault_traps:
            raise PatchError("EINVAL", f"kprobe: fault_handler would never run on "
                                       f"{self.arch.name}: its kernel calls it on page faults "
                                       "only, which kisim cannot deliver (docs/kprobes.md)")
        return self._handler_addr(kp.fault_handler, "kprobe_host_fault_handler",
                                  "fault_handler")

    def _enomem(self) -> PatchError:
        return PatchError("ENOMEM", f"kprobe: all {self.pool} kprobes are in use "
                                    "(CONFIG_KPROBE_POOL)")

    def _prepare(self, kp: Kprobe, addr: int, index: int | None,
                 struct: int | None) -> Prepared:
        """arch_prepare_kprobe into the slot of pool entry ``index``, which ``kp`` takes;
        an ftrace-based kprobe (``kp.ftrace``) has no slot and no breakpoint
        (kernel/kprobes.c prepare_kprobe). With no entry left (``index`` None) it is
        ENOMEM where the arch's get_insn_slot fails: before the copy on x86, after
        ARM's and PowerPC's refusals (INSN_SLOT_FIRST)."""
        if index is None and (kp.ftrace or self.ops.INSN_SLOT_FIRST):
            raise self._enomem()
        # without an entry, the arch decodes for slot 0 only to refuse: nothing is written
        slot = self.sym["kprobe_insn_slots"] + (index or 0) * self.ops.SLOT_BYTES
        code = self.recover(addr, self.arch.max_insn_len)
        if kp.ftrace:
            prepared = Prepared(opcode=code[0],
                                slot=b"", ainsn=(0, 0, 0, 0), boostable=False, kind="ftrace")
        else:
            try:
                prepared = self.ops.arch_prepare_kprobe(addr, code, slot)
            except KprobeRefused as err:
                start, _, name = self._function(addr)
                raise PatchError("EINVAL", f"kprobe: cannot probe {name}+{addr - start:#x}: "
                                           f"{err}") from None
        if index is None:
            raise self._enomem()
        self._free.remove(index)
        kp.addr, kp.index, kp.slot, kp.owner = addr, index, slot, self
        kp.struct = struct if struct is not None else self._pool_struct(index)
        kp.boostable = prepared.boostable
        if not kp.ftrace:
            kp.breakpoint = self.arch.kprobe_breakpoint(code[:self.arch.insn_align or 4])
            kp.orig = code[:len(kp.breakpoint)]
            with self.machine.text_mutex:   # the slot is text: written under text_mutex
                self.machine.write_text(slot, prepared.slot)
        return prepared

    def _pool_struct(self, index: int) -> int:
        return self.sym["kprobe_pool"] + index * len(FIELDS) * self.arch.word

    def _write_struct(self, kp: Kprobe, prepared: Prepared, handlers: tuple[int, int, int],
                      nxt: int, first: int = 0) -> None:
        """Fill ``kp``'s struct kprobe (``handlers``: pre, post, fault) and zero its
        hit counters."""
        pre, post, fault = handlers
        values = {"next": nxt, "addr": kp.addr, "pre_handler": pre, "post_handler": post,
                  "fault_handler": fault,
                  "flags": (FLAG_DISABLED if kp.disabled else 0) | (FLAG_FTRACE if kp.ftrace else 0),
                  "nmissed": 0,
                  "opcode": prepared.opcode, "hit_index": kp.index, "list": first}
        values.update({f"ainsn{i}": v for i, v in enumerate(prepared.ainsn)})
        for name in FIELDS:
            if name not in CALLER_FIELDS:
                self._write_field(kp, name, values[name])
        for cpu in range(len(self.machine.cpus)):
            self.machine.write_word(self._hit_counter(cpu, kp), 0)

    def _relink(self, head: int, field_name: str, old: int, new: int) -> None:
        """Point the link in a chain (from ``head``, through ``field_name``) that
        holds ``old`` at ``new``."""
        link = head
        while (node := self.machine.read_word(link)) != old:
            link = self._field_addr(node, field_name)
        self.machine.write_word(link, new)

    def _register_aggr(self, old: Kprobe, kp: Kprobe, struct: int | None,
                       handlers: tuple[int, int, int]) -> Kprobe:
        """register_aggr_kprobe: a second probe at a probed address.

        The first time, an aggr_kprobe takes the first probe's place in
        kprobe_table (init_aggr_kprobe, with its own copy of the
        instruction) and lists it; each new probe joins the list at its head
        (add_new_kprobe). A probe with a post_handler gives the aggr_kprobe
        aggr_post_handler, which also stops it being optimized. Where faults
        are delivered, its fault_handler is aggr_fault_handler.
        """
        ap = old if old.members else self._init_aggr_kprobe(old)
        index = self._free.pop(0)
        kp.addr, kp.index, kp.owner, kp.aggr = ap.addr, index, self, ap
        kp.struct = struct if struct is not None else self._pool_struct(index)
        kp.slot, kp.orig, kp.breakpoint, kp.boostable = ap.slot, ap.orig, ap.breakpoint, ap.boostable
        ainsn = tuple(self.read_field(ap, f"ainsn{i}") for i in range(4))
        # add_new_kprobe: list_add_rcu() puts it first, so the newest probe's handlers
        # run first (aggr_pre_handler walks the list) and kprobes/list shows it first
        self._write_struct(kp, Prepared(opcode=self.read_field(ap, "opcode"), slot=b"",
                                        ainsn=ainsn, boostable=kp.boostable, kind=""),
                           handlers, 0, self.read_field(ap, "list"))
        self._write_field(ap, "list", kp.struct)
        ap.members.insert(0, kp)
        self._by_struct[kp.struct] = kp
        if kp.post_handler is not None and ap.post_handler is None:
            self.unoptimize_kprobe(ap)
            ap.post_handler = "aggr_post_handler"
            self._write_field(ap, "post_handler", self.fn["aggr_post_handler"])
        if ap.disabled and not kp.disabled:
            self.enable_kprobe(ap)
        return kp

    def _init_aggr_kprobe(self, old: Kprobe,
                          detour: tuple[int, bytes, int] | None = None) -> Kprobe:
        """alloc_aggr_kprobe and init_aggr_kprobe: an aggr_kprobe (with optprobes an
        optimized_kprobe, its detour prepared where it can be, or ``detour`` as
        :meth:`_prepare_detour` gave it) takes the place of the plain probe ``old`` in
        kprobe_table and lists it."""
        ap = Kprobe(pre_handler="aggr_pre_handler",
                    post_handler="aggr_post_handler" if old.post_handler else None,
                    disabled=old.disabled, members=[old], ftrace=old.ftrace)
        prepared = self._prepare(ap, old.addr, self._free[0], None)
        ap.breakpoint, ap.orig = old.breakpoint, old.orig
        aggr_fault = (self.guest.image.symbols.pointer("aggr_fault_handler")
                      if self._fault_traps else 0)
        self._write_struct(ap, prepared, (
            self.fn["aggr_pre_handler"],
            self.fn["aggr_post_handler"] if old.post_handler else 0, aggr_fault),
            self.read_field(old, "next"), old.struct)
        self._relink(self._bucket(old.addr), "next", old.struct, ap.struct)
        self._write_field(old, "next", 0)
        self.probes[old.addr] = old.aggr = ap
        if detour is None and self.optprobes and not ap.ftrace:
            try:
                detour = self._prepare_detour(ap.addr, ap.index)
            except PatchError:
                pass
        if detour is not None:
            buffer, code, ap.opt_region = detour
            with self.machine.text_mutex:   # arch_prepare_optimized_kprobe fills the buffer
                self.machine.write_text(buffer, code)
            ap.opt_jump = self.ops.arch_optimize_kprobe(ap.addr, buffer, ap.breakpoint)
        return ap

    def register_kprobes(self, kps: list[Kprobe]) -> list[Kprobe]:
        """Register each; on a refusal, unregister the ones already done and re-raise.
        None to register is -EINVAL (v5.10: ``num <= 0``)."""
        if not kps:
            raise PatchError("EINVAL", "kprobe: register_kprobes of no kprobes")
        done: list[Kprobe] = []
        try:
            for kp in kps:
                done.append(self.register_kprobe(kp))
        except PatchError:
            for kp in done:
                self.unregister_kprobe(kp)
            raise
        return done

    def _registered(self, kp: Kprobe) -> bool:
        """__get_valid_kprobe: in kprobe_table, or in the list of an aggr_kprobe there."""
        return self.probes.get(kp.addr) is kp or (kp.aggr is not None and kp in kp.aggr.members)

    def unregister_kprobe(self, kp: Kprobe) -> None:
        """Disarm, unlink from kprobe_table and free the struct (kernel/kprobes.c).

        A probe of an aggr_kprobe leaves its list (__unregister_kprobe_top);
        the aggr_kprobe goes with its last probe. One not registered only gets
        ``addr`` None, as unregister_kprobes() sets it NULL: it returns nothing.
        """
        if not self._registered(kp):
            kp.addr = None
            return
        ap = kp.aggr
        if ap is not None and kp in ap.members:
            self._relink(self._field_addr(ap.struct, "list"), "list", kp.struct,
                         self.read_field(kp, "list"))
            ap.members.remove(kp)
            self._free_struct(kp)
            if not ap.members:
                self.unregister_kprobe(ap)
                return
            if kp.post_handler is not None and all(m.post_handler is None for m in ap.members):
                ap.post_handler = None
                self._write_field(ap, "post_handler", 0)
            if all(m.disabled for m in ap.members):
                self.disable_kprobe(ap)
            else:                                # its post_handler may have gone
                self._optimize_kprobe(ap)
            return
        if not kp.disabled:
            self._disarm(kp)
        self._relink(self._bucket(kp.addr), "next", kp.struct, self.read_field(kp, "next"))
        del self.probes[kp.addr]
        self._addrs.pop(bisect.bisect_left(self._addrs, kp.addr))
        self._free_struct(kp)
        if not kp.ftrace:
            self._reoptimize(kp.addr)

    def _free_struct(self, kp: Kprobe) -> None:
        """The struct leaves the manager KPROBE_FLAG_DISABLED, as __unregister_kprobe_top's
        __disable_kprobe leaves it (KPROBE_FLAG_GONE is kill_kprobe's, a module unloaded)."""
        self._write_field(kp, "flags", self.read_field(kp, "flags") | FLAG_DISABLED)
        self._by_struct.pop(kp.struct, None)
        self._free.append(kp.index)             # reused last: no CPU can still be in it
        kp.disabled = True

    def disable_kprobe(self, kp: Kprobe) -> None:
        """Disarm but keep registered ([DISABLED] in the list); a probe of an
        aggr_kprobe is only flagged, and the aggr_kprobe disarmed with the last.
        -EINVAL for one not registered (__disable_kprobe)."""
        if not self._registered(kp):
            raise PatchError("EINVAL", f"kprobe at {kp.addr or 0:#x} is not registered")
        if not kp.disabled:
            if not kp.members and kp.aggr is None:
                self._disarm(kp)
            kp.disabled = True
            self._write_field(kp, "flags", self.read_field(kp, "flags") | FLAG_DISABLED)
            if kp.aggr is not None and all(m.disabled for m in kp.aggr.members):
                self.disable_kprobe(kp.aggr)
            elif kp.members:
                self._disarm(kp)
            if self.probes.get(kp.addr) is kp and not kp.ftrace:
                self._reoptimize(kp.addr)

    def enable_kprobe(self, kp: Kprobe) -> None:
        """Rearm a disabled probe, or its aggr_kprobe (kernel/kprobes.c enable_kprobe);
        -EINVAL for one not registered (__get_valid_kprobe)."""
        if not self._registered(kp):
            raise PatchError("EINVAL", f"kprobe at {kp.addr or 0:#x} is not registered")
        if kp.disabled:
            self._write_field(kp, "flags", self.read_field(kp, "flags") & ~FLAG_DISABLED)
            kp.disabled = False
            if kp.aggr is not None:
                self.enable_kprobe(kp.aggr)
            else:
                self._arm(kp)

    # -- return probes --------------------------------------------------------
    def read_rp(self, rp: Kretprobe, name: str) -> int:
        return self.machine.read_word(self._rp_addr(rp.struct, name))

    def _rp_addr(self, struct: int, name: str) -> int:
        return struct + (len(FIELDS) + RP_FIELDS.index(name)) * self.arch.word

    def register_kretprobe(self, rp: Kretprobe, struct: int | None = None) -> Kretprobe:
        """register_kretprobe: instances, then the entry kprobe (kernel/kprobes.c).

        ``struct`` is a guest struct kretprobe to use (a module's); None
        takes one from kretprobe_pool[]. Every check is made before anything
        is taken, so a refusal leaves nothing behind."""
        if self._rp_registered(rp):         # check_kprobe_rereg, as the stable series has it
            raise PatchError("EINVAL", "kretprobe: this kretprobe is already registered "
                                       "(check_kprobe_rereg)")
        try:
            addr = self.resolve(Kprobe(symbol_name=rp.symbol_name, offset=rp.offset,
                                       addr=rp.addr))
        except PatchError as err:
            # v5.10 kprobe_on_func_entry() is a bool: any failure is -EINVAL
            # (v5.11 made an unknown symbol -ENOENT).
            raise PatchError("EINVAL", f"kretprobe: {err.message} (kprobe_on_func_entry)") from None
        where = self.guest.image.symbol_at(addr)
        if addr == self.sym["kretprobe_trampoline"]:
            raise PatchError("EINVAL", "kretprobe: not on the kretprobe trampoline itself")
        if where is not None and where[0] in self.ops.KRETPROBE_BLACKLIST:
            raise PatchError("EINVAL", f"kretprobe: {where[0]} is in kretprobe_blacklist")
        if where is None or where[1] != 0:
            raise PatchError("EINVAL", f"kretprobe: {self.guest.image.describe(addr)} is not "
                                       "a function entry (kprobe_on_func_entry)")
        if rp.entry_handler is not None and callable(rp.entry_handler):
            raise PatchError("EINVAL", "kretprobe: entry_handler must be a guest function")
        handler = self._handler_addr(rp.handler, "kretprobe_host_handler", "handler")
        entry = self._handler_addr(rp.entry_handler, "kretprobe_host_handler", "entry_handler")
        maxactive = rp.maxactive if rp.maxactive > 0 else len(self.machine.cpus)
        word = self.arch.word
        ri_bytes = -(-(len(RI_FIELDS) * word + rp.data_size) // word) * word
        self._reclaim()
        if (rp.data_size < 0 or (struct is None and not self._free_rp)
                or self._ri_area.largest() < maxactive * ri_bytes):
            waiting = self._rcu.pending() + len(self._orphans)
            raise PatchError("ENOMEM", f"kretprobe: no room for {maxactive} more instances "
                                       f"of {ri_bytes} bytes" + (
                                           f" ({waiting} unregistered kretprobes wait for a "
                                           "grace period or their instances in flight)"
                                           if waiting else ""))
        index = self._free_rp[0] if struct is None else None
        if index is not None:
            struct = self.sym["kretprobe_pool"] + index * (len(FIELDS) + len(RP_FIELDS)) * word
        kp = Kprobe(addr=addr, pre_handler="pre_handler_kretprobe", probe_type="r",
                    disabled=rp.disabled)
        self._register(kp, struct=struct)
        if index is not None:
            self._free_rp.pop(0)
        offset = self._ri_area.take(maxactive * ri_bytes)
        self._rp_blocks[struct] = (offset, maxactive * ri_bytes, index)
        area = self.sym["kretprobe_instance_area"] + offset
        instances = [area + i * ri_bytes for i in range(maxactive)]
        for ri, nxt in zip(instances, instances[1:] + [0]):
            self.machine.write_word(ri, nxt)
            self.machine.write_word(ri + word, struct)
        for name, value in (("handler", handler), ("entry_handler", entry),
                            ("maxactive", maxactive), ("nmissed", 0),
                            ("data_size", rp.data_size),
                            ("free_instances", instances[0]), ("lock", 0)):
            self.machine.write_word(self._rp_addr(struct, name), value)
        rp.kp, rp.struct, rp.owner, rp.maxactive = kp, struct, self, maxactive
        rp.addr = addr
        self._rp_by_struct[struct] = rp
        return rp

    def unregister_kretprobe(self, rp: Kretprobe) -> None:
        """Remove the entry probe; instances in flight still return through the
        trampoline, but lose their kretprobe (v5.10 cleanup_rp_inst: ri->rp =
        NULL), so no handler runs for them and they are not recycled. One not
        registered only gets ``addr`` None (unregister_kretprobes returns nothing).

        The struct's pool slot and its instances are freed after a grace
        period (v5.10 synchronize_rcu, then free_rp_inst), the instances
        once none is in flight any more (:meth:`_reclaim`)."""
        if not self._rp_registered(rp):
            rp.addr = None
            return
        self.unregister_kprobe(rp.kp)
        rp_field = RI_FIELDS.index("rp") * self.arch.word
        for ri in self._instances_in_flight():
            if self.machine.read_word(ri + rp_field) == rp.struct:
                self.machine.write_word(ri + rp_field, 0)
        del self._rp_by_struct[rp.struct]
        offset, size, index = self._rp_blocks.pop(rp.struct)
        self._rcu.call_rcu(lambda: self._orphaned(offset, size, index), caller=self._caller)

    def _rp_registered(self, rp: Kretprobe) -> bool:
        """``rp`` is registered here (its struct is this manager's, and its own)."""
        return rp.kp is not None and self._rp_by_struct.get(rp.struct) is rp

    def _orphaned(self, offset: int, size: int, index: int | None) -> None:
        """An unregistered kretprobe's grace period is over: no CPU is in its handlers."""
        if index is not None:
            self._free_rp.append(index)         # reused last, as kprobe_pool's structs
        self._orphans.append((offset, size))

    def _instances_in_flight(self) -> Iterator[int]:
        """Every kretprobe_instance in kretprobe_inst_table: a probed call not yet returned."""
        return self._chains("kretprobe_inst_table")

    def _chains(self, table: str) -> Iterator[int]:
        """Every node of a guest hash table (kprobe_table, kretprobe_inst_table), bucket
        by bucket, each chain from its head; a node's first word is its ``next``."""
        word = self.arch.word
        for bucket in range(1 << KPROBE_HASH_BITS):
            node = self.machine.read_word(self.sym[table] + bucket * word)
            while node:
                yield node
                node = self.machine.read_word(node)

    def _reclaim(self) -> None:
        """Free the instances of unregistered kretprobes past their grace period,
        each block once none of its instances is in flight and no CPU is in
        trampoline_handler (between unlinking an instance and dropping it).
        v5.10 kfrees each in-flight one as it returns; kisim frees a block
        whole, so a call that never returns keeps its block."""
        self._rcu.pending()                     # CPUs halted since: their grace periods end
        start, end = self._trampoline_handler
        if not self._orphans or any(start <= cpu.pc < end for cpu in self.machine.cpus):
            return
        area = self.sym["kretprobe_instance_area"]
        flying = sorted(self._instances_in_flight())
        keep = []
        for offset, size in self._orphans:
            i = bisect.bisect_left(flying, area + offset)
            if i < len(flying) and flying[i] < area + offset + size:
                keep.append((offset, size))
            else:
                self._ri_area.give(offset, size)
        self._orphans = keep

    # -- the module API: guest C calls (HC_MODULE, MOD_KPROBE_*) ------------------
    def _module_call(self, cpu: Cpu, op: str, struct: int, _a3: int) -> int:
        """register_kprobe() and the rest, called by a guest module with its own
        struct: the kernel's work at the point of the call, the text patched
        from the calling CPU (it pays the flushes and its share of the sync
        rounds). 0, or the kernel's -errno; the reason is kept in :attr:`refusals`."""
        call = {"MOD_KPROBE_REGISTER": self._guest_register,
                "MOD_KPROBE_UNREGISTER": lambda s: self._guest_unregister(
                    s, self._by_struct, self.unregister_kprobe),
                "MOD_KPROBE_ENABLE": lambda s: self.enable_kprobe(self._guest_probe(s)),
                "MOD_KPROBE_DISABLE": lambda s: self.disable_kprobe(self._guest_probe(s)),
                "MOD_KPROBE_REGISTER_RET": self._guest_register_kretprobe,
                "MOD_KPROBE_UNREGISTER_RET": lambda s: self._guest_unregister(
                    s, self._rp_by_struct, self.unregister_kretprobe)}[op]
        try:
            with self.text.on_cpu(cpu.index):
                self._caller = cpu.index        # it sleeps in synchronize_rcu: quiescent
                call(struct)
        except PatchError as err:
            self.refusals.append(f"{op.removeprefix('MOD_KPROBE_').lower()}: {err.message}")
            reason = err.message.encode()[:_DEFINES["KPROBE_REFUSAL_LEN"] - 1]
            self.machine.write(self.guest.image.symbols["kprobe_last_refusal"], reason + b"\0")
            return -ERRNO[err.errno]
        finally:
            self._caller = None
        return 0

    def _guest_word(self, struct: int, name: str) -> int:
        if name in RP_FIELDS:
            return self.machine.read_word(self._rp_addr(struct, name))
        return self.machine.read_word(self._field_addr(struct, name))

    def _guest_where(self, struct: int) -> dict:
        """symbol_name + offset or addr of a module's struct kprobe (_kprobe_addr:
        exactly one of the two, else -EINVAL)."""
        name, addr = self._guest_word(struct, "symbol_name"), self._guest_word(struct, "addr")
        if bool(name) == bool(addr):
            raise PatchError("EINVAL", "kprobe: give symbol_name or addr, not both "
                                       "(_kprobe_addr)")
        return {"symbol_name": self.guest.read_string(name, 256) if name else None,
                "addr": addr or None, "offset": self._guest_word(struct, "offset")}

    def _guest_probe(self, struct: int) -> Kprobe:
        kp = self._by_struct.get(struct)
        if kp is None:
            raise PatchError("EINVAL", f"kprobe: the struct kprobe at {struct:#x} is not "
                                       "registered")
        return kp

    def _guest_register(self, struct: int) -> None:
        if struct in self._by_struct:
            raise PatchError("EINVAL", "kprobe: this kprobe is already registered "
                                       "(check_kprobe_rereg)")
        handlers = {name: self._guest_word(struct, name) or None
                    for name in ("pre_handler", "post_handler", "fault_handler")}
        # register_kprobe: p->flags &= KPROBE_FLAG_DISABLED
        disabled = bool(self._guest_word(struct, "flags") & FLAG_DISABLED)
        self._register(Kprobe(**self._guest_where(struct), **handlers, disabled=disabled),
                       struct=struct)

    def _guest_unregister(self, struct: int, registered: dict,
                          unregister: Callable[[object], None]) -> None:
        """unregister_k(ret)probes(): a probe that was not registered gets addr = NULL."""
        probe = registered.get(struct)
        if probe is None:
            self.machine.write_word(self._field_addr(struct, "addr"), 0)
        else:
            unregister(probe)

    def _guest_register_kretprobe(self, struct: int) -> None:
        if struct in self._rp_by_struct:
            raise PatchError("EINVAL", "kretprobe: this kretprobe is already registered "
                                       "(check_kprobe_rereg)")
        rp = Kretprobe(**self._guest_where(struct),
                       handler=self._guest_word(struct, "handler") or None,
                       entry_handler=self._guest_word(struct, "entry_handler") or None,
                       maxactive=_signed(self._guest_word(struct, "maxactive"), self.arch.bits),
                       data_size=self._guest_word(struct, "data_size"),
                       disabled=bool(self._guest_word(struct, "flags") & FLAG_DISABLED))
        self.register_kretprobe(rp, struct=struct)

    # -- optprobes ---------------------------------------------------------------
    def try_to_optimize_kprobe(self, kp: Kprobe) -> None:
        """What register_kprobe() ends with in a kernel with optprobes (kernel/kprobes.c).

        Where the arch can prepare a detour for the plain probe ``kp`` (its
        can_optimize() and copy_optimized_instructions()), an optimized_kprobe,
        an aggr_kprobe with the detour in its buffer, takes ``kp``'s place, and
        optimize_kprobe() queues it for the optimizer: whatever the sysctl, a
        post_handler or a probe in the region, ``kp``'s hits now run through
        aggr_pre_handler. Where it cannot (or no struct kprobe is left for the
        aggr_kprobe, alloc_aggr_kprobe's failed kzalloc), ``kp`` stays as it is.
        """
        if not self.optprobes or kp.ftrace or not self._free:
            return
        try:
            detour = self._prepare_detour(kp.addr, self._free[0])
        except PatchError:
            return
        self._optimize_kprobe(self._init_aggr_kprobe(kp, detour))

    def _prepare_detour(self, addr: int, index: int) -> tuple[int, bytes, int]:
        """arch_prepare_optimized_kprobe for the optimized_kprobe at ``addr`` that takes
        pool entry ``index``: its buffer's address, the detour's bytes and the region's
        length, or :class:`PatchError` with the reason the kernel cannot prepare it.
        Writes nothing."""
        check_optprobes(self.guest)
        start, size, name = self._function(addr)
        where = f"{name}+{addr - start:#x}"
        buffer = self.guest.image.symbols["optprobe_buffers"] + index * self.ops.OPTPROBE_BUFFER_BYTES
        try:
            detour, length = self.ops.arch_prepare_optimized_kprobe(
                addr, (start, self.recover(start, size)), buffer,
                self.guest.image.symbols["optimized_callback"], self._pool_struct(index))
        except KprobeRefused as err:
            raise PatchError("EINVAL", f"kprobe: cannot optimize {where}: {err}") from None
        if length > self.ops.MAX_OPTIMIZED_LENGTH:      # the arch's bug: self.reach misses it
            raise ValueError(f"{self.arch.name}: a detoured region of {length} bytes at "
                             f"{where}, past MAX_OPTIMIZED_LENGTH")
        owner = self.reserved_by(addr, length)
        if owner is None and self.ftrace_location_range(addr, addr + length - 1) is not None:
            owner = "an ftrace (mcount) site (ftrace_text_reserved)"
        if owner is not None:           # copy_optimized_instructions: -EBUSY
            raise PatchError("EBUSY", f"kprobe: cannot optimize {where}: the "
                                      f"detoured region holds {owner}")
        return buffer, detour, length

    def _not_optimized(self, ap: Kprobe) -> PatchError | None:
        """Why optimize_kprobe() leaves the registered top-level probe ``ap`` as it is
        (kernel/kprobes.c, and arch_check_optimized_kprobe), or None."""
        if ap.ftrace:
            return PatchError("EINVAL", "kprobe: an ftrace-based kprobe is not optimized "
                                        "(try_to_optimize_kprobe)")
        if not ap.members or not ap.opt_region:
            try:
                self._prepare_detour(ap.addr, self._free[0] if self._free else ap.index)
            except PatchError as err:
                return err
            return PatchError("ENOMEM", "kprobe: no struct kprobe was left for its "
                                        "optimized_kprobe")
        why = ("optimization is off (debug.kprobes-optimization = 0)"
               if not self.allow_optimization else
               "a disabled probe is not optimized" if ap.disabled else
               "a probe with a post_handler is not optimized" if ap.post_handler else None)
        if why is None:
            others = [p.addr for p in self._near(ap.addr + 1, ap.addr + ap.opt_region)
                      if not p.disabled]
            why = (f"cannot optimize {ap.describe()}: another probe at {others[0]:#x} is "
                   "in the detoured region") if others else None
        return PatchError("EINVAL", f"kprobe: {why}") if why else None

    def _optimize_kprobe(self, ap: Kprobe) -> None:
        """optimize_kprobe: flag the optimized_kprobe ``ap`` KPROBE_FLAG_OPTIMIZED and
        queue it for the optimizer, which runs OPTIMIZE_DELAY jiffies after it is
        kicked (``optimize_delay_ns`` of modeled time, measured on the CPUs' clocks,
        when :meth:`kprobe_optimizer` is the run's ``on_turn`` hook). Until then hits
        take the breakpoint, and the arch's trap path may already use the detour
        (x86 setup_detour_execution). Nothing where :meth:`_not_optimized` says why."""
        if (not ap.opt_region or ap.optimized or ap in self._optimizing
                or self._not_optimized(ap) is not None):
            return
        self._write_field(ap, "flags", self.read_field(ap, "flags") | FLAG_OPTIMIZED)
        self._optimizing[ap] = None
        if self._optimizer_due is None:     # kick_kprobe_optimizer: one delayed work
            self._optimizer_due = self.now_ns() + self.optimize_delay_ns

    def queued(self, kp: Kprobe) -> bool:
        """Whether ``kp``'s optimized_kprobe waits for the optimizer."""
        return kp.top in self._optimizing

    def set_optimization(self, allow: bool) -> None:
        """The debug.kprobes-optimization sysctl (proc_kprobes_optimization_handler):
        0 unoptimizes every probe (unoptimize_all_kprobes), 1 queues every one that
        can be optimized (optimize_all_kprobes). EINVAL in a kernel without
        optprobes, which has no such sysctl."""
        check_optprobes(self.guest)
        if allow == self.allow_optimization:
            return
        self.allow_optimization = allow
        for ap in list(self.probes.values()):
            if allow:
                self._optimize_kprobe(ap)
            else:
                self.unoptimize_kprobe(ap)

    def now_ns(self) -> int:
        """Modeled time: the furthest any CPU's clock has run."""
        return max(cpu.clock_ns for cpu in self.machine.cpus)

    def kprobe_optimizer(self, machine: object = None) -> None:
        """The delayed work, as an ``on_turn`` hook: once the modeled clock passes
        the deadline, optimize the queued probes (see :meth:`_do_optimize`)."""
        if self._optimizer_due is not None and self.now_ns() >= self._optimizer_due:
            self._do_optimize()

    def wait_for_kprobe_optimizer(self) -> None:
        """Run the queued optimizer work now (kernel/kprobes.c, flush_delayed_work)."""
        self._do_optimize(force=True)

    def optimize_now(self, kp: Kprobe) -> None:
        """The probe as v5.10 has it once its optimizer has run, OPTIMIZE_DELAY
        jiffies after registering it: the queue flushed (:meth:`wait_for_kprobe_optimizer`),
        ``kp``'s breakpoint now a jump into its detour. :class:`PatchError` (EINVAL,
        EBUSY) with the reason where the kernel does not optimize it."""
        ap = kp.top
        if not self._registered(kp):
            raise PatchError("EINVAL", "kprobe: only a registered probe is optimized")
        if not ap.optimized and ap not in self._optimizing:
            raise self._not_optimized(ap) or PatchError(
                "EINVAL", "kprobe: not queued for the optimizer")
        self.wait_for_kprobe_optimizer()

    def _inside(self, kp: Kprobe) -> bool:
        """A CPU is between the region's instructions, in the probe's slot, or in
        a kprobe handler: the kernel waits for such tasks (synchronize_rcu_tasks)."""
        for cpu in self.machine.cpus:
            pc = cpu.pc
            if (self._frames[cpu.index] or kp.addr < pc < kp.addr + kp.opt_region
                    or kp.slot <= pc < kp.slot + self.ops.SLOT_BYTES):
                return True
        return False

    def _do_optimize(self, force: bool = False) -> None:
        """do_optimize_kprobes: each queued probe's breakpoint becomes the jump
        (x86 through text_poke_bp, ARM patch_text), the newest first, as
        arch_optimize_kprobes walks optimizing_list; a probe a CPU is still
        inside waits for a later turn (never when flushed between runs)."""
        waiting = []
        for kp in reversed(self._optimizing):
            if not force and self._inside(kp):
                waiting.append(kp)
                continue
            kp.opt_orig = self.recover(kp.addr, len(kp.opt_jump))
            self.text.reserve(kp.addr, kp.opt_region, "kprobe")
            current = kp.breakpoint + self.recover(kp.addr + len(kp.breakpoint),
                                                    len(kp.opt_jump) - len(kp.breakpoint))
            self.text.text_poke(kp.addr, current, kp.opt_jump, "kprobe")
            kp.optimized = True
            self._write_field(kp, "flags", self.read_field(kp, "flags") | FLAG_OPTIMIZED)
        self._optimizing = dict.fromkeys(reversed(waiting))
        self._optimizer_due = self._optimizer_due if waiting else None

    def unoptimize_kprobe(self, kp: Kprobe) -> None:
        """Put the int3 (and the original bytes after it) back; or drop it from the queue.
        Either way its KPROBE_FLAG_OPTIMIZED is cleared."""
        if kp in self._optimizing:
            del self._optimizing[kp]
            self._write_field(kp, "flags", self.read_field(kp, "flags") & ~FLAG_OPTIMIZED)
        if not kp.optimized:
            return
        # arch_unoptimize_kprobe: int3 first, sync; then the displaced bytes,
        # which no CPU can reach behind the int3, sync.
        head = len(kp.breakpoint)
        self.text.text_poke(kp.addr, kp.opt_jump[:head], kp.breakpoint, "kprobe")
        if len(kp.opt_jump) > head:
            self.text.text_poke_early(kp.addr + head, kp.opt_jump[head:], kp.opt_orig[head:],
                                      "kprobe")
            self.text.text_poke_sync()
        self.text.release(kp.addr, "kprobe")
        kp.optimized = False
        self._write_field(kp, "flags", self.read_field(kp, "flags") & ~FLAG_OPTIMIZED)

    def _arm(self, kp: Kprobe) -> None:
        """arch_arm_kprobe: the breakpoint, through the patcher's protocol; an
        ftrace-based kprobe: its site calls ftrace_regs_caller (arm_kprobe_ftrace)."""
        if kp.ftrace:
            self.ftrace().ftrace_set_kprobe(kp.addr, True)
            return
        for other in self._near(kp.addr - self.reach, kp.addr):
            # __arm_kprobe: an optimized probe whose region holds this address
            # falls back to its breakpoint (get_optimized_kprobe, unoptimize_kprobe).
            if (other.optimized or other in self._optimizing) and \
                    kp.addr < other.addr + other.opt_region:
                self.unoptimize_kprobe(other)
        self.text.reserve(kp.addr, len(kp.breakpoint), "kprobe")
        self.text.text_poke(kp.addr, kp.orig, kp.breakpoint, "kprobe")
        self._sites.add(kp.addr)
        self._optimize_kprobe(kp)           # __arm_kprobe: "Try to optimize"

    def _disarm(self, kp: Kprobe) -> None:
        """arch_disarm_kprobe: the original bytes back (disarm_kprobe_ftrace: the
        site back to what ftrace alone wants)."""
        if kp.ftrace:
            self.ftrace().ftrace_set_kprobe(kp.addr, False)
            return
        self.unoptimize_kprobe(kp)
        self.text.text_poke(kp.addr, kp.breakpoint, kp.orig, "kprobe")
        self.text.release(kp.addr, "kprobe")

    def _reoptimize(self, addr: int) -> None:
        """__disarm_kprobe(reopt): the optprobe whose region a probe at ``addr``
        blocked is queued for the optimizer again (get_optimized_kprobe,
        optimize_kprobe), once that probe is disabled or gone."""
        for other in self._near(addr - self.reach, addr):
            if addr < other.addr + other.opt_region:
                self._optimize_kprobe(other)

    def __iter__(self) -> Iterator[Kprobe]:
        return iter(sorted(self.probes.values(), key=lambda k: k.addr))

    def _near(self, lo: int, hi: int) -> list[Kprobe]:
        """The registered top-level probes at addresses in [lo, hi), in address order."""
        return [self.probes[a] for a in
                self._addrs[bisect.bisect_left(self._addrs, lo):bisect.bisect_left(self._addrs, hi)]]

    def _table_order(self) -> Iterator[Kprobe]:
        """The registered probes (aggr_kprobes in place of their probes) as the
        guest's kprobe_table chains hold them."""
        tops = {kp.struct: kp for kp in self.probes.values()}
        return (tops[node] for node in self._chains("kprobe_table"))

    def list(self) -> list[str]:
        """debugfs kprobes/list: address, type, symbol+offset, flags; each probe of
        an aggr_kprobe on its own line, [OPTIMIZED] from the aggr_kprobe (report_probe).
        In kprobe_table's order, as show_kprobe_addr walks it: bucket by bucket,
        each bucket's chain from its head (the newest first)."""
        width = self.arch.bits // 4
        lines = []
        for top in self._table_order():
            # kprobe_optimized(): the flag optimize_kprobe() sets as it queues the probe
            optimized = "[OPTIMIZED]" if top.optimized or top in self._optimizing else ""
            for kp in top.members or [top]:
                flags = (("[DISABLED]" if kp.disabled else "") + optimized
                         + ("[FTRACE]" if top.ftrace else ""))
                # "%px  %s  %s+0x%x  %s " with no module name (" "), then the
                # flags: a line without flags ends in four spaces
                lines.append(f"{kp.addr:0{width}x}  {kp.probe_type}  {kp.describe()}    "
                             f"{flags}")
        return lines

    # -- the trap path ------------------------------------------------------
    def _frame_layout(self) -> None:
        """pt_regs as the host saves and restores it: one word per ``PT_REGS`` slot
        (0 where the slot names no register or the guest's prologue saves it), the
        arch's registers moved in one batch each way, in ``PT_REGS`` order."""
        regs, extra = self.ops.PT_REGS, self.ops.EXTRA_REGS
        self._frame = Struct(("<" if self.arch.endian == "little" else ">")
                             + {4: "I", 8: "Q"}[self.arch.word] * len(regs))
        self._pc_slot = regs.index(self.arch.pc) if self.arch.pc in regs else None
        moved = [i for i, name in enumerate(regs) if name is not None and
                 name not in self._guest_saved and name != self.arch.pc]
        self._reg_slots = tuple(i for i in moved if regs[i] not in extra)
        self._reg_names = tuple(regs[i] for i in self._reg_slots)
        self._extra_slots = tuple((i, extra[regs[i]]) for i in moved if regs[i] in extra)

    def _save(self, cpu: Cpu, pc: int) -> bytes:
        words = [0] * len(self.ops.PT_REGS)
        for i, value in zip(self._reg_slots, cpu.regs(self._reg_names)):
            words[i] = value
        for i, const in self._extra_slots:
            words[i] = cpu.uc.reg_read(const)
        if self._pc_slot is not None:
            words[self._pc_slot] = pc
        return self._frame.pack(*words)

    def _restore(self, cpu: Cpu, frame: int) -> int:
        words = self._frame.unpack(self.machine.read(frame, self._frame.size))
        cpu.set_regs(self._reg_names, [words[i] for i in self._reg_slots])
        for i, const in self._extra_slots:
            cpu.uc.reg_write(const, words[i])
        return 0 if self._pc_slot is None else words[self._pc_slot]

    def _enter(self, cpu: Cpu, handler: int, pc: int, fault: int | None = None,
               entry: Callable[[Cpu], None] | None = None) -> int:
        """Trap entry: save pt_regs below the stack, call ``handler(regs)``
        (``fault``: the number of the fault trap being entered, ``entry`` its
        arch's trap entry instead of arch_trap_entry)."""
        word = self.arch.word
        saved = self._save(cpu, pc)
        frame = (cpu.reg(self.arch.sp) - STACK_GAP - len(saved)) & ~15
        self.machine.write(frame, saved)
        self._frames[cpu.index].append((frame, fault))
        (entry or self.ops.arch_trap_entry)(cpu)
        sp = frame - self.ops.STACK_HEADROOM
        if self.arch.ra is None:
            sp -= word
            self.machine.write_word(sp, self.fn["kprobe_exc_return"])
        else:
            cpu.set_reg(self.arch.ra, self.fn["kprobe_exc_return"])
            if self.ops.BACK_CHAIN:
                self.machine.write_word(sp, 0)      # an empty back chain (PowerPC ABI)
        cpu.set_reg(self.arch.sp, sp)
        cpu.set_reg(self.arch.args[0], frame)
        if self._trap_entry is not None:
            cpu.set_reg(self.arch.args[1], handler)
            return self._trap_entry
        return handler

    def _on_trap(self, cpu: Cpu, trap: Trap) -> object:
        if trap.kind is TrapKind.SYSCALL:
            return UNHANDLED                    # HC_KPROBE comes through the hypercall table
        if trap.kind is TrapKind.TRAP and trap.intno == self.ops.SINGLESTEP_INTNO:
            if self._returned.pop(cpu.index, None) == trap.address:
                # Unicorn raises the step trap at once when the exception
                # return sets TF/MSR_SE, before the instruction runs; the
                # hardware traps after it. Not a trap: resume there.
                cpu.charge("trap", -1)
                return trap.address
            return self._enter(cpu, self.sym["kprobe_debug_handler"], trap.address)
        self._returned.pop(cpu.index, None)
        if trap.kind is TrapKind.TRAP and trap.intno in self._fault_traps:
            # A fault (x86 #GP): the guest's trap handler, which asks
            # kprobe_fault_handler while a kprobe runs on this CPU.
            handler, entry = self._fault_traps[trap.intno]
            return self._enter(cpu, handler, trap.address, trap.intno, entry)
        if trap.address in self._sites and trap.kind is not TrapKind.TRAP:
            return self._enter(cpu, self.sym["kprobe_handler"],
                               trap.address + self.ops.BP_PC_ADVANCE)
        return UNHANDLED

    def _count_reentry(self, cpu: Cpu, resume: int) -> None:
        """Count the exception returns in a row of ``cpu`` to one armed breakpoint;
        a guest fault at :data:`MAX_REENTRIES` (the handler returned non-zero
        without changing the PC: the breakpoint traps again at once)."""
        kp = self.probes.get(resume)
        if kp is None or kp.ftrace or kp.optimized or \
                self.machine.read(resume, len(kp.breakpoint)) != kp.breakpoint:
            self._reentries.pop(cpu.index, None)
            return
        at, n = self._reentries.get(cpu.index, (resume, 0))
        n = n + 1 if at == resume else 1
        self._reentries[cpu.index] = (resume, n)
        if n >= MAX_REENTRIES:
            raise self.machine.fault(
                cpu, f"the kprobe at {kp.describe()}: its pre_handler returned non-zero "
                     "(it changed the PC: no single-step) but left the PC at the breakpoint, "
                     f"which traps again at once; stopped after {n} re-entries in a row "
                     "(v5.10 loops forever)", pc=resume)

    def _hypercall(self, cpu: Cpu, op: int, regs: int, struct: int) -> int | Resume:
        """HC_KPROBE: the exception return (KPROBE_HC_RETURN, a2 = the handler's
        result) or a host handler's call (a2 = pt_regs, a3 = the probe)."""
        # The cost table's trap figure is a round trip (entry and return),
        # and host handlers are kisim's, not the kernel's: no second charge.
        cpu.charge("trap", -1)
        at = self.guest.hypercalls.address
        if op == KPROBE_HC_RETURN:
            frame, fault = self._frames[cpu.index].pop()
            if not regs and fault is None:
                raise self.machine.fault(cpu, "a breakpoint or single-step trap that no "
                                              "kprobe claims", pc=at)
            resume = self._restore(cpu, frame)
            if not regs:
                # The fault trap found no fixup: the kernel dies here
                # (die_addr), with the registers as the handlers left them.
                cpu.pc = resume
                raise self.machine.fault(cpu, self.arch.exception_names.get(
                    fault, f"fault {fault}"), pc=resume)
            self._count_reentry(cpu, resume)
            self._returned[cpu.index] = resume
            return Resume(resume)
        op, trapnr = op & ((1 << KPROBE_HC_SHIFT) - 1), op >> KPROBE_HC_SHIFT
        owner = (self._rp_by_struct if op == KPROBE_HC_RET else self._by_struct).get(struct)
        if owner is None or op not in (KPROBE_HC_PRE, KPROBE_HC_POST, KPROBE_HC_RET,
                                       KPROBE_HC_FAULT):
            raise self.machine.fault(cpu, f"bad kprobe hypercall {op}", pc=at)
        regs_view = KprobeRegs(self, regs, cpu.index)
        if op == KPROBE_HC_FAULT:
            return int(owner.fault_handler(owner, regs_view, trapnr) or 0)
        handler = {KPROBE_HC_PRE: "pre_handler", KPROBE_HC_POST: "post_handler",
                   KPROBE_HC_RET: "handler"}[op]
        return int(getattr(owner, handler)(owner, regs_view) or 0)


def has_optprobes(guest: Guest) -> bool:
    """Whether ``guest``'s kernel has optprobes (:func:`check_optprobes`)."""
    try:
        check_optprobes(guest)
    except PatchError:
        return False
    return True


def check_optprobes(guest: Guest) -> None:
    """:class:`PatchError` (EINVAL) unless ``guest``'s kernel has optprobes: the arch
    has them, this build of it too (not a Thumb-2 kernel), and CONFIG_OPTPROBES is set."""
    arch = guest.arch
    if "optprobes" not in arch.capabilities:
        built = f" ({arch.variant}=y)" if arch.variant else ""
        raise PatchError("EINVAL", f"kprobe: no optprobes on {arch.name}{built}")
    if "optprobe_buffers" not in guest.image.symbols:
        raise PatchError("EINVAL", f"kprobe: no optprobes in this {arch.name} kernel "
                                   "(CONFIG_OPTPROBES is not set)")


register_module_service("KPROBE", lambda guest: Kprobes(guest)._module_call)
