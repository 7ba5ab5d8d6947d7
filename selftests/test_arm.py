"""arch/arm/probes/kprobes/test-arm.c: the kernel's ARM kprobes instruction tests.

Ported as a guest module (``arches/arm/selftests/test_arm.c``, with the
harness of test-core.c / test-core.h in ``test_core.h``) from Linux
v5.10. Every case runs the instruction under the kernel's 16 flag
scenarios and two register and memory patterns, first unprobed and then
probed, and the registers, flags and test memory must be equal; a
TEST_UNSUPPORTED case passes when register_kprobe refuses it (KTAP
``# SKIP refused``, with the instruction's encoding), a TEST_SUPPORTED
one when it accepts it. The suite applies to a kernel built as an arch that lists
it (:attr:`arches.base.Arch.selftests`): Linux builds test-arm.c only
without CONFIG_THUMB2_KERNEL, whose kernel runs test-thumb.c instead
(selftests/test_thumb.py; docs/selftest/test-arm.md).
"""
from __future__ import annotations

from selftests import Suite, arch_source, register

FILE = "test_arm.c"
#: The result lines kprobe_arm_test_cases() prints (its KTAP plan "1..N").
CASES = 1631


SUITE = register(Suite(
    name="test-arm",
    kernel_file="arch/arm/probes/kprobes/test-arm.c (with test-core.c, test-core.h)",
    version="v5.10",
    sources=lambda arch: arch_source(arch, FILE),
    config={"KPROBES": "y"},
    expected_cases=lambda arch: CASES,
))
