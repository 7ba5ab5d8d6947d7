"""arch/powerpc/lib/test_emulate_step.c (v5.10): the instruction emulator's
self-test, for the arches whose package ships a port of it
(``arches/<arch>/selftests/emulate_step.c``; docs/selftest/emulate_step.md)."""
from __future__ import annotations

from selftests import Suite, arch_source, register

FILE = "emulate_step.c"
#: KTAP lines of a complete run: the kernel file's 20 load/store subtests,
#: 59 compute subtests (nop 1, add 10, add. 10, addc 11, addc. 11, divde 3,
#: divde. 3, divdeu 5, divdeu. 5) and paddi's one line (its cpu_feature absent).
CASES = 80


SUITE = register(Suite(
    name="emulate_step",
    kernel_file="arch/powerpc/lib/test_emulate_step.c",
    version="v5.10",
    sources=lambda arch: arch_source(arch, FILE),
    config={"KPROBES": "y"},
    expected_cases=lambda arch: CASES,
))
