"""A Thumb-2 kernel built with CONFIG_PATCHING_IN_GUEST (issue 36, item 8): it carries
v5.10's Thumb-2 patch_text() (arches/arm/patching.c compiled with -mthumb, the same
code ``kisim patchcheck --arch arm --set THUMB2_KERNEL=y --guest`` checks) and patches
itself through it, as the A32 kernel does (tests/test_patching_in_guest.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

import kbuild
from selftests.run import run_suite, suites_for
from sim.guest import Guest
from sim.self_patching import SelfPatching
from test_patching_in_guest import _operations, _text

T2_ON = {"THUMB2_KERNEL": "y", "PATCHING_IN_GUEST": "y"}
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "flip_key.c"


@pytest.mark.slow
def test_the_thumb2_kernel_patches_itself_as_the_host_does() -> None:
    """One Thumb-2 image, patched once by its own patch_text() and once by the host's
    Python protocol: the same text after every feature's step, and every step ran
    the kernel's primitive."""
    kernel = kbuild.build("arm", overrides=T2_ON)
    assert kernel.spec.variant == "THUMB2_KERNEL"
    guest, host = Guest(kernel, cpus=2), Guest(kernel, cpus=2)
    host.machine.text_poke = None
    before = _text(guest)
    mine, theirs = _operations(guest), _operations(host)
    assert [(name, text) for name, text, _ in mine] == \
        [(name, text) for name, text, _ in theirs]
    assert mine[0][1] != before and mine[-1][1] == before
    calls = [0] + [m[2] for m in mine]
    assert all(b > a for a, b in zip(calls, calls[1:])), calls


@pytest.mark.slow
def test_a_module_flipping_a_key_stops_each_cpu_once_per_flip() -> None:
    """examples/flip_key.c on 4 CPUs: 40 flips, each one stop_machine(), so every
    other CPU takes 40 IPIs, entering the vector in Thumb state."""
    build = kbuild.build("arm", overrides=T2_ON, modules=[EXAMPLE])
    guest = Guest(build, cpus=4, workload="flip_key:run", size=20, quantum=1000, expect=20)
    result = guest.run()
    assert result.ok
    assert result.patching["calls"] == 40
    assert result.patching["ipis_taken"] == [0, 40, 40, 40]


@pytest.mark.slow
def test_selftests_pass_and_patch_16_and_32_bit_instructions(monkeypatch) -> None:
    """lib/test_kprobes.c, test_static_keys.c and test-thumb.c on the Thumb-2 kernel,
    every patch through its own patch_text(): 16-bit kprobe breakpoints (one
    halfword store) and 32-bit ones and jump-label sites, at either alignment."""
    sizes: set[tuple[int, int]] = set()
    real = SelfPatching._patch

    def counted(self, index, sites):
        sizes.update((len(insn), addr % 4) for addr, insn in sites)
        return real(self, index, sites)

    monkeypatch.setattr(SelfPatching, "_patch", counted)
    for suite in suites_for("arm", overrides=T2_ON):
        result = run_suite(suite, "arm", overrides=T2_ON)
        failed = [c for c in result.cases if c.status.name == "FAILED"]
        assert not failed, (suite.name, failed[:3])
        assert result.cases
    assert {(2, 0), (2, 2), (4, 0), (4, 2)} <= sizes, sizes
