"""Code outside the sites is checked byte for byte once a protocol stores there.

A CPU's execution must agree with the old program or the new one as a whole,
including the code around and behind the sites (issue 27, section 0, item
2). Once a protocol has stored outside the sites' patches, the checker
compares every instruction a CPU fetches with the program's bytes. A
protocol that scribbles over a site's successor while the CPUs run is
caught there; one that rewrites a neighbour with its own bytes stays clean,
so the check has no false positives on any arch or layout.
"""
from __future__ import annotations

from typing import Sequence

import capstone
import pytest

from arches import NAMES
from arches.base import TextPort
from patchcheck.sweep import CheckSpec, sweep

SEEDS = 200


def _successors(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """The instruction after each site: (address, its bytes), as Capstone sizes it."""
    arch = port.machine.arch
    cs = capstone.Cs(*arch.cs_mode)
    out = []
    for addr, insn in sites:
        succ = addr + len(insn)
        code = port.read(succ, arch.max_insn_len)
        first = next(cs.disasm(code, succ), None)
        if first is not None:
            out.append((succ, code[:first.size]))
    return out


def rewrites_neighbours_unchanged(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """The reference, after storing each site's successor over itself (under
    stop_machine(), which ARM's rule for concurrent modification asks of any
    store to a word a CPU may execute): no change."""
    def rewrite() -> None:
        for addr, old in _successors(port, sites):
            port.write_text(addr, old)
    port.stop_machine(rewrite)
    port.machine.arch.ops.text_poke_batch(port, sites)


def scribbles_successors(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """The reference with each site's successor overwritten by nops of its size while it
    runs, then put back: CPUs meanwhile execute code the program never had."""
    arch = port.machine.arch
    saved = [(addr, old) for addr, old in _successors(port, sites)
             if len(old) in arch.nops and arch.nop(len(old)) != old]
    for addr, old in saved:
        port.write_text(addr, arch.nop(len(old)))
    arch.ops.text_poke_batch(port, sites)
    for addr, old in saved:
        port.write_text(addr, old)
    port.sync_all()


@pytest.mark.parametrize("name", NAMES)
def test_a_scribbled_neighbour_is_caught_where_it_is_executed(name: str) -> None:
    result = sweep(CheckSpec(name, 2, protocol=scribbles_successors, sites="jump,call"),
                   range(SEEDS))
    outside = [f for f in result.findings if "outside the sites" in f.detail]
    assert outside, f"{name}: not caught in {SEEDS} seeds: {dict(result.counts)}"
    assert outside[0].kind == "torn"


@pytest.mark.parametrize("name", NAMES)
def test_a_neighbour_rewritten_with_its_own_bytes_stays_clean(name: str) -> None:
    result = sweep(CheckSpec(name, 2, protocol=rewrites_neighbours_unchanged,
                             sites="jump,call"), range(SEEDS))
    assert result.total == 0, [f.line() for f in result.findings[:3]]
