"""The kernel's ported self-tests: every suite on every arch, the runner, the CLI."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from arches import ARCHES
from kisim.cli import main
from selftests import Status, load_all
from selftests.run import run_suite, suites_for

SUITES = load_all()
PAIRS = [(arch, name) for arch in sorted(ARCHES) for name in sorted(SUITES)
         if SUITES[name].sources(ARCHES[arch])]
#: Suites that take seconds per arch (test-arm's thousand cases; the kprobes and
#: static-keys suites' many registrations) run in ``make test`` only (the slow marker).
LONG = {"test-arm", "kprobes", "static_keys"}


def test_an_arch_specific_suite_applies_where_the_arch_lists_its_file() -> None:
    """The suites of one ISA's self-test apply exactly to the arches and variants whose
    ``Arch.selftests`` lists their C file: ARM's test-arm.c to the A32 kernel only,
    test-thumb.c to the Thumb-2 kernel only (as arch/arm/probes/kprobes/Makefile
    builds one or the other), PowerPC's test_emulate_step.c to ppc32."""
    kernels = {f"{a.name}{'+' + v if v else ''}": arch
               for a in ARCHES.values() for v, arch in {"": a, **a.variants}.items()}
    applies = {name: sorted(k for k, arch in kernels.items() if SUITES[name].sources(arch))
               for name in ("test-arm", "test-thumb", "emulate_step")}
    assert applies == {"test-arm": ["arm"], "test-thumb": ["arm+THUMB2_KERNEL"],
                       "emulate_step": ["ppc32"]}


@pytest.mark.parametrize(("arch", "suite"), [
    pytest.param(a, s, id=f"{a}-{s}", marks=[pytest.mark.slow] if s in LONG else [])
    for a, s in PAIRS])
def test_every_suite_passes_on_every_arch(arch: str, suite: str) -> None:
    spec = SUITES[suite]
    result = run_suite(spec, arch)
    assert result.ok, result.console
    assert result.count(Status.FAILED) == 0
    if spec.expected_cases is not None:
        assert len(result.cases) == spec.expected_cases(ARCHES[arch])


def test_kprobes_suite_runs_all_seven_cases(capsys: pytest.CaptureFixture) -> None:
    from selftests.kprobes import CASES
    assert main(["selftest", "--arch", "ppc32", "--suite", "kprobes", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (suite,) = doc["suites"]
    assert [c["name"] for c in suite["cases"]] == list(CASES)
    assert (suite["run"], suite["passed"], suite["failed"], suite["refused"]) == (7, 7, 0, 0)


@pytest.mark.slow
def test_a_failing_case_fails_the_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Negative control: the same suite with one expected value changed fails
    that case (and only it), and a case list cut short is reported missing."""
    from selftests.kprobes import SUITE
    source = SUITE.sources(ARCHES["x86_64"])[0].read_text()
    broken = tmp_path / "test_kprobes.c"
    broken.write_text(source.replace("KUNIT_EXPECT_EQ(test, 2, kp_missed.nmissed)",
                                     "KUNIT_EXPECT_EQ(test, 3, kp_missed.nmissed)"))
    result = run_suite(replace(SUITE, sources=lambda arch: (broken,)), "x86_64")
    assert not result.ok
    assert [c.name for c in result.cases if c.status is Status.FAILED] == ["test_kprobe_missed"]
    assert "kp_missed.nmissed == 2" in result.console
    short = run_suite(replace(SUITE, expected_cases=lambda arch: 8), "x86_64")
    assert [c.name for c in short.cases if c.status is Status.FAILED] == ["(missing)"]


@pytest.mark.slow
def test_a_faulting_suite_is_a_failed_case(tmp_path: Path) -> None:
    from selftests.kprobes import SUITE
    crash = tmp_path / "crash.c"
    crash.write_text("#include <linux/module.h>\nstatic int __init crash_init(void)\n"
                     "{\n\treturn *(volatile int *)0x10;\n}\nmodule_init(crash_init);\n")
    result = run_suite(replace(SUITE, sources=lambda arch: (crash,)), "arm")
    assert [c.name for c in result.cases] == ["(fault)", "(missing)"]
    assert not result.ok


def test_selftest_cli_text_and_bad_input(capsys: pytest.CaptureFixture) -> None:
    assert main(["selftest", "--arch", "arm", "--suite", "nope"]) == 2
    assert "no selftest suite 'nope'" in capsys.readouterr().err
    assert main(["selftest", "--arch", "sparc"]) == 2
    capsys.readouterr()
    assert main(["selftest", "--arch", "arm", "--suite", "kprobes"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"kprobes .* on arm: 7 run, 7 passed, 0 failed, 0 refused", out)


def test_suites_for_filters_by_arch() -> None:
    assert [s.name for s in suites_for("x86_64", "kprobes")] == ["kprobes"]
    with pytest.raises(KeyError):
        suites_for("x86_64", "nope")
