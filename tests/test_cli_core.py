"""``kisim arches`` and ``kisim asm``: output, JSON and one-line errors."""
from __future__ import annotations

import json

import pytest

from arches import NAMES
from kisim.cli import main

PROGRAM = {"x86_64": "mov rax, 5; int3; add rax, 1",
           "arm": "mov r0, #5; bkpt #0; add r0, r0, #1",
           "ppc32": "li 3, 5; tw 31, 0, 0; addi 3, 3, 1"}


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_arches_table_lists_every_arch(capsys) -> None:
    code, out, _ = run_cli(capsys, "arches")
    assert code == 0
    for name in NAMES:
        assert name in out
    rows = json.loads(run_cli(capsys, "arches", "--json")[1])
    assert [r["name"] for r in rows] == list(NAMES)
    assert all(c["source"] for r in rows for c in r["costs"].values())


def test_asm_shows_bytes_and_disassembly(arch, capsys) -> None:
    code, out, _ = run_cli(capsys, "asm", "--arch", arch.name, PROGRAM[arch.name])
    assert code == 0
    listing = [line.split() for line in out.splitlines() if line.strip().startswith("0x")]
    assert len(listing) == 3
    assert listing[1][-1] in {"int3", "#0", "0"} or "bkpt" in listing[1] or "trap" in listing[1]


def test_asm_run_json(arch, capsys) -> None:
    code, out, _ = run_cli(capsys, "asm", "--arch", arch.name, "--cpus", "2", "--run",
                           "--json", PROGRAM[arch.name])
    assert code == 0
    data = json.loads(out)
    assert data["arch"] == arch.name and data["cpus"] == 2
    for cpu in data["per_cpu"]:
        assert cpu["instructions"] == 3
        assert cpu["modeled_cycles"] == 3 * arch.cost("insn") + arch.cost("trap")
        assert cpu["registers"][arch.ret] == 6
        assert isinstance(cpu["pc"], int)
    assert [t["kind"] for t in data["traps"]] == ["breakpoint"] * 2


def test_asm_reads_a_file(arch, capsys, tmp_path) -> None:
    src = tmp_path / "snippet.s"
    src.write_text(PROGRAM[arch.name].replace("; ", "\n"))
    code, out, _ = run_cli(capsys, "asm", "--arch", arch.name, "-f", str(src), "--run")
    assert code == 0 and "3 instructions" in out


@pytest.mark.parametrize("argv,message", [
    (["asm", "--arch", "sparc", "nop"], "unknown arch 'sparc'"),
    (["asm", "--arch", "arm", "--cpus", "9", "nop"], "out of range 1..8"),
    (["asm", "--arch", "arm", "--cpus", "0", "--run", "nop"], "out of range 1..8"),
    (["asm", "--arch", "arm", "-f", "/nonexistent/file.s"], "No such file"),
    (["asm", "--arch", "x86_64", "frobnicate rax"], "cannot assemble"),
    (["asm", "--arch", "ppc32"], "no assembly given"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_guest_fault_prints_report_and_exit_1(arch, capsys) -> None:
    bad = {"x86_64": "mov rax, [0x7777000]", "arm": "mov r0, #0x7000000; ldr r0, [r0]",
           "ppc32": "lis 3, 0x700; lwz 3, 0(3)"}[arch.name]
    code, out, err = run_cli(capsys, "asm", "--arch", arch.name, "--run", bad)
    assert code == 1
    assert "guest fault: unmapped memory read" in err and "CPU 0" in err
    assert "registers:" in err and "Traceback" not in err


@pytest.mark.slow
def test_demo_compares_dormant_and_active_costs(capsys) -> None:
    code, out, _ = run_cli(capsys, "demo", "--iterations", "50", "--json")
    assert code == 0
    data = json.loads(out)
    loops = {r["arch"]: r for r in data["site_loop"]}
    kprobes = {r["arch"]: r for r in data["kprobe"]}
    for name in NAMES:
        dormant, kp = loops[name], kprobes[name]
        assert dormant["site"] == "dormant nop"
        # A registered kprobe ran its guest pre_handler on every getppid call
        # (4 tasks x 50), through at least one trap and the guest's handler.
        assert kp["at"] == "sys_getppid+0x0" and kp["handlers"] == "pre"
        assert kp["hits"] == 4 * 50 and kp["nmissed"] == 0 and kp["checksum_ok"]
        assert kp["traps_per_hit"] >= 1 and kp["instructions_per_hit"] > 10
        assert kp["modeled_cycles_per_hit"] > 10 * dormant["modeled_cycles_per_iteration"]
    # registering queued ARM's probe for the optimizer (its run ends before the
    # optimizer's 5 jiffies); x86's jump would cover sys_getppid's mcount call (EBUSY)
    assert {n: kprobes[n]["optimizer"] for n in NAMES} == {
        "arm": "queued", "ppc32": "", "x86_64": ""}
    assert {n: kprobes[n]["optimization"] for n in NAMES} == {
        "arm": True, "ppc32": None, "x86_64": True}
    runs = {(r["arch"], r["markers"]): r for r in data["hackbench_markers"]}
    for name in NAMES:
        assert runs[(name, "dormant")]["checksum_ok"] and runs[(name, "armed")]["checksum_ok"]
        assert runs[(name, "armed")]["instructions"] > runs[(name, "dormant")]["instructions"]


def test_version_names_the_installed_distribution(capsys) -> None:
    """``kisim --version``: pyproject.toml's version, as the package was installed."""
    from importlib import metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"kisim {metadata.version('kisim')}\n"


def test_a_closed_standard_output_is_an_error() -> None:
    """``kisim arches >&-``: Python starts with sys.stdout None and print() drops
    everything; kisim says so and exits 2 (as ls does), not 0 with nothing written."""
    import os
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "kisim", "arches"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2 and proc.stderr == "kisim: standard output is closed\n"


@pytest.mark.parametrize("argv, prog", [
    (["boot", "--arch", "arm", "--at", "kmalloc"], "kisim boot"),
    (["record", "--arch", "arm", "kmalloc", "more"], "kisim record"),
])
def test_words_no_option_takes_are_the_subcommands_error(argv, prog, capsys) -> None:
    """An argument the subcommand does not take is its error, pointing at its help
    (argparse would have the top-level parser name itself)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}: error: unrecognized arguments: ") and err.count("\n") == 1
    assert err.rstrip().endswith(f"(see '{prog} -h')")


def test_record_takes_its_workload_without_renaming_the_command() -> None:
    """trace-cmd's ``record ... COMMAND`` positional is record's workload; the parsed
    subcommand (which the spinner and a guest fault's JSON name) stays ``record``."""
    from kisim.cli import build_parser
    args = build_parser().parse_args(["record", "--arch", "arm", "-e", "kmem", "kmalloc"])
    assert args.command == "record" and args.named_workload == "kmalloc"


def test_the_demos_iteration_limit_is_the_smallest_reach_of_the_arches() -> None:
    """MAX_ITERATIONS is the most every arch's demo_setup snippet can load: each
    assembles it, and some arch cannot take one more."""
    from arches import ARCHES
    from lab.demo import MAX_ITERATIONS
    from sim.asm import AsmError, assemble

    def fits(arch, n: int) -> bool:
        try:
            assemble(arch, arch.snippet("demo_setup", n=n), 0x1000)
        except AsmError:
            return False
        return True
    assert all(fits(arch, MAX_ITERATIONS) for arch in ARCHES.values())
    assert not all(fits(arch, MAX_ITERATIONS + 1) for arch in ARCHES.values())
