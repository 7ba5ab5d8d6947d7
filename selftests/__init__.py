"""The kernel's own self-tests, ported as guest modules.

Each suite is one C module (or one per arch, for arch-specific suites)
compiled into the guest like any ``--module FILE.c``; its ``module_init``
runs the cases, as the kernel's test modules do at load time, and reports
each case on the console in KTAP, the format of the kernel's KUnit and
kselftest output (Documentation/dev-tools/ktap.rst):

    ok 1 test_kprobe
    not ok 2 test_kretprobe # expected 0x1 got 0x2
    ok 3 test_stacktrace_on_kretprobe # SKIP refused: <the kernel's reason>

``# SKIP`` marks a case the kernel itself refuses on this arch (for
example a probe the decoder rejects); its reason is kept. A suite is
declared here as data (:class:`Suite`) and run by :mod:`selftests.run`;
arch-specific sources live in the arch's own package
(``arches/<arch>/selftests/``), so generic code never names an arch.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import arches
from arches import Arch


class Status(enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    REFUSED = "refused"     # the kernel refuses this case here; the reason says why


@dataclass(frozen=True)
class Case:
    """One KTAP result line."""

    number: int
    name: str
    status: Status
    detail: str = ""


@dataclass(frozen=True)
class Suite:
    """One ported kernel self-test.

    ``sources(arch)`` gives the module's C files for ``arch`` (empty: the
    suite does not apply there, e.g. an arch-specific suite on another
    arch). ``config`` holds the Kconfig options the suite needs, as
    ``--set`` would. ``expected_cases`` is how many KTAP lines a complete
    run prints (per arch when it varies): fewer is a failure of the run.
    """

    name: str
    kernel_file: str            # the kernel source it is ported from
    version: str                # the kernel version it follows, e.g. "v5.10"
    sources: Callable[[Arch], Sequence[Path]]
    config: Mapping[str, str] = field(default_factory=dict)
    expected_cases: Callable[[Arch], int] | None = None


@dataclass(frozen=True)
class SuiteResult:
    suite: str
    arch: str
    kernel_file: str
    version: str
    cases: tuple[Case, ...]
    console: str = ""           # the module's printk output, for a failing run

    def count(self, status: Status) -> int:
        return sum(case.status is status for case in self.cases)

    @property
    def ok(self) -> bool:
        return self.count(Status.FAILED) == 0 and bool(self.cases)

    def to_json(self) -> dict:
        return {"suite": self.suite, "arch": self.arch, "kernel_file": self.kernel_file,
                "version": self.version, "run": len(self.cases),
                **{s.value: self.count(s) for s in Status},
                "cases": [{"number": c.number, "name": c.name, "status": c.status.value,
                           "detail": c.detail} for c in self.cases]}


_KTAP = re.compile(r"^\s*(not ok|ok) (\d+)(?: -)? ([^#]*?)\s*(?:#\s*(SKIP|TODO)?\s*(.*))?$")


def parse_ktap(console: str) -> tuple[Case, ...]:
    """The result lines of a KTAP report (other console lines are ignored)."""
    cases = []
    for line in console.splitlines():
        match = _KTAP.match(line)
        if not match:
            continue
        verdict, number, name, directive, detail = match.groups()
        status = (Status.REFUSED if directive == "SKIP" else
                  Status.PASSED if verdict == "ok" else Status.FAILED)
        cases.append(Case(int(number), name, status, (detail or "").strip()))
    return tuple(cases)


def arch_source(arch: Arch, name: str) -> tuple[Path, ...]:
    """``arches/<arch>/selftests/<name>`` if a kernel built as ``arch`` (the variant
    its configuration selects) ports that self-test (:attr:`Arch.selftests`) and has
    kprobes, else nothing: the ``sources`` of an arch-specific kprobes suite."""
    if name not in arch.selftests or "kprobes" not in arch.capabilities:
        return ()
    return (Path(arches.__file__).resolve().parent / arch.name / "selftests" / name,)


#: name -> Suite, filled by :func:`register` from the modules of this package.
SUITES: dict[str, Suite] = {}


def register(suite: Suite) -> Suite:
    if suite.name in SUITES:
        raise ValueError(f"selftest suite {suite.name!r} registered twice")
    SUITES[suite.name] = suite
    return suite





def load_all() -> dict[str, Suite]:
    """Import every suite module of this package (each calls :func:`register`)."""
    import importlib
    import pkgutil
    for info in pkgutil.iter_modules(__path__):
        if info.name != "run":
            importlib.import_module(f"{__name__}.{info.name}")
    return SUITES
__all__ = ["Case", "SUITES", "Status", "Suite", "SuiteResult", "arch_source", "load_all", "parse_ktap",
           "register"]
