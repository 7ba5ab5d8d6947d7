"""arch/arm/probes/kprobes/test-thumb.c: the kernel's Thumb kprobes instruction tests.

Ported as a guest module (``arches/arm/selftests/test_thumb.c``, with the
harness of test-core.c / test-core.h in ``test_core.h``, shared with
test-arm) from Linux v5.10. As in Linux, which builds test-thumb.c only
with CONFIG_THUMB2_KERNEL, the suite applies to a kernel built as an arch
variant that lists it (:attr:`arches.base.Arch.selftests`: ARM's Thumb-2
kernel, ``kisim selftest --arch arm --set THUMB2_KERNEL=y``). Every case of
kprobe_thumb16_test_cases() and kprobe_thumb32_test_cases() runs first unprobed and then probed under the
kernel's flag scenarios (16, the 16 and four IT states, or every IT state)
and must give the same registers, flags and test memory; a
TEST_UNSUPPORTED case passes when register_kprobe refuses it (KTAP
``# SKIP refused``), a TEST_SUPPORTED one when it accepts it
(docs/selftest/test-thumb.md).
"""
from __future__ import annotations

from selftests import Suite, arch_source, register

FILE = "test_thumb.c"
#: The result lines the module prints (its KTAP plan "1..N"): 191 cases of
#: kprobe_thumb16_test_cases() and 1058 of kprobe_thumb32_test_cases().
CASES = 1249


SUITE = register(Suite(
    name="test-thumb",
    kernel_file="arch/arm/probes/kprobes/test-thumb.c (with test-core.c, test-core.h)",
    version="v5.10",
    sources=lambda arch: arch_source(arch, FILE),
    config={"KPROBES": "y"},
    expected_cases=lambda arch: CASES,
))
