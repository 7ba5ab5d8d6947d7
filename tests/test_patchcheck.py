"""The SMP patch-safety checker: it catches broken patchers, passes the real
protocols, and replays every finding from its seed."""
from __future__ import annotations

import contextlib
import json

import pytest

from arches import get_arch
from arches.x86_64 import INT3
from kisim.cli import main
from patcher.checker import PatchChecker, check

CLEAN_SEEDS = 400      # the CLI runs 10,000 (see the closing figures in the commit log)


def test_real_protocol_has_no_findings_and_is_really_exercised(arch) -> None:
    checker = PatchChecker(arch, cpus=3)
    result = checker.run(range(CLEAN_SEEDS))
    assert result.interleavings == CLEAN_SEEDS
    assert result.findings == [], "\n".join(f.line() for f in result.findings[:5])
    ran = checker.executed
    # CPUs ran both the old and the new instruction while the patch was in flight,
    # and only the new one once it had returned.
    for kind in ("nop", "jmp", "call"):
        assert ran[f"during {kind}"] > 100
    assert ran["after nop"] and ran["after jmp"] and ran["after call"]
    if arch.name == "x86_64":
        assert sum(cpu.events["trap"] for cpu in checker.machine.cpus) > 1000, \
            "CPUs must hit the temporary int3s"


def test_naive_x86_patcher_is_caught_within_1000_interleavings() -> None:
    checker = PatchChecker("x86_64", 2, naive=True)
    result = checker.run(range(1000))
    assert result.findings, "plain multi-byte stores must be caught"
    assert {f.kind for f in result.findings} <= {"torn", "boundary", "diverted", "fault", "trap"}
    torn = next(f for f in result.findings if f.kind == "torn")
    assert torn.pc in {s.addr for s in checker.sites} and torn.phase.endswith("during")
    assert f"seed {torn.seed}: CPU {torn.cpu} at {torn.pc:#x}" in torn.line()


@pytest.mark.parametrize("name", ["arm", "ppc32"])
def test_naive_word_patcher_without_flush_or_sync_is_caught(name) -> None:
    result = check(name, range(50), cpus=2, naive=True)
    assert result.findings and {f.kind for f in result.findings} == {"stale"}
    nop = get_arch(name).nop(4)
    first = result.findings[0]
    assert first.phase.endswith("after") and nop.hex(" ") in first.insn


def _finding_seeds(result) -> dict[int, list]:
    seeds: dict[int, list] = {}
    for f in result.findings:
        seeds.setdefault(f.seed, []).append(f)
    return seeds


@pytest.mark.parametrize("name", ["x86_64", "arm"])
def test_replaying_a_seed_reproduces_its_findings(name) -> None:
    batch = PatchChecker(name, 3, naive=True)
    by_seed = _finding_seeds(batch.run(range(120)))
    assert by_seed
    for seed in list(by_seed)[-12:]:
        assert PatchChecker(name, 3, naive=True).run_seed(seed) == by_seed[seed]
        assert batch.run_seed(seed) == by_seed[seed], "a reused machine replays it too"
    clean = [s for s in range(120) if s not in by_seed][:5]
    assert all(batch.run_seed(s) == [] for s in clean)


def _x86_protocol_without(step: str):
    """text_poke_bp with one part left out, to show the checker notices."""
    from arches.x86_64 import text_poke_bp_batch

    class Port:
        def __init__(self, port) -> None:
            self.port, self.syncs = port, 0

        def __getattr__(self, name):
            return getattr(self.port, name)

        def breakpoint_handler(self, handler):
            if step == "handler":
                return contextlib.nullcontext()
            return self.port.breakpoint_handler(handler)

        def sync_all(self) -> None:
            self.syncs += 1
            if step == "final sync" and self.syncs == 3:
                return
            self.port.sync_all()

    def protocol(port, sites) -> None:
        text_poke_bp_batch(Port(port), sites)
    return protocol


@pytest.mark.parametrize("step,kind", [("handler", "trap"), ("final sync", "trap")])
def test_x86_protocol_missing_a_step_is_caught(step, kind) -> None:
    result = PatchChecker("x86_64", 2, protocol=_x86_protocol_without(step)).run(range(300))
    assert result.findings and kind in {f.kind for f in result.findings}
    hit = next(f for f in result.findings if f.kind == kind)
    assert INT3.hex() in hit.insn


def test_patchcheck_cli_exit_status_and_json(capsys) -> None:
    assert main(["patchcheck", "--arch", "arm", "--seeds", "50"]) == 0
    out = capsys.readouterr().out
    assert "50 interleavings" in out and "0 findings" in out
    assert main(["patchcheck", "--arch", "x86_64", "--naive", "--seeds", "100", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["interleavings"] == 100 and report["naive"] and report["findings"]
    seed = report["findings"][0]["seed"]
    assert main(["patchcheck", "--arch", "x86_64", "--naive", "--replay", str(seed)]) == 1
    out = capsys.readouterr().out
    assert f"seed {seed}: CPU {report['findings'][0]['cpu']}" in out
    assert "1 interleavings" in out


def test_patchcheck_cli_refuses_bad_input(capsys) -> None:
    assert main(["patchcheck", "--arch", "arm", "--cpus", "9"]) == 2
    assert main(["patchcheck", "--arch", "arm", "--seeds", "0"]) == 2
    assert "kisim: error:" in capsys.readouterr().err
