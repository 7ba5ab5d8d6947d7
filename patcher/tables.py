"""The instrumentation tables of a kisim guest image, checked against its code.

The guest kernel (``kernel/``) records every instrumentation site in a
section of its ELF image, as Linux does; this module parses them into
dataclasses and checks each entry against the disassembly (Capstone), so
that the patcher never trusts an address it has not seen decode as the
expected instruction:

================== =========================================== ==========================
section            entry (word = 4 bytes, 8 on x86-64)          checked
================== =========================================== ==========================
__markers          struct marker {name, format, state, ptype,   strings readable, state 0,
                   call, single, multi}, aligned to 8            single = empty probe
__tracepoints      struct tracepoint {name, state, funcs,       strings readable
                   hc_probe}, aligned to 32
__jump_table       {code, target, key}, absolute words           code is the arch's kernel
                                                                 nop, target in the same
                                                                 function, key a known flag
__imv              {var, imv, insn, size}, absolute words        insn decodes as an
                                                                 immediate load of 0 whose
                                                                 immediate is at imv/size
__mcount_loc       one word per call site                        decodes as a call to mcount
                                                                 (ARM: after ``push {lr}``)
_kprobe_blacklist  one function address per entry                a function's entry
__notrace_list     one function address per entry                a function's entry, and no
                                                                 mcount site inside it
================== =========================================== ==========================

A marker or tracepoint's enable check is found through these tables:
the __imv entry whose ``var``, or the __jump_table entries whose ``key``,
is the address of its ``state``; with neither it is a plain load of
``state`` (``enable == "load"``, no site addresses).

Arming, for the patcher: point ``marker.single`` at ``marker_probe_hc`` (or
a tracepoint's ``funcs`` at a NULL-terminated array holding its
``hc_probe``), set ``state``, then write 1 into each __imv immediate
(``size`` bytes at ``imv``) or turn each jump-label nop into
``arch.encode_jump(code, target)``. An mcount site on ARM is
``push {lr}; bl __gnu_mcount_nc``: the nop that replaces the ``bl`` must
pop what was pushed (Linux uses ``pop {lr}``, e8bd4000), not ``mov r0, r0``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from arches import Arch, get_arch
from patcher.errors import PatchError
from sim.asm import Insn, disassemble
from sim.dwarf import struct
from sim.elf import Image, read_elf



class TableError(PatchError):
    """A table entry that does not match the code it describes."""

    def __init__(self, message: str) -> None:
        super().__init__("EINVAL", message)


@dataclass(frozen=True)
class Marker:
    address: int            # the struct marker
    name: str
    format: str
    state_addr: int
    state: int
    call: int               # single.func (initially __mark_empty_function)
    private: int            # single.probe_private
    enable: str             # "imv", "jump_label" or "load"
    sites: tuple[int, ...]  # enable-check instructions (imv insn / jump-label nop)


@dataclass(frozen=True)
class Tracepoint:
    address: int            # the struct tracepoint
    name: str
    state_addr: int
    state: int
    funcs: int              # probe array pointer (0: none)
    hc_probe: int           # the guest's host-forwarding probe for this tracepoint
    enable: str
    sites: tuple[int, ...]


@dataclass(frozen=True)
class JumpEntry:
    code: int
    target: int
    key: int
    insn: bytes             # the arch's kernel nop, which the site holds when not taken
    function: str


@dataclass(frozen=True)
class ImvEntry:
    var: int
    imv: int                # address of the immediate field
    insn: int               # address of the instruction holding it
    size: int               # immediate field width in bytes
    text: str               # the instruction, disassembled
    function: str
    length: int             # bytes of the instruction, as decoded


@dataclass(frozen=True)
class McountSite:
    address: int            # the call instruction
    target: str             # mcount symbol called
    function: str           # function containing the call


@dataclass(frozen=True)
class FunctionRef:
    address: int
    name: str
    size: int


@dataclass
class Tables:
    """Every instrumentation table of one image."""

    arch: Arch
    image: Image
    markers: list[Marker] = field(default_factory=list)
    tracepoints: list[Tracepoint] = field(default_factory=list)
    jump_entries: list[JumpEntry] = field(default_factory=list)
    imv: list[ImvEntry] = field(default_factory=list)
    mcount: list[McountSite] = field(default_factory=list)
    notrace: list[FunctionRef] = field(default_factory=list)
    nokprobe: list[FunctionRef] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"markers": len(self.markers), "tracepoints": len(self.tracepoints),
                "jump_label": len(self.jump_entries), "imv": len(self.imv),
                "mcount": len(self.mcount), "notrace": len(self.notrace),
                "nokprobe": len(self.nokprobe)}

    def markers_named(self, name: str) -> list[Marker]:
        return [m for m in self.markers if m.name == name]

    def tracepoint(self, name: str) -> Tracepoint:
        for tp in self.tracepoints:
            if tp.name == name:
                return tp
        raise KeyError(name)

    def marker_names(self) -> list[str]:
        return sorted({m.name for m in self.markers})


class _Reader:
    """Typed reads of the image's loaded sections."""

    def __init__(self, arch: Arch, image: Image) -> None:
        self.arch = arch
        self.image = image
        self.loaded = [s for s in image.sections.values() if s.addr and s.data]

    def bytes(self, addr: int, size: int) -> bytes:
        for s in self.loaded:
            if s.addr <= addr and addr + size <= s.addr + len(s.data):
                return s.data[addr - s.addr:addr - s.addr + size]
        raise TableError(f"{addr:#x}+{size} is not inside any loaded section")

    def int(self, addr: int, size: int) -> int:
        return self.arch.to_int(self.bytes(addr, size))

    def word(self, addr: int) -> int:
        return self.int(addr, self.arch.word)

    def string(self, addr: int, limit: int = 1024) -> str:
        for s in self.loaded:
            if s.addr <= addr < s.addr + len(s.data):
                raw = s.data[addr - s.addr:addr - s.addr + limit]
                end = raw.find(b"\0")
                if end < 0:
                    raise TableError(f"string at {addr:#x} is not NUL-terminated")
                return raw[:end].decode("utf-8", "replace")
        raise TableError(f"string at {addr:#x} is not inside any loaded section")

    def entries(self, section: str, stride: int) -> list[int]:
        """Addresses of the fixed-size entries of ``section`` (none if absent)."""
        s = self.image.sections.get(section)
        if s is None or not s.size:
            return []
        if s.size % stride:
            raise TableError(f"{section}: size {s.size} is not a multiple of {stride}")
        return list(range(s.addr, s.addr + s.size, stride))

    def insn(self, addr: int) -> Insn:
        code = self.bytes(addr, min(self.arch.max_insn_len, self._room(addr)))
        decoded = disassemble(self.arch, code, addr, count=1)
        if not decoded:
            raise TableError(f"{self.where(addr)}: does not decode ({code.hex(' ')})")
        return decoded[0]

    def _room(self, addr: int) -> int:
        for s in self.loaded:
            if s.addr <= addr < s.addr + len(s.data):
                return s.addr + len(s.data) - addr
        raise TableError(f"{addr:#x} is not inside any loaded section")

    def where(self, addr: int) -> str:
        return f"{self.image.describe(addr)} ({addr:#x})"

    def function(self, addr: int) -> str:
        found = self.image.symbol_at(addr)
        return found[0] if found else "?"


