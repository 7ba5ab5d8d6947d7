"""Static ELF images through pyelftools: segments, symbols, sections.

Symbols.  A kernel with guest modules can hold several symbols of one name
(two modules' ``static`` functions, as kallsyms lists them in Linux). The
:class:`SymbolTable` keeps them all: looking up an ambiguous name is a
:class:`SymbolError` naming the candidates, and ``MODULE:NAME`` looks in one
module. Which module defines a symbol is the build's to say
(:meth:`SymbolTable.bind_modules`): a local symbol by the source file
(``STT_FILE``) it follows in ``.symtab`` and its name, a global one by name.
"""
from __future__ import annotations

import bisect
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable, Mapping, NamedTuple

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

import fsio
from arches import arch_for_elf_machine
from sim.errors import ConfigError


@dataclass(frozen=True)
class Section:
    name: str
    addr: int
    size: int
    data: bytes


@dataclass(frozen=True)
class Symbol:
    """One defined ``.symtab`` entry."""

    name: str
    addr: int
    size: int
    kind: str               # STT_FUNC -> "func", STT_OBJECT -> "object", else "other"
    unit: str | None        # the source file (STT_FILE) of a local symbol; None if global
    isa: int = 0            # the value's instruction-set bits (Arch.isa_bits: ARM Thumb bit 0)


class SymbolError(ConfigError):
    """A symbol name that names several symbols: give ``MODULE:NAME``."""


class SymbolTable(dict):
    """Name -> address of the image's symbols, with duplicates made explicit.

    A name defined once maps to its address as in a plain dict. A name
    defined at several addresses is ambiguous: ``table[name]`` and
    ``table.get(name)`` raise :class:`SymbolError` naming the candidates,
    and ``name in table`` is true. ``"MODULE:NAME"`` finds ``NAME`` among
    the symbols ``MODULE`` defines (KeyError / None if it defines none).
    """

    def __init__(self, entries: Iterable[Symbol] = ()) -> None:
        self.modules: list[str] = []             # bound by bind_modules, in link order
        self.entries: list[Symbol] = sorted(set(entries), key=lambda s: (s.addr, s.name))
        self._by_name: dict[str, list[Symbol]] = {}
        for sym in self.entries:
            same = self._by_name.setdefault(sym.name, [])
            if all(other.addr != sym.addr for other in same):     # an alias is no duplicate
                same.append(sym)
        super().__init__({name: found[0].addr for name, found in self._by_name.items()
                          if len(found) == 1})
        self._local_module: dict[tuple[str, str], str] = {}
        self._global_module: dict[str, str] = {}

    def bind_modules(self, modules: Mapping[str, tuple[Iterable[tuple[str, str]],
                                                      Iterable[str]]]) -> None:
        """Say which symbols each module defines: module name -> (its local
        symbols as (source file as ``STT_FILE`` names it, name), its global
        symbols' names), as kbuild records them in ``build.json``."""
        for module, (local, names) in modules.items():
            self._local_module.update(dict.fromkeys(map(tuple, local), module))
            self._global_module.update(dict.fromkeys(names, module))
        self.modules = list(modules)

    def module_of(self, sym: Symbol) -> str | None:
        """The module that defines ``sym``; None for the kernel's own."""
        if sym.unit is not None:
            return self._local_module.get((sym.unit, sym.name))
        return self._global_module.get(sym.name)

    def owner(self, sym: Symbol) -> str:
        """``module M`` or ``the kernel (FILE)``, for messages."""
        module = self.module_of(sym)
        if module is not None:
            return f"module {module}"
        return "the kernel" + (f" ({sym.unit})" if sym.unit else "")

    def candidates(self, name: str) -> list[Symbol]:
        """Every symbol called ``name`` (``MODULE:NAME``: in that module only)."""
        module, sep, bare = name.rpartition(":")
        found = self._by_name.get(bare, [])
        return [s for s in found if self.module_of(s) == module] if sep else list(found)

    def in_module(self, module: str) -> list[Symbol]:
        """The symbols ``module`` defines, by address."""
        return [s for s in self.entries if self.module_of(s) == module]

    def __getitem__(self, name: str) -> int:
        if dict.__contains__(self, name):                   # defined once: the fast path
            return dict.__getitem__(self, name)
        found = self.candidates(name)
        if len(found) > 1:
            where = ", ".join(f"{s.addr:#x} in {self.owner(s)}" for s in found)
            raise SymbolError(f"symbol {name!r} is ambiguous: {len(found)} definitions "
                              f"({where}); name one as MODULE:{name.rpartition(':')[2]}")
        if not found:
            raise KeyError(name)
        return found[0].addr

    def pointer(self, name: str) -> int:
        """``name`` as a function pointer the guest calls: its address with the
        instruction-set bits of its symbol value (a Thumb function's bit 0),
        as the compiler stores ``&name``."""
        addr = self[name]
        return addr | next((s.isa for s in self.candidates(name) if s.addr == addr), 0)

    def get(self, name: str, default: int | None = None) -> int | None:    # type: ignore[override]
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or (isinstance(name, str)
                                                  and bool(self.candidates(name)))


