"""flush_icache_range works in the reference core's L1I lines (Arch.icache_line), not a
fixed 32 bytes: the fetch model and the patchers take the line from arches/<arch>/core.py."""
from __future__ import annotations

import dataclasses

import pytest

from arches import NAMES, get_arch
from arches.base import DEFAULT_ICACHE_LINE
from sim.fetch import FetchViews
from sim.machine import PAGE, Machine

BASE = 0x10000


@pytest.mark.parametrize("name", NAMES)
def test_icache_line_is_the_reference_cores_l1i(name):
    arch = get_arch(name)
    l1i = next(c for c in arch.core.caches if c.holds == "i")
    assert arch.icache_line == l1i.line
    assert dataclasses.replace(arch, core=None).icache_line == DEFAULT_ICACHE_LINE


def _with_l1i_line(name: str, line: int):
    """``name``'s arch with a reference core whose L1I has ``line``-byte lines (a PowerPC
    8xx has 16)."""
    arch = get_arch(name)
    caches = tuple(dataclasses.replace(c, line=line) if c.holds == "i" else c
                   for c in arch.core.caches)
    return dataclasses.replace(arch, core=dataclasses.replace(arch.core, caches=caches))


@pytest.mark.parametrize("name", [n for n in NAMES if not get_arch(n).icache_coherent])
@pytest.mark.parametrize("line", [16, 32, 64])
def test_a_flush_covers_exactly_its_lines(name, line):
    """Two words a line apart: flushing the first line makes only the first syncable."""
    arch = _with_l1i_line(name, line)
    machine = Machine(arch, 1)
    machine.map(BASE, PAGE, "rwx")
    views = FetchViews(machine, BASE, PAGE)
    first, second = BASE + line - arch.insn_align, BASE + line
    views.store(first, b"\x01" * arch.insn_align)
    views.store(second, b"\x02" * arch.insn_align)
    views.flush(BASE, BASE + 1)
    views.sync(0)
    assert views.stale(0) == [second]
    assert views.read(0, first, arch.insn_align) == b"\x01" * arch.insn_align
