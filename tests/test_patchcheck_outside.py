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

from dataclasses import replace
from typing import Sequence

import capstone
import pytest

from arches import NAMES
from arches.base import TextPort, split_out_of_line
from patchcheck.sweep import CheckSpec, ablation_names, sweep

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


def _x86_slow(names) -> list:
    """``names`` as parameters, x86_64's (the slowest loop) a slow test: make check
    runs the others, make test all."""
    return [pytest.param(n, marks=pytest.mark.slow) if n == "x86_64" else n for n in names]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_neighbour_rewritten_with_its_own_bytes_stays_clean(name: str) -> None:
    result = sweep(CheckSpec(name, 2, protocol=rewrites_neighbours_unchanged,
                             sites="jump,call"), range(SEEDS))
    assert result.total == 0, [f.line() for f in result.findings[:3]]


# -- out-of-line code a site leads to (issue 27, section 0, item 2) ----------
#: The arches with optprobes: enabling hands the detour to the protocol as
#: OutOfLine entries ahead of the site (docs/patchcheck.md).
OPT_ARCHES = ("x86_64", "arm")


def publishes_branch_before_detour(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """The reference over the sites first, then over the out-of-line code (the
    detour): the branch is published before its target is written."""
    code, rest = split_out_of_line(sites)
    port.machine.arch.ops.text_poke_batch(port, rest)
    port.machine.arch.ops.text_poke_batch(port, code)


@pytest.mark.parametrize("name", OPT_ARCHES)
def test_a_branch_published_before_its_detour_is_caught(name: str) -> None:
    spec = CheckSpec(name, 2, protocol=publishes_branch_before_detour, sites="optprobe")
    result = sweep(spec, range(SEEDS))
    assert result.findings, f"{name}: not caught in {SEEDS} seeds"
    seed = result.findings[0].seed
    assert sweep(spec, range(seed, seed + 1)).findings[0] == result.findings[0]  # replays


@pytest.mark.parametrize("name", OPT_ARCHES)
def test_the_ablation_table_has_the_detour_last(name: str) -> None:
    spec = CheckSpec(name, 2, sites="optprobe", without="out-of-line code last")
    assert "out-of-line code last" in ablation_names(replace(spec, without=None))
    assert sweep(spec, range(SEEDS)).total


def test_an_unsynced_detour_is_caught_on_x86() -> None:
    result = sweep(CheckSpec("x86_64", 2, sites="optprobe",
                             without="out-of-line flush and sync"), range(SEEDS))
    assert result.total


@pytest.mark.parametrize("name", _x86_slow(OPT_ARCHES))
def test_the_reference_writes_the_detour_first_and_stays_clean(name: str) -> None:
    result = sweep(CheckSpec(name, 2, sites="jump,call,optprobe"), range(SEEDS))
    assert result.total == 0, [f.line() for f in result.findings[:3]]


@pytest.mark.slow
@pytest.mark.parametrize("name", OPT_ARCHES)
def test_the_reference_with_every_site_kind_stays_clean_longer(name: str) -> None:
    result = sweep(CheckSpec(name, 2, sites="jump,call,ftrace,kprobe,optprobe"), range(1000))
    assert result.total == 0, [f.line() for f in result.findings[:3]]
