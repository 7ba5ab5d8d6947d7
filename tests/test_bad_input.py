"""Bad input across the CLI: one line on stderr, the right exit code, no traceback.

Each case runs ``kisim`` in-process (``kisim.cli.main``) from a scratch
directory holding a few fixture files; ``{dir}``, ``{fifo}``, ``{bin}``,
``{latin1}``, ``{bad}`` and ``{missing}`` are replaced by their paths.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arches import NAMES
from kisim.cli import main

A = NAMES[0]

CASES: list[tuple[str, ...]] = [
    # argparse and the top level
    (), ("nope",), ("arches", "--bogus"), ("asm",), ("asm", "--arch"),
    ("asm", "--arch", A, "--cpus", "x", "nop"), ("boot", "--arch", A, "--size", "1.5"),
    # unknown arch, everywhere
    ("asm", "--arch", "vax", "nop"), ("defconfig", "--arch", "vax", "-o", "{dir}/c"),
    ("olddefconfig", "--arch", "vax", "--config", "{bad}"),
    ("savedefconfig", "--arch", "vax", "--config", "{bad}", "-o", "{dir}/m"),
    ("menuconfig", "--arch", "vax", "--config", "{dir}/c"),
    ("boot", "--arch", "vax"), ("site", "--arch", "vax", "kmalloc"),
    # asm input
    ("asm", "--arch", A), ("asm", "--arch", A, "nop", "-f", "{bin}"),
    ("asm", "--arch", A, "-f", "{bin}"), ("asm", "--arch", A, "-f", "{latin1}"),
    ("asm", "--arch", A, "-f", "{missing}"), ("asm", "--arch", A, "-f", "{dir}"),
    ("asm", "--arch", A, "-f", "{fifo_dir}"),
    ("asm", "--arch", "x86_64", "mov rax, \u2460"), ("asm", "--arch", A, "no_such_mnemonic"),
    ("asm", "--arch", A, "--cpus", "0", "nop"), ("asm", "--arch", A, "--cpus", "99", "nop"),
    ("asm", "--arch", A, "--run", "--max-instructions", "0", "nop"),
    ("asm", "--arch", A, "--run", "--max-instructions", "-1", "nop"),
    ("asm", "--arch", A, "--run", "--quantum", "0", "nop"),
    ("asm", "--arch", "arm", "--run", ".thumb; movs r0, #1"),
    ("asm", "--arch", "x86_64", "--run", ".long 5"),
    # kconfig commands
    ("defconfig", "--arch", A, "-o", "{fifo}"), ("defconfig", "--arch", A, "-o", "{dir}"),
    ("olddefconfig", "--arch", A, "--config", "{missing}"),
    ("olddefconfig", "--arch", A, "--config", "{bin}"),
    ("olddefconfig", "--arch", A, "--config", "{bad}"),
    ("olddefconfig", "--arch", A, "--config", "{dir}"),
    ("savedefconfig", "--arch", A, "--config", "{missing}", "-o", "{dir}/m"),
    ("savedefconfig", "--arch", A, "--config", "{bad}", "-o", "{dir}/m"),
    ("savedefconfig", "--arch", A, "--config", "{good}", "-o", "{good}"),
    ("savedefconfig", "--arch", A, "--config", "{good}", "-o", "{fifo}"),
    ("menuconfig", "--arch", A, "--config", "{dir}/c"),          # not a terminal
    # boot and site
    ("boot", "--arch", A, "--workload", "nope"), ("boot", "--arch", A, "--size", "-3"),
    ("boot", "--arch", A, "--cpus", "0"), ("boot", "--arch", A, "--quantum", "0"),
    ("boot", "--arch", A, "--max-instructions", "-1"),
    ("boot", "--arch", A, "--config", "{missing}"), ("boot", "--arch", A, "--config", "{bin}"),
    ("boot", "--arch", A, "--set", "MARKERS"), ("boot", "--arch", A, "--set", "NOPE=y"),
    ("boot", "--arch", A, "--set", "MARKERS=n", "--set", "KMEMTRACE=y"),
    ("site", "--arch", A, "no_such_site"), ("site", "--arch", A, "--marker", "--tracepoint", "x"),
    ("site", "--arch", A, "--tracepoint", "syscall_entry_nope"),
    ("site", "--arch", A, "kmalloc", "--config", "{bad}"),
]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "fd").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "bin").write_bytes(b"\x00\xff\xfe\x80")
    (tmp_path / "latin1").write_bytes("mov r0, #1 @ caf\xe9\n".encode("latin-1"))
    (tmp_path / "bad").write_text("CONFIG_MARKERS=y\nthis is not a config line\n")
    assert main(["defconfig", "--arch", A, "-o", str(tmp_path / "good")]) == 0
    return {"dir": str(tmp_path / "d"), "fifo": str(tmp_path / "fifo"),
            "fifo_dir": str(tmp_path / "fd"), "bin": str(tmp_path / "bin"),
            "latin1": str(tmp_path / "latin1"), "bad": str(tmp_path / "bad"),
            "good": str(tmp_path / "good"), "missing": str(tmp_path / "missing")}


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) or "(none)" for c in CASES])
def test_bad_input_is_one_line_exit_2(argv: tuple[str, ...], scratch: dict[str, str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = _exit_code([a.format(**scratch) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("kisim"), err


def _exit_code(argv: list[str]) -> int:
    """``kisim argv``'s exit status; argparse's own usage errors raise SystemExit(2)."""
    try:
        return main(argv)
    except SystemExit as exit:
        return int(exit.code or 0)


def test_kconfig_writes_leave_non_regular_files_alone(arch, tmp_path: Path, capsys) -> None:
    fifo, directory = tmp_path / "fifo", tmp_path / "d"
    os.mkfifo(fifo)
    directory.mkdir()
    for target in (fifo, directory):
        assert main(["defconfig", "--arch", arch.name, "-o", str(target)]) == 2
        assert "regular file" in capsys.readouterr().err
    assert fifo.is_fifo() and directory.is_dir() and not any(directory.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "fifo"]   # no .old, no temp


def test_savedefconfig_refuses_to_replace_its_input(arch, tmp_path: Path, capsys) -> None:
    full = tmp_path / ".config"
    assert main(["defconfig", "--arch", arch.name, "-o", str(full)]) == 0
    before = full.read_bytes()
    for out in (full, tmp_path / "sub" / ".." / ".config"):
        assert main(["savedefconfig", "--arch", arch.name, "--config", str(full),
                     "-o", str(out)]) == 2
    assert "being read" in capsys.readouterr().err
    assert full.read_bytes() == before


def test_config_rewrite_is_atomic_and_keeps_old(arch, tmp_path: Path) -> None:
    cfg = tmp_path / ".config"
    assert main(["defconfig", "--arch", arch.name, "-o", str(cfg)]) == 0
    cfg.write_text(cfg.read_text() + "# a comment the rewrite drops\n")
    edited = cfg.read_bytes()
    assert main(["olddefconfig", "--arch", arch.name, "--config", str(cfg)]) == 0
    assert (tmp_path / ".config.old").read_bytes() == edited
    assert b"a comment" not in cfg.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".config", ".config.old"]


def test_set_error_names_the_unmet_dependency(arch, capsys) -> None:
    assert main(["boot", "--arch", arch.name, "--set", "MARKERS=n",
                 "--set", "KMEMTRACE=y"]) == 2
    assert "unmet dependency MARKERS (=n)" in capsys.readouterr().err


def test_undecodable_bytes_listed_as_byte(arch) -> None:
    from sim.asm import assemble, disassemble, listing
    bad = next(w for w in (b"\xff" * 4, b"\x00" * 4) if not disassemble(arch, w, count=1))
    nop = assemble(arch, "nop")
    insns = listing(arch, bad + nop, 0x100)
    assert {i.mnemonic for i in insns[:-1]} == {".byte"}
    assert b"".join(i.bytes for i in insns) == bad + nop       # every byte, in order
    assert insns[-1].text == "nop" and insns[-1].address == 0x104


def test_asm_listing_goes_on_after_data(capsys) -> None:
    assert main(["asm", "--arch", "arm", "--json", ".word 0xffffffff; nop"]) == 0
    texts = [i["text"] for i in json.loads(capsys.readouterr().out)["disassembly"]]
    assert texts == [".byte 0xff, 0xff, 0xff, 0xff", "nop"]


def test_file_error_names_the_line(arch, tmp_path: Path, capsys) -> None:
    src = tmp_path / "s.S"
    src.write_text("nop\nnop\nno_such_mnemonic\nnop\n")
    assert main(["asm", "--arch", arch.name, "-f", str(src)]) == 2
    assert f"{src}:3:" in capsys.readouterr().err


FAULTS = {"x86_64": "ud2", "arm": "udf #0", "ppc32": "lis 3, 0x7fff; lwz 4, 0(3)"}


def test_guest_fault_under_json_prints_json(arch, capsys) -> None:
    assert main(["asm", "--arch", arch.name, "--run", "--json", FAULTS[arch.name]]) == 1
    out, err = capsys.readouterr()
    fault = json.loads(out)["fault"]
    assert fault["arch"] == arch.name and fault["pc"] >= 0x10000
    assert err.startswith("kisim: guest fault:") and len(err.strip().splitlines()) == 1


def test_site_both_kinds(arch, capsys) -> None:
    assert main(["site", "--arch", arch.name, "kmalloc", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "ambiguous"
    assert [v["kind"] for v in data["views"]] == ["marker", "tracepoint"]
    assert main(["site", "--arch", arch.name, "--tracepoint", "kmalloc", "--json"]) == 0
    tp = json.loads(capsys.readouterr().out)
    assert tp["kind"] == "tracepoint" and tp["sites"][0]["record"]["section"] == "__jump_table"


def test_dot_config_used_when_present(arch, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["defconfig", "--arch", arch.name, "-o", ".config"]) == 0
    assert main(["olddefconfig", "--arch", arch.name]) == 0
    capsys.readouterr()
    assert main(["site", "--arch", arch.name, "--marker", "kmalloc", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["config"].endswith(".config")
    assert "(./.config)" in err


def test_broken_pipe_exits_quietly(tmp_path: Path) -> None:
    import subprocess
    import sys
    src = tmp_path / "nops.S"
    src.write_text("nop\n" * 5000)            # JSON listing far beyond a pipe's buffer
    proc = subprocess.Popen([sys.executable, "-m", "kisim.cli", "asm", "--arch", A,
                             "--json", "-f", str(src)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(1)
    proc.stdout.close()                     # the reader goes away, as `| head -c1` does
    err = proc.stderr.read().decode()
    assert proc.wait() == 0 and err == ""


def test_interrupt_exits_130(monkeypatch, capsys) -> None:
    from kisim.commands import arches as arches_cmd

    def interrupted(*_a: object) -> None:
        raise KeyboardInterrupt
    monkeypatch.setattr(arches_cmd, "print_json", interrupted)
    assert main(["arches", "--json"]) == 130
    assert capsys.readouterr().err == "kisim: interrupted\n"


def test_menuconfig_refuses_non_regular_target(arch, tmp_path: Path) -> None:
    import kconfig
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(kconfig.KconfigError, match="not a regular file"):
        kconfig.menuconfig(arch.name, fifo)
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_patchcheck_refuses_a_negative_show(capsys) -> None:
    assert main(["patchcheck", "--arch", "arm", "--seeds", "2", "--show", "-100"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--show -100" in err


def test_a_guest_divide_by_zero_is_named(capsys) -> None:
    """The fault names the exception (x86 #DE), not a bare interrupt number."""
    assert main(["asm", "--arch", "x86_64", "--run", "mov eax, 1; xor ecx, ecx; div ecx"]) == 1
    err = capsys.readouterr().err
    assert "divide by zero" in err and "unexpected interrupt" not in err
