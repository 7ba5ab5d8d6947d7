"""The static_keys suite (lib/test_static_keys.c + lib/test_static_key_base.c,
v5.10) as guest modules on every arch (docs/selftest/static_keys.md)."""
from __future__ import annotations

import pytest

import patcher.instrument
import selftests
from arches import ARCHES, NAMES
from kbuild import build
from patcher.tables import load_tables
from selftests import Status, parse_ktap
from sim.guest import Guest

SUITE = selftests.load_all()["static_keys"]


@pytest.fixture(scope="module", params=NAMES)
def image(request):
    arch = ARCHES[request.param]
    return build(arch.name, overrides=dict(SUITE.config), modules=SUITE.sources(arch))


def run(image, *, failing: bool = False) -> tuple[selftests.Case, ...]:
    """The suite's cases; ``failing``: its module_init returns -EINVAL, as v5.10's
    test_static_keys_init does when a case fails, so the module is not loaded."""
    result = Guest(image, cpus=1, workload="kmalloc", size=3).run()
    assert result.checksum_ok
    assert [(m.name, m.errno) for m in result.failed_modules] == \
        ([("static_keys", "EINVAL")] if failing else [])
    return parse_ktap(result.console)


def test_every_entry_passes_in_every_pass(image) -> None:
    cases = run(image)
    assert len(cases) == SUITE.expected_cases(None) == 54
    assert all(c.status is Status.PASSED for c in cases), [c for c in cases if c.detail]
    assert cases[7].name == "&base_inv_old_true_key static_key_true (as built)"
    assert cases[-1].name.endswith("static_branch_unlikely (inverted back)")


def test_every_site_is_what_jump_label_type_says(image) -> None:
    """After the run (keys back as built, the base module's four inverted),
    each test function's site is the jump exactly when enabled ^ branch
    (v5.10 jump_label_type(); the branch is bit 0 of the entry's key)."""
    guest = Guest(image, cpus=1, workload="kmalloc", size=3)
    assert guest.run().ok
    tables = load_tables(guest.image, guest.arch)
    entries = {e.function: e for e in tables.jump_entries if e.function.startswith("t")}
    assert len(entries) == 18
    nop = guest.arch.site_nop
    for entry in entries.values():
        enabled = guest.machine.read_word(entry.key & ~1, 4) != 0
        jump = guest.arch.encode_jump(entry.code, entry.target)
        assert guest.machine.read(entry.code, len(nop)) == (
            jump if enabled ^ bool(entry.key & 1) else nop), entry.function


def test_unpatched_text_is_caught(image, monkeypatch) -> None:
    """Negative control: with the host's jump_label_update() doing nothing,
    the counts change but no site does, and the branch checks fail."""
    monkeypatch.setattr(patcher.instrument.ModuleApi, "_jump_label_update",
                        lambda self, key, a3: None)
    cases = run(image, failing=True)
    failed = [c for c in cases if c.status is Status.FAILED]
    for phase in ("as built", "inverted", "inverted back"):
        assert any(f"({phase})" in c.name for c in failed), phase
    assert all(c.detail.startswith("enabled") and "branch" in c.detail for c in failed)
