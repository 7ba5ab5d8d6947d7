"""Bad input across the CLI: one line on stderr, the right exit code, no traceback.

Each case runs ``kisim`` in-process (``kisim.cli.main``) from a scratch
directory holding a few fixture files; ``{dir}``, ``{fifo}``, ``{bin}``,
``{latin1}``, ``{bad}`` and ``{missing}`` are replaced by their paths.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arches import ARCHES, NAMES
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
    ("asm", "--arch", A, "-f", "{nul}"),            # Keystone would stop at the NUL
    ("asm", "--arch", A, ".fill 1, 100000, 0"),     # Keystone: truncated to 8, on stderr
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
    # issue 18: inputs that are not regular files are refused, never read
    ("asm", "--arch", A, "-f", "{fifo}"), ("asm", "--arch", A, "-f", "/dev/zero"),
    ("boot", "--arch", A, "--config", "{fifo}"), ("boot", "--arch", A, "--config", "/dev/zero"),
    ("kmemtrace", "report", "{fifo}"), ("kmemtrace", "report", "{missing}"),
    ("kmemtrace", "report", ""),             # not the current directory, unasked
    # issue 18: stated limits, checked before work starts
    ("asm", "--arch", A, "--run", ".fill 33554432,1,0x90"), ("asm", "--arch", A, ".space 100000000"),
    ("asm", "--arch", A, ".rept 100000000\nnop\n.endr"), ("asm", "--arch", A, ".org 0x40000000"),
    ("asm", "--arch", A, ".fill 1<<100000"), ("asm", "--arch", A, ".fill some_symbol"),
    ("asm", "--arch", A, '.incbin "{fifo}"'), ("asm", "--arch", A, ".macro m\nnop\n.endm"),
    ("asm", "--arch", A, "--max-instructions", str(10 ** 13), "--run", "nop"),
    ("trace", "--arch", A, "--out", "{dir}/t", "--max-instructions", "0"),
    ("trace", "--arch", A, "--out", "{dir}/t", "--subbuf-size", "0"),
    ("trace", "--arch", A, "--out", "{dir}/t", "--subbufs", "0"),
    ("trace", "--arch", A, "--out", "{dir}/t", "--subbuf-size", str(1 << 30)),
    ("trace", "--arch", A, "--out", "{dir}/t", "--cpus", "2", "--subbuf-size", str(1 << 20),
     "--subbufs", "64"),
    ("ftrace", "--arch", A, "--subbufs", "0"), ("ftrace", "--arch", A, "--quantum", "0"),
    ("boot", "--arch", A, "--size", str(1 << 40)), ("boot", "--arch", A, "--max-instructions", "0"),
    ("patchcheck", "--arch", A, "--seeds", str(10 ** 10)),
    ("patchcheck", "--arch", A, "--seeds", "3", "--protocol-timeout", "nan"),
    ("patchcheck", "--arch", A, "--seeds", "3", "--protocol-timeout", "0"),
    ("patchcheck", "--arch", A, "--seeds", "3", "--findings-out", "{fifo}"),
    ("patchcheck", "--arch", A, "--seeds", "3", "--findings-out", "{dir}"),
    ("patchcheck", "--arch", A, "--seeds", "3", "--findings-out", "/dev/null"),
    ("patchcheck", "--arch", A, "--seeds", "3", "--protocol", "os:getcwd"),
    ("patchcheck", "--arch", A, "--seeds", "3", "--protocol", "builtins:print"),
    ("build", "--arch", A, "--set", "MARKERS=n", "--set", "CONFIG_MARKERS=y"),
    # a scheme Dask has but kisim cannot use (TLS needs a context; UCX is not installed)
    ("validate", "--arch", A, "--layouts", "1", "--scheduler", "tls://127.0.0.1:1"),
    ("validate", "--arch", A, "--layouts", "1", "--scheduler", "ucx://127.0.0.1:1"),
    # issue 18: the newer commands' bad arguments (tour, probe, kprobe, kmemtrace)
    ("tour", "--arch", ""), ("tour", "--arch", "vax"),
    ("probe", "--arch", A, "--workload", "kmalloc", "kernel/slab.c:\u00b2"),
    ("probe", "--arch", A, "--workload", "kmalloc", "kernel/slab.c:\u0663"),
    ("probe", "--arch", A, "--workload", "kmalloc", "kernel/slab.c:0"),
    # perf probe's modes go alone, and run nothing: what they would ignore is refused
    ("probe", "--arch", A, "-L", "kmalloc", "-D"), ("probe", "--arch", A, "-V", "-D", "kmalloc"),
    ("probe", "--arch", A, "-L", "kmalloc", "kmalloc:8"),
    ("probe", "--arch", A, "-L", "kmalloc", "--fetch", "size"),
    ("probe", "--arch", A, "-V", "kmalloc", "--fetch", "size"),
    ("probe", "--arch", A, "-D", "kmalloc", "--workload", "kmalloc"),
    ("probe", "--arch", A, "-D", "kmalloc", "--cpus", "2"),
    ("probe", "--arch", A, "-D", "kmalloc", "--fetch", "size,"),
    ("kprobe", "--arch", A, "--at", "kmalloc+zz"), ("kprobe", "--arch", A, "--at", "\u00b2"),
    ("kprobe", "--arch", A, "--at", "kmalloc", "--maxactive", "3"),
    ("kprobe", "--arch", A, "--at", "kmalloc", "--ret", "--maxactive", "0"),
    ("kprobe", "--arch", A, "--at", "kmalloc", "--ret", "--maxactive", "4097"),
    ("kprobe", "--arch", A, "--every-instruction", "kmalloc", "--ret", "--maxactive", "3"),
    ("kmemtrace", "report", "{dir}", "--limit", "0"), ("kmemtrace", "report", "{dir}"),
    # options of a --layouts sweep without one: refused, not ignored
    ("compare", "--arch", A, "--jobs", "2"), ("compare", "--arch", A, "--scheduler", "x:1"),
    ("compare", "--arch", A, "--vary-assumptions"), ("compare", "--arch", A, "--layout-seed", "5"),
    ("validate", "--arch", A, "--layout-seed", "5"),
    ("validate", "--arch", A, "--vary-assumptions"),
    ("asm", "--arch", A, "--cpus", "2", "nop"), ("asm", "--arch", A, "--seed", "3", "nop"),
    ("asm", "--arch", A, "--quantum", "5", "nop"),
    ("patchcheck", "--arch", A, "--replay", "3", "--seeds", "5"),
    ("patchcheck", "--arch", A, "--replay", "3", "--first-seed", "2"),
    ("patchcheck", "--arch", A, "--on-hang", "continue", "--seeds", "2"),
    ("ftrace", "--arch", A, "--glob", "full"),
    ("ftrace", "--arch", A, "--format", "ctf", "--out", "{dir}/t", "--limit", "3"),
    # an option of one value given twice: refused, not the last one kept
    ("kprobe", "--arch", A, "--at", "kmalloc", "--at", "kfree"),
    ("trace", "--arch", A, "--probes", "kmem", "--probes", "sched", "--out", "{dir}/t"),
    ("build", "--arch", A, "--arch", "arm"),
    # a --set the suite's own config overrides (it ran with KPROBES=y, the user unsaid)
    ("selftest", "--arch", A, "--suite", "kprobes", "--set", "KPROBES=n"),
    # an output path that names no file, or a directory through a link
    ("trace", "--arch", A, "--out", ""), ("record", "--arch", A, "-o", "", "kmalloc"),
    ("defconfig", "--arch", A, "-o", "{dir}/c/"),
    ("ftrace", "--arch", A, "--format", "chrome", "--out", "{link}"),
    # a definition that defines nothing (the kernel skips a blank line or a comment)
    ("kprobe-events", "--arch", A, ""), ("kprobe-events", "--arch", A, "# only a comment"),
    ("record", "--arch", A, "-e", "kmem", "fib", "--workload", "kmalloc"),  # which one?
    # options that do something only with another
    ("boot", "--arch", A, "--module-werror"),
    ("patchcheck", "--arch", A, "--protocol-timeout", "5"),
    # a module list with an empty name (',' was an IndexError; '' built the directory)
    ("symbols", "--arch", A, "--module", ","), ("symbols", "--arch", A, "--module", ""),
    ("boot", "--arch", A, "--module", "{dir}/a.c,"),
]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "fd").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "bin").write_bytes(b"\x00\xff\xfe\x80")
    (tmp_path / "latin1").write_bytes("mov r0, #1 @ caf\xe9\n".encode("latin-1"))
    (tmp_path / "nul").write_bytes(b"nop\nnop\0\nint3\n")
    (tmp_path / "link").symlink_to(tmp_path / "d")
    (tmp_path / "bad").write_text("CONFIG_MARKERS=y\nthis is not a config line\n")
    assert main(["defconfig", "--arch", A, "-o", str(tmp_path / "good")]) == 0
    return {"dir": str(tmp_path / "d"), "fifo": str(tmp_path / "fifo"),
            "fifo_dir": str(tmp_path / "fd"), "bin": str(tmp_path / "bin"),
            "latin1": str(tmp_path / "latin1"), "nul": str(tmp_path / "nul"),
            "link": str(tmp_path / "link"),
            "bad": str(tmp_path / "bad"),
            "good": str(tmp_path / "good"), "missing": str(tmp_path / "missing")}


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) or "(none)" for c in CASES])
def test_bad_input_is_one_line_exit_2(argv: tuple[str, ...], scratch: dict[str, str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(Path(scratch["dir"]).parent)
    code = _exit_code([a.format(**scratch) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("kisim"), err
    assert _snapshot(Path(scratch["dir"]).parent) == before     # nothing touched


def _snapshot(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root``: a regular file's bytes, else its kind."""
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() and not p.is_symlink()
            else "fifo" if p.is_fifo() else "dir" if p.is_dir() else "other"
            for p in sorted(root.rglob("*"))}


