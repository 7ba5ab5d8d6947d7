"""The README's deterministic figures are what their stated commands print.

Each test runs a command the README names (its ``--json`` form) and checks
every figure of the README's table or sentence against it, at the decimals
the README shows. Host times are left out: they are measured, not
reproducible. A figure that goes stale after a change to the guest, the
timing model or a probe path fails here, naming the row.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kisim.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ARCHES = ("arm", "ppc32", "x86_64")
#: A figure as the README writes it: digits with thousands commas and decimals,
#: not part of a name or a version (x86_64, 2.6.27), negative after a space (-0.37),
#: not after a digit (a range, 2.77-3.66).
FIGURE = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.]*\d)")


def _readme() -> str:
    return README.read_text()


def figures(text: str) -> list[str]:
    """The figures of ``text`` in order, parenthesized asides dropped."""
    return FIGURE.findall(re.sub(r"\([^)]*\)", "", text))


def shown(value: float, figure: str) -> bool:
    """Whether ``figure`` is ``value`` written at the figure's own decimals and commas."""
    decimals = len(figure.partition(".")[2])
    return (f"{value:,.{decimals}f}" if "," in figure else f"{value:.{decimals}f}") == figure


def check(where: str, text: str, values: list[float]) -> None:
    """Every figure of ``text`` (a README row or sentence) is the value at its place."""
    written = figures(text)
    assert len(written) == len(values), f"{where}: README has {written}, expected {values}"
    wrong = [(w, v) for w, v in zip(written, values) if not shown(v, w)]
    assert not wrong, f"{where}: README figure, printed value: {wrong}"


def row(text: str, header: str, first_cell: str) -> list[str]:
    """The cells after the first of the row ``| first_cell | ...`` of the README table
    whose header row begins ``header``."""
    table = text[text.index(f"\n{header}"):].split("\n\n", 1)[0]
    line = next(ln for ln in table.splitlines() if ln.startswith(f"| {first_cell} |"))
    return [c.strip() for c in line.strip().strip("|").split("|")[1:]]


def sentence(text: str, start: str, end: str) -> str:
    """The README's text from ``start`` to ``end``, whitespace as one space."""
    flat = " ".join(text.split())
    begin = flat.index(start)
    return flat[begin:flat.index(end, begin) + len(end)]


