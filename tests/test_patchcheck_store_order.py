"""The checker runs the CPUs after every text store, not only before it.

Hardware gives a protocol nothing atomic between a store and its next step.
v5.10's text_poke_bp_batch() (arch/x86/kernel/alternative.c) publishes
bp_desc, then smp_wmb(), then writes the int3s: a CPU that meets an int3
with no descriptor oopses in do_int3(). Two protocols that publish their
int3 handling after the int3 store must therefore be caught; the
reference, which installs its handler before its first store, stays clean.
A CPU that crashes while a protocol runs on the guest kernel is a finding
with its seed, not a protocol error.
"""
from __future__ import annotations

from typing import Sequence

import pytest

from arches import NAMES
from arches.base import TextPort
from patchcheck.sweep import CheckSpec, sweep

SEEDS = 1000


def _x86():
    from arches.x86_64 import INT3, poke_int3_handler    # x86's own int3 emulation
    return INT3, poke_int3_handler


def handler_after_int3(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """text_poke_bp_batch with the int3 handler installed after the int3 stores."""
    int3, emulate = _x86()
    multi = [(addr, insn) for addr, insn in sites if len(insn) > 1]
    table = dict(multi)
    for addr, _ in multi:
        port.write_text(addr, int3)
    with port.breakpoint_handler(lambda frame, addr: emulate(port, table, frame, addr)):
        _finish(port, sites, multi, int3)


def table_after_int3(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """text_poke_bp_batch whose emulation table gets each site after its int3 store."""
    int3, emulate = _x86()
    multi = [(addr, insn) for addr, insn in sites if len(insn) > 1]
    table: dict[int, bytes] = {}
    with port.breakpoint_handler(lambda frame, addr: emulate(port, table, frame, addr)):
        for addr, insn in multi:
            port.write_text(addr, int3)
            table[addr] = insn
        _finish(port, sites, multi, int3)


def _finish(port: TextPort, sites: Sequence[tuple[int, bytes]],
            multi: list[tuple[int, bytes]], int3: bytes) -> None:
    """The reference's rounds after the int3s: sync, the tails, sync, the first bytes, sync."""
    port.sync_all()
    for addr, insn in multi:
        port.write_text(addr + 1, insn[1:])
    port.sync_all()
    for addr, insn in sites:
        port.write_text(addr, insn[:1])
    port.sync_all()


@pytest.mark.parametrize("protocol", [handler_after_int3, table_after_int3])
@pytest.mark.parametrize("sites", ["jump", "jump,call"])
def test_int3_handling_published_after_the_int3_is_caught(protocol, sites) -> None:
    result = sweep(CheckSpec("x86_64", 2, protocol=protocol, sites=sites), range(SEEDS),
                   stop_at_first=True)
    assert result.total, f"{protocol.__name__} on {sites} must be caught within {SEEDS} seeds"
    assert set(result.counts) <= {"fault", "stale", "torn", "wild branch"}
    first = result.findings[0]
    assert "trap" in first.detail, first.line()     # a CPU met an int3 nobody handles


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "x86_64"
                                  else n for n in NAMES])    # make check: the faster loops
def test_the_reference_protocol_stays_clean_with_the_cpus_running_after_each_store(name):
    result = sweep(CheckSpec(name, 2, sites="jump,call"), range(300))
    assert result.total == 0, [f.line() for f in result.findings[:3]]


def _crashes_the_guest(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """Writes the arch's breakpoint over every site and lets the CPUs run into it."""
    arch = port.machine.arch
    for addr, insn in sites:
        port.write_text(addr, arch.kprobe_breakpoint(insn[:arch.insn_align])
                        + insn[arch.insn_align:])
    for _ in range(20):
        port.sync_all()
    for addr, insn in sites:
        port.write_text(addr, insn)
    port.sync_all()


@pytest.mark.slow
def test_a_guest_crash_during_a_kernel_protocol_is_a_finding_with_its_seed() -> None:
    spec = CheckSpec(NAMES[0], 2, kernel=True, protocol=_crashes_the_guest)
    result = sweep(spec, range(4), stop_at_first=True)
    assert result.total and "fault" in result.counts, result.counts
    seed = result.findings[0].seed
    assert spec.checker().run_seed(seed) == [f for f in result.findings if f.seed == seed]