def _exit_code(argv: list[str]) -> int:
    """``kisim argv``'s exit status (argparse's own usage errors included)."""
    return main(argv)


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_broken_pipe_exits_quietly(tmp_path: Path) -> None:
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
    with pytest.raises(kconfig.KconfigError, match="a FIFO"):
        kconfig.menuconfig(arch.name, fifo)
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


@pytest.mark.parametrize("argv", [["defconfig", "-o"], ["olddefconfig", "--config"]],
                         ids=["defconfig", "olddefconfig"])
@pytest.mark.parametrize("old", ["symlink", "directory"])
def test_the_backup_of_a_config_never_follows_a_link(arch, argv, old, tmp_path: Path,
                                                     capsys) -> None:
    """The copy of the previous .config goes to .config.old as any output goes: a link
    or directory there is refused before anything is written (it used to be copied
    through the link, over the file it named)."""
    import kconfig
    cfg, victim = tmp_path / ".config", tmp_path / "victim"
    assert main(["defconfig", "--arch", arch.name, "-o", str(cfg)]) == 0
    before = cfg.read_bytes()
    victim.write_text("precious")
    if old == "symlink":
        (tmp_path / ".config.old").symlink_to(victim)
    else:
        (tmp_path / ".config.old").mkdir()
    capsys.readouterr()
    assert main([argv[0], "--arch", arch.name, argv[1], str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".config.old" in err
    assert victim.read_text() == "precious" and cfg.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".config", ".config.old", "victim"]
    with pytest.raises(kconfig.KconfigError, match=r"\.config\.old"):
        kconfig.menuconfig(arch.name, cfg)


def test_patchcheck_refuses_a_negative_show(capsys) -> None:
    assert main(["patchcheck", "--arch", "arm", "--seeds", "2", "--show", "-100"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--show -100" in err


def test_a_guest_divide_by_zero_is_named(capsys) -> None:
    """The fault names the exception (x86 #DE), not a bare interrupt number."""
    assert main(["asm", "--arch", "x86_64", "--run", "mov eax, 1; xor ecx, ecx; div ecx"]) == 1
    err = capsys.readouterr().err
    assert "divide by zero" in err and "unexpected interrupt" not in err


# -- issue 18: limits are checked before the work, not after ------------------------

def test_a_huge_fill_is_refused_at_once(capsys) -> None:
    """`.fill 33554432,1,0x90 --run` took 216 s and 20 GB before the limit."""
    begin = time.monotonic()
    assert main(["asm", "--arch", "x86_64", "--run", ".fill 33554432,1,0x90"]) == 2
    assert time.monotonic() - begin < 2
    assert "over the limit of 65536" in capsys.readouterr().err


def test_the_limits_leave_ordinary_directives_alone(capsys) -> None:
    from sim.asm import MAX_CODE
    assert main(["asm", "--arch", "arm", "--json", ".equ N, 4\n.rept N\nnop\n.endr\n"
                 ".fill 2, 4, 0xe320f000\n.align 4\n.space 16"]) == 0
    listing = json.loads(capsys.readouterr().out)["disassembly"]
    assert [i["text"] for i in listing[:6]] == ["nop"] * 6
    room = MAX_CODE - 15                       # a statement counts as the longest insn
    assert main(["asm", "--arch", "x86_64", f".fill {room}, 1, 0x90; nop"]) == 0
    assert capsys.readouterr().out.count("nop") == room + 1
    assert main(["asm", "--arch", "x86_64", f".fill {room + 1}, 1, 0x90; nop"]) == 2


def test_ring_geometry_over_the_limit_is_refused_before_mapping(arch) -> None:
    from sim import Machine
    from tracing.errors import TraceError
    from tracing.ring import MAX_RING_BYTES, RingBuffers
    machine = Machine(arch, 4)
    machine.map(0x1000, 0x1000, "rw")
    size = 1 << 20
    with pytest.raises(TraceError, match=f"{MAX_RING_BYTES}-byte limit"):
        RingBuffers.install(machine, 0x1000, 0x4000_0000, subbuf_size=size,
                            nr_subbufs=MAX_RING_BYTES // size // 4 + 1, mode="discard",
                            max_record=64)
    assert machine.memory.find(0x4000_0000, 1) is None           # nothing mapped


# -- issue 18: the Python API validates its arguments --------------------------------

def test_machine_step_refuses_counts_out_of_range(arch) -> None:
    from sim import Machine
    from sim.errors import ConfigError
    from sim.machine import MAX_STEP
    machine = Machine(arch, 1)
    machine.load_code(arch.nop(arch.insn_align) * 4, 0x10000)
    for count in (0, -1, MAX_STEP + 1, 2 ** 64 + 5):
        with pytest.raises(ConfigError, match="out of range"):
            machine.step(0, count)
    for count in (1.0, True, "3"):
        with pytest.raises(TypeError):
            machine.step(0, count)                                # type: ignore[arg-type]
    assert machine.step(0, 2) == 2 and machine.cpus[0].instructions == 2


def test_machine_write_refuses_text(arch) -> None:
    from sim import Machine
    machine = Machine(arch, 1)
    machine.load_code(arch.nop(arch.insn_align), 0x10000)
    before = machine.read(0x10000, arch.insn_align)
    for data in ("nop", 0x90, [0x90]):
        with pytest.raises(TypeError, match="data must be bytes"):
            machine.write(0x10000, data)                          # type: ignore[arg-type]
    assert machine.read(0x10000, arch.insn_align) == before
    machine.write(0x10000, bytes(reversed(before)))
    assert machine.read(0x10000, arch.insn_align) == bytes(reversed(before))


def test_kprobe_with_symbol_and_address_is_einval() -> None:
    """v5.10 kernel/kprobes.c:_kprobe_addr: both set (or neither) is -EINVAL."""
    from kbuild import build
    from patcher.errors import PatchError
    from probes.kprobes import Kprobe, Kprobes
    from sim.guest import Guest
    kprobes = Kprobes(Guest(build(A), workload="kmalloc", size=5))
    address = kprobes.resolve(Kprobe(symbol_name="kmalloc"))
    for kp in (Kprobe(symbol_name="kmalloc", addr=address), Kprobe()):
        with pytest.raises(PatchError) as refused:
            kprobes.register_kprobe(kp)
        assert refused.value.errno == "EINVAL"
    assert kprobes.register_kprobe(Kprobe(addr=address)).addr == address


# -- issue 18: trace inputs ----------------------------------------------------------

@pytest.fixture(scope="module")
def kmem_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trace") / "t"
    assert main(["trace", "--arch", A, "--workload", "kmalloc", "--size", "20",
                 "--probes", "kmem", "--out", str(out)]) == 0
    return out


def _copy(trace: Path, to: Path) -> Path:
    to.mkdir()
    for f in trace.iterdir():
        (to / f.name).write_bytes(f.read_bytes())
    return to


def _report(trace: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = _snapshot(trace)
    assert main(["kmemtrace", "report", str(trace)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert _snapshot(trace) == before
    return err


def test_kmemtrace_says_a_file_is_not_a_trace_directory(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A file where the trace directory goes is named as what it is, not as missing."""
    (tmp_path / "t.txt").write_text("not a trace\n")
    assert main(["kmemtrace", "report", str(tmp_path / "t.txt")]) == 2
    assert "t.txt: not a directory; a CTF trace is the directory" in capsys.readouterr().err
    assert main(["kmemtrace", "report", str(tmp_path / "none")]) == 2
    assert "none: no such trace directory" in capsys.readouterr().err


@pytest.mark.parametrize("field_offset", [48, 56], ids=["content_size", "packet_size"])
def test_kmemtrace_packet_size_of_2_63_is_one_line(kmem_trace, tmp_path, capsys,
                                                   field_offset) -> None:
    trace = _copy(kmem_trace, tmp_path / "t")
    stream = next(p for p in trace.iterdir() if p.name.startswith("channel"))
    data = bytearray(stream.read_bytes())
    order = "<" if ARCHES[A].endian == "little" else ">"
    struct.pack_into(order + "Q", data, field_offset, 2 ** 63)
    stream.write_bytes(bytes(data))
    err = _report(trace, capsys)
    assert "packet" in err and "at offset 0" in err


@pytest.mark.parametrize("kind", ["fifo", "device", "link to a device"])
def test_kmemtrace_metadata_that_is_not_a_file_is_not_read(kmem_trace, tmp_path, capsys,
                                                           kind) -> None:
    trace = _copy(kmem_trace, tmp_path / "t")
    (trace / "metadata").unlink()
    if kind == "fifo":
        os.mkfifo(trace / "metadata")
    else:
        (trace / "metadata").symlink_to("/dev/zero")
    assert "CTF metadata is a" in _report(trace, capsys)


def test_kmemtrace_event_without_its_fields_is_one_line(kmem_trace, tmp_path, capsys) -> None:
    trace = _copy(kmem_trace, tmp_path / "t")
    (trace / ".kisim-trace").unlink()          # else its SHA-256 refuses the change first
    meta = (trace / "metadata").read_text()
    (trace / "metadata").write_text(meta.replace("} _ptr;", "} _pointer;"))
    assert "has no integer field ptr" in _report(trace, capsys)


def test_read_elf_refuses_a_fifo(tmp_path) -> None:
    from sim.elf import read_elf
    from sim.errors import ConfigError
    os.mkfifo(tmp_path / "vmlinux")
    with pytest.raises(ConfigError, match="FIFO"):
        read_elf(tmp_path / "vmlinux")


def test_read_elf_takes_the_file_of_the_largest_image_a_build_makes(tmp_path) -> None:
    """A module's initialised 80 MiB array built (MAX_IMAGE_BYTES is 256 MiB) and
    then was refused by the loader's 64 MiB input limit; a file over
    MAX_ELF_FILE is still refused, unread (both sparse)."""
    from sim.elf import MAX_ELF_FILE, read_elf
    from sim.errors import ConfigError
    for size, says in ((100 << 20, "not an ELF|ELF"), (MAX_ELF_FILE + 1, "over the")):
        path = tmp_path / f"vmlinux-{size}"
        with open(path, "wb") as f:
            f.truncate(size)
        with pytest.raises(ConfigError, match=says) as err:
            read_elf(path)
        assert ("over the" in str(err.value)) == (size > MAX_ELF_FILE), err.value


def test_a_configuration_over_its_limit_or_a_dot_config_not_a_file_is_one_line(
        tmp_path, monkeypatch, capsys) -> None:
    """A .config has a size limit (a 200 MB comment took 500 MB of memory and
    built); a ./.config that is not a regular file is refused, not passed over
    for the defconfig."""
    from kconfig import MAX_CONFIG_BYTES
    big = tmp_path / "big.cfg"
    big.write_text("#" * MAX_CONFIG_BYTES + "\n")
    for command in ("build", "olddefconfig", "savedefconfig"):
        assert main([command, "--arch", A, "--config", str(big)]) == 2
        assert "-byte limit" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    for make in (lambda p: p.symlink_to(tmp_path / "nothing"), os.mkfifo, os.mkdir):
        make(tmp_path / ".config")
        assert main(["boot", "--arch", A, "--size", "2"]) == 2
        err = capsys.readouterr().err
        assert err == "kisim: error: ./.config is not a regular file: remove it, or pass " \
                      "--config FILE\n"
        (os.rmdir if (tmp_path / ".config").is_dir() else os.unlink)(tmp_path / ".config")


@pytest.mark.slow                       # waits out the handshake's 6 s
def test_a_scheduler_that_accepts_and_never_answers_is_one_line(tmp_path, capsys) -> None:
    """Client's timeout bounds the connect, not Dask's handshake: a listener that
    accepts and says nothing held compare, validate and patchcheck for ever."""
    import socket
    from workers import CONNECT_TIMEOUT
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        port = server.getsockname()[1]
        begin = time.monotonic()
        assert main(["compare", "--arch", A, "--layouts", "2", "--cycles", "count",
                     "--scheduler", f"tcp://127.0.0.1:{port}", "--out", str(tmp_path)]) == 2
        took = time.monotonic() - begin
    err = capsys.readouterr().err
    assert err == (f"kisim: error: --scheduler tcp://127.0.0.1:{port}: no answer within "
                   f"{2 * CONNECT_TIMEOUT} s (is a Dask scheduler listening there?)\n")
    assert took < 2 * CONNECT_TIMEOUT + 10


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="no sysfs here")
def test_an_output_where_no_file_can_be_made_is_refused_before_the_run(capsys) -> None:
    """sysfs takes no new file whatever the permission bits say (to root too): the
    run is refused at once, naming the user's file, not after it (a 44 s sweep
    lost its summary) naming a temporary file."""
    for argv, path in ((["patchcheck", "--arch", A, "--seeds", "5000", "--findings-out"],
                        "/sys/kernel/f.jsonl"),
                       (["record", "--arch", A, "-e", "kmem", "--size", "3000", "-o"],
                        "/sys/kernel/x.dat")):
        begin = time.monotonic()
        assert main([*argv, path]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"kisim: error: {path}: cannot write into /sys/kernel")
        assert time.monotonic() - begin < 5


@pytest.mark.parametrize("pager", ["false", "sh -c 'exit 3'", "/nonexistent", "cat"])
def test_the_tour_is_never_lost_to_a_failing_pager(pager, monkeypatch, capfd) -> None:
    """pydoc.pager ignored the pager's exit: PAGER=false showed nothing and
    exited 0. A failing pager now leaves the text on stdout, with a warning."""
    from kisim.commands.tour import page
    monkeypatch.setenv("PAGER", pager)
    page("the tour\n")
    out, err = capfd.readouterr()
    assert out == "the tour\n"
    assert ("the pager" in err) == (pager != "cat")


def test_an_error_line_prints_no_control_character(tmp_path, capsys) -> None:
    """A .config line of terminal escapes and NULs came back raw in the error line;
    it is escaped (the user's terminal is not the input's to drive)."""
    cfg = tmp_path / "esc.cfg"
    cfg.write_bytes(b"CONFIG_MARKERS=y\n\x1b[31mRED\x1b]0;TITLE\x07\x00\n")
    assert main(["build", "--arch", A, "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err[:-1].isprintable(), repr(err)
    assert "\\x1b[31mRED" in err


def test_menuconfig_that_cannot_start_leaves_no_new_file(tmp_path) -> None:
    """menuconfig --config NEW writes the defconfig there first; a terminal it cannot
    drive took it with an error and left the file (a pty, TERM unknown)."""
    import pty
    target = tmp_path / "new.cfg"
    argv = [sys.executable, "-m", "kisim", "menuconfig", "--arch", A, "--config", str(target)]
    pid, fd = pty.fork()
    if pid == 0:                                     # the child: a terminal of its own
        os.environ["TERM"] = "nosuchterm"
        os.execv(sys.executable, argv)
    out = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 4096):
            out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2, out
    assert b"terminal error" in out and not target.exists()


# -- issue 18: --json on a guest fault, for every command that runs a guest -----------

def test_json_guest_fault_from_a_real_run(capsys, tmp_path) -> None:
    for argv in (["boot"], ["trace", "--out", str(tmp_path / "t")]):
        assert main([*argv, "--arch", A, "--max-instructions", "1000", "--json"]) == 1
        out, err = capsys.readouterr()
        fault = json.loads(out)["fault"]
        assert fault["reason"] == "instruction budget of 1000 exhausted"
        assert err.startswith("kisim: guest fault:") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["ftrace", "--arch", A, "--workload", "fib", "--size", "3"],
    ["probe", "--arch", A, "--workload", "kmalloc", "--size", "3", "kernel/slab.c:224"],
    ["kprobe", "--arch", A, "--at", "kmalloc", "--workload", "kmalloc", "--size", "3"],
    ["compare", "--arch", A, "--mechanism", "kprobe", "--workload", "kmalloc", "--size", "3"],
], ids=lambda a: a[0])
def test_json_guest_fault_is_json_for_every_command(argv, capsys, monkeypatch,
                                                    tmp_path) -> None:
    from sim.errors import GuestFault
    from sim.machine import Machine

    def faulting(self: Machine, *_a: object, **_k: object) -> None:
        raise GuestFault(reason="planted", arch=self.arch.name, cpu=0, pc=0x100, insn="x")
    monkeypatch.setattr(Machine, "run", faulting)
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--json"]) == 1
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["command"] == argv[0] and doc["fault"]["reason"] == "planted"
    assert err == "kisim: guest fault: planted on arm CPU 0 at 0x100: x\n"


# -- issue 18: progress on stderr, never in --json output -----------------------------

def _with_tty_stderr(argv: list[str]) -> tuple[bytes, bytes]:
    """Run kisim with stderr on a pseudo-terminal and stdout on a pipe."""
    import pty
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kisim", *argv], stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read() if proc.stdout else b""
    proc.wait()
    os.close(master)
    return out, err


@pytest.mark.slow
def test_long_runs_show_a_spinner_on_a_terminal_and_json_stays_clean() -> None:
    # fib 21 runs about 2 s past the spinner's 0.5 s delay before its first line of
    # output (fib 18's 0.6-0.8 s left too little: one run in three fresh-clone checks
    # of 2026-11-29 drew no spinner)
    argv = ["ftrace", "--arch", A, "--workload", "fib", "--size", "21", "--limit", "1"]
    out, err = _with_tty_stderr(argv)
    assert b"kisim ftrace: running" in err and b"\x1b" not in out
    out, err = _with_tty_stderr(argv + ["--json"])
    assert b"running" not in err and json.loads(out)["events"] > 0


# -- issue 18: the build cache under concurrency --------------------------------------

@pytest.mark.slow
def test_concurrent_builds_of_one_arch_all_succeed(tmp_path) -> None:
    """Real processes building the same arch into one empty cache at once."""
    code = ("import sys; from kbuild import build; from sim.elf import read_elf; "
            "b = build(sys.argv[1], cache_dir=sys.argv[2]); read_elf(b.elf)")
    env = dict(os.environ, ZIG_GLOBAL_CACHE_DIR=str(tmp_path / "zig"),
               ZIG_LOCAL_CACHE_DIR=str(tmp_path / "zig"))
    procs = [subprocess.Popen([sys.executable, "-c", code, A, str(tmp_path / "cache")],
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    errors = [(p.wait(), p.stderr.read() if p.stderr else "") for p in procs]
    assert all(rc == 0 for rc, _ in errors), errors
    entries = [p.name for p in (tmp_path / "cache").iterdir()]
    assert len(entries) == 1 and not any(n.startswith("tmp-") for n in entries)


def test_a_second_install_keeps_the_sound_entry(tmp_path) -> None:
    from kbuild import cache
    final = tmp_path / "cache" / "k"
    entries = []
    for content in (b"first", b"second"):
        work = cache.new_work_dir(tmp_path / "cache", A)
        for name in cache.ENTRY_FILES:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_bytes(content)
        cache.write_meta(work, {"key": "k"})
        entries.append(cache.install(work, final, "k"))
    assert (final / "vmlinux").read_bytes() == b"first"     # never moved from under a reader
    assert entries[0] == entries[1]
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["k"]


def test_work_dirs_of_killed_builds_are_removed_and_live_ones_kept(tmp_path) -> None:
    import fcntl
    from kbuild import cache
    root = tmp_path / "cache"
    root.mkdir()
    killed = root / f"tmp-{A}-killed"
    (killed / "obj").mkdir(parents=True)
    live = root / f"tmp-{A}-live"
    live.mkdir()
    holder = os.open(live, os.O_RDONLY | os.O_DIRECTORY)      # a build still running
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        work = cache.new_work_dir(root, A)
        assert not killed.exists() and live.is_dir() and work.is_dir()
    finally:
        os.close(holder)
        cache.discard(work)
    cache.discard(cache.new_work_dir(root, A))                   # now its lock is free
    assert list(root.iterdir()) == []


@pytest.mark.slow
def test_a_keystone_hang_is_stopped(monkeypatch, capsys) -> None:
    """Keystone's parser never returns on `.endif ~0`: the CLI's child is killed."""
    from kisim.commands import asm as asm_cmd
    monkeypatch.setattr(asm_cmd, "KEYSTONE_SECONDS", 1.0)
    begin = time.monotonic()
    assert main(["asm", "--arch", A, ".endif ~0"]) == 2
    assert time.monotonic() - begin < 5
    err = capsys.readouterr().err
    assert "Keystone did not finish within 1 s" in err and len(err.strip().splitlines()) == 1
    assert main(["asm", "--arch", A, "nop; nop"]) == 0                # a child per call


# -- issue 26: nothing hangs, lies or damages -------------------------------------------

KISIM = [sys.executable, "-m", "kisim"]
LOOP = {"x86_64": "ebfe", "arm": "feffffea", "ppc32": "48000000"}     # branch to itself
#: Long runs, and when a signal reaches them: early (building, booting), and at
#: several points of the guest's run, where it lands in Unicorn's hooks. Each run
#: outlasts its last delay by 1.5 s or more on two idle cores (compare 8.5 s, ftrace
#: 8.7 s, tour 4.5 s); compare at its default size (5.4 s) and ftrace at fib 24
#: (4.2 s) left under a second, or ended before the last signal.
SIGNALED_RUNS = [(("compare", "--arch", "arm", "--size", "4000", "--out", "{tmp}/cmp"),
                  signal.SIGTERM, d) for d in (1.0, 2.0, 3.0, 4.5)] \
    + [(("ftrace", "--arch", "ppc32", "--workload", "fib", "--size", "26", "--limit", "1"),
        signal.SIGINT, d) for d in (1.5, 3.0, 5.0)] \
    + [(("tour", "--arch", "arm", "--no-pager"), signal.SIGINT, d) for d in (1.0, 2.0, 3.0)]


@pytest.mark.slow
@pytest.mark.parametrize("argv, sig, delay", SIGNALED_RUNS,
                         ids=[f"{a[0]}-{s.name}-{d}s" for a, s, d in SIGNALED_RUNS])
def test_a_signal_stops_a_long_run_wherever_it_lands(argv, sig, delay, tmp_path) -> None:
    """A signal inside a Unicorn hook used to be printed as "Exception ignored on
    calling ctypes callback function" and lost: the run went on and exited 0."""
    (tmp_path / "cmp").mkdir()
    before = _snapshot(tmp_path)
    proc = subprocess.Popen(KISIM + [a.format(tmp=tmp_path) for a in argv], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    assert proc.poll() is None, f"the run ended within {delay} s, before the signal: lengthen it"
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + sig, err
    assert err.strip() == ("kisim: interrupted" if sig == signal.SIGINT else "kisim: terminated")
    assert took < 3, f"took {took:.1f} s to stop"
    assert _snapshot(tmp_path) == before


#: Loaded by ``site`` before ``-m kisim`` runs: SIGINT is delivered inside a
#: string ``exec`` once kisim's handler is in place, as when a Ctrl-C lands
#: while a dataclass is being made at import.
_SIGINT_IN_A_STRING_EXEC = '''
import kisim.cli
_build = kisim.cli.build_parser
def build_parser():
    exec("import os, signal; os.kill(os.getpid(), signal.SIGINT)", {})
    return _build()
kisim.cli.build_parser = build_parser
'''


def test_python_m_kisim_exits_130_when_sigint_ended_a_string_exec(tmp_path) -> None:
    """CPython's ``-m`` path died of SIGINT (status -2, after "kisim: interrupted")
    when the KeyboardInterrupt had left a string exec, though kisim caught it."""
    (tmp_path / "sitecustomize.py").write_text(_SIGINT_IN_A_STRING_EXEC)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.run(KISIM + ["asm", "--arch", "arm", "nop"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr.strip()) == (130, "kisim: interrupted")


def test_a_signal_lost_in_a_callback_is_raised_at_the_next_slice(arch) -> None:
    """An exception raised where Python drops it (a weakref callback) comes back
    at the next slice boundary, and stops a slice running at that moment."""
    from sim import Machine, signals
    machine = Machine(arch.name)
    base = 0x10000
    machine.load_code(bytes.fromhex(LOOP[arch.name]), base)
    with pytest.raises(RuntimeError, match="the signal"):
        signals.arrived(RuntimeError("the signal"))
    try:
        with pytest.raises(RuntimeError, match="the signal"):
            machine.step(0, 1000)
        with pytest.raises(RuntimeError, match="the signal"):
            signals.raise_pending()
    finally:
        signals.clear()
    machine.step(0, 1000)                          # the signal handled: runs again


def test_a_signal_inside_a_hook_ends_the_slice_with_its_exception(arch) -> None:
    """The CLI's handler, with SIGTERM sent from inside a Unicorn hook: the slice
    stops there and ``Terminated`` comes out of the machine, not a ctypes warning."""
    from kisim.cli import _signals
    from kisim.errors import Terminated
    from sim import Machine
    machine = Machine(arch.name)
    base = 0x10000
    machine.load_code(bytes.fromhex(LOOP[arch.name]), base)
    hits: list[int] = []

    def hook(_cpu: object) -> None:
        hits.append(1)
        if len(hits) == 10:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)                       # the handler runs here, in the hook

    machine.watch(base, hook)
    with pytest.raises(Terminated), _signals():
        machine.step(0, 10 ** 9)
    assert 10 <= len(hits) < 1000                  # stopped in that slice, not at its end


@pytest.mark.parametrize("argv", [
    ["trace", "--arch", A, "--workload", "kmalloc", "--size", "3"],
    ["compare", "--arch", A, "--mechanism", "kprobe", "--size", "3"],
], ids=["trace", "compare"])
def test_an_out_dir_being_written_is_refused(argv, tmp_path, capsys) -> None:
    """Another run holds DIR (its lock): refused in one line before any run."""
    from tracing.outdir import OutDir
    out = tmp_path / "out"
    holder = OutDir(out)
    before = _snapshot(tmp_path)
    try:
        assert main([*argv, "--out", str(out), "--json"]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1 and "another kisim run is writing" in captured.err
        assert _snapshot(tmp_path) == before
    finally:
        holder.release()
    assert not out.exists()         # the lock file goes with the lock, and the empty DIR it made


@pytest.mark.slow
def test_two_traces_into_one_out_dir_never_mix(tmp_path) -> None:
    """Real processes at once: each exits 0 or is refused; DIR holds one whole trace."""
    out = tmp_path / "out"
    for cpus in ("4", "2"):
        procs = [subprocess.Popen(KISIM + ["trace", "--arch", arch, "--cpus", cpus, "--out",
                                           str(out), "--json"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for arch in ("arm", "x86_64")]
        results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
        assert all(rc in (0, 2) for rc, _, _ in results) and any(rc == 0 for rc, _, _ in results)
        for rc, stdout, err in results:
            if rc == 2:
                assert stdout == "" and err.count("\n") == 1 and "another kisim run" in err
        stamp = json.loads((out / ".kisim-trace").read_text())["files"]
        assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == stamp
        uuids = {(out / name).read_bytes()[4:20] for name in stamp if name != "metadata"}
        assert len(uuids) == 1                          # every stream from one run


# -- issue 26: a module's compile never hangs ------------------------------------------

RUN = "unsigned long run(unsigned long x) { return x; }\n"
SPECIAL_INCLUDES = {
    "dev-zero": '#include "/dev/zero"\n',
    "dev-urandom": '#include "/dev/urandom"\n',
    "fifo": '#include "{fifo}"\n',
    "dev-stdin": '#include "/dev/stdin"\n',
    "incbin-fifo": 'asm(".incbin \\"{fifo}\\"");\n',
    "relative-dev-zero": '#include "' + "../" * 40 + 'dev/zero"\n',
    "header-includes-fifo": '#include "local.h"\n',
}


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A build cache of the test's own (zig's caches stay shared: they are only caches)."""
    from kbuild.image import _zig_env, default_cache_dir
    for name in ("ZIG_GLOBAL_CACHE_DIR", "ZIG_LOCAL_CACHE_DIR"):
        monkeypatch.setenv(name, _zig_env(default_cache_dir())[name])
    monkeypatch.setenv("KISIM_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _module_dir(tmp_path: Path, source: str) -> Path:
    mod = tmp_path / "m"
    mod.mkdir()
    os.mkfifo(tmp_path / "fifo")
    (mod / "m.c").write_text(source.replace("{fifo}", str(tmp_path / "fifo")) + RUN)
    (mod / "local.h").write_text(f'#include "{tmp_path / "fifo"}"\n')
    return mod


@pytest.mark.slow
@pytest.mark.parametrize("source", SPECIAL_INCLUDES.values(), ids=SPECIAL_INCLUDES.keys())
def test_a_module_including_a_fifo_or_device_is_refused(source, tmp_path, private_cache,
                                                         capsys) -> None:
    mod = _module_dir(tmp_path, source)
    before = _snapshot(mod)
    assert main(["boot", "--arch", A, "--module", str(mod), "--workload", "m:run",
                 "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert "not a regular file; refused" in captured.err and str(mod) in captured.err
    assert _snapshot(mod) == before
    assert not [p for p in private_cache.iterdir() if p.name.startswith("tmp-")]


def _wchan_names() -> bool:
    """Whether /proc/PID/wchan names where a process sleeps (our parent, waiting on
    us: not "0", as it reads where the kernel hides it)."""
    try:
        return Path(f"/proc/{os.getppid()}/wchan").read_text() not in ("", "0")
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("target", ["/dev/zero", pytest.param("{fifo}", marks=pytest.mark.skipif(
    not _wchan_names(), reason="a FIFO's open is seen through /proc/PID/wchan"))],
                         ids=["device", "FIFO"])
def test_a_compiler_reading_a_device_or_fifo_is_stopped_at_once(target, tmp_path,
                                                                 private_cache, capsys) -> None:
    """An include made by a macro is not checked before it is compiled: the compiler
    seen holding the file open at two looks in a row is stopped then, not after the
    run's time limit (120 s)."""
    mod = _module_dir(tmp_path, f'#define F "{target}"\n#include F\n')
    begin = time.monotonic()
    assert main(["boot", "--arch", A, "--module", str(mod / "m.c"), "--workload",
                 "m:run"]) == 2
    assert time.monotonic() - begin < 30
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    read = "a FIFO" if target == "{fifo}" else target      # blocked in open(): no fd yet
    assert f"it was reading {read}, which is not a regular file" in err
    assert not [p for p in private_cache.iterdir() if p.name.startswith("tmp-")]


@pytest.mark.slow
def test_a_compiler_run_has_a_time_limit(tmp_path, private_cache, monkeypatch,
                                         capsys) -> None:
    """Whatever else keeps a tool running (here a read the poll is told to allow)
    ends at the time limit."""
    from kbuild import tools
    monkeypatch.setattr(tools, "TOOL_SECONDS", 2.0)
    monkeypatch.setattr(tools, "_STREAMS", tools._STREAMS | {"/dev/zero"})
    mod = _module_dir(tmp_path, '#define F "/dev/zero"\n#include F\n')
    assert main(["boot", "--arch", A, "--module", str(mod / "m.c"), "--workload",
                 "m:run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stopped after 2 s (the time limit" in err, err
    assert not [p for p in private_cache.iterdir() if p.name.startswith("tmp-")]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_hung_compile_and_its_compiler(sig, tmp_path, private_cache) -> None:
    mod = _module_dir(tmp_path, '#define F "{fifo}"\n#include F\n')
    proc = subprocess.Popen(KISIM + ["boot", "--arch", A, "--module", str(mod / "m.c"),
                                     "--workload", "m:run"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    deadline = time.monotonic() + 120
    while (not _compilers_of(proc.pid, "module__m") and proc.poll() is None
           and time.monotonic() < deadline):
        time.sleep(0.2)
    groups = _compilers_of(proc.pid, "module__m")
    if not groups:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the module's compiler never started (kisim exit {proc.returncode}): "
                    f"{out[-2000:]}{err[-2000:]}")
    time.sleep(1)                                   # the FIFO's open is blocking now
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + sig and "Traceback" not in err, err
    assert not _group_members(groups)
    assert not [p for p in private_cache.iterdir() if p.name.startswith("tmp-")]


def _compilers_of(parent: int, compiling: str) -> set[int]:
    """The process groups of ``parent``'s children (each tool runs in its own) whose
    command line names ``compiling``: the module's compiler, not one of the short
    compiles of the kernel that a cold cache runs first (one of those, seen by the
    wait and gone by the next look, failed the test once)."""
    groups = set()
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != parent:             # ppid
                continue
            command = (stat_file.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if compiling.encode() in command:
            groups.add(int(fields[2]))               # pgrp
    return groups - {os.getpgid(parent)}


def _group_members(groups: set[int]) -> list[int]:
    members = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) in groups and fields[0] != "Z":
            members.append(int(stat_file.parent.name))
    return members


# -- issue 26: a module whose init fails is not loaded ----------------------------------

FAILING = r"""
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/errno.h>

static unsigned long hits;

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	return 0;
}

static struct kprobe kp = { .symbol_name = "kmalloc", .pre_handler = count_pre };

unsigned long failing_run(unsigned long size)
{
	return size + hits;
}

static int __init failing_init(void)
{
	register_kprobe(&kp);
	return -EINVAL;
}
module_init(failing_init);
"""


@pytest.fixture
def failing_module(tmp_path: Path) -> Path:
    path = tmp_path / "failing.c"
    path.write_text(FAILING)
    return path


@pytest.mark.slow
def test_a_failed_module_init_is_reported_and_its_kprobe_undone(arch, failing_module) -> None:
    import probes.kprobes  # noqa: F401  (serves the module's register_kprobe)
    from kbuild import build
    from sim.guest import Guest
    guest = Guest(build(arch.name, modules=[failing_module]), workload="kmalloc", size=5)
    result = guest.run()
    assert [f.to_json() for f in result.failed_modules] == [
        {"name": "failing", "error": -22, "errno": "EINVAL"}]
    assert result.checksum_ok and not result.ok
    kprobes = guest.services["KPROBE"].__self__
    # unregistered before the workload: only what the kernel registers itself stays
    assert list(kprobes.probes.values()) == list(kprobes.arch_probes)
    assert set(kprobes._by_struct.values()) == set(kprobes.arch_probes)


@pytest.mark.slow
def test_a_failed_module_init_on_the_cli(failing_module, capsys) -> None:
    argv = ["boot", "--arch", A, "--module", str(failing_module)]
    assert main([*argv, "--workload", "kmalloc", "--size", "5", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["failed_modules"][0]["name"] == "failing"
    assert main([*argv, "--workload", "kmalloc", "--size", "5"]) == 1
    err = capsys.readouterr().err
    assert err == "kisim: module failing: init failed with -22 (EINVAL); not loaded\n"
    # its functions are gone: one of them as the workload is a guest fault
    assert main([*argv, "--workload", "failing:failing_run", "--json"]) == 1
    captured = capsys.readouterr()
    fault = json.loads(captured.out)["fault"]
    assert "init failed with -22 (EINVAL)" in fault["reason"]
    assert "cannot be the workload" in fault["reason"]


# -- issue 26: kprobe --handler ---------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("handler, message", [("", "the handler name is empty"),
                                              ("boot_params", "'boot_params' is data")],
                         ids=["empty", "data symbol"])
def test_a_handler_that_is_no_function_is_refused(handler, message, capsys) -> None:
    assert main(["kprobe", "--arch", A, "--at", "kmalloc", "--size", "3", "--handler",
                 handler, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err


@pytest.mark.slow
@pytest.mark.parametrize("name", ["arm", "ppc32", "x86_64"])
def test_a_faulting_handler_is_a_guest_fault(name, tmp_path, capsys) -> None:
    module = tmp_path / "h.c"
    module.write_text("#include <linux/kprobes.h>\n"
                      "int bad_pre(struct kprobe *p, struct pt_regs *regs)\n"
                      "{\n\treturn *(volatile int *)0x10;\n}\n")
    assert main(["kprobe", "--arch", name, "--module", str(module), "--at", "kmalloc",
                 "--size", "3", "--handler", "bad_pre", "--json"]) == 1
    fault = json.loads(capsys.readouterr().out)["fault"]
    assert fault["arch"] == name and fault["reason"]


# -- issue 26: sizes and paths of modules -----------------------------------------------

@pytest.mark.slow
def test_a_module_over_the_image_size_limit_is_refused(tmp_path, private_cache,
                                                       capsys) -> None:
    mod = tmp_path / "big.c"
    mod.write_text("char big[512UL << 20];\n"
                   "unsigned long run(unsigned long x) { big[x] = 1; return big[x / 2]; }\n")
    assert main(["boot", "--arch", A, "--module", str(mod), "--workload", "big:run",
                 "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert str(mod) in captured.err and "the limit is 256 MiB" in captured.err
    assert not [p for p in private_cache.iterdir() if p.name.startswith("tmp-")]


def test_machine_memory_has_a_limit() -> None:
    from sim import Machine
    from sim.errors import ConfigError
    machine = Machine("x86_64")
    with pytest.raises(ConfigError, match="the limit is 1024 MiB"):
        machine.map(0x100000, 1 << 40)
    machine.map(0x100000, 1 << 20)                  # the refusal mapped nothing


def test_a_module_path_with_a_newline_is_refused(tmp_path, capsys) -> None:
    mod = tmp_path / "new\nline" / "m.c"
    mod.parent.mkdir()
    mod.write_text(RUN)
    assert main(["boot", "--arch", A, "--module", str(mod), "--workload", "m:run",
                 "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert repr(str(mod)) in captured.err and "control character" in captured.err


def test_a_cache_path_with_a_newline_is_refused(tmp_path, monkeypatch, capsys) -> None:
    cache = tmp_path / "ca\nche"
    monkeypatch.setenv("KISIM_CACHE", str(cache))
    assert main(["boot", "--arch", A, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "$KISIM_CACHE" in captured.err and repr(str(cache)) in captured.err
    assert not cache.exists()


# -- issue 26: earlier surfaces ---------------------------------------------------------

@pytest.mark.parametrize("digits", [400, 5000])
def test_a_cost_model_integer_of_many_digits_is_one_line(digits, tmp_path, capsys) -> None:
    model = tmp_path / "cost.toml"
    model.write_text(f"[default]\ninsn = {'9' * digits}\n")
    before = _snapshot(tmp_path)
    assert main(["compare", "--arch", A, "--cost-model", str(model), "--out",
                 str(tmp_path / "out"), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert str(model) in captured.err and len(captured.err) < 400
    assert _snapshot(tmp_path) == before


def test_input_nested_past_the_parser_is_one_line(kmem_trace, tmp_path, capsys) -> None:
    """JSON and TOML nested deeper than Python's parsers recurse (RecursionError, not
    a ValueError): a trace stamp read by kmemtrace and by a trace writing over it,
    and a cost model."""
    trace = _copy(kmem_trace, tmp_path / "t")
    (trace / ".kisim-trace").write_text("[" * 2000 + "]" * 2000)
    model = tmp_path / "deep.toml"
    model.write_text("a = " + "[" * 1000 + "]" * 1000 + "\n")
    for argv in (["kmemtrace", "report", str(trace)],
                 ["trace", "--arch", A, "--size", "5", "--out", str(trace)],
                 ["compare", "--arch", A, "--cost-model", str(model), "--out",
                  str(tmp_path / "out")]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("trace stamp" in err or "nested too deeply" in err), err


def test_a_protocol_whose_error_cannot_be_printed_is_one_line(tmp_path, monkeypatch,
                                                              capsys) -> None:
    """The user's exception's own __str__ raising is still the protocol's failure."""
    (tmp_path / "badstr.py").write_text(
        "class E(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
        "def p(port, sites):\n    raise E()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "badstr", raising=False)
    assert main(["patchcheck", "--arch", A, "--seeds", "2", "--protocol", "badstr:p"]) == 2
    assert capsys.readouterr().err == ("kisim: error: --protocol badstr:p: raised E: (its "
                                       "message could not be printed)\n")


@pytest.mark.parametrize("argv", [["asm", "--arch", A, "-f", "-"],
                                  ["menuconfig", "--arch", A, "--config", "x.cfg"]])
def test_a_closed_stdin_is_one_line(argv, tmp_path, monkeypatch, capsys) -> None:
    """``0<&-``: Python's sys.stdin is None."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", None)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("standard input is closed" in err
                                      or "needs a terminal" in err), err


@pytest.mark.parametrize("body, message", [
    pytest.param("while True:\n    pass\n", "importing badproto did not return within 2 s",
                 marks=pytest.mark.slow),           # waits out the 2 s timeout
    ("import sys\nsys.exit(3)\n", "importing badproto called sys.exit(3)"),
], ids=["loops", "sys.exit"])
def test_a_protocol_import_is_under_the_protocol_timeout(body, message, tmp_path,
                                                         monkeypatch, capsys) -> None:
    (tmp_path / "badproto.py").write_text(body + "def p(port, sites):\n    pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "badproto", raising=False)
    begin = time.monotonic()
    assert main(["patchcheck", "--arch", A, "--seeds", "2", "--protocol", "badproto:p",
                 "--protocol-timeout", "2"]) == 2
    assert time.monotonic() - begin < 10
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


#: Where a byte is flipped, and whether the stamp is kept. Without it the structure
#: and kisim's fixed text are checked; the run's own names and values (an event's
#: name, kisim_workload) only by the stamp's SHA-256.
FLIPS = [(needle, True) for needle in ('"arm"', "hostname", "kmem_kmalloc", "size = 32",
                                       "kisim_workload")] \
    + [(needle, False) for needle in ('"arm"', "hostname", "size = 32")]


@pytest.mark.parametrize("needle, stamped", FLIPS,
                         ids=[f"{n}-{'stamped' if s else 'no stamp'}" for n, s in FLIPS])
def test_kmemtrace_refuses_metadata_with_a_flipped_byte(kmem_trace, tmp_path, capsys,
                                                        needle, stamped) -> None:
    trace = _copy(kmem_trace, tmp_path / "t")
    if not stamped:
        (trace / ".kisim-trace").unlink()
    meta = bytearray((trace / "metadata").read_bytes())
    at = meta.index(needle.encode()) + 1
    meta[at] ^= 0x04
    (trace / "metadata").write_bytes(bytes(meta))
    assert "corrupt metadata" in _report(trace, capsys)


def test_kmemtrace_refuses_a_stream_that_is_a_directory(kmem_trace, tmp_path, capsys) -> None:
    trace = _copy(kmem_trace, tmp_path / "t")
    (trace / "channel0_1").mkdir()
    assert "must be a regular file" in _report(trace, capsys)


# -- issue 26: the build cache is verified, never trusted -------------------------------

def _corrupt_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _corrupt_device(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _corrupt_sparse(path: Path) -> None:
    with open(path, "r+b") as f:
        f.truncate(64 << 30)


def _corrupt_entry_link(path: Path) -> None:
    entry = path.parent
    shutil.rmtree(entry)
    entry.symlink_to(entry.with_name("nowhere"))


CACHE_DAMAGE = [("build.json", _corrupt_fifo, "build.json is not a regular file"),
                ("build.json", _corrupt_device, "build.json is a symbolic link"),
                ("vmlinux", _corrupt_sparse, "vmlinux is 68719476736 bytes"),
                ("build.json", _corrupt_entry_link, "not a directory")]


def _boot_with_cache(cache: Path) -> subprocess.CompletedProcess[str]:
    from kbuild.image import _zig_env, default_cache_dir
    env = dict(os.environ, KISIM_CACHE=str(cache))
    for name in ("ZIG_GLOBAL_CACHE_DIR", "ZIG_LOCAL_CACHE_DIR"):
        env[name] = _zig_env(default_cache_dir())[name]
    return subprocess.run(KISIM + ["boot", "--arch", A, "--size", "3", "--json"], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("name, damage, why", CACHE_DAMAGE,
                         ids=["fifo", "link to a device", "sparse 64 GiB", "entry is a link"])
@pytest.mark.parametrize("entry", ["kernel", "host hook"])
def test_a_corrupt_cache_entry_is_rebuilt_in_one_line(tmp_path, name, damage, why,
                                                      entry) -> None:
    cache = tmp_path / "cache"
    assert _boot_with_cache(cache).returncode == 0
    (cache / "tmp-x86_64-dead").symlink_to(tmp_path / "nowhere")   # a killed build's, dangling
    prefix = "host-" if entry == "host hook" else ""
    found = [p for p in cache.iterdir() if (p.name.startswith("host-") == bool(prefix))
             and not p.name.startswith(("tmp-", "zig")) and p.is_dir()]
    assert len(found) == 1
    target = found[0] / ("lib.so" if entry == "host hook" and name == "vmlinux" else name)
    damage(target)
    proc = _boot_with_cache(cache)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("\n") == 1 and "was corrupt" in proc.stderr
    assert why.replace("vmlinux", target.name) in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True


# -- issue 26: guest misuse of the module API is the guest's fault ----------------------

WILD = r"""
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/marker.h>
#include <linux/tracepoint.h>

unsigned long kp(unsigned long x) { return register_kprobe((struct kprobe *)0); }
unsigned long kps(unsigned long x) { return register_kprobes((struct kprobe **)0x7ff0000, 2); }
unsigned long krp(unsigned long x) { return register_kretprobe((struct kretprobe *)0x10); }
unsigned long mk(unsigned long x) { return marker_probe_register((const char *)0x7ff0000, "", 0, 0); }
unsigned long tp(unsigned long x) { return tracepoint_probe_register((const char *)0, 0); }
"""


@pytest.mark.slow
@pytest.mark.parametrize("func", ["kp", "kps", "krp", "mk", "tp"])
def test_a_wild_pointer_to_the_module_api_is_a_guest_fault(func, tmp_path, capsys) -> None:
    import probes.kprobes  # noqa: F401  (serves register_kprobe)
    module = tmp_path / "wild.c"
    module.write_text(WILD)
    assert main(["boot", "--arch", A, "--module", str(module), "--workload", f"wild:{func}",
                 "--json"]) == 1
    captured = capsys.readouterr()
    fault = json.loads(captured.out)["fault"]
    assert "unmapped memory" in fault["reason"] and captured.err.count("\n") == 1


# -- issue 26: the Python API validates its arguments -----------------------------------

def _machine():
    from sim import Machine
    machine = Machine("x86_64")
    machine.map(0x100000, 0x10000)
    return machine


API_MISUSE = [
    ("Machine.map 1 TiB", lambda m: m.map(0x200000, 1 << 40), "ConfigError", "limit"),
    ("load_code(str)", lambda m: m.load_code("nop", 0x300000), "TypeError", "bytes"),
    ("write_word size 0", lambda m: m.write_word(0x100000, 1, size=0), "ConfigError", "1, 2"),
    ("write_word size 3", lambda m: m.write_word(0x100000, 1, size=3), "ConfigError", "1, 2"),
    ("read_word size 3", lambda m: m.read_word(0x100000, size=3), "ConfigError", "1, 2"),
    ("set_reg str", lambda m: m.cpus[0].set_reg("rax", "1"), "TypeError", "int"),
    ("set_reg wide", lambda m: m.cpus[0].set_reg("rax", 1 << 64), "ConfigError", "64 bits"),
    ("set_reg unknown", lambda m: m.cpus[0].set_reg("nope", 1), "ConfigError", "no register"),
    ("charge negative", lambda m: m.cpus[0].charge("trap", -1), "ConfigError", "takes back"),
    ("charge unknown", lambda m: m.cpus[0].charge("nope"), "ConfigError", "unknown event"),
    ("flush_icache end<begin", lambda m: m.flush_icache(0x100010, 0x100000), "ConfigError",
     "not a range"),
    ("watch 2^64", lambda m: m.watch(1 << 64, lambda cpu: None), "ConfigError", "outside"),
]


@pytest.mark.parametrize("call, kind, message", [c[1:] for c in API_MISUSE],
                         ids=[c[0] for c in API_MISUSE])
def test_machine_api_misuse_is_one_documented_error(call, kind, message) -> None:
    machine = _machine()
    with pytest.raises(Exception) as info:
        call(machine)
    assert type(info.value).__name__ == kind and message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("options, message", [
    ({"subbuf_size": "4096"}, "subbuf_size must be an integer"),
    ({"subbufs": 8.0}, "subbufs must be an integer"),
    ({"drain_every": 0}, "at least 1 turn"), ({"drain_every": -3}, "at least 1 turn"),
])
def test_trace_options_are_validated(options, message) -> None:
    from tracing.errors import TraceError
    from tracing.session import TraceOptions
    with pytest.raises(TraceError, match=message):
        TraceOptions(("kmem",), **options)


def test_build_guest_and_sweep_arguments_are_validated() -> None:
    from kbuild import build
    from patchcheck.sites import CheckerError
    from patchcheck.sweep import CheckSpec, sweep
    from sim.guest import Guest, WorkloadError
    with pytest.raises(TypeError, match="overrides must be a mapping"):
        build(A, overrides=["MARKERS=n"])
    kernel = build(A)
    with pytest.raises(WorkloadError, match="size must be an integer, not float"):
        Guest(kernel, workload="kmalloc", size=2.5)
    with pytest.raises(TypeError, match="cpus must be an int"):
        Guest(kernel, workload="kmalloc", cpus="2")
    with pytest.raises(CheckerError, match="cannot be sent to worker processes"):
        sweep(CheckSpec(A, protocol=lambda port, sites: None), range(200), jobs=2)


@pytest.mark.parametrize("text", [None, 5])
def test_an_ftrace_filter_that_is_not_text_is_einval(text) -> None:
    from kbuild import build
    from patcher.errors import PatchError
    from patcher.ftrace import ftrace_for
    from patcher.tables import load_tables
    from sim.guest import Guest
    kernel = build(A)
    guest = Guest(kernel, workload="kmalloc", size=3)
    ft = ftrace_for(guest, load_tables(kernel.elf, kernel.spec))
    with pytest.raises(PatchError, match="takes text, not"):
        ft.write_filter(text)


# -- issue 26 on the Python API: the same inputs, the same one-line errors --------------

def test_compare_refuses_to_overwrite_a_users_compare_json(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "compare.json").write_text("mine\n")
    assert main(["compare", "--arch", A, "--mechanism", "kprobe", "--size", "3",
                 "--out", str(out), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "which kisim did not write" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["compare.json"]
    assert (out / "compare.json").read_text() == "mine\n"


@pytest.mark.slow
def test_module_misuse_on_the_api(tmp_path, failing_module) -> None:
    import probes.kprobes  # noqa: F401  (serves register_kprobe)
    from kbuild import ModuleError, build
    from lab.kprobe import measure_kprobe
    from patcher.errors import PatchError
    from sim.errors import GuestFault
    from sim.guest import Guest
    zero = tmp_path / "zero.c"
    zero.write_text('#include "/dev/zero"\n' + RUN)
    with pytest.raises(ModuleError, match="is a device, not a regular file"):
        build(A, modules=[zero])
    newline = tmp_path / "a\nb" / "m.c"
    newline.parent.mkdir()
    newline.write_text(RUN)
    with pytest.raises(ModuleError, match="control character"):
        build(A, modules=[newline])
    with pytest.raises(PatchError, match="handler name is empty"):
        measure_kprobe(A, "kmalloc", handler="")
    wild = tmp_path / "wild.c"
    wild.write_text(WILD)
    with pytest.raises(GuestFault, match="unmapped memory"):
        Guest(build(A, modules=[wild]), workload="wild:kp").run()
    guest = Guest(build(A, modules=[failing_module]), workload="failing:failing_run")
    with pytest.raises(GuestFault, match="cannot be the workload"):
        guest.run()


def test_earlier_surfaces_on_the_api(tmp_path, kmem_trace, monkeypatch) -> None:
    from lab.measure import CompareError, load_cost_model
    from patchcheck.guard import ProtocolError
    from patchcheck.sweep import load_protocol
    from tracing.ctfread import CtfTrace
    from tracing.errors import TraceError
    model = tmp_path / "cost.toml"
    model.write_text(f"[default]\ninsn = {'9' * 500}\n")
    with pytest.raises(CompareError, match="expected a finite number"):
        load_cost_model(model, tuple(NAMES))
    (tmp_path / "exits.py").write_text("raise SystemExit(4)\ndef p(port, sites):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "exits", raising=False)
    with pytest.raises(ProtocolError, match=r"called sys.exit\(4\)"):
        load_protocol("exits:p", timeout=2)
    trace = _copy(kmem_trace, tmp_path / "t")
    (trace / "channel0_9").mkdir()
    with pytest.raises(TraceError, match="must be a regular file"):
        CtfTrace(trace)


def test_a_cache_entry_is_verified_on_the_api(tmp_path) -> None:
    from kbuild import cache
    entry = tmp_path / "key"
    entry.mkdir()
    os.mkfifo(entry / "build.json")
    assert cache.verify(entry, "key") == (None, "build.json is not a regular file")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    assert cache.verify(tmp_path / "link", "link") == (None, "not a directory")


@pytest.mark.parametrize("make, message", [
    (lambda kp: kp.Kprobe(addr="kmalloc"), "Kprobe.addr must be an int or None, not str"),
    (lambda kp: kp.Kprobe(addr=1.5), "Kprobe.addr must be an int or None, not float"),
    (lambda kp: kp.Kprobe(symbol_name=7), "Kprobe.symbol_name must be a str or None"),
    (lambda kp: kp.Kprobe(symbol_name="kmalloc", offset="4"), "Kprobe.offset must be an int"),
    (lambda kp: kp.Kretprobe(maxactive="3"), "Kretprobe.maxactive must be an int, not str"),
    (lambda kp: kp.Kretprobe(data_size=None), "Kretprobe.data_size must be an int"),
])
def test_kprobe_structs_refuse_wrong_types(make, message) -> None:
    """struct kprobe / struct kretprobe as a caller fills them: one TypeError line."""
    import probes.kprobes as kp
    with pytest.raises(TypeError) as info:
        make(kp)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("sizes, message", [
    ({"subbuf_size": "4096", "nr_subbufs": 4}, "subbuf_size must be an integer, not str"),
    ({"subbuf_size": 4096, "nr_subbufs": 4.0}, "nr_subbufs must be an integer, not float"),
])
def test_ring_buffers_installed_directly_validate_their_sizes(sizes, message) -> None:
    from sim import Machine
    from tracing.errors import TraceError
    from tracing.ring import RingBuffers
    with pytest.raises(TraceError, match=message):
        RingBuffers.install(Machine("x86_64"), 0x1000, 0x200000, mode="discard",
                            max_record=64, **sizes)


def test_a_kprobe_offset_past_any_text_is_the_kernels_einval(capsys) -> None:
    """kmalloc+4 GiB: register_kprobe's -EINVAL (not in kernel text), not the host's
    failed read of the bytes there."""
    assert main(["kprobe", "--arch", A, "--at", "kmalloc+0x100000000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "EINVAL" in err and "not in a kernel text function" in err


def test_a_run_that_writes_no_trace_leaves_no_directory_it_made(tmp_path) -> None:
    """The directories a claim made go again when the run ends without a trace (an
    error, Ctrl-C), if nothing is in them; one the user had, or a written trace, stays."""
    from tracing.outdir import OutDir
    OutDir(tmp_path / "a" / "b").release()
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "mine").mkdir()
    OutDir(tmp_path / "mine" / "t").release()
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]
    assert not any((tmp_path / "mine").iterdir())
    kept = OutDir(tmp_path / "mine" / "t")
    (tmp_path / "mine" / "t" / "metadata").write_text("x")
    kept.commit([tmp_path / "mine" / "t" / "metadata"])
    assert sorted(p.name for p in (tmp_path / "mine" / "t").iterdir()) == [".kisim-trace",
                                                                       "metadata"]


@pytest.mark.parametrize("argv, name", [
    (["ftrace", "--arch", A, "--workload", "kmalloc", "--size", "20", "--format", "trace-cmd"],
     "trace.dat"),
    (["trace", "--arch", A, "--workload", "kmalloc", "--size", "20"], "channel0_0")])
def test_a_full_disk_names_the_file_and_leaves_no_directory(argv, name, tmp_path, monkeypatch,
                                                            capsys) -> None:
    """ENOSPC from a write or from the close's flush carries no file name: the error
    names the output, and the --out directory the run made goes again."""
    import errno
    import io
    real = os.fdopen

    class Full(io.RawIOBase):
        def __init__(self, fd: int) -> None:
            self.file = real(fd, "wb", buffering=0)

        def writable(self) -> bool:
            return True

        def write(self, data) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def close(self) -> None:
            self.file.close()
            super().close()

    monkeypatch.setattr(os, "fdopen", lambda fd, mode="r", *a, **k:
                        io.BufferedWriter(Full(fd)) if "w" in mode else real(fd, mode, *a, **k))
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"kisim: error: {out / name}: cannot write it: No space left on device\n"
    assert not out.exists()