def _script(name: str) -> object:
    """What ``benchmarks/NAME --json`` prints."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / name), "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout)


def test_the_helpers_read_figures_as_written() -> None:
    assert figures("| x86_64 | 144 insns, 2 traps, 2775.3 cycles | 1,233,503 (1.000x) |") \
        == ["144", "2", "2775.3", "1,233,503"]
    assert figures("none (no kernel has 32-bit PowerPC optprobes) on 2.6.27") == []
    assert figures("-0.37 / 140.12, 2.77-3.66") == ["-0.37", "140.12", "2.77", "3.66"]
    assert shown(2775.26, "2775.3") and shown(1233503, "1,233,503") and shown(1.0447, "1.045")
    assert not shown(1.54746, "1.548")


@pytest.mark.slow
def test_the_kprobes_table_is_what_bench_kprobes_prints() -> None:
    """README "Kprobes": `.venv/bin/python benchmarks/bench_kprobes.py`."""
    text = _readme()
    for r in _script("bench_kprobes.py"):
        path = [(r[p]["instructions"], r[p]["traps"], r[p]["modeled_cycles"])
                for p in ("kprobe", "boosted", "optprobe", "kretprobe") if r[p]]
        values = [v for triple in path for v in triple]
        values += [r["marker"]["instructions"], r["marker"]["modeled_cycles"],
                   r["kprobe_over_marker"]]
        if r["optprobe"]:
            values.append(r["optprobe_over_marker"])
        check(f"kprobes table, {r['arch']}",
              " ".join(row(text, "| arch | kprobe (pre+post) |", r["arch"])), values)


@pytest.mark.slow
def test_the_demo_figures_are_what_kisim_demo_prints(capsys) -> None:
    """README: "`kisim demo` (1000 iterations): a registered kprobe on sys_getppid ..."."""
    assert main(["demo", "--json"]) == 0
    hits = {k["arch"]: k for k in json.loads(capsys.readouterr().out)["kprobe"]}
    text = sentence(_readme(), "`kisim demo` (1000 iterations)", "for the dormant nop.")
    values: list[float] = []
    for arch in ("x86_64", "arm", "ppc32"):
        values += [hits[arch]["instructions_per_hit"], hits[arch]["modeled_cycles_per_hit"]]
    check("kisim demo", text, values + [1])


@pytest.mark.slow
def test_the_mcount_table_is_what_bench_ftrace_prints() -> None:
    """README "mcount overhead": `.venv/bin/python benchmarks/bench_ftrace.py`."""
    text = _readme()
    for arch, rows in _script("bench_ftrace.py")["hackbench"].items():
        values = [rows[0]["modeled_cycles"]] + [r["ratio"] for r in rows[1:]]
        check(f"mcount table, {arch}",
              " ".join(row(text, "| arch | FUNCTION_TRACER=n |", arch)), values)


@pytest.mark.slow
def test_the_comparison_table_is_what_kisim_compare_prints(tmp_path, capsys) -> None:
    """README "Comparison": `kisim compare --arch A` (kmalloc, 1 CPU, timing), dormant
    per pass / armed per hit of each mechanism, "n/a" where it is unavailable."""
    text = _readme()
    cells: dict[str, list[str]] = {}
    for arch in ARCHES:
        assert main(["compare", "--arch", arch, "--json", "--out", str(tmp_path / arch)]) == 0
        (result,) = json.loads(capsys.readouterr().out)["arches"]
        for r in result["rows"]:
            armed = "n/a" if r["unavailable"] else r["active"]["per_hit_modeled_cycles"]
            cells.setdefault(r["label"], []).append(
                f"{r['dormant']['per_pass_modeled_cycles']} / {armed}")
    for label, printed in cells.items():
        written = row(text, "| mechanism | arm | ppc32 | x86_64 |", label)
        for arch, cell, value in zip(ARCHES, written, printed):
            assert cell.endswith("n/a") == value.endswith("n/a"), (label, arch, cell)
            check(f"comparison table, {label}, {arch}", cell,
                  [float(v) for v in value.replace("n/a", "").split("/") if v.strip()])


def prose(text: str) -> str:
    """``text`` without its code spans (the commands, whose options are numbers too)."""
    return re.sub(r"`[^`]*`", "", text)


def _json(capsys, argv: list[str]) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_the_tracing_figures_are_what_trace_ftrace_and_kmemtrace_print(tmp_path,
                                                                       capsys) -> None:
    """README "mcount overhead" (its last sentence) and "Tracing": what each `kisim
    trace`/`ftrace` command's counts are, and what `kisim kmemtrace report` finds."""
    text = _readme()
    small = ["--cpus", "2", "--subbuf-size", "512", "--subbufs", "2", "--drain-every", "300"]
    fl = _json(capsys, ["ftrace", "--arch", "x86_64", "--workload", "hackbench", *small,
                        "--format", "ctf", "--out", str(tmp_path / "fl")])["buffers"]
    check("kisim ftrace", prose(sentence(text, "`kisim ftrace --arch x86_64", "**Tracing**")),
          [fl["produced"], fl["recorded"], fl["discarded"], fl["discarded"]])
    p = _json(capsys, ["trace", "--arch", "x86_64", "--workload", "kmalloc", "--probes", "kmem",
                       *small, "--out", str(tmp_path / "p")])["total"]
    t = _json(capsys, ["trace", "--arch", "ppc32", "--cpus", "2", "--workload", "hackbench",
                       "--out", str(tmp_path / "t")])["total"]
    assert main(["trace", "--arch", "arm", "--cpus", "2", "--workload", "kmem_errors",
                 "--probes", "kmem", "--out", str(tmp_path / "k")]) == 0
    capsys.readouterr()
    k = _json(capsys, ["kmemtrace", "report", str(tmp_path / "k")])
    check("kisim trace", prose(sentence(text, "**Tracing** — ", "never-freed allocations")),
          [p["produced"], p["recorded"], p["discarded"], p["discarded"], t["produced"],
           len(k["errors"]), len(k["never_freed"])])
    assert f"({sum(a['bytes_alloc'] for a in k['never_freed'])} bytes)" \
        in sentence(text, "never-freed allocations", ")")


@pytest.mark.slow
def test_the_fault_handler_snippet_prints_what_its_comment_says() -> None:
    """README "kprobe `fault_handler`": the snippet, run as written."""
    text = _readme()
    block = text[text.index("**kprobe `fault_handler`**"):].split("```sh\n", 1)[1]
    block = block.split("```", 1)[0]
    command, _, said = block.rpartition("#")
    code = command.strip().removeprefix('.venv/bin/python -c "').rstrip().removesuffix('"')
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=600).stdout
    assert out.split() == said.split()
    check("fault_handler", prose(sentence(text, "A faulting, fixed-up pre-handler costs",
                                          "hits):")), [float(out.split()[1])])


@pytest.mark.slow
def test_the_static_key_flips_take_the_ipis_the_readme_says(capsys) -> None:
    """README "Patching in the guest": `kisim boot --arch A --cpus 4 ... flip_key.c`,
    the IPIs each CPU takes."""
    ipis: list[float] = []
    for arch in ("x86_64", "arm", "ppc32"):
        run = _json(capsys, ["boot", "--arch", arch, "--cpus", "4", "--quantum", "1000",
                             "--set", "PATCHING_IN_GUEST=y", "--module",
                             str(ROOT / "examples" / "flip_key.c"), "--workload",
                             "flip_key:run", "--size", "20", "--expect", "0x14"])
        ipis += [c["events"].get("ipi", 0) for c in run["per_cpu"]]
    written = re.findall(r"\b(?:x86_64|arm|ppc32) `([\d, ]+)`", sentence(
        _readme(), "flips a static key 40 times", "the host patcher"))
    assert [int(n) for w in written for n in w.split(",")] == ipis
