"""The static_keys suite (lib/test_static_keys.c + lib/test_static_key_base.c,
v5.10) as guest modules on every arch (docs/selftest/static_keys.md)."""
from __future__ import annotations

import pytest

import patcher.jump_label
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


def run(image) -> tuple[selftests.Case, ...]:
    result = Guest(image, cpus=1, workload="kmalloc", size=3).run()
    assert result.ok
    return parse_ktap(result.console)


def test_every_entry_passes_in_every_pass(image) -> None:
    cases = run(image)
    assert len(cases) == SUITE.expected_cases(None) == 54
    assert all(c.status is Status.PASSED for c in cases), [c for c in cases if c.detail]
    assert cases[7].name == "&base_inv_old_true_key static_key_true (as built)"
    assert cases[-1].name.endswith("static_branch_unlikely (inverted back)")


def test_sites_are_built_in_their_initial_state(image) -> None:
    """arch_static_branch_jump() sites (unlikely on a true key, likely on a
    false one) are built as the jump; likely sites carry the branch bit."""
    guest = Guest(image, cpus=1, workload="kmalloc", size=3)
    tables = load_tables(guest.image, guest.arch)
    sym = guest.image.symbols
    by_function = {e.function: e for e in tables.jump_entries}
    nop = guest.arch.site_nop
    assert by_function["t2"].insn == nop and by_function["t2"].branch        # likely, true key
    assert by_function["t3"].insn != nop and not by_function["t3"].branch    # unlikely, true key
    assert by_function["t4"].insn != nop and by_function["t4"].branch        # likely, false key
    assert by_function["t5"].insn == nop and not by_function["t5"].branch    # unlikely, false key
    assert by_function["t2"].key == sym["true_key"]


def test_unpatched_text_is_caught(image, monkeypatch) -> None:
    """Negative control: with jump_label_update() doing nothing, the counts
    change but the branches do not: the keys the base module inverted fail
    as built, the other keys fail inverted (6 + 12 + 6 = 24 of 54 checks)."""
    monkeypatch.setattr(patcher.jump_label.StaticKeys, "jump_label_update",
                        lambda self, key, enable: None)
    cases = run(image)
    failed = [c for c in cases if c.status is Status.FAILED]
    assert len(failed) == 24
    assert all(c.detail.startswith("enabled") and "branch" in c.detail for c in failed)
    assert {c.name for c in failed if "(as built)" in c.name} == {
        c.name for c in cases if "(as built)" in c.name and "_inv_" in c.name}
