"""ARMv7's rule for concurrent modification and execution, and stop_machine().

ARMv7 ARM A3.5.4 promises a CPU that executes a word while another CPU
changes it the old or the new instruction only when both are B, BL, NOP,
BKPT, SVC, HVC or SMC; anything else is UNPREDICTABLE. None of the checker's
ARM site pairs qualifies (``mov r0, r0`` is not the NOP hint; the kprobe
breakpoint is an undefined instruction), which is why v5.10's ARM
patch_text() runs under stop_machine(). So: the reference (under
stop_machine) stays clean, the same steps with the other CPUs running are
caught as ``unpredictable`` on every site kind, and the rule itself accepts
exactly its list.
"""
from __future__ import annotations

from typing import Sequence

import pytest

from arches import NAMES, get_arch
from arches.base import TextPort, patch_words
from patchcheck.checker import unpredictable
from patchcheck.sites import SITE_KINDS
from patchcheck.sweep import CheckSpec, sweep
from sim.fetch import FetchViews
from sim.machine import PAGE, Machine

ARM = get_arch("arm")
BASE = 0x10000


def patch_text_without_stop_machine(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """ARM's patch_text with stop_machine() replaced by its steps, the CPUs running."""
    patch_words("arm", port, sites, ARM.icache_line)


@pytest.mark.parametrize("kind", list(SITE_KINDS))
def test_arm_patching_with_the_other_cpus_running_is_unpredictable(kind) -> None:
    spec = CheckSpec("arm", 2, protocol=patch_text_without_stop_machine, sites=kind)
    result = sweep(spec, range(1000), stop_at_first=True)
    assert "unpredictable" in result.counts, (kind, dict(result.counts))


@pytest.mark.parametrize("kind", list(SITE_KINDS))
def test_arm_patch_text_under_stop_machine_is_clean(kind) -> None:
    result = sweep(CheckSpec("arm", 2, sites=kind), range(300))
    assert result.total == 0, [f.line() for f in result.findings[:3]]


@pytest.mark.parametrize("name", [n for n in NAMES if get_arch(n).cmodx_safe is None])
def test_arches_without_the_rule_never_report_it(name) -> None:
    result = sweep(CheckSpec(name, 2, naive=True), range(200))
    assert "unpredictable" not in result.counts


def _word(insn: int) -> bytes:
    return insn.to_bytes(4, "little")


SAFE = {"b": 0xEA000010, "bne": 0x1A000010, "bl": 0xEB000010, "nop": 0xE320F000,
        "bkpt": 0xE1200070, "svc": 0xEF000000, "hvc": 0xE1400070, "smc": 0xE1600070}
UNSAFE = {"mov r0, r0": 0xE1A00000, "kprobe udf": 0xE7F001F8, "ldm": 0xE8BD8000,
          "add": 0xE2800001, "blx imm": 0xFA000010}


@pytest.mark.parametrize("old", sorted(SAFE))
@pytest.mark.parametrize("new", sorted(SAFE))
def test_the_listed_instructions_may_change_under_execution(old, new) -> None:
    assert ARM.cmodx_safe(_word(SAFE[old]), _word(SAFE[new]))


@pytest.mark.parametrize("unsafe", sorted(UNSAFE))
def test_any_other_instruction_may_not(unsafe) -> None:
    assert not ARM.cmodx_safe(_word(SAFE["b"]), _word(UNSAFE[unsafe]))
    assert not ARM.cmodx_safe(_word(UNSAFE[unsafe]), _word(SAFE["nop"]))


def test_a_word_is_changing_from_its_store_until_the_cpu_serializes() -> None:
    machine = Machine(ARM, 2)
    machine.map(BASE, PAGE, "rwx")
    views = FetchViews(machine, BASE, PAGE)
    machine.write(BASE, _word(UNSAFE["mov r0, r0"]))
    views.reset()
    views.store(BASE, _word(SAFE["b"]))
    assert unpredictable(ARM, views, 0, BASE, 4) is not None
    assert unpredictable(ARM, views, 0, BASE + 4, 4) is None
    views.flush(BASE, BASE + 4)
    views.sync(0)
    assert unpredictable(ARM, views, 0, BASE, 4) is None        # serialized after it
    assert unpredictable(ARM, views, 1, BASE, 4) is not None    # CPU 1 has not
    views.store(BASE, _word(SAFE["nop"]))                        # b -> nop: allowed
    assert unpredictable(ARM, views, 0, BASE, 4) is None
