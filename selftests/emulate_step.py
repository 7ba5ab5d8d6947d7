"""arch/powerpc/lib/test_emulate_step.c (v5.10): the instruction emulator's
self-test, for the arches whose package ships a port of it
(``arches/<arch>/selftests/emulate_step.c``; docs/selftest/emulate_step.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import arches
from selftests import Suite, register

FILE = "emulate_step.c"
#: KTAP lines of a complete run: the kernel file's 20 load/store subtests and
#: 43 compute subtests (nop 1, add 10, add. 10, addc 11, addc. 11).
CASES = 63


def sources(arch: object) -> Sequence[Path]:
    """The arch package's port, if it has one."""
    path = Path(arches.__file__).parent / arch.name / "selftests" / FILE
    return [path] if path.is_file() else []


SUITE = register(Suite(
    name="emulate_step",
    kernel_file="arch/powerpc/lib/test_emulate_step.c",
    version="v5.10",
    sources=sources,
    config={"KPROBES": "y"},
    expected_cases=lambda arch: CASES if sources(arch) else 0,
))