def _branch_target(insn: Insn) -> int | None:
    found = re.findall(r"0x[0-9a-fA-F]+", insn.op_str)
    return int(found[-1], 16) if found else None


def _text_range(image: Image) -> tuple[int, int]:
    text = image.sections[".text"]
    return text.addr, text.addr + text.size


def _parse_jump_table(r: _Reader, text: tuple[int, int]) -> list[JumpEntry]:
    arch, w = r.arch, r.arch.word
    nop = arch.site_nop
    out = []
    for e in r.entries("__jump_table", 3 * w):
        code, target, key = r.word(e), r.word(e + w), r.word(e + 2 * w)
        if not (text[0] <= code < text[1] and text[0] <= target < text[1]):
            raise TableError(f"__jump_table entry {e:#x}: code {code:#x} / target "
                             f"{target:#x} outside .text")
        built = r.bytes(code, len(nop))
        if built not in (nop, arch.encode_jump(code, target)):    # a site built taken
            raise TableError(f"__jump_table: site {r.where(code)} holds {built.hex(' ')}, "
                             f"neither the kernel nop {nop.hex(' ')} nor its jump")
        if r.function(code) != r.function(target):
            raise TableError(f"__jump_table: site {r.where(code)} jumps out of its "
                             f"function to {r.where(target)}")
        r.insn(target)    # the target must decode too
        out.append(JumpEntry(code, target, key, nop, r.function(code)))
    return out


