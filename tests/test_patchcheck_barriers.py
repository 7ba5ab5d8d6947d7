"""Barriers that order cache maintenance (issue 36, item 3).

ARM DCCMVAU/ICIMVAU and PowerPC ``dcbst``/``icbi`` take effect for instruction
fetch only when the issuing CPU's next barrier completes them (ARM ``dsb``,
ARMv7 ARM B2.2.9; PowerPC ``sync``, Power ISA v2.03 Book II §1.8), and an
invalidation covers only what a completed clean had pushed out when it was
issued. The negative controls are users' routines that leave a barrier out
(``tests/data/patchcheck/``): each is caught; the same routine with the
barrier is clean.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from arches import get_arch
from patchcheck.checker import PatchChecker
from sim.fetch import CLEANED, FLUSHED, STORED, FetchViews
from sim.machine import PAGE, Machine

DATA = Path(__file__).parent / "data" / "patchcheck"
WITHIN = 500


def _user(arch: str, path: Path, name: str) -> PatchChecker:
    return PatchChecker(arch, 2, guest=True, guest_sources=(str(path),), guest_protocol=name)


def _first(checker: PatchChecker, seeds: range):
    for seed in seeds:
        found = checker.run_seed(seed)
        if found:
            return found[0]
    return None


def _edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (DATA / name).read_text()
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.slow
def test_arm_without_dsb_between_clean_and_invalidate_is_caught() -> None:
    found = _first(_user("arm", DATA / "arm_routines.c", "my_patch_no_dsb"), range(WITHIN))
    assert found is not None and found.kind in ("stale", "unpredictable"), found


@pytest.mark.slow
def test_arm_with_the_dsb_is_clean(tmp_path) -> None:
    loop = "c7, c11, 1\" : : \"r\" (a) : \"memory\");\n"
    path = _edited(tmp_path, "arm_routines.c", loop,
                   loop + "\t__asm__ __volatile__(\"dsb ishst\" : : : \"memory\");\n")
    assert _first(_user("arm", path, "my_patch_no_dsb"), range(100)) is None


@pytest.mark.slow
@pytest.mark.parametrize("old, new", [
    (None, None),                                                         # no sync between
    ("icbi 0, %1\\n\\tsync\\n\\tisync", "icbi 0, %1\\n\\tisync"),         # no sync at all
])
def test_ppc_without_sync_between_dcbst_and_icbi_is_caught(tmp_path, old, new) -> None:
    path = DATA / "ppc_routines.c" if old is None else \
        _edited(tmp_path, "ppc_routines.c", old, new)
    found = _first(_user("ppc32", path, "my_patch_no_sync"), range(WITHIN))
    assert found is not None and found.kind == "stale", found


@pytest.mark.slow
def test_ppc_with_both_syncs_is_clean(tmp_path) -> None:
    path = _edited(tmp_path, "ppc_routines.c", "dcbst 0, %0\\n\\ticbi",
                   "dcbst 0, %0\\n\\tsync\\n\\ticbi")
    assert _first(_user("ppc32", path, "my_patch_no_sync"), range(100)) is None


@pytest.mark.parametrize("arch, code, kind", [
    ("arm", bytes.fromhex("4bf07ff5"), "barrier"),        # dsb ish
    ("arm", bytes.fromhex("4af07ff5"), "barrier"),        # dsb ishst
    ("arm", bytes.fromhex("5bf07ff5"), None),             # dmb ish
    ("arm", bytes.fromhex("9a0f07ee"), "barrier"),        # mcr p15, 0, r0, c7, c10, 4
    ("ppc32", bytes.fromhex("7c0004ac"), "barrier"),      # sync
    ("ppc32", bytes.fromhex("7c2004ac"), None),           # lwsync
    ("ppc32", bytes.fromhex("7c0006ac"), None),           # eieio
])
def test_fetch_sync_reads_the_barriers(arch, code, kind) -> None:
    event = get_arch(arch).ops.fetch_sync(code)
    assert (event.kind if event else None) == kind


def test_an_invalidation_covers_only_what_a_completed_clean_pushed_out() -> None:
    machine = Machine("arm", 2)
    machine.map(0x10000, PAGE, "rwx")
    views = FetchViews(machine, 0x10000, PAGE)
    views.store(0x10000, b"\x01\x00\x00\xea")
    covers = views.cleaned(0x10000, 0x10004)            # invalidate issued before any clean
    assert covers == frozenset()
    views.clean(0x10000, 0x10004)
    views.invalidate(0x10000, 0x10004, covers)
    assert views.pending[1][0x10000][1] == CLEANED      # not flushed: it needs a new icbi
    views.invalidate(0x10000, 0x10004, views.cleaned(0x10000, 0x10004))
    assert views.pending[1][0x10000][1] == FLUSHED
    views.store(0x10000, b"\x00\x00\xa0\xe1")
    assert views.pending[1][0x10000][1] == STORED


@pytest.mark.parametrize("arch", ["arm", "ppc32"])
def test_the_others_run_at_a_barrier_not_at_maintenance_it_completes(arch: str) -> None:
    """A clean, an invalidate or a serializing instruction of the patching CPU changes
    nothing another CPU can see until its barrier (or at all): the others run before
    each barrier, and never at those."""
    checker = PatchChecker(arch, 2, guest=True)
    events, cpu = checker.guest.events, checker.machine.cpus[0]
    at: list[str] = []
    interleave = checker.interleave

    def recorded(*args, **kwargs) -> None:
        event = events.get(cpu.pc)
        at.append(event.kind if event is not None else "other")
        interleave(*args, **kwargs)

    checker.interleave = recorded
    for seed in range(5):
        assert checker.run_seed(seed) == []
    assert "barrier" in at
    assert not {"clean", "invalidate", "serialize"} & set(at), sorted(set(at))
