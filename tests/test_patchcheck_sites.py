"""The patch checker's site kinds: dynamic-ftrace, kprobe and optprobe sites go
through the arch's protocol and are checked like the jump-label and call sites."""
from __future__ import annotations

import json

import pytest

from arches import NAMES, get_arch
from kisim.cli import main
from patchcheck.checker import KINDS, PatchChecker
from patchcheck.sites import (DEFAULT_SITES, SITE_KINDS, CheckerError, arch_hooks,
                              parse_sites)
from patchcheck.sweep import CheckSpec, ablate, ablation_names, sweep
from sim.asm import assemble

NEW = ("ftrace", "kprobe", "optprobe")
CLEAN_SEEDS = 300
ABLATE_SEEDS = 1000


def _supported(arch_name: str, kind: str) -> bool:
    """Whether the arch has the hooks ``kind`` needs (asked of the arch, not listed here)."""
    arch = get_arch(arch_name)
    needs = {"ftrace": ("dynamic_ftrace", "ftrace_call_replace"),
             "kprobe": ("kprobes", "arch_prepare_kprobe"),
             "optprobe": ("optprobes", "arch_optimize_kprobe")}[kind]
    return hasattr(arch_hooks(arch, needs[0]), needs[1])


CASES = [(a, k) for a in NAMES for k in NEW if _supported(a, k)]
#: v5.10 arms a PowerPC kprobe with the other CPUs running, outside Power ISA v2.03
#: Book II 1.8.1's patch class: its reference is `unpredictable` there
#: (tests/test_patchcheck_cmodx.py), so it is no clean baseline
CLEAN_CASES = [c for c in CASES if c != ("ppc32", "kprobe")]
REFUSED = [(a, k) for a in NAMES for k in NEW if not _supported(a, k)]


def test_every_registered_arch_has_ftrace_and_kprobe_sites() -> None:
    assert {a for a, k in CASES if k == "ftrace"} == set(NAMES)
    assert {a for a, k in CASES if k == "kprobe"} == set(NAMES)


def test_default_is_the_jump_and_call_loop(arch) -> None:
    checker = PatchChecker(arch, 2)
    assert checker.kinds == DEFAULT_SITES == ("jump", "call")
    assert [s.kind for s in checker.sites] == ["jump", "call"]
    assert CheckSpec(arch.name).sites == DEFAULT_SITES
    assert parse_sites("call,jump") == DEFAULT_SITES


@pytest.mark.slow
@pytest.mark.parametrize("name,kind", CLEAN_CASES)
def test_real_protocol_is_clean_on_the_kind_and_both_forms_run(name, kind) -> None:
    checker = PatchChecker(name, cpus=3, sites=kind)
    found = [f for seed in range(CLEAN_SEEDS) for f in checker.run_seed(seed)]
    assert found == [], "\n".join(f.line() for f in found[:5])
    site = checker.sites[0]
    for form in (site.dormant, site.live):
        assert checker.executed[f"during {form.name}"] > 50, form
        assert checker.executed[f"after {form.name}"] > 50, form
    traps = sum(cpu.events["trap"] for cpu in checker.machine.cpus)
    if site.dormant.trap or site.live.trap:
        assert traps > 500, "CPUs must hit the kprobe breakpoint (a legal trap while armed)"


@pytest.mark.slow
@pytest.mark.parametrize("name,kind", CLEAN_CASES)
def test_every_removed_step_is_caught_on_the_kind(name, kind) -> None:
    done = ablate(CheckSpec(name, 2, sites=kind), range(ABLATE_SEEDS))
    assert done.ok and not done.interrupted
    base, variants = done.rows[0], done.rows[1:]
    assert not base.caught and base.seeds_run == ABLATE_SEEDS
    assert variants, "a protocol with no step to remove checks nothing"
    for r in variants:
        assert r.caught and r.kind in KINDS, r
        assert f"--site {kind} --without '{r.step}'" in r.replay


@pytest.mark.slow
def test_all_kinds_together_are_clean_and_ablations_caught(arch) -> None:
    kinds = [k for k in SITE_KINDS if k in DEFAULT_SITES or (arch.name, k) in CLEAN_CASES]
    spec = CheckSpec(arch.name, 2, sites=",".join(kinds))
    checker = spec.checker()
    assert [s.kind for s in checker.sites] == kinds
    assert [f for seed in range(100) for f in checker.run_seed(seed)] == []
    for site in checker.sites:                 # no block is skipped or fallen into
        for form in (site.dormant, site.live):
            assert checker.executed[f"during {form.name}"], (site.kind, form.name)
    done = ablate(spec, range(400))
    assert done.ok, done.rows


def test_a_step_that_orders_nothing_is_not_offered(arch) -> None:
    """Where one store is the whole kprobe breakpoint, only the round after it counts
    (x86: arch_arm_kprobe()'s one text_poke_sync(), not text_poke_bp()'s three)."""
    kprobe = ablation_names(CheckSpec(arch.name, 2, sites="kprobe"))
    jump = ablation_names(CheckSpec(arch.name, 2))
    bp = arch.kprobe_breakpoint(arch.nop(arch.insn_align))
    assert "breakpoint" not in kprobe, "an armed kprobe's breakpoint is its value, not a step"
    if len(bp) < arch.site_len:                         # x86
        assert kprobe == ["sync"] and len(jump) > len(kprobe)
    else:
        assert set(kprobe) <= set(jump)


