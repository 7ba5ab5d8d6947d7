"""Immediate values: a variable mirrored in instructions' immediate fields.

After Desnoyers' "Immediate Values" patchset (2007-2008): ``imv_set(var,
value)`` stores the value into the variable and rewrites every ``__imv``
site of it -- x86-64 ``mov $imm,%reg`` (immediate naturally aligned), ARM
``mov rX,#imm8``, PowerPC ``li rX,imm16`` -- through the text protocol,
so that after it returns every CPU loads the new value.
"""
from __future__ import annotations

from collections import defaultdict

from patcher.errors import PatchError
from patcher.tables import ImvEntry
from patcher.text import TextPatcher

OWNER = "imv"


class ImmediateValues:
    """Every immediate-value site of one image, grouped by variable."""

    def __init__(self, patcher: TextPatcher, entries: list[ImvEntry]) -> None:
        self.patcher = patcher
        self.sites: dict[int, list[ImvEntry]] = defaultdict(list)
        for entry in entries:
            patcher.reserve(entry.insn, entry.length, OWNER)
            self.sites[entry.var].append(entry)

    def read(self, entry: ImvEntry) -> int:
        """The value the site's instruction currently loads."""
        arch = self.patcher.arch
        raw = self.patcher.machine.read(entry.imv, entry.size)
        return int.from_bytes(raw, arch.endian, signed=arch.imv_sign_extends)

    def imv_set(self, var: int, value: int, var_size: int = 1) -> None:
        """Set ``var`` (``var_size`` bytes) to ``value`` and patch all its sites.

        As Desnoyers' ``imv_set`` assigns the variable, the value is converted
        to its size as C converts it (256 in a char is 0). Each immediate gets
        the value's low bytes. A site whose instruction would load another
        value (an immediate narrower than the variable: ARM's imm8, PowerPC's
        sign-extended ``li`` under a 4-byte variable) is refused, ERANGE,
        before anything is written.
        """
        sites = self.sites.get(var)
        if not sites:
            raise PatchError("ENOENT", f"no __imv site reads variable {var:#x}")
        arch = self.patcher.arch
        mask = (1 << (8 * var_size)) - 1
        value &= mask
        for entry in sites:
            bits = 8 * entry.size
            loaded = value & ((1 << bits) - 1)
            if arch.imv_sign_extends and loaded >> (bits - 1):
                loaded -= 1 << bits
            if loaded & mask != value:
                kind = "sign-extended " if arch.imv_sign_extends else ""
                raise PatchError("ERANGE", f"imv_set: {value:#x} in a {var_size}-byte variable: "
                                           f"the {entry.size}-byte {kind}immediate of "
                                           f"{entry.text!r} at {entry.insn:#x} would load "
                                           f"{loaded & mask:#x}")
        machine = self.patcher.machine
        machine.write(var, arch.from_int(value, var_size))
        with self.patcher.batch() as batch:
            for entry in sites:
                length = entry.length
                old = machine.read(entry.insn, length)
                offset = entry.imv - entry.insn
                field = arch.from_int(value, entry.size)
                new = old[:offset] + field + old[offset + entry.size:]
                if new != old:
                    batch.queue(entry.insn, old, new, OWNER)
