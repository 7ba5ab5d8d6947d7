"""Static ELF images through pyelftools: segments, symbols, sections."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path

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
    symbols: dict[str, int]
    functions: list[tuple[int, int, str]] = field(default_factory=list)  # (addr, size, name)

    def symbol_at(self, addr: int) -> tuple[str, int] | None:
        """``(function, offset)`` containing ``addr``, as ``name+0x1c``."""
        i = bisect.bisect_right(self.functions, (addr, float("inf"), "")) - 1
        if i >= 0:
            start, size, name = self.functions[i]
            if start <= addr < start + max(size, 1):
                return name, addr - start
        return None

    def describe(self, addr: int) -> str:
        found = self.symbol_at(addr)
        return f"{found[0]}+{found[1]:#x}" if found else f"{addr:#x}"


def read_elf(path: str | Path) -> Image:
    """Parse a static ELF; :class:`ConfigError` if it is not one we can run."""
    path = Path(path)
    try:
        with fsio.open_regular(path, what="ELF image") as f:     # never a FIFO or device
            elf = ELFFile(f)
            arch = arch_for_elf_machine(elf["e_machine"])
            if arch is None:
                raise ConfigError(f"{path}: unsupported ELF machine {elf['e_machine']}")
            machine = arch.name
            segments = [Segment(seg["p_vaddr"], seg["p_memsz"], seg.data(), seg["p_flags"])
                        for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
            sections = {s.name: Section(s.name, s["sh_addr"], s["sh_size"],
                                        b"" if s["sh_type"] == "SHT_NOBITS" else s.data())
                        for s in elf.iter_sections() if s.name}
            symbols: dict[str, int] = {}
            functions = []
            for table in elf.iter_sections():
                if not isinstance(table, SymbolTableSection):
                    continue
                for sym in table.iter_symbols():
                    if (not sym.name or sym.name.startswith("$")    # ARM mapping symbols
                            or sym["st_shndx"] == "SHN_UNDEF"):
                        continue
                    symbols.setdefault(sym.name, sym["st_value"])
                    if sym["st_info"]["type"] == "STT_FUNC":
                        functions.append((sym["st_value"], sym["st_size"], sym.name))
            return Image(path, machine, elf["e_entry"], segments, sections,
                         symbols, sorted(set(functions)))
    except ELFError as err:
        raise ConfigError(f"{path}: not a valid ELF file: {err}") from None
    except fsio.UnsafePath as err:
        raise ConfigError(str(err)) from None
