"""The checker's loop in every layout, chosen by the seed.

With the sites always apart and sharing lines, two bugs pass: a protocol
that coalesces the stores of adjacent sites (x86: one int3 for two sites,
so the second is written bare), and one that flushes only the first site's
cache line (ARM, PowerPC). The ``adjacent`` and ``lines`` layouts catch
them; the reference protocols stay clean in every layout.
"""
from __future__ import annotations

from typing import Sequence

import pytest

from arches import NAMES, get_arch
from arches.base import TextPort
from patchcheck.checker import PatchChecker
from patchcheck.sites import BASE, LAYOUTS, CheckerError, SITE_KINDS, lay_out
from patchcheck.sweep import CheckSpec

SEEDS = 1000


def _kinds(name: str) -> list[str]:
    return [k for k in SITE_KINDS if k != "optprobe" or name != "ppc32"]


@pytest.mark.parametrize("name", NAMES)
def test_adjacent_sites_are_back_to_back_and_lines_apart_in_lines(name) -> None:
    arch = get_arch(name)
    bp = arch.kprobe_breakpoint(arch.nop(arch.insn_align))
    kinds = _kinds(name)
    adjacent = lay_out(arch, kinds, bp, "adjacent")
    prefixes = [len(SITE_KINDS[k].build(arch, _blank()).prefix) for k in kinds]
    for a, b, prefix in zip(adjacent.sites, adjacent.sites[1:], prefixes[1:]):
        body = max(len(a.off), len(a.dormant.insn))      # a kprobe patches 1 byte of 3
        assert b.addr == a.addr + body + prefix, (a.kind, b.kind)
    lines = lay_out(arch, kinds, bp, "lines")
    line = arch.icache_line
    assert len({s.addr // line for s in lines.sites}) == len(lines.sites)
    with pytest.raises(CheckerError, match="unknown layout"):
        lay_out(arch, kinds, bp, "nosuch")


def _blank():
    from patchcheck.sites import At
    return At(BASE, BASE, BASE, BASE, chained=True)


def test_every_layout_is_run() -> None:
    checker = PatchChecker("x86_64", 2)
    seen = set()
    for seed in range(30):
        checker.run_seed(seed)
        seen.add(checker.layout)
    assert seen == set(LAYOUTS)


def _first_caught(spec: CheckSpec) -> tuple[int, str]:
    """The first seed with a finding, and the layout it ran."""
    checker = spec.checker()
    for seed in range(SEEDS):
        if checker.run_seed(seed):
            return seed, checker.layout
    raise AssertionError(f"{spec.protocol} not caught within {SEEDS} seeds")


def coalescing_text_poke_bp(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """x86 text_poke_bp_batch over runs of adjacent sites merged into one: one int3 (and
    one emulated instruction) per run, the rest of the run written bare."""
    from arches.x86_64 import INT3, poke_int3_handler
    runs: list[tuple[int, bytes, bytes]] = []            # (address, bytes, first insn)
    for addr, insn in sorted(sites):
        if runs and runs[-1][0] + len(runs[-1][1]) == addr:
            start, data, first = runs.pop()
            runs.append((start, data + insn, first))
        else:
            runs.append((addr, insn, insn))
    table = {addr: first for addr, data, first in runs if len(data) > 1}
    with port.breakpoint_handler(lambda frame, addr: poke_int3_handler(port, table, frame,
                                                                       addr)):
        for addr in table:
            port.write_text(addr, INT3)
        port.sync_all()
        for addr, data, _ in runs:
            if len(data) > 1:
                port.write_text(addr + 1, data[1:])
        port.sync_all()
        for addr, data, _ in runs:
            port.write_text(addr, data[:1])
        port.sync_all()


def test_coalescing_adjacent_sites_is_caught_in_the_adjacent_layout() -> None:
    seed, layout = _first_caught(CheckSpec("x86_64", 2, protocol=coalescing_text_poke_bp))
    assert layout == "adjacent"
    checker = PatchChecker("x86_64", 2, protocol=coalescing_text_poke_bp)
    for seed in [s for s in range(300) if _layout_of(s) == "sparse"]:
        assert checker.run_seed(seed) == [], "apart, the sites are never merged"


def _layout_of(seed: int) -> str:
    import random
    return LAYOUTS[random.Random(seed).randrange(len(LAYOUTS))]


def flush_first_line_only(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """patch_text / patch_instruction that flushes only the first site's line (under
    stop_machine() where the arch needs it, so that the missed flush is what is caught)."""
    arch = port.machine.arch

    def steps() -> None:
        for addr, insn in sites:
            port.write_text(addr, insn)
        first, insn = sites[0]
        port.flush_icache(first, first + len(insn))
    if arch.cmodx_safe is None:
        steps()
        port.sync_all()
    else:
        port.stop_machine(steps)


@pytest.mark.parametrize("name", [n for n in NAMES if not get_arch(n).icache_coherent])
def test_flushing_only_the_first_line_is_caught_in_the_lines_layout(name) -> None:
    seed, layout = _first_caught(CheckSpec(name, 2, protocol=flush_first_line_only))
    assert layout == "lines", seed
