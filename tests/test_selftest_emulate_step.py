"""The emulate_step suite (arch/powerpc/lib/test_emulate_step.c, v5.10) run as a
guest module: every case that applies to 32-bit PowerPC passes, the rest are
refused with the kernel's reason (docs/selftest/emulate_step.md)."""
from __future__ import annotations

import pytest

import probes.kprobes  # noqa: F401  (the KPROBE module service)
import selftests
from arches import ARCHES, NAMES
from kbuild import build
from probes.kprobes import Kprobe, Kprobes
from selftests import Status, parse_ktap
from sim.guest import Guest

SUITE = selftests.load_all()["emulate_step"]


@pytest.fixture(scope="module")
def image():
    arch = ARCHES["ppc32"]
    return build(arch.name, overrides=dict(SUITE.config), modules=SUITE.sources(arch))


def run(image, host_probe=None) -> tuple[selftests.Case, ...]:
    g = Guest(image, cpus=1, workload="kmalloc", size=3)
    if host_probe is not None:
        host_probe(g)
    result = g.run()
    assert result.ok
    return parse_ktap(result.console)


@pytest.mark.parametrize("name", NAMES)
def test_suite_applies_only_where_the_arch_ships_it(name: str) -> None:
    arch = ARCHES[name]
    assert bool(SUITE.sources(arch)) == (name == "ppc32")


def test_every_32bit_case_passes(image) -> None:
    cases = run(image)
    assert [c.number for c in cases] == list(range(1, 81))
    by_status = {s: [c for c in cases if c.status is s] for s in Status}
    assert not by_status[Status.FAILED], by_status[Status.FAILED]
    passed = [c.name for c in by_status[Status.PASSED]]
    assert passed[:3] == ["lwz", "lwzx", "nop: R0 = LONG_MAX"] and len(passed) == 45
    assert sum(n.startswith("addc.:") for n in passed) == 11
    refused = {c.name: c.detail for c in by_status[Status.REFUSED]}
    assert len(refused) == 35
    assert refused["ld"].startswith("64-bit instruction")
    divide = [n for n in refused if n.startswith("divde")]      # the kernel's 16, in its order
    assert [n.split(":")[0] for n in divide] == ["divde"] * 3 + ["divde."] * 3 + \
        ["divdeu"] * 5 + ["divdeu."] * 5
    assert divide[-1] == "divdeu.: RA = LONG_MIN + 1, RB = LONG_MIN"
    assert all(refused[n] == refused["ld"] for n in divide)
    assert cases[-1].name == "paddi" and refused["paddi"] == "!CPU_FTR"
    assert refused["plwz"] == "!CPU_FTR_ARCH_31"
    assert refused["lfdx"] == "CONFIG_PPC_FPU is not set"
    assert refused["stxvd2x"] == "CONFIG_VSX is not set"


def test_a_wrong_result_is_reported(image) -> None:
    """Negative control: a host kprobe that changes RA on every execution of
    the ``add`` stub makes the executed result differ from the emulated one."""
    def corrupt(g: Guest) -> None:
        def pre(kp: Kprobe, regs) -> None:
            regs["r21"] = (regs["r21"] + 1) & 0xFFFFFFFF
        Kprobes(g).register_kprobe(Kprobe(symbol_name="exec_add_insn", pre_handler=pre))

    cases = {c.name: c for c in run(image, corrupt)}
    bad = cases["add: RA = INT_MAX, RB = INT_MAX"]
    assert bad.status is Status.FAILED and bad.detail.startswith("GPR20 mismatch")
    assert cases["add.: RA = INT_MAX, RB = INT_MAX"].status is Status.PASSED
