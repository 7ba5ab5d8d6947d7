"""kisim compare: exact differencing, cost model, memory pressure, orderings, CLI; kisim tour."""
from __future__ import annotations

import json

import pytest

from arches import NAMES, get_arch
from kisim.cli import main
from kisim.compare import (CACHE_MISS, MECHANISMS, NONE, CompareError,
                           compare_arch, load_cost_model, orderings, run_once)


@pytest.fixture(scope="module", params=NAMES)
def doc(request):
    return compare_arch(request.param)


def _row(doc, key):
    return next(r for r in doc["rows"] if r["mechanism"] == key)


def test_one_row_per_mechanism_that_runs(doc):
    assert [r["mechanism"] for r in doc["rows"]] == [m.key for m in MECHANISMS]
    assert doc["checksums_ok"]
    for r in doc["rows"]:
        assert r["passes"] > 1000 and r["hits"] > 1000
        assert r["active"]["per_hit_instructions"] > 0
        assert r["active"]["percent_over_uninstrumented"] > r["dormant"][
            "percent_over_uninstrumented"] > 0


def test_same_sites_same_hits_for_both_marker_kinds(doc):
    """Both marker builds pass the same marker sites equally often (1 CPU): the same probe calls."""
    assert _row(doc, "marker_flag")["hits"] == _row(doc, "marker_imv")["hits"]
    assert _row(doc, "marker_flag")["passes"] == _row(doc, "marker_imv")["passes"]


def test_per_pass_is_exact_differencing(doc):
    base = doc["uninstrumented"]["instructions"]
    for r in doc["rows"]:
        d, a = r["dormant"], r["active"]
        assert d["per_pass_instructions"] == (d["instructions"] - base) / r["passes"]
        assert a["per_hit_instructions"] == (a["instructions"] - d["instructions"]) / r["hits"]


def test_dormant_run_hits_nothing():
    """Negative control: without arming, the empty probe is never called."""
    arch = get_arch(NAMES[0])
    m = MECHANISMS[0]
    assert run_once(arch, m.config, workload="kmalloc", cpus=1, size=None, mech=m).hits == 0
    assert run_once(arch, NONE, workload="kmalloc", cpus=1, size=None).passes is None


@pytest.mark.parametrize("name", NAMES)
def test_memory_pressure_reproduces_desnoyers(name):
    hot = compare_arch(name)
    cold = compare_arch(name, memory_pressure=True)
    flag_hot = _row(hot, "marker_flag")["dormant"]["per_pass_modeled_cycles"]
    flag_cold = _row(cold, "marker_flag")["dormant"]["per_pass_modeled_cycles"]
    assert flag_cold == pytest.approx(flag_hot + CACHE_MISS[0])
    imv = _row(cold, "marker_imv")["dormant"]["per_pass_modeled_cycles"]
    assert imv == _row(hot, "marker_imv")["dormant"]["per_pass_modeled_cycles"]
    first = cold["orderings"][0]
    assert "immediate" in first["claim"] and first["holds"] is True


def test_cost_model_moves_the_table(tmp_path):
    name = NAMES[0]
    path = tmp_path / "costs.toml"
    path.write_text(f"[default]\ncache_miss = 100\n[{name}]\ninsn = 2\nipi = 0\n")
    model = load_cost_model(path, NAMES)
    arch = get_arch(name)
    assert model.cost(arch, "insn") == 2 and model.cost(arch, "cache_miss") == 100
    assert model.cost(arch, "trap") == arch.cost("trap")
    assert "costs.toml" in model.source_of(arch, "insn")
    base = compare_arch(name, memory_pressure=True)
    moved = compare_arch(name, model=model, memory_pressure=True)
    flag, flag2 = _row(base, "marker_flag"), _row(moved, "marker_flag")
    assert flag2["dormant"]["per_pass_modeled_cycles"] == pytest.approx(
        2 * flag["dormant"]["per_pass_instructions"] + 100)
    assert _row(moved, "marker_imv")["arming_modeled_cycles"] == 0      # ipi = 0
    assert _row(base, "marker_imv")["arming_modeled_cycles"] > 0


@pytest.mark.parametrize("text,match", [
    ("[default\n", "not valid TOML"),
    ("[default]\nwarp = 3\n", "unknown event"),
    ("[vax]\ntrap = 3\n", "neither"),
    ("[default]\ntrap = -1\n", "expected a number"),
])
def test_bad_cost_model(tmp_path, text, match):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(CompareError, match=match):
        load_cost_model(path, NAMES)
    assert main(["compare", "--cost-model", str(path), "--out", str(tmp_path)]) == 2


def test_orderings_are_computed_not_written_in():
    def fake(flag, imv, tp):
        rows = [{"mechanism": k, "label": k,
                 "dormant": {"per_pass_modeled_cycles": d},
                 "active": {"per_hit_modeled_cycles": 10.0}}
                for k, d in (("marker_flag", flag), ("marker_imv", imv),
                             ("tracepoint_jump_label", tp))]
        return {o["claim"].split(" (")[0]: o["holds"] for o in orderings({"rows": rows})}
    good, bad = fake(12.0, 8.0, 1.0), fake(8.0, 12.0, 20.0)
    imv_claim = "a dormant immediate-value marker is cheaper than a memory-flag marker"
    jl_claim = "a dormant jump-label site is cheaper than a flag test"
    assert good[imv_claim] is True and bad[imv_claim] is False
    assert good[jl_claim] is True and bad[jl_claim] is False
    assert any(v is None for v in good.values())       # the kprobe ordering: not computed


def test_cli_compare_writes_json_and_plots(tmp_path, capsys):
    name = NAMES[0]
    assert main(["compare", "--arch", name, "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    on_disk = json.loads((tmp_path / "compare.json").read_text())
    assert out == on_disk and out["modeled"] is True
    assert [d["arch"] for d in out["arches"]] == [name]
    assert (tmp_path / "compare.png").stat().st_size > 10_000
    svg = (tmp_path / "compare.svg").read_text()
    assert "modeled" in svg and "published" in svg
    assert main(["compare", "--arch", "vax", "--out", str(tmp_path)]) == 2
    assert main(["compare", "--cpus", "0", "--out", str(tmp_path)]) == 2


def test_cli_compare_text(tmp_path, capsys):
    assert main(["compare", "--arch", NAMES[-1], "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "published orderings" in text and "not computed" in text
    assert "marker, immediate value" in text and "kprobe" not in text.split("published")[0]


@pytest.mark.parametrize("name", NAMES)
def test_tour_runs_every_step(name, capsys):
    assert main(["tour", "--arch", name, "--no-pager"]) == 0
    text = capsys.readouterr().out
    for step in range(1, 7):
        assert f"== {step}." in text
    assert "trace_mark(kmalloc," in text
    assert "byte(s) changed" in text and "NOT RUN" in text
    assert main(["tour", "--arch", "vax", "--no-pager"]) == 2


def test_same_inputs_same_table():
    """Determinism: the same comparison twice gives the same document, bit for bit."""
    name = NAMES[0]
    assert compare_arch(name, memory_pressure=True) == compare_arch(name, memory_pressure=True)
