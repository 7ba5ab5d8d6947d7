"""The patch checker on the Thumb-2 build (``--set THUMB2_KERNEL=y``, issue 25).

The loop runs in Thumb state with the variant's encodings, the reference
protocol (v5.10 patch_text under stop_machine, two halfword stores for a
32-bit instruction at 2 mod 4) is clean, every removed step is caught and
replays from its seed, the halfword split itself is caught as a tear when
the other CPUs run between the two stores, ``--set`` reaches worker
processes and replay commands, and ``--kernel`` boots the Thumb-2 build.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Sequence

import pytest

from arches import get_arch
from arches.base import TextPort
from kisim.cli import main
from patchcheck.ablate import Ablated, ablations
from patchcheck.checker import PatchChecker, unpredictable
from patchcheck.sweep import CheckSpec, ablation_names, arch_for, sweep
from sim.fetch import FetchViews
from sim.machine import PAGE, Machine

T2_SET = {"THUMB2_KERNEL": "y"}
T2 = arch_for("arm", tuple(T2_SET.items()))
KINDS = ("jump,call", "ftrace", "kprobe")        # the loop's kinds on this build
CLEAN_SEEDS = 300
PSR_T_BIT = 0x20


def spec(**kw: object) -> CheckSpec:
    return CheckSpec("arm", kw.pop("cpus", 2), overrides=T2_SET, **kw)


def _findings(checker: PatchChecker, seeds: range) -> dict[int, list]:
    return {seed: found for seed in seeds if (found := checker.run_seed(seed))}


# -- the loop -----------------------------------------------------------------------

def test_the_spec_runs_on_the_thumb2_variant() -> None:
    assert T2 is get_arch("arm").for_config(T2_SET) and T2.variant == "THUMB2_KERNEL"
    assert spec().arch_spec is T2 and CheckSpec("arm").arch_spec is get_arch("arm")
    assert spec().label == "arm (THUMB2_KERNEL=y)"
    assert spec() == CheckSpec("arm", 2, overrides=(("CONFIG_THUMB2_KERNEL", "y"),))


def test_the_loop_runs_in_thumb_state_with_thumb2_encodings() -> None:
    checker = spec(sites="jump,call,ftrace,kprobe").checker()
    assert checker.arch is T2
    by_kind = {s.kind: s for s in checker.sites}
    jump, call = by_kind["jump"], by_kind["call"]
    assert jump.off == call.off == T2.site_nop == bytes.fromhex("aff30080")        # nop.w
    assert jump.on == T2.encode_jump(jump.addr, jump.live.lands)                    # b.w
    assert call.on == T2.encode_call(call.addr, call.live.lands)                    # bl
    assert call.live.ret == (call.addr + 4) | 1, "bl leaves lr with the Thumb bit"
    assert by_kind["ftrace"].off == T2.ops.ftrace_nop_replace()                     # pop.w {lr}
    assert by_kind["kprobe"].on == bytes.fromhex("f0f718a0")       # the 32-bit breakpoint
    checker.run_seed(0)
    for cpu in checker.machine.cpus:
        assert cpu.reg("cpsr") & PSR_T_BIT, "the CPUs run the loop in Thumb state"
    assert checker.executed["during nop"] and checker.executed["after jmp"]


@pytest.mark.parametrize("kinds", ["jump", "call", "ftrace", "kprobe"])
def test_the_layouts_put_a_32_bit_site_at_2_mod_4(kinds) -> None:
    """sparse: every site at 2 mod 4 (it straddles a boundary by one halfword);
    lines: the sites without a prefix at 0 mod 4."""
    checker = spec(sites=kinds).checker()
    at = {name: [s.addr % 4 for s in layout.sites] for name, layout, _ in checker.layouts}
    assert at["sparse"] == [2] and all(len(s.on) == 4 for s in checker.sites)
    assert at["lines"] == [2 if kinds == "ftrace" else 0]


@pytest.mark.slow
def test_reference_protocol_is_clean_on_every_kind_in_one_loop() -> None:
    test_reference_protocol_is_clean("jump,call,ftrace,kprobe")


@pytest.mark.slow
@pytest.mark.parametrize("kinds", KINDS)
def test_reference_protocol_is_clean(kinds) -> None:
    result = sweep(spec(sites=kinds), range(CLEAN_SEEDS))
    assert result.total == 0, [f.line() for f in result.findings[:3]]
    ran = result.executed
    assert sum(n for name, n in ran.items() if name.startswith("during")) > CLEAN_SEEDS, \
        "old and new forms must run while the patch is in flight"


@pytest.mark.slow
def test_reference_protocol_is_clean_on_three_cpus() -> None:
    result = sweep(spec(cpus=3, sites="jump,call,ftrace,kprobe"), range(CLEAN_SEEDS))
    assert result.total == 0, [f.line() for f in result.findings[:3]]


# -- ablations ------------------------------------------------------------------------

@pytest.mark.parametrize("kinds", KINDS)
def test_every_removed_step_is_caught_and_replays(kinds) -> None:
    steps = ablation_names(spec(sites=kinds))
    assert steps == ["flush", "stop_machine"]
    for step in steps:
        variant = spec(sites=kinds, without=step)
        result = sweep(variant, range(1000), stop_at_first=True)
        assert result.total, f"{kinds} without {step} must be caught"
        assert set(result.counts) == {"stale" if step == "flush" else "unpredictable"}
        seed = result.first_seed()
        replayed = spec(sites=kinds, without=step).checker().run_seed(seed)
        assert replayed == [f for f in result.findings if f.seed == seed], \
            "a fresh checker replays the findings from their seed"
        assert variant.replay_command(seed).startswith(
            "kisim patchcheck --arch arm --set THUMB2_KERNEL=y --cpus 2")


def test_without_stop_machine_is_caught_at_2_mod_4_sites() -> None:
    found = _findings(spec(without="stop_machine").checker(), range(50))
    at = {f.pc % 4 for seeds in found.values() for f in seeds}
    assert 2 in at
    for f in (f for seeds in found.values() for f in seeds if f.pc % 4 == 2):
        assert f.kind == "unpredictable" and "32-bit instruction" in f.detail


def _relaxed_checker(protocol=None, sites: str = "jump,call") -> PatchChecker:
    """The variant as if ARMv7 promised old-or-new for every pair: only tears remain."""
    lax = dataclasses.replace(T2, cmodx_safe=None)
    checker = PatchChecker(lax, 2, sites=sites, protocol=protocol)
    if protocol is None:
        steps = {a.name: a for a in ablations(lax, checker.patcher.protocol,
                                              [(s.addr, s.on) for s in checker.sites],
                                              checker.machine.read)}
        checker.patcher.protocol = Ablated(checker.patcher.protocol, steps["stop_machine"], lax)
    return checker


def test_without_stop_machine_a_2_mod_4_site_tears() -> None:
    found = _findings(_relaxed_checker(), range(50))
    assert any(f.kind == "torn" and f.pc % 4 == 2 for seeds in found.values() for f in seeds)


def patch_text_halves_apart(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
    """patch_text with each halfword store of a 32-bit instruction at 2 mod 4 in a
    stop_machine() of its own (flushed, every CPU serialized): the other CPUs run
    between the two stores."""
    for addr, insn in sites:
        split = len(insn) == 4 and addr % 4
        for at, data in ((addr, insn[:2]), (addr + 2, insn[2:])) if split else ((addr, insn),):
            def store(at: int = at, data: bytes = data) -> None:
                port.write_text(at, data)
                port.flush_icache(at, at + len(data))
            port.stop_machine(store)


@pytest.mark.parametrize("kinds", KINDS)
def test_halfwords_stored_apart_tear_at_2_mod_4_only(kinds) -> None:
    """The hazard the single stop_machine() covers (v5.10 kprobes/core.c: "needed to
    atomically set the two half-words of a 32-bit Thumb breakpoint"): caught as torn
    at 2 mod 4, whatever the CMODX rule; a 0 mod 4 site is one word store, never torn."""
    for checker in (spec(sites=kinds, protocol=patch_text_halves_apart).checker(),
                    _relaxed_checker(patch_text_halves_apart, kinds)):
        found, layouts = {}, set()
        for seed in range(60):
            found[seed] = checker.run_seed(seed)
            if not any(s.addr % 4 == 2 for s in checker.sites):
                layouts.add(checker.layout)
                assert not found[seed], [f.line() for f in found[seed]]
        flat = [f for seeds in found.values() for f in seeds]
        assert flat and {f.kind for f in flat} == {"torn"} and {f.pc % 4 for f in flat} == {2}
        assert layouts == ({"lines"} if kinds != "ftrace" else set())


def test_unpredictable_judges_the_whole_thumb_instruction() -> None:
    """A bl whose second halfword alone changes: each halfword read as a 16-bit
    instruction is a B<c> (old-or-new), the 32-bit instruction is not."""
    machine = Machine(T2, 2)
    base = 0x10000
    machine.map(base, PAGE, "rwx")
    views = FetchViews(machine, base, PAGE)
    old, new = T2.encode_call(base, base + 0xC00014), T2.encode_call(base, base + 0xC00024)
    assert old[:2] == new[:2] and T2.cmodx_safe(old[2:], new[2:])
    machine.write(base, old + T2.nop(2))
    views.reset()
    views.store(base + 2, new[2:])
    why = unpredictable(T2, views, 0, base, 4)
    assert why is not None and "32-bit instruction" in why and "16-bit B, NOP" in why
    views.store(base + 4, bytes.fromhex("00e0"))        # nop -> b (T2): old-or-new
    assert unpredictable(T2, views, 0, base + 4, 2) is None


# -- --set on the command line and in workers ------------------------------------------

def test_set_reaches_worker_processes() -> None:
    variant = spec(without="stop_machine")
    serial = sweep(variant, range(120))
    parallel = sweep(variant, range(120), jobs=2)
    assert parallel.total == serial.total > 0 and parallel.counts == serial.counts
    assert parallel.findings == serial.findings and parallel.executed == serial.executed
    assert all("32-bit instruction" in f.detail for f in parallel.findings), \
        "the workers ran the Thumb-2 loop"


def test_cli_set_runs_the_variant_and_replays_with_it(capsys) -> None:
    assert main(["patchcheck", "--arch", "arm", "--set", "THUMB2_KERNEL=y", "--seeds", "20",
                 "--jobs", "1"]) == 0
    assert "patchcheck arm (THUMB2_KERNEL=y):" in capsys.readouterr().out
    assert main(["patchcheck", "--arch", "arm", "--set", "THUMB2_KERNEL=y", "--seeds", "20",
                 "--jobs", "1", "--without", "stop_machine", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["set"] == T2_SET and report["findings"]
    first = report["findings"][0]
    assert report["replay"] == ("kisim patchcheck --arch arm --set THUMB2_KERNEL=y --cpus 2 "
                                f"--without 'stop_machine' --replay {first['seed']}")
    argv = [w.strip("'") for w in report["replay"].split()[1:]] + ["--json"]
    assert main(argv) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0] == first


@pytest.mark.parametrize("argv,says", [
    (["--set", "THUMB2_KERNEL=y", "--site", "optprobe"], "no optprobes"),
    (["--set", "THUMB2_KERNEL=y", "--site", "jump,optprobe"], "no optprobes"),
    (["--set", "NO_SUCH_OPTION=y"], "NO_SUCH_OPTION"),
    (["--set", "THUMB2_KERNEL"], "NAME=VALUE"),
])
def test_cli_refuses_in_one_line(argv, says, capsys) -> None:
    assert main(["patchcheck", "--arch", "arm", "--seeds", "5", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("kisim") and says in err


# -- the guest kernel built with THUMB2_KERNEL=y (--kernel) -----------------------------

KERNEL_SEEDS = 3


@pytest.mark.slow
@pytest.mark.parametrize("kinds", ["jump,call", "ftrace"])
def test_kernel_thumb2_build_is_clean(kinds) -> None:
    variant = spec(kernel=True, sites=kinds)
    assert variant.checker().build.spec is T2
    result = sweep(variant, range(KERNEL_SEEDS))
    assert result.total == 0, [f.line() for f in result.findings[:3]]
    ran = result.executed
    assert ran["checksums right"] == KERNEL_SEEDS
    assert ran["patch operations"] >= 3 * KERNEL_SEEDS and ran["site executions"] >= 1000


@pytest.mark.slow
@pytest.mark.parametrize("kinds", ["jump,call", "ftrace"])
def test_kernel_thumb2_removed_steps_are_caught(kinds) -> None:
    for step in ablation_names(spec(sites=kinds)):
        variant = spec(kernel=True, sites=kinds, without=step)
        result = sweep(variant, range(4 * KERNEL_SEEDS), stop_at_first=True)
        assert result.total, f"without {step} must be caught on the Thumb-2 kernel"
        assert set(result.counts) <= {"torn", "stale", "unpredictable", "fault",
                                      "wrong checksum"}
        seed = result.first_seed()
        assert spec(kernel=True, sites=kinds, without=step).checker().run_seed(seed)
