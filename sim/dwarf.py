"""Guest struct layouts read from the kernel ELF's DWARF (the build uses ``-g``).

A :class:`Layout` is a struct's ``DW_AT_byte_size`` and each member's
``DW_AT_data_member_location`` (DWARF 4/5 §5.7.6), exactly as the compiler
laid it out for that arch, so no offset is typed by hand on the host side.
Layouts are read once per ELF file (path, size and mtime) and cached, one
compile unit at a time as far as the structs asked for need.
"""
from __future__ import annotations

import functools
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from sim.errors import ConfigError


_AGGREGATES = ("DW_TAG_structure_type", "DW_TAG_union_type")


@dataclass(frozen=True)
class Layout:
    """One struct or union: its size and the byte offset of each named member."""

    name: str
    size: int
    members: dict[str, int]

    def offset(self, member: str) -> int:
        try:
            return self.members[member]
        except KeyError:
            raise ConfigError(f"struct {self.name} has no member {member!r} "
                              f"(members: {', '.join(self.members)})") from None


def _member_offset(die) -> int | None:
    attr = die.attributes.get("DW_AT_data_member_location")
    if attr is None:
        return 0 if die.get_parent().tag == "DW_TAG_union_type" else None
    return attr.value if isinstance(attr.value, int) else None


class _Structs:
    """One ELF's struct layouts, read compile unit by compile unit as they are asked
    for: the first definition of a name wins, as in a whole pass, and a caller
    wanting a few structs of the first units does not parse every unit's DIEs."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.found: dict[str, Layout] = {}
        try:
            elf = ELFFile(io.BytesIO(Path(path).read_bytes()))
            if not elf.has_dwarf_info():
                raise ConfigError(f"{path}: no DWARF debug info (build with -g)")
            # A linked vmlinux has its relocations applied already.
            self._units: Iterator | None = elf.get_dwarf_info(
                relocate_dwarf_sections=False).iter_CUs()
        except (OSError, ELFError) as err:
            raise ConfigError(f"{path}: cannot read DWARF: {err}") from None

    def _next_unit(self) -> None:
        """Add the next compile unit's aggregates (none left: ``_units`` becomes None)."""
        try:
            cu = next(self._units, None)
            if cu is None:
                self._units = None
                return
            for die in cu.iter_DIEs():
                if die.tag not in _AGGREGATES or "DW_AT_name" not in die.attributes:
                    continue
                if "DW_AT_byte_size" not in die.attributes:
                    continue                      # a declaration only
                name = die.attributes["DW_AT_name"].value.decode()
                if name in self.found:
                    continue
                members = {}
                for child in die.iter_children():
                    if child.tag == "DW_TAG_member" and "DW_AT_name" in child.attributes:
                        offset = _member_offset(child)
                        if offset is not None:
                            members[child.attributes["DW_AT_name"].value.decode()] = offset
                self.found[name] = Layout(name, die.attributes["DW_AT_byte_size"].value,
                                          members)
        except ELFError as err:
            self._units = None
            raise ConfigError(f"{self.path}: cannot read DWARF: {err}") from None

    def get(self, name: str) -> Layout | None:
        while name not in self.found and self._units is not None:
            self._next_unit()
        return self.found.get(name)

    def every(self) -> dict[str, Layout]:
        while self._units is not None:
            self._next_unit()
        return self.found


@functools.lru_cache(maxsize=16)
def _structs(path: str, _size: int, _mtime: int) -> _Structs:
    return _Structs(path)


def _of(elf: str | os.PathLike) -> _Structs:
    path = Path(elf)
    try:
        st = path.stat()
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror}") from None
    return _structs(os.fspath(path.resolve()), st.st_size, st.st_mtime_ns)


def layouts(elf: str | os.PathLike) -> dict[str, Layout]:
    """Every named struct and union of ``elf``'s DWARF, by struct tag name (cached per file)."""
    return _of(elf).every()


def struct(elf: str | os.PathLike, name: str) -> Layout:
    """The layout of ``struct name`` in ``elf``; :class:`ConfigError` if absent."""
    found = _of(elf).get(name)
    if found is None:
        raise ConfigError(f"{elf}: no struct {name} in the DWARF info")
    return found


__all__ = ["Layout", "layouts", "struct"]