@dataclass(frozen=True)
class Segment:
    vaddr: int
    memsz: int
    data: bytes
    flags: int      # PF_X = 1, PF_W = 2, PF_R = 4


@dataclass
class Image:
    """What the loader found in one ELF file."""

    path: Path
    machine: str
    entry: int
    segments: list[Segment]
    sections: dict[str, Section]
    symbols: dict[str, int]       # a SymbolTable when read by read_elf
    functions: list[tuple[int, int, str]] = field(default_factory=list)  # (addr, size, name)
    #: ``functions`` with kallsyms' sizes, where read_elf found them (:func:`_kallsyms`)
    kallsyms: list[tuple[int, int, str]] | None = None

    def kallsyms_lookup(self, addr: int) -> tuple[int, int, str] | None:
        """``(start, size, name)`` of the function ``addr`` is in, sized as v5.10's
        kallsyms_lookup_size_offset() sizes it: up to the next symbol, so that
        the padding after a function (x86's nops to the next 16 bytes) is its.
        The function is the nearest one that holds ``addr`` by its ELF size, else
        one that encloses it (an assembler label typed as a function inside a C
        function's code: the C function), else the one whose padding it is in."""
        i = bisect.bisect_right(self.functions, (addr, float("inf"), "")) - 1
        if i < 0:
            return None
        start, size, _ = self.functions[i]
        if addr >= start + max(size, 1):
            i = next((j for j, (s, z, _) in enumerate(self.functions[:i]) if s <= addr < s + z),
                     i)
        start, size, name = (self.functions if self.kallsyms is None else self.kallsyms)[i]
        return (start, size, name) if addr < start + max(size, 1) else None

    def symbol_at(self, addr: int) -> tuple[str, int] | None:
        """``(function, offset)`` containing ``addr``, as ``name+0x1c`` (the kernel's
        %pS: kallsyms, :meth:`kallsyms_lookup`)."""
        found = self.kallsyms_lookup(addr)
        return (found[2], addr - found[0]) if found else None

    def describe(self, addr: int) -> str:
        found = self.symbol_at(addr)
        return f"{found[0]}+{found[1]:#x}" if found else f"{addr:#x}"

    def sizes(self) -> dict[str, int]:
        """Bytes of text, read-only data, data and bss that the image loads, its
        sections sorted as kernel/kernel.lds places them (``size``'s columns)."""
        sizes = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
        for s in self.sections.values():
            if s.addr:
                kind = ("text" if s.name == ".text" else "bss" if s.name == ".bss"
                        else "rodata" if s.name in _READ_ONLY else "data")
                sizes[kind] += s.size
        return sizes


#: The loaded sections kernel/kernel.lds places with .rodata (the rest but .text and .bss
#: are data).
_READ_ONLY = frozenset({".rodata", "__markers_strings", "__tracepoints_strings", "__mcount_loc"})


_KINDS = {"STT_FUNC": "func", "STT_OBJECT": "object"}


class _Parsed(NamedTuple):
    """What :func:`read_elf` parses from one file, shared by every :class:`Image` of it."""

    machine: str
    entry: int
    segments: tuple[Segment, ...]
    sections: Mapping[str, Section]
    symbols: tuple[Symbol, ...]
    functions: tuple[tuple[int, int, str], ...]
    kallsyms: tuple[tuple[int, int, str], ...]


