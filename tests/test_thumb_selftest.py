"""arch/arm/probes/kprobes/test-thumb.c on the Thumb-2 kernel (selftests/test_thumb.py).

Every case runs probed and unprobed under the kernel's flag and IT-state
scenarios; a refused case must be one the host's Thumb decoder refuses, for
the reason the guest printed; and a handler that emulates wrongly makes the
suite fail.
"""
from __future__ import annotations

import re

import pytest

from arches import get_arch
from arches.kprobe import KprobeRefused
from probes.kprobes import arch_kprobes
from selftests import Status
from selftests.run import run_suite
from selftests.test_thumb import CASES, SUITE

pytestmark = pytest.mark.slow           # a whole guest build and about 3,400 scenarios a case

T2_CONFIG = {"THUMB2_KERNEL": "y"}
_INSN = re.compile(r"\(insn ([0-9a-f]{4,8})\)")


@pytest.fixture(scope="module")
def result():
    return run_suite(SUITE, "arm", T2_CONFIG)


def _code(word: int) -> bytes:
    """The instruction as memory: one halfword, or the first then the second."""
    if word > 0xFFFF:
        return (word >> 16).to_bytes(2, "little") + (word & 0xFFFF).to_bytes(2, "little")
    return word.to_bytes(2, "little")


def test_every_case_passes_or_is_refused_as_the_kernel_refuses(result) -> None:
    assert result.ok, [c for c in result.cases if c.status is Status.FAILED][:5]
    assert len(result.cases) == CASES and f"1..{CASES}" in result.console
    assert result.count(Status.PASSED) == 987 and result.count(Status.REFUSED) == 262
    ops = arch_kprobes(get_arch("arm").for_config(T2_CONFIG))
    for case in result.cases:
        if case.status is Status.REFUSED:
            word = int(_INSN.search(case.detail).group(1), 16)
            with pytest.raises(KprobeRefused) as err:
                ops.arch_prepare_kprobe(0x100000, _code(word), 0x200000)
            assert str(err.value)[:40] in case.detail      # the kernel's reason, via the guest


def test_the_kernels_thumb_classes_run_probed(result) -> None:
    """IT blocks, table branches, literal loads, cbz, interworking, POP with PC."""
    passed = {c.name for c in result.cases if c.status is Status.PASSED}
    found = {text: any(name.startswith(text) for name in passed)
             for text in ("tbb", "tbh", "cbz", "cbnz", "it", "ldr r0, 3f", "pop", "blx",
                          "bx", "ldrd", "strd", "ldmia", "stmdb", "mrs", "push", "ldr pc")}
    assert all(found.values()), [t for t, ok in found.items() if not ok]


def test_a_wrong_thumb_emulation_fails_the_suite(monkeypatch) -> None:
    """Negative control: simulate every 16-bit low-register operation as a nop
    (the guest skips the instruction): the suite must report failures."""
    import arches.arm.kprobes_thumb as kprobes_thumb
    real = kprobes_thumb.thumb16_prepare

    def skipped(insn: int):
        asi = real(insn)
        if asi.handler.startswith("t16_emulate_loregs"):
            asi.handler = "probes_simulate_nop"
        return asi

    monkeypatch.setattr(kprobes_thumb, "thumb16_prepare", skipped)
    res = run_suite(SUITE, "arm", T2_CONFIG)
    failed = [c for c in res.cases if c.status is Status.FAILED]
    assert not res.ok and failed
    assert all(c.detail.startswith("registers differ") for c in failed[:3])
