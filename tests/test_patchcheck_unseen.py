"""Stores no other CPU can read give the others no turn (``GuestSide._unseen``).

The others run before each store of the patching CPU to the guest's shared
data, unless every one of them is in the loop (which reads nothing but its
own stack) with no IPI pending and no breakpoint to fetch whose handler is
the guest's (x86 ``do_int3()``, where ``poke_int3_handler()`` reads
``bp_desc``). The negative controls: with the breakpoint left out of the rule, x86
``text_poke_bp_batch()`` publishing ``bp_desc`` after its ``int3``s is no
longer caught on the seed that catches it; with the loop and IPI conditions
left out, a ``text_poke_sync()`` that does not wait passes seeds that catch
it.
"""
from __future__ import annotations

import pytest

from arches.x86_64 import INT3
from patchcheck.checker import PatchChecker
from patchcheck.guest import PATCHER, GuestSide
from test_patchcheck_slow_cpu import X86, first_finding, late_desc, no_wait


@pytest.mark.parametrize("arch", ["arm", X86])
def test_a_store_none_can_read_gives_the_others_no_turn(arch: str, monkeypatch) -> None:
    """Over v5.10's own runs, a store judged unseen gets no turn of the others and
    any other store one; both happen."""
    turns: list[tuple[bool, int]] = []
    calls: list[int] = []
    store, unseen = GuestSide._on_data_store, GuestSide._unseen

    def recorded(self, *args) -> None:
        calls.append(0)
        self.last_unseen = None                 # not judged: an atomic's store
        store(self, *args)
        if self.last_unseen is not None:
            turns.append((self.last_unseen, calls[-1]))
        calls.pop()

    def judged(self) -> bool:
        self.last_unseen = unseen(self)
        return self.last_unseen

    monkeypatch.setattr(GuestSide, "_on_data_store", recorded)
    monkeypatch.setattr(GuestSide, "_unseen", judged)
    checker = PatchChecker(arch, 2, guest=True)
    interleave = checker.interleave

    def counted(*args, **kwargs) -> None:
        if calls:
            calls[-1] += 1
        interleave(*args, **kwargs)

    checker.interleave = counted
    for seed in range(4):
        assert checker.run_seed(seed) == []
    assert {(True, 0), (False, 1)} <= set(turns), sorted(set(turns))
    assert set(turns) <= {(True, 0), (False, 1)}, sorted(set(turns))


def test_a_breakpoint_to_fetch_is_seen_in_the_view_or_still_to_arrive() -> None:
    checker = PatchChecker(X86, 2, guest=True)
    checker.run_seed(0)
    checker._reset(1)
    site = checker.sites[0]
    assert not checker.may_fetch(1, INT3)
    checker.views.store(site.addr, INT3)                    # pending for every CPU
    assert checker.may_fetch(1, INT3)
    checker.views.sync(1)                                   # arrived: in CPU 1's view
    assert not checker.views.pending[1] and checker.may_fetch(1, INT3)
    checker._reset(1)
    checker.stored(checker.sites[-1].addr + 64, 1)          # a store outside the sites
    assert checker.may_fetch(1, INT3)


@pytest.mark.slow
def test_without_the_breakpoint_in_the_rule_bp_desc_published_late_passes(tmp_path,
                                                                         monkeypatch) -> None:
    """The rule's negative control: a store the others can read through the int3
    handler is one they must run before."""
    source = late_desc(tmp_path)
    caught = first_finding(PatchChecker(X86, 2, guest=True, guest_patching=source), range(500))
    assert caught is not None and "breakpoint" in caught.detail
    monkeypatch.setattr(PatchChecker, "may_fetch", lambda self, cpu, code: False)
    assert first_finding(PatchChecker(X86, 2, guest=True, guest_patching=source),
                         range(caught.seed, caught.seed + 1)) is None


def _breakpoint_only(self: GuestSide) -> bool:
    """The rule without its loop and IPI conditions."""
    trap = self.arch.poke_breakpoint
    return all(i == PATCHER or not self.checker.may_fetch(i, trap)
               for i in range(len(self.machine.cpus)))


@pytest.mark.slow
def test_without_the_loop_and_ipi_conditions_an_unwaited_sync_passes(tmp_path,
                                                                    monkeypatch) -> None:
    """The other negative control: a store the others can read from an IPI handler
    (or one they are about to take) is one they must run before. Of the seeds that
    catch x86's unwaited text_poke_sync() within 500, some pass without those
    conditions (59, 157, 326 and 328 of 10, with the run-on rule; 5 of 11 before it)."""
    source = no_wait(tmp_path)
    checker = PatchChecker(X86, 2, guest=True, guest_patching=source)
    caught = [s for s in range(500) if checker.run_seed(s)]
    assert caught
    monkeypatch.setattr(GuestSide, "_unseen", _breakpoint_only)
    loose = PatchChecker(X86, 2, guest=True, guest_patching=source)
    assert [s for s in caught if not loose.run_seed(s)]