#: Files parsed, by (device, inode, size, mtime): a sweep loads each kernel once per
#: run. The most kept; each read still gets its own Image and SymbolTable.
_PARSED: OrderedDict[tuple[int, int, int, int], _Parsed] = OrderedDict()
PARSED_KEPT = 16
#: Bytes of an ELF file read_elf opens: an image of kbuild's largest (256 MiB
#: loaded, MAX_IMAGE_BYTES), with room for its symbols and debug information.
MAX_ELF_FILE = 512 << 20


def read_elf(path: str | Path) -> Image:
    """Parse a static ELF; :class:`ConfigError` if it is not one we can run."""
    path = Path(path)
    try:
        with fsio.open_regular(path, limit=MAX_ELF_FILE, what="ELF image") as f:  # no FIFO
            st = os.fstat(f.fileno())
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            parsed = _PARSED.get(key)
            if parsed is None:
                parsed = _parse(path, f)
                _PARSED[key] = parsed
                if len(_PARSED) > PARSED_KEPT:
                    _PARSED.popitem(last=False)
            else:
                _PARSED.move_to_end(key)
    except ELFError as err:
        raise ConfigError(f"{path}: not a valid ELF file: {err}") from None
    except fsio.UnsafePath as err:
        raise ConfigError(str(err)) from None
    return Image(path, parsed.machine, parsed.entry, list(parsed.segments),
                 dict(parsed.sections), SymbolTable(parsed.symbols), list(parsed.functions),
                 list(parsed.kallsyms))


def _parse(path: Path, f: BinaryIO) -> _Parsed:
    elf = ELFFile(f)
    arch = arch_for_elf_machine(elf["e_machine"])
    if arch is None:
        raise ConfigError(f"{path}: unsupported ELF machine {elf['e_machine']}")
    segments = tuple(Segment(seg["p_vaddr"], seg["p_memsz"], seg.data(), seg["p_flags"])
                     for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD")
    sections = {s.name: Section(s.name, s["sh_addr"], s["sh_size"],
                                b"" if s["sh_type"] == "SHT_NOBITS" else s.data())
                for s in elf.iter_sections() if s.name}
    entries = []
    for table in elf.iter_sections():
        if not isinstance(table, SymbolTableSection):
            continue
        unit = None
        for sym in table.iter_symbols():
            kind = sym["st_info"]["type"]
            if kind == "STT_FILE":              # the locals that follow are its
                unit = sym.name
                continue
            if (not sym.name or sym.name.startswith(("$", ".L"))  # ARM mapping
                    or sym["st_shndx"] == "SHN_UNDEF"):          # symbols, labels
                continue
            local = sym["st_info"]["bind"] == "STB_LOCAL"
            value = sym["st_value"]
            isa = value & arch.isa_bits if kind == "STT_FUNC" else 0
            entries.append(Symbol(sym.name, value & ~isa, sym["st_size"],
                                  _KINDS.get(kind, "other"), unit if local else None,
                                  isa))
    functions = tuple(sorted({(s.addr, s.size, s.name) for s in entries if s.kind == "func"}))
    return _Parsed(arch.name, elf["e_entry"], segments, sections, tuple(entries), functions,
                   _kallsyms(functions, entries, sections.get(".text")))


def _kallsyms(functions: tuple[tuple[int, int, str], ...], entries: Iterable[Symbol],
              text: Section | None) -> tuple[tuple[int, int, str], ...]:
    """``functions`` with the sizes kallsyms gives them (v5.10 kernel/kallsyms.c
    get_symbol_pos(): a symbol ends where the next one starts, the last one at
    _etext): each function's ELF size grown to the next symbol of the text (a
    function or a label) or the end of .text. Only the bytes past its ELF end are
    added, so a label inside a function does not cut it."""
    if text is None:
        return functions
    end = text.addr + text.size
    starts = sorted({s.addr for s in entries
                     if s.kind in ("func", "other") and text.addr <= s.addr < end} | {end})
    grown = []
    for start, size, name in functions:
        if not text.addr <= start < end:
            grown.append((start, size, name))
            continue
        after = starts[bisect.bisect_left(starts, start + max(size, 1))]
        grown.append((start, after - start, name))
    return tuple(grown)