def _check_imv_insn(r: _Reader, insn: Insn, imv: int, size: int) -> None:
    if not r.arch.ops.imv_load_of_zero(insn.bytes, insn.address, imv, size):
        raise TableError(f"__imv: {r.where(insn.address)}: {insn.text!r} "
                         f"({insn.bytes.hex(' ')}) is not an immediate load of 0 "
                         f"with a {size}-byte immediate at {imv:#x}")


def _parse_imv(r: _Reader, text: tuple[int, int]) -> list[ImvEntry]:
    w = r.arch.word
    out = []
    for e in r.entries("__imv", 4 * w):
        var, imv, insn_addr, size = (r.word(e + i * w) for i in range(4))
        if not text[0] <= insn_addr < text[1]:
            raise TableError(f"__imv entry {e:#x}: instruction {insn_addr:#x} outside .text")
        insn = r.insn(insn_addr)
        _check_imv_insn(r, insn, imv, size)
        out.append(ImvEntry(var, imv, insn_addr, size, insn.text, r.function(insn_addr),
                            len(insn.bytes)))
    return out


def _parse_mcount(r: _Reader) -> list[McountSite]:
    arch, image = r.arch, r.image
    targets = {image.symbols[s]: s for s in arch.mcount_symbols if s in image.symbols}
    out = []
    for e in r.entries("__mcount_loc", arch.word):
        site = r.word(e)
        insn = r.insn(site)
        target = _branch_target(insn)
        if target not in targets or insn.bytes != arch.encode_call(site, target):
            raise TableError(f"__mcount_loc: {r.where(site)}: {insn.text!r} is not a call "
                             f"to {' or '.join(arch.mcount_symbols)}")
        symbol = targets[target]
        allowed = arch.mcount_prologue.get(symbol)
        if allowed:
            before = r.bytes(site - len(allowed[0]), len(allowed[0]))
            if before not in allowed:
                raise TableError(f"__mcount_loc: {r.where(site)}: call to {symbol} "
                                 f"without the instruction it needs before it "
                                 f"(found {before.hex(' ')})")
        out.append(McountSite(site, symbol, r.function(site)))
    return out


def _parse_functions(r: _Reader, section: str) -> list[FunctionRef]:
    by_addr = {addr: (name, size) for addr, size, name in r.image.functions}
    out = []
    for e in r.entries(section, r.arch.word):
        addr = r.word(e) & ~r.arch.isa_bits          # &func: a Thumb function's bit 0
        if addr not in by_addr:
            raise TableError(f"{section}: {addr:#x} is not the entry of a function")
        name, size = by_addr[addr]
        out.append(FunctionRef(addr, name, size))
    return out


def _enable(state_addr: int, imv: list[ImvEntry],
            jumps: list[JumpEntry]) -> tuple[str, tuple[int, ...]]:
    imv_sites = tuple(e.insn for e in imv if e.var == state_addr)
    jump_sites = tuple(e.code for e in jumps if e.key == state_addr)
    if imv_sites and jump_sites:
        raise TableError(f"flag {state_addr:#x} has both imv and jump-label sites")
    if imv_sites:
        return "imv", imv_sites
    if jump_sites:
        return "jump_label", jump_sites
    return "load", ()


