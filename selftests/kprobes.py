"""The kernel's kprobe and kretprobe sanity test: kernel/test_kprobes.c in v5.10,
later lib/test_kprobes.c, now lib/tests/test_kprobes.c.

Ported from the current file (a KUnit suite) onto kisim's v5.10 kprobe
API. Its four cases test_kprobe, test_kprobes, test_kretprobe and
test_kretprobes are v5.10's four, with the current file's handlers;
``test_kprobe_missed`` and the two stack-trace cases were added after
v5.10 (docs/selftest.md says which version each case follows). The
stack-trace cases need CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE, which
every kisim arch has (kernel/stacktrace.c: a frame-pointer unwinder that
resolves the kretprobe trampoline).
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
    kernel_file="kernel/test_kprobes.c in v5.10, now lib/tests/test_kprobes.c",
    version="v5.10 API; v5.10's 4 cases and 3 added later",
    sources=lambda arch: (C / "test_kprobes.c",) if "kprobes" in arch.capabilities else (),
    config={"KPROBES": "y", "KRETPROBES": "y"},
    expected_cases=lambda arch: len(CASES),
))
