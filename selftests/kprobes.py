"""lib/test_kprobes.c: the kernel's kprobe and kretprobe sanity test.

Ported from the current file (lib/tests/test_kprobes.c, a KUnit suite),
whose seven cases include ``test_kprobe_missed`` and the two stack-trace
cases that v5.10's file does not have yet, onto kisim's v5.10 kprobe API. The stack-trace cases
need CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE, which every kisim arch
has (kernel/stacktrace.c: a frame-pointer unwinder that resolves the
kretprobe trampoline).
"""
from __future__ import annotations

from pathlib import Path

from selftests import Suite, register

C = Path(__file__).resolve().parent / "c"

#: The KUNIT_CASE entries of test_kprobes.c, in order.
CASES = ("test_kprobe", "test_kprobes", "test_kprobe_missed", "test_kretprobe",
         "test_kretprobes", "test_stacktrace_on_kretprobe",
         "test_stacktrace_on_nested_kretprobe")

SUITE = register(Suite(
    name="kprobes",
    kernel_file="lib/test_kprobes.c (now lib/tests/test_kprobes.c)",
    version="v5.10 API; the current file's 7 cases",
    sources=lambda arch: (C / "test_kprobes.c",) if "kprobes" in arch.capabilities else (),
    config={"KPROBES": "y", "KRETPROBES": "y"},
    expected_cases=lambda arch: len(CASES),
))
