"""Verdicts over samples (lab/verdict.py) and a comparison over layouts (lab/compare.py)."""
from __future__ import annotations

import pytest

from arches import ARCHES, NAMES

from lab.compare import over_samples
from lab.samples import SampleError, Task, layout_seeds, run_samples, tasks
from lab.verdict import FAILS, HOLDS, RETIRED, UNDECIDED, UNMEASURED, judge, spread, verdict
from probes.kprobes import arch_kprobes


@pytest.mark.parametrize("k, n, expected", [
    (8, 8, HOLDS), (19, 20, HOLDS),              # 95 % holds
    (18, 20, UNDECIDED), (7, 8, UNDECIDED), (1, 8, UNDECIDED),
    (1, 20, FAILS), (0, 8, FAILS),                # 5 % does not hold
    (0, 0, UNMEASURED)])
def test_k_of_n_and_the_undecided_band(k, n, expected):
    assert verdict(k, n) == expected


def test_a_count_out_of_range_is_refused():
    with pytest.raises(ValueError):
        verdict(3, 2)


def test_spread_is_median_and_range():
    assert spread([3.0, 1.0, 2.0, 10.0]) == {"median": 2.5, "min": 1.0, "max": 10.0}
    assert spread([]) is None


def _sample(a: float, b: float, a_branch: float, b_branch: float) -> dict:
    """One sample of 'a is cheaper than b', each side with a branch stall."""
    return {"claim": "a < b", "variable": "v", "rows": ["a", "b"], "holds": a < b,
            "text": "", "sides": [{"name": "a", "value": a,
                                   "stall_cycles": {"branch": a_branch, "data": 1.0}},
                                  {"name": "b", "value": b,
                                   "stall_cycles": {"branch": b_branch, "data": 1.0}}]}


def test_a_split_is_undecided_and_names_the_entry_that_decides_it():
    # the retired part is the same in every sample (10 vs 11); the branch stalls move
    samples = [_sample(10 + x, 11 + y, x, y) for x, y in
               [(0, 0), (0, 1), (2, 0), (0, 0), (3, 1)]]
    judged = judge(samples)
    assert (judged["k"], judged["n"]) == (3, 5)
    assert judged["verdict"] == UNDECIDED
    assert judged["per_sample"] == [True, True, False, True, False]
    assert judged["sides"][0] == {"name": "a", "median": 10.0, "min": 10.0, "max": 13.0}
    d = judged["deciding"]
    assert d["entry"] == "branch" and d["margin"] == "b - a"
    assert d["when_holds"] == pytest.approx(1 / 3) and d["when_fails"] == pytest.approx(-2)
    assert (d["samples_holding"], d["samples_failing"]) == (3, 2)


def test_no_split_has_no_deciding_entry_and_unmeasured_samples_do_not_count():
    unmeasured = {**_sample(1, 2, 0, 0), "holds": None, "sides": []}
    judged = judge([_sample(1, 2, 0, 0), _sample(1, 3, 0, 0), unmeasured])
    assert (judged["k"], judged["n"], judged["verdict"]) == (2, 2, HOLDS)
    assert judged["deciding"] is None


def test_the_retired_part_can_decide():
    samples = [_sample(10, 11, 0, 0), _sample(12, 11, 0, 0)]
    assert judge(samples)["deciding"]["entry"] == RETIRED


def _doc(layout: int, imv: float, flag: float) -> dict:
    row = lambda key, v: {"mechanism": key, "label": key, "passes": 10, "hits": 0,   # noqa: E731
                          "dormant": {"per_pass_modeled_cycles": v, "modeled_cycles": 100 + v,
                                      "per_pass_breakdown": {}},
                          "active": None}
    from lab.orderings import orderings
    doc = {"arch": NAMES[0], "layout": layout, "cpus": 1, "checksums_ok": True,
           "rows": [row("marker_flag", flag), row("marker_imv", imv)]}
    doc["orderings"] = orderings(doc)
    return doc


def test_over_samples_takes_medians_ranges_and_judges_each_ordering():
    docs = [_doc(0, 13.0, 15.0), _doc(1, 16.0, 15.0), _doc(2, 14.0, 15.0)]
    out = over_samples(docs)
    assert out["n"] == 3 and out["layouts"] == [0, 1, 2] and out["cpus"] == 1
    imv = out["rows"][1]["dormant"]
    assert imv["per_pass_modeled_cycles"] == 14.0
    assert imv["per_pass_modeled_cycles_spread"] == {"median": 14.0, "min": 13.0, "max": 16.0}
    first = out["orderings"][0]
    assert first["claim"].startswith("a dormant immediate-value marker")
    assert (first["k"], first["n"], first["verdict"]) == (2, 3, UNDECIDED)
    assert out["per_sample"] == docs


def test_layout_seeds_are_consecutive_and_bounded():
    assert list(layout_seeds(3, 5)) == [5, 6, 7]
    with pytest.raises(SampleError):
        layout_seeds(0, 0)
    with pytest.raises(SampleError):
        layout_seeds(2, 2 ** 63 - 1)


