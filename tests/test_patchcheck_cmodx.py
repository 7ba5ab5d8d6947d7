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

PowerPC has the same kind of rule: Power ISA v2.03 Book II §1.8.1 defines
the result of executing a word another processor changes only when every
value it takes is in the "patch class" (the I-form branch b, ba, bl, bla
and the preferred no-op ori 0,0,0). The loop's jump, call and ftrace pairs
(nop/b, nop/bl) are in it; the kprobe pair (the probed ``addi`` and ``tw
31,0,0``) is not, and v5.10 arms a PowerPC kprobe with patch_instruction()
while the other CPUs run (arch/powerpc/kernel/kprobes.c arch_arm_kprobe), so
the reference itself is ``unpredictable`` on the kprobe kind: a finding
about v5.10 under the ISA, kept and documented (docs/patchcheck.md). The
same arming under stop_machine() is clean.
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
PPC = get_arch("ppc32")
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


def test_the_arches_with_a_rule_are_arm_and_powerpc() -> None:
    assert {n for n in NAMES if get_arch(n).cmodx_safe is not None} == {"arm", "ppc32"}


@pytest.mark.parametrize("name", [n for n in NAMES if get_arch(n).cmodx_safe is None])
def test_arches_without_the_rule_never_report_it(name) -> None:
    result = sweep(CheckSpec(name, 2, naive=True), range(200))
    assert "unpredictable" not in result.counts


@pytest.mark.slow
@pytest.mark.parametrize("kinds", ["jump,call", "ftrace"])
def test_powerpc_patch_class_pairs_never_report_it(kinds) -> None:
    """nop/b and nop/bl change under execution as §1.8.1 allows: even the naive
    patcher (no flush) is caught only as stale, never as unpredictable."""
    result = sweep(CheckSpec("ppc32", 2, naive=True, sites=kinds), range(200))
    assert result.total and "unpredictable" not in result.counts, dict(result.counts)


def _word(insn: int) -> bytes:
    return insn.to_bytes(4, "little")


SAFE = {"b": 0xEA000010, "bne": 0x1A000010, "bl": 0xEB000010, "nop": 0xE320F000,
        "bkpt": 0xE1200070, "svc": 0xEF000000, "hvc": 0xE1400070, "smc": 0xE1600070}
UNSAFE = {"mov r0, r0": 0xE1A00000, "kprobe udf": 0xE7F001F8, "ldm": 0xE8BD8000,
          "add": 0xE2800001, "blx imm": 0xFA000010}


#: Power ISA v2.03 Book II §1.8.1's patch class: I-form b (opcode 18) with any AA and
#: LK, and ori 0,0,0 (big-endian words); and words outside it.
PATCH_CLASS = {"b": 0x48000010, "ba": 0x48000012, "bl": 0x48000011, "bla": 0x48000013,
               "b back": 0x4BFFFFFC, "nop": 0x60000000}
OUTSIDE = {"kprobe tw 31,0,0": 0x7FE00008, "addi": 0x38840001, "li r4, 0": 0x38800000,
           "bc (B-form)": 0x4082FFF8, "blr": 0x4E800020, "ori 0,0,1": 0x60000001,
           "ori 1,1,0": 0x60210000, "oris 0,0,0": 0x64000000, "sc": 0x44000002}
#: arch -> (the words its rule allows, the words it does not, a word of each as bytes)
RULES = {"arm": (SAFE, UNSAFE, _word),
         "ppc32": (PATCH_CLASS, OUTSIDE, lambda insn: insn.to_bytes(4, "big"))}


@pytest.mark.parametrize("name, old, new", [(n, o, w) for n, (ok, _, _) in RULES.items()
                                            for o in sorted(ok) for w in sorted(ok)])
def test_the_listed_instructions_may_change_under_execution(name, old, new) -> None:
    ok, _, word = RULES[name]
    assert get_arch(name).cmodx_safe(word(ok[old]), word(ok[new]))


@pytest.mark.parametrize("name, other", [(n, o) for n, (_, no, _) in RULES.items()
                                         for o in sorted(no)])
def test_any_other_instruction_may_not(name, other) -> None:
    ok, no, word = RULES[name]
    first, last = sorted(ok)[0], sorted(ok)[-1]
    assert not get_arch(name).cmodx_safe(word(ok[first]), word(no[other]))
    assert not get_arch(name).cmodx_safe(word(no[other]), word(ok[last]))


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


def test_powerpc_kprobe_arming_on_a_running_loop_is_unpredictable() -> None:
    """v5.10's patch_instruction() arming the loop's kprobe: from the first seed,
    a CPU executes the word while it changes from the probed addi to the trap.
    The old word in the finding is the one the store replaced (read before it)."""
    bp = PPC.kprobe_breakpoint(b"")
    result = sweep(CheckSpec("ppc32", 2, sites="kprobe"), range(20))
    assert set(result.counts) == {"unpredictable"}, dict(result.counts)
    first = result.findings[0]
    assert first.seed == 0 and "patch class" in first.detail
    assert f"to {bp.hex(' ')}" in first.detail or f"from {bp.hex(' ')}" in first.detail
    assert "from 38 84 00 01 to 7f e0 00 08" in " ".join(f.detail for f in result.findings)


def patch_instruction_under_stop_machine(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """PowerPC's patch_instruction with its steps inside stop_machine() (as ARM's patch_text)."""
    patch_words("ppc32", port, sites, PPC.icache_line, stop_machine=True)


@pytest.mark.parametrize("kinds, seeds", [
    ("kprobe", 40), pytest.param("jump,call,ftrace,kprobe", 300, marks=pytest.mark.slow)])
def test_powerpc_kprobe_arming_under_stop_machine_is_clean(kinds, seeds) -> None:
    """The negative control: the same pair, with no other CPU running while it changes."""
    spec = CheckSpec("ppc32", 2, protocol=patch_instruction_under_stop_machine, sites=kinds)
    result = sweep(spec, range(seeds))
    assert result.total == 0, [f.line() for f in result.findings[:3]]


@pytest.mark.slow
def test_powerpc_guest_kprobe_arming_is_unpredictable_and_its_other_kinds_clean() -> None:
    """v5.10's own C (arches/ppc32/patching.c) under --guest: the same finding on the
    kprobe kind, none on the patch-class kinds."""
    flagged = sweep(CheckSpec("ppc32", 2, guest=True, sites="kprobe"), range(10))
    assert set(flagged.counts) == {"unpredictable"} and flagged.findings[0].seed == 0
    assert "from 38 84 00 01 to 7f e0 00 08" in flagged.findings[0].detail
    clean = sweep(CheckSpec("ppc32", 2, guest=True, sites="jump,call,ftrace"), range(40))
    assert clean.total == 0, [f.line() for f in clean.findings[:3]]
