"""arch/arm/probes/kprobes/test-arm.c ported as a guest module (selftests/test_arm.py).

Run on every arch that has the suite's source (the registry decides), as
the kernel runs it: every case probed and unprobed, under 16 flag
scenarios; refused cases must be the ones the host decoder refuses, with
a reason; and a decoder that emulates wrongly makes the suite fail.
"""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from arches import ARCHES
from arches.kprobe import KprobeRefused
from probes.kprobes import arch_kprobes
from selftests import Status
from selftests.run import run_suite
from selftests.test_arm import CASES, SUITE

# Whole guest builds and boots, or real processes and signals: make test, not make check.
pytestmark = pytest.mark.slow

ARCHS = [name for name in sorted(ARCHES) if SUITE.sources(ARCHES[name])]
_INSN = re.compile(r"\(insn ([0-9a-f]{8})\)")


@pytest.fixture(scope="module", params=ARCHS)
def result(request):
    return run_suite(SUITE, request.param), request.param


def test_every_case_passes_or_is_refused_as_the_kernel_refuses(result) -> None:
    res, arch = result
    assert res.ok, [c for c in res.cases if c.status is Status.FAILED][:5]
    assert len(res.cases) == CASES and f"1..{CASES}" in res.console
    assert res.count(Status.PASSED) > 1000 and res.count(Status.REFUSED) > 400
    ops = arch_kprobes(ARCHES[arch])
    for case in res.cases:
        if case.status is Status.REFUSED:
            word = int(_INSN.search(case.detail).group(1), 16)
            with pytest.raises(KprobeRefused) as err:
                ops.arch_prepare_kprobe(0x100000, word.to_bytes(4, "little"), 0x200000)
            assert str(err.value)[:40] in case.detail      # the kernel's reason, via the guest


def test_the_kernels_classes_run_probed(result) -> None:
    """PC operands, PC-relative loads, LDM/STM with PC, pld: probed and equal."""
    res, _ = result
    passed = {c.name for c in res.cases if c.status is Status.PASSED}
    for text in ("mov ip, sp", "ldrh r0, [pc, 0]", "ldr r12, [pc, r14]",
                 "stmda r13!, {pc}", "stmdb r13!, {pc}", "ldmia r14!, {pc}",
                 "pld [pc, 0]", "addseq r0,  r1, r2",
                 "pkhtb r0, r0, r1"):           # the kernel's form, word 0xe6810010
        assert text in passed, text
    refused = {c.name for c in res.cases if c.status is Status.REFUSED}
    assert "str r3, [r13, -64-8]!" in refused            # the stack-use check
    assert "str r14, [r13, r12]" in refused


def test_the_interworking_cases_run_probed(result) -> None:
    """The four ``blx __dummy_thumb_subroutine_*`` cases (ARM to Thumb and back,
    the target's halfword bit even and odd): simulate_blx1 sets CPSR.T, and the
    CPU goes on in Thumb state after the kprobe returns."""
    res, _ = result
    blx = [c for c in res.cases if c.name.startswith("blx __dummy_thumb_subroutine_")]
    assert [(c.name.rsplit("_", 1)[1], c.status) for c in blx] == [
        ("even", Status.PASSED), ("even", Status.PASSED),
        ("odd", Status.PASSED), ("odd", Status.PASSED)]


def test_a_wrong_emulation_fails_the_suite(monkeypatch) -> None:
    """Negative control: emulate without renaming the registers (the slot runs
    the original instruction on r0-r3): the suite must report failures."""
    import arches.arm.kprobes as arm_kprobes
    real = arm_kprobes.arm_prepare

    def unrenamed(insn: int):
        asi = real(insn)
        if asi.insn is not None and asi.handler.startswith("emulate_rd"):
            asi.insn = (insn & 0x0FFFFFFF) | 0xE0000000
        return asi

    monkeypatch.setattr(arm_kprobes, "arm_prepare", unrenamed)
    res = run_suite(replace(SUITE), ARCHS[0])
    failed = [c for c in res.cases if c.status is Status.FAILED]
    assert not res.ok
    assert failed[0].detail.startswith("registers differ")   # the first renamed case
