"""Run a ported self-test suite on one arch: build, boot, read its KTAP.

The suite's sources are built as guest modules (``--module``) into a
kernel with the suite's configuration; the kernel boots and the module's
init runs the cases (as loading the kernel's test module would), printing
KTAP on the console, which :func:`selftests.parse_ktap` reads. The workload
after it is the smallest built-in one: the suite has already run.

A run that ends early counts as failed cases: a guest fault adds a case
``(fault)`` with the fault's first line, and fewer result lines than the
suite's ``expected_cases`` add a case ``(missing)``.
"""
from __future__ import annotations

from typing import Mapping

import patcher.instrument  # noqa: F401  (serves the modules' static keys, markers, tracepoints)
import probes.kprobes  # noqa: F401  (serves the modules' kprobe API)
from arches import get_arch
from kbuild import build
from selftests import SUITES, Case, Status, Suite, SuiteResult, load_all, parse_ktap
from sim.errors import GuestFault
from sim.guest import Guest

#: The workload after the suite: the cheapest one (fib's recursion, depth 2).
WORKLOAD, SIZE = "fib", 2


def suites_for(arch: str, name: str | None = None,
               overrides: Mapping[str, str] | None = None) -> list[Suite]:
    """The registered suites that apply to ``arch`` as ``overrides`` configure it
    (``name``: that one only). An unknown name is a :class:`KeyError` naming the
    valid ones."""
    spec = get_arch(arch).for_config(overrides or {})
    load_all()
    if name is not None and name not in SUITES:
        raise KeyError(f"no selftest suite {name!r} (suites: {', '.join(sorted(SUITES))})")
    chosen = [SUITES[name]] if name is not None else [SUITES[n] for n in sorted(SUITES)]
    return [suite for suite in chosen if suite.sources(spec)]


def config_clash(suite: Suite, overrides: Mapping[str, str] | None) -> str | None:
    """Why ``overrides`` cannot hold for ``suite``: an option it sets itself to
    another value (which its build would take, the user's ``--set`` unsaid)."""
    for name, value in (overrides or {}).items():
        if suite.config.get(name, value) != value:
            return (f"--set {name}={value}: the {suite.name} suite builds with "
                    f"{name}={suite.config[name]}")
    return None


def run_suite(suite: Suite, arch: str, overrides: Mapping[str, str] | None = None) -> SuiteResult:
    """Build ``suite`` into ``arch``'s kernel (with ``overrides`` under the suite's
    own options), boot it and collect its cases."""
    spec = get_arch(arch).for_config(overrides or {})
    kernel = build(spec.name, overrides={**(overrides or {}), **suite.config},
                   modules=suite.sources(spec))
    guest = Guest(kernel, workload=WORKLOAD, size=SIZE)
    extra: list[Case] = []
    try:
        guest.run()
    except GuestFault as fault:
        extra.append(Case(0, "(fault)", Status.FAILED, fault.report().splitlines()[0]))
    console = "".join(guest.console)
    cases = parse_ktap(console)
    expected = suite.expected_cases(spec) if suite.expected_cases else None
    if expected is not None and len(cases) < expected:
        extra.append(Case(0, "(missing)", Status.FAILED,
                          f"{len(cases)} of {expected} cases reported"))
    return SuiteResult(suite=suite.name, arch=spec.name, kernel_file=suite.kernel_file,
                       version=suite.version, cases=cases + tuple(extra), console=console)


__all__ = ["SIZE", "WORKLOAD", "config_clash", "run_suite", "suites_for"]
