"""Unicorn's own instruction counter, read in place: where a turn stands mid-slice.

``emu_start(count=n)`` makes Unicorn 2.1.4 insert a C code hook
(``hook_count_cb`` in ``uc.c``) first in the hook list; the translator
calls it before every guest instruction, and it increments
``uc_struct.emu_counter`` (reset to 0 by each ``uc_emu_start``), stopping
once the counter passes ``emu_count``. Inside a trap handler the counter
therefore holds the instructions this slice has started, the trapping one
included: the position a turn that ends at this trap has retired
(docs/machine.md, "Ending a turn").

The counter is a private field of ``struct uc_struct`` (``include/uc_priv.h``),
next to ``emu_count``; the API has no getter. Its offset is found, not
assumed: a scratch Unicorn of the arch runs the arch's two-instruction
counting loop under a distinctive ``count``, and a code hook at two known
positions looks for the one 8-byte slot holding the position, followed by
the ``count``. No consistent slot (another Unicorn build): None, and the
machine ends turns in the counting loop instead.

A CPU on the timing model is counted by the model's own hook, in a
:class:`Count` of its own (:meth:`sim.machine.Cpu.count_with`, docs/machine.md).
"""
from __future__ import annotations

import ctypes
import struct
from functools import lru_cache

import unicorn

from arches import Arch

CALIBRATION_COUNT = 0x5EED_C0DE_1234     # emu_count during calibration: no other field holds it
SCAN_BYTES = 4096                        # uc_struct is ~14.5 KB in 2.1.4; the counter sits near 1.3 KB
PROBE_POSITIONS = (5, 13)                # counting-loop positions (odd: the loop's first insn)
CODE_BASE = 0x10000


def _slots(handle: int, position: int) -> set[int]:
    """Offsets whose u64 pair reads (``position``, CALIBRATION_COUNT) in host byte order."""
    raw = ctypes.string_at(handle, SCAN_BYTES)
    return {off for off in range(0, SCAN_BYTES - 16, 8)
            if struct.unpack_from("=QQ", raw, off) == (position, CALIBRATION_COUNT)}


@lru_cache(maxsize=None)
def counter_offset(arch: Arch) -> int | None:
    """Offset of ``emu_counter`` in the ``uc_struct`` of an ``arch`` Unicorn, or None."""
    uc = unicorn.Uc(*arch.uc_mode)
    uc.mem_map(CODE_BASE, 0x1000, unicorn.UC_PROT_READ | unicorn.UC_PROT_EXEC)
    uc.mem_write(CODE_BASE, bytes(arch.spin.code))
    handle = uc._uch.value
    found: list[set[int]] = []
    seen = [0]

    def hook(u: unicorn.Uc, _addr: int, _size: int, _data: object) -> None:
        seen[0] += 1
        position = 2 * seen[0] - 1       # the loop's first instruction, counted on entry
        if position in PROBE_POSITIONS:
            found.append(_slots(handle, position))
        if position >= PROBE_POSITIONS[-1]:
            u.emu_stop()

    uc.hook_add(unicorn.UC_HOOK_CODE, hook, None, CODE_BASE, CODE_BASE)
    try:
        uc.emu_start(CODE_BASE | arch.code_isa, -1 & ((1 << arch.bits) - 1),
                     count=CALIBRATION_COUNT)
    except unicorn.UcError:
        return None
    common = set.intersection(*found) if len(found) == len(PROBE_POSITIONS) else set()
    return common.pop() if len(common) == 1 else None


class Count(ctypes.Structure):
    """``emu_counter`` and, next to it, ``emu_count`` (the slice's budget)."""

    _fields_ = [("value", ctypes.c_uint64), ("budget", ctypes.c_uint64)]


def instruction_counter(uc: unicorn.Uc, arch: Arch) -> Count | None:
    """A live view of ``uc``'s ``emu_counter`` (``.value``) and ``emu_count``
    (``.budget``), or None if not located. A nested ``emu_start`` resets both:
    saving and restoring them keeps the outer slice's count
    (:meth:`sim.machine.Cpu.call`)."""
    offset = counter_offset(arch)
    if offset is None:
        return None
    return Count.from_address(uc._uch.value + offset)


__all__ = ["Count", "counter_offset", "instruction_counter"]
