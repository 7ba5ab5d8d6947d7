"""Guest struct layouts read from the kernel ELF's DWARF (the build uses ``-g``).

A :class:`Layout` is a struct's ``DW_AT_byte_size`` and each member's
``DW_AT_data_member_location`` (DWARF 4/5 §5.7.6), exactly as the compiler
laid it out for that arch, so no offset is typed by hand on the host side.
Layouts are read once per ELF file (path, size and mtime) and cached.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

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


@functools.lru_cache(maxsize=16)
def _read(path: str, _size: int, _mtime: int) -> dict[str, Layout]:
    layouts: dict[str, Layout] = {}
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if not elf.has_dwarf_info():
                raise ConfigError(f"{path}: no DWARF debug info (build with -g)")
            # A linked vmlinux has its relocations applied already.
            for cu in elf.get_dwarf_info(relocate_dwarf_sections=False).iter_CUs():
                for die in cu.iter_DIEs():
                    if die.tag not in _AGGREGATES or "DW_AT_name" not in die.attributes:
                        continue
                    if "DW_AT_byte_size" not in die.attributes:
                        continue                      # a declaration only
                    name = die.attributes["DW_AT_name"].value.decode()
                    if name in layouts:
                        continue
                    members = {}
                    for child in die.iter_children():
                        if child.tag == "DW_TAG_member" and "DW_AT_name" in child.attributes:
                            offset = _member_offset(child)
                            if offset is not None:
                                members[child.attributes["DW_AT_name"].value.decode()] = offset
                    layouts[name] = Layout(name, die.attributes["DW_AT_byte_size"].value,
                                           members)
    except (OSError, ELFError) as err:
        raise ConfigError(f"{path}: cannot read DWARF: {err}") from None
    return layouts


def layouts(elf: str | os.PathLike) -> dict[str, Layout]:
    """Every named struct and union of ``elf``'s DWARF, by struct tag name (cached per file)."""
    path = Path(elf)
    try:
        st = path.stat()
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror}") from None
    return _read(os.fspath(path.resolve()), st.st_size, st.st_mtime_ns)


def struct(elf: str | os.PathLike, name: str) -> Layout:
    """The layout of ``struct name`` in ``elf``; :class:`ConfigError` if absent."""
    found = layouts(elf).get(name)
    if found is None:
        raise ConfigError(f"{elf}: no struct {name} in the DWARF info")
    return found


__all__ = ["Layout", "layouts", "struct"]
