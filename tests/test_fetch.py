"""The per-CPU instruction-fetch model (sim/fetch.py): stores reach other CPUs
piece by piece, and a sync delivers only what the arch guarantees."""
from __future__ import annotations

import random

import pytest

from patchcheck.sweep import CheckSpec, ablation_names
from sim import fetch
from sim.fetch import FetchViews
from sim.machine import PAGE, Machine

BASE = 0x20000


def _machine(arch) -> tuple[Machine, FetchViews, bytes, bytes]:
    """Two CPUs at a nop of jump-label size followed by a branch-to-self."""
    size = arch.site_len
    nop = arch.nop(size)
    machine = Machine(arch, 2)
    code = nop + arch.encode_jump(BASE + size, BASE + size)
    machine.load_code(code + arch.nop(arch.insn_align) * ((PAGE - len(code)) // arch.insn_align),
                      BASE)
    views = FetchViews(machine, BASE, PAGE)
    return machine, views, nop, arch.encode_jump(BASE, BASE + 2 * size)


def test_a_store_is_pending_in_pieces_of_the_arch_alignment(arch) -> None:
    machine, views, nop, jump = _machine(arch)
    views.store(BASE, jump)
    assert machine.read(BASE, len(jump)) == jump, "memory (and data reads) see it at once"
    first = BASE - BASE % arch.insn_align
    pieces = list(range(first, BASE + len(jump), arch.insn_align))
    for cpu in range(2):
        assert views.stale(cpu) == pieces
        assert views.read(cpu, BASE, len(nop)) == nop, "no CPU fetches it yet"


def test_pieces_arrive_at_seeded_times_and_replay(arch) -> None:
    seen = []
    for _ in range(2):
        machine, views, nop, jump = _machine(arch)
        views.store(BASE, jump)
        rng, trail = random.Random(7), []
        while views.stale(0):
            views.drift(0, rng)
            trail.append(views.read(0, BASE, len(jump)))
        assert trail[-1] == jump and views.stale(1), "CPU 1 still waits"
        seen.append(trail)
    assert seen[0] == seen[1], "the same seed gives the same arrivals"
    if arch.insn_align < arch.site_len:        # a mixed view is reachable
        mixes = set()
        for seed in range(50):
            machine, views, nop, jump = _machine(arch)
            views.store(BASE, jump)
            views.drift(0, random.Random(seed))
            mixes.add(views.read(0, BASE, len(jump)))
        assert mixes - {nop, jump}, "byte-wise arrival must produce torn views"


def test_a_sync_delivers_only_flushed_lines_unless_fetch_is_coherent(arch) -> None:
    machine, views, nop, jump = _machine(arch)
    views.store(BASE, jump)
    views.sync(0)
    if arch.icache_coherent:
        assert views.read(0, BASE, len(jump)) == jump and not views.stale(0)
    else:
        assert views.read(0, BASE, len(nop)) == nop, "unflushed: still stale after the sync"
        views.flush(BASE, BASE + len(jump))
        views.sync(0)
        assert views.read(0, BASE, len(jump)) == jump and not views.stale(0)
    assert views.read(1, BASE, len(nop)) == nop, "only the CPU that serialized"


def test_a_cpu_executes_its_own_view(arch) -> None:
    machine, views, nop, jump = _machine(arch)
    views.store(BASE, jump)
    machine.step(0, 1)
    assert machine.cpus[0].pc == BASE + len(nop), "CPU 0 ran the nop it still fetches"
    views.flush(BASE, BASE + len(jump))
    views.sync(1)
    machine.step(1, 1)
    assert machine.cpus[1].pc == BASE + 2 * len(nop), "CPU 1 ran the jump"


@pytest.mark.parametrize("guest", [False, True], ids=["python", "guest"])
def test_translations_kept_across_seeds_change_no_finding(arch, guest, monkeypatch) -> None:
    """FetchViews.reset keeps the blocks translated outside the views between two
    full flushes: every seed's findings, kinds, places and details are those of a
    full flush at every reset. An ablation, so that there are findings to compare."""
    if guest and "guest_patching" not in arch.capabilities:
        pytest.skip("no guest patching code on this arch")
    without = list(ablation_names(CheckSpec(arch.name, 2, guest=guest)))[0]
    spec = CheckSpec(arch.name, 2, guest=guest, without=without, sites="jump,call,ftrace")

    def findings(every: int) -> list:
        monkeypatch.setattr(fetch, "FLUSH_EVERY", every)
        checker = spec.checker()
        return [checker.run_seed(seed) for seed in range(12)]

    always = findings(1)
    assert any(always)
    assert findings(5) == always
