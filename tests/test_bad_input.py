"""Bad input across the CLI: one line on stderr, the right exit code, no traceback.

Each case runs ``kisim`` in-process (``kisim.cli.main``) from a scratch
directory holding a few fixture files; ``{dir}``, ``{fifo}``, ``{bin}``,
``{latin1}``, ``{bad}`` and ``{missing}`` are replaced by their paths.
"""
from __future__ import annotations

import json
import os
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
    # issue 18: the newer commands' bad arguments (tour, probe, kprobe, kmemtrace)
    ("tour", "--arch", ""), ("tour", "--arch", "vax"),
    ("probe", "--arch", A, "--workload", "kmalloc", "kernel/slab.c:\u00b2"),
    ("probe", "--arch", A, "--workload", "kmalloc", "kernel/slab.c:\u0663"),
    ("probe", "--arch", A, "--workload", "kmalloc", "kernel/slab.c:0"),
    ("kprobe", "--arch", A, "--at", "kmalloc+zz"), ("kprobe", "--arch", A, "--at", "\u00b2"),
    ("kmemtrace", "report", "{dir}", "--limit", "0"), ("kmemtrace", "report", "{dir}"),
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
    meta = (trace / "metadata").read_text()
    (trace / "metadata").write_text(meta.replace("} _ptr;", "} _pointer;"))
    assert "has no integer field ptr" in _report(trace, capsys)


def test_read_elf_refuses_a_fifo(tmp_path) -> None:
    from sim.elf import read_elf
    from sim.errors import ConfigError
    os.mkfifo(tmp_path / "vmlinux")
    with pytest.raises(ConfigError, match="FIFO"):
        read_elf(tmp_path / "vmlinux")


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
    # fib 18 runs well past the spinner's 0.5 s delay before its first line of output
    argv = ["ftrace", "--arch", A, "--workload", "fib", "--size", "18", "--limit", "1"]
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