def _echo(arch: str, layout: int | None, scale: int) -> dict:
    return {"arch": arch, "layout": layout, "value": scale * (layout or 0)}


def test_samples_come_back_in_order_and_each_replays_alone():
    todo = tasks(_echo, ["p", "q"], range(4, 7), scale=3)
    assert [t.replay() for t in todo[:1]] == ["--arch p --layouts 1 --layout-seed 4"]
    serial = list(run_samples(todo))
    assert serial == list(run_samples(todo, jobs=2))
    assert [d["value"] for d in serial] == [12, 15, 18] * 2
    assert list(run_samples([Task(_echo, "q", 5, {"scale": 3})])) == [serial[4]]


def _fake_kprobe_doc(arch: str) -> dict:
    hit = {"marker_imv": 50.0, "kprobe": 1000.0, "kprobe_boosted": 400.0, "optprobe": 80.0,
           "kretprobe": 650.0}
    return {"arch": arch, "rows": [
        {"mechanism": k, "label": k, "unavailable": None,
         "dormant": {"per_pass_modeled_cycles": 1.0},
         "active": {"per_hit_modeled_cycles": v}} for k, v in hit.items()]}


def test_each_claim_is_judged_where_its_conditions_apply():
    """Ordering 4 (x86 machines' figures) only on the arch whose published kprobe hits
    hold the claim's (their ISA family);
    ordering 7 only where the kretprobe trampoline is a kprobe (two traps), as on the
    claim's kernels; the chain everywhere. Each claim records its machines and kernel."""
    from lab.orderings import orderings
    judged: dict[str, set[bool]] = {}
    for name, arch in ARCHES.items():
        for o in orderings(_fake_kprobe_doc(name)):
            assert o["published_on"]["machines"] and o["published_on"]["kernel"]
            here = o["holds"] is not None
            judged.setdefault(o["claim"].split(" (")[0], set()).add(here)
            if o["claim"].startswith("a kretprobe hit"):
                assert here == arch.ops.KRETPROBE_TRAMPOLINE_KPROBE, name
                assert here or "trampoline is plain code" in o["not_judged"]
            if o["claim"].startswith("a kprobe hit costs at least 10x"):
                assert here == any("Opteron" in h.machine
                                   for h in arch_kprobes(arch).PUBLISHED), name
    # every conditional claim is judged on some arch and not on another; the chain on all
    assert judged["a kretprobe hit is 50-75 % slower than a kprobe hit, both without "
                  "post_handler"] == {True, False}
    assert judged["a kprobe hit costs at least 10x a marker hit armed to an empty probe"] \
        == {True, False}
    assert judged["kprobe > boosted kprobe > optprobe per hit"] == {True}
    not_here = [o for o in orderings(_fake_kprobe_doc(NAMES[0])) if o.get("not_judged")]
    assert all(judge([o])["verdict"] == o["not_judged"] for o in not_here)


def test_every_assumption_declares_a_range_that_holds_its_value():
    """Each part of a reference core whose source says ASSUMPTION declares at least one
    range, with a reason, holding the value the core uses."""
    for arch in ARCHES.values():
        core = arch.core
        declared = core.assumptions()
        assert declared, arch.name
        for name, (r, value) in declared.items():
            assert value in r and r.reason, (arch.name, name)
        for part in (core.memory, core.transfer, core.exception, core.serialize,
                     core.cache_op, core.predictor, *core.caches, core.window,
                     *core.latencies, *core.tlbs):
            if "ASSUMPTION" in part.source:
                assert part.ranges, (arch.name, part.source[:60])


def test_drawn_assumptions_are_a_function_of_the_seed_and_reach_the_core():
    from lab.samples import draw_assumptions
    for name, arch in ARCHES.items():
        core, values = draw_assumptions(name, 7)
        assert draw_assumptions(name, 7)[1] == values
        assert any(draw_assumptions(name, s)[1] != values for s in range(8, 12))
        assert {k: v for k, (_, v) in core.assumptions().items()} == values
        for key, (r, _) in arch.core.assumptions().items():
            assert values[key] in r
        # everything that is not an assumption is the reference core's
        assert core.name == arch.core.name and core.clock == arch.core.clock


def test_vary_assumptions_needs_layouts(capsys):
    from kisim.cli import main
    assert main(["validate", "--arch", NAMES[0], "--vary-assumptions"]) == 2
    assert "--layouts" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["compare", "--layouts", "0"], ["compare", "--layouts", "1001"],
    ["compare", "--layouts", "2", "--layout-seed", "-1"],
    ["validate", "--layouts", "2", "--layout-seed", str(2 ** 63)],
    ["compare", "--vary-assumptions", "--out", "never-made"],
    ["validate", "--layouts", "1", "--jobs", "0"]])
def test_bad_sampling_input_is_one_line_and_exit_2(argv, capsys, tmp_path, monkeypatch):
    from kisim.cli import main
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "error" in err
    assert not (tmp_path / "never-made").exists()