def _parse_markers(r: _Reader, imv: list[ImvEntry], jumps: list[JumpEntry]) -> list[Marker]:
    if not r.entries("__markers", 1):                # compiled out: no records, no struct
        return []
    lay = struct(r.image.path, "marker")          # sizes and offsets from the DWARF
    empty = (r.image.symbols.pointer("__mark_empty_function")
             if "__mark_empty_function" in r.image.symbols else None)
    out = []
    for e in r.entries("__markers", lay.size):
        name = r.string(r.word(e + lay.offset("name")))
        fmt = r.string(r.word(e + lay.offset("format")))
        state_addr = e + lay.offset("state")
        single = e + lay.offset("single")          # struct marker_probe_closure (2.6.27)
        state, call = r.int(state_addr, 1), r.word(single)
        private = r.word(single + r.arch.word)
        if call != empty:
            raise TableError(f"marker {name} at {e:#x}: single probe {call:#x} is not "
                             "__mark_empty_function")
        enable, sites = _enable(state_addr, imv, jumps)
        out.append(Marker(e, name, fmt, state_addr, state, call, private, enable, sites))
    return out


def _parse_tracepoints(r: _Reader, imv: list[ImvEntry],
                       jumps: list[JumpEntry]) -> list[Tracepoint]:
    if not r.entries("__tracepoints", 1):                # compiled out: no records, no struct
        return []
    lay = struct(r.image.path, "tracepoint")      # sizes and offsets from the DWARF
    out = []
    for e in r.entries("__tracepoints", lay.size):
        name = r.string(r.word(e + lay.offset("name")))
        state_addr = e + lay.offset("state")
        state = r.int(state_addr, 4)
        funcs, hc_probe = r.word(e + lay.offset("funcs")), r.word(e + lay.offset("hc_probe"))
        if r.function(hc_probe) == "?":
            raise TableError(f"tracepoint {name}: hc_probe {hc_probe:#x} is not a function")
        enable, sites = _enable(state_addr, imv, jumps)
        out.append(Tracepoint(e, name, state_addr, state, funcs, hc_probe, enable, sites))
    return out


def _static_key(image: Image, addr: int) -> bool:
    """A module's struct static_key (kernel/include/linux/jump_label.h): writable
    data; its sites' entries carry the branch in bit 0 (patcher/jump_label.py)."""
    return any(s.addr <= addr < s.addr + s.size for name, s in image.sections.items()
               if name in (".data", ".bss"))


def load_tables(source: Image | str | Path, arch: Arch | str | None = None) -> Tables:
    """Parse and check every table of an image (a loaded :class:`Image` or an ELF path).

    Raises :class:`TableError` at the first entry that does not match the code.
    """
    image = source if isinstance(source, Image) else read_elf(source)
    spec = get_arch(arch or image.machine) if not isinstance(arch, Arch) else arch
    r = _Reader(spec, image)
    text = _text_range(image)
    jumps = _parse_jump_table(r, text)
    imv = _parse_imv(r, text)
    markers = _parse_markers(r, imv, jumps)
    tracepoints = _parse_tracepoints(r, imv, jumps)
    flags = {m.state_addr for m in markers} | {t.state_addr for t in tracepoints}
    for entry in jumps:
        if entry.key not in flags and not _static_key(image, entry.key & ~1):
            raise TableError(f"__jump_table: site {r.where(entry.code)} tests {entry.key:#x}, "
                             "which is no marker's or tracepoint's state, nor a static key")
    for entry in imv:
        if entry.var not in flags:
            raise TableError(f"__imv: site {r.where(entry.insn)} mirrors {entry.var:#x}, "
                             "which is no marker's or tracepoint's state")
    mcount = _parse_mcount(r)
    notrace = _parse_functions(r, "__notrace_list")
    traced = {site.function for site in mcount}
    for fn in notrace:
        if fn.name in traced:
            raise TableError(f"__notrace_list: {fn.name} has an mcount call")
    return Tables(spec, image, markers, tracepoints, jumps, imv, mcount, notrace,
                  _parse_functions(r, "_kprobe_blacklist"))


__all__ = ["FunctionRef", "ImvEntry", "JumpEntry", "Marker", "McountSite", "TableError",
           "Tables", "Tracepoint", "load_tables"]