@pytest.mark.parametrize("name,kind", CASES)
def test_sites_hold_the_arch_encodings(name, kind) -> None:
    arch = get_arch(name)
    site = PatchChecker(arch, 2, sites=kind).sites[0]
    text = PatchChecker(arch, 2, sites=kind).text
    at = site.addr - 0x10000
    assert text[at:at + site.length] == site.off
    if kind == "ftrace":
        ops = arch_hooks(arch, "dynamic_ftrace")
        assert site.off == ops.ftrace_nop_replace()
        assert site.on == ops.ftrace_call_replace(site.addr, site.live.lands)
        prefix = assemble(arch, ops.MCOUNT_SITE_PREFIX_ASM, 0) \
            if ops.MCOUNT_SITE_PREFIX_ASM else b""
        assert text[at - len(prefix):at] == prefix
    elif kind == "kprobe":
        insn = assemble(arch, arch.snippet("checker_count"), site.addr)
        assert site.dormant.insn == insn and site.off == insn[:len(site.on)]
        assert site.on == arch.kprobe_breakpoint(insn[:arch.insn_align]) and site.live.trap
    else:
        ops = arch_hooks(arch, "optprobes")
        assert site.on == ops.arch_optimize_kprobe(
            site.addr, site.live.lands, arch.kprobe_breakpoint(arch.nop(arch.insn_align)))
        assert site.off[:len(site.dormant.insn)] == site.dormant.insn
        assert site.dormant.trap and site.dormant.insn == arch.kprobe_breakpoint(
            arch.nop(arch.insn_align))
        # the detour's copied region ends in a jump back after the region
        back = site.dormant.lands + site.length - 0x10000
        assert text[back:back + len(arch.encode_jump(0, 0))] == arch.encode_jump(
            site.dormant.lands + site.length, site.addr + site.length)


@pytest.mark.parametrize("name,kind", REFUSED)
def test_an_arch_lacking_the_capability_is_refused_in_one_line(name, kind, capsys) -> None:
    with pytest.raises(CheckerError, match=f"{name}: no "):
        PatchChecker(name, 2, sites=kind)
    assert main(["patchcheck", "--arch", name, "--site", kind, "--seeds", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kisim") and "no optprobes" in err[0]


def test_refusals_cover_an_arch_without_optprobes() -> None:
    """The registry has at least one arch without optprobes (no kernel has them on PPC32)."""
    assert any(k == "optprobe" for _, k in REFUSED)


def _with_prefix(name: str) -> bool:
    ops = arch_hooks(get_arch(name), "dynamic_ftrace")
    return ops is not None and bool(ops.MCOUNT_SITE_PREFIX_ASM.strip())


@pytest.mark.parametrize("name", [n for n in NAMES if _with_prefix(n)])
def test_an_ftrace_nop_that_ignores_the_prefix_is_caught(name, monkeypatch) -> None:
    """Negative control: a plain nop after ``push {lr}`` leaves the stack unbalanced."""
    arch = get_arch(name)
    ops = arch_hooks(arch, "dynamic_ftrace")
    plain = arch.nop(len(ops.ftrace_nop_replace()))
    monkeypatch.setattr(ops, "ftrace_nop_replace", lambda: plain)
    checker = PatchChecker(arch, 2, sites="ftrace")
    found = [f for seed in range(20) for f in checker.run_seed(seed)]
    assert found and all("stack unbalanced" in f.detail for f in found)


def test_a_stale_kprobe_breakpoint_is_caught(arch) -> None:
    """Negative control: arming with a store and no sync leaves CPUs on the old instruction,
    and disarming so leaves them trapping after the breakpoint is gone. (ARM: the stores
    under stop_machine() but without the flush, so that what is caught is the stale
    fetch, not the concurrent change.)"""
    def store_only(port, sites):
        def stores() -> None:
            for addr, insn in sites:
                port.write_text(addr, insn)
        if arch.cmodx_safe is None:
            stores()
        else:
            port.stop_machine(stores)

    result = sweep(CheckSpec(arch.name, 2, protocol=store_only, sites="kprobe"), range(100))
    assert result.counts["stale"]
    phases = {f.phase for kept in result.first.values() for f in kept}
    assert "enable: after" in phases


@pytest.mark.slow
def test_kinds_replay_from_the_cli(capsys) -> None:
    name, kind = CASES[-1]
    step = ablation_names(CheckSpec(name, 2, sites=kind))[-1]
    assert main(["patchcheck", "--arch", name, "--site", kind, "--without", step,
                 "--seeds", "200", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["sites"] == [kind] and report["findings_total"]
    assert f"--site {kind} --without '{step}' --replay" in report["replay"]
    first = report["findings"][0]
    argv = report["replay"].replace("'", "").split()[1:]
    argv[argv.index("--without") + 1:argv.index("--replay")] = [step]
    assert main(argv + ["--json"]) == 1
    again = json.loads(capsys.readouterr().out)
    assert again["findings"][0] == first


@pytest.mark.slow
def test_the_clean_cli_run_names_its_sites(capsys) -> None:
    kinds = ",".join(k for k in NEW if (NAMES[0], k) in CASES)
    assert main(["patchcheck", "--arch", NAMES[0], "--site", kinds, "--seeds", "100"]) == 0
    assert f"sites {kinds}: 100 interleavings" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--site", "kprob"], ["--site", "kprobe,kprobe"],
                                  ["--site", ""], ["--site", "kprobe", "--kernel"],
                                  ["--site", "kprobe", "--without", "no such step"]])
def test_bad_site_arguments_are_refused_in_one_line(argv, capsys) -> None:
    assert main(["patchcheck", "--arch", NAMES[0], "--seeds", "5", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
