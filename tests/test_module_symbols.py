"""Naming a module's symbols: MOD:FUNC workloads, MOD:SYM probes and handlers,
ambiguous names refused with their candidates, no module redefining a kernel
symbol, ``kisim symbols``, ``kisim kprobe --every-instruction`` and the
``unsigned long FUNC(unsigned long)`` workload signature (issue 26, section 2).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import patcher.instrument  # noqa: F401  (serves static keys, markers, tracepoints)
import probes.kprobes  # noqa: F401  (serves the kprobe API)
from arches import NAMES, get_arch
from kbuild import ModuleError, build
from kisim.cli import main
from lab.transparency import every_instruction
from patcher.errors import PatchError
from probes.kprobes import Kprobe, Kprobes
from sim.elf import SymbolError
from sim.guest import Guest, WorkloadError

pytestmark = pytest.mark.slow

#: Two modules with a static run() each (noinline: a symbol of its own), and a
#: third whose run() is blacklisted.
SOURCES = {
    "alpha": r"""
#include <linux/module.h>
static noinline unsigned long run(unsigned long n) { return n * 3 + 1; }
unsigned long alpha_main(unsigned long n) { return run(n); }
""",
    "beta": r"""
#include <linux/module.h>
static noinline unsigned long run(unsigned long n) { return n * 5 + 2; }
unsigned long beta_main(unsigned long n)
{
	unsigned long s = 0, i;

	for (i = 0; i < n; i++)
		s += run(i) ^ (s << 3);
	return s;
}
""",
    "gamma": r"""
#include <linux/module.h>
#include <linux/kprobes.h>
static noinline unsigned long hidden(unsigned long n) { return n + 1; }
NOKPROBE_SYMBOL(hidden);
unsigned long wide(unsigned long n) { return hidden(n) | (~0UL << 28); }
""",
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    where = tmp_path_factory.mktemp("mods")
    paths = []
    for name, text in SOURCES.items():
        (where / f"{name}.c").write_text(text)
        paths.append(where / f"{name}.c")
    return paths


def beta_reference(n: int, bits: int = 64) -> int:
    """beta_main(n) in unsigned longs of ``bits``."""
    s, mask = 0, (1 << bits) - 1
    for i in range(n):
        s = (s + ((i * 5 + 2) ^ (s << 3))) & mask
    return s


@pytest.mark.parametrize("arch", NAMES)
def test_module_workload_runs_that_modules_function(arch: str, sources: list[Path]) -> None:
    kernel = build(arch, modules=sources)
    for workload, want in (("alpha:run", 3 * 7 + 1), ("beta:run", 5 * 7 + 2)):
        assert Guest(kernel, workload=workload, size=7).run().checksum == want
    for workload in ("beta:schedule", "beta:alpha_main", "alpha:hidden"):
        with pytest.raises(WorkloadError, match=f"has no function '{workload.split(':')[1]}'"):
            Guest(kernel, workload=workload)


@pytest.mark.parametrize("arch", NAMES)
def test_ambiguous_names_are_refused_and_mod_sym_disambiguates(arch: str,
                                                                 sources: list[Path]) -> None:
    guest = Guest(build(arch, modules=sources), workload="beta:beta_main", size=5)
    symbols = guest.image.symbols
    with pytest.raises(SymbolError, match=r"'run' is ambiguous: 2 definitions .*module alpha"
                                          r".*module beta.*MODULE:run"):
        symbols["run"]
    assert "run" in symbols and symbols["alpha:run"] != symbols["beta:run"]
    assert symbols.get("gamma:run") is None and symbols["schedule"]
    kprobes = Kprobes(guest)
    with pytest.raises(PatchError, match="ambiguous") as err:
        kprobes.register_kprobe(Kprobe(symbol_name="run", pre_handler="kprobe_empty_pre_handler"))
    assert err.value.errno == "EINVAL"
    with pytest.raises(PatchError, match="ambiguous"):
        kprobes.register_kprobe(Kprobe(symbol_name="kmalloc", pre_handler="run"))
    kp = kprobes.register_kprobe(Kprobe(symbol_name="beta:run",
                                        pre_handler="kprobe_empty_pre_handler"))
    assert kp.addr == symbols["beta:run"]
    assert guest.run().checksum == beta_reference(5, guest.arch.bits)
    assert kp.hits == 5


def test_kprobe_at_mod_sym_from_the_cli(sources: list[Path],
                                        capsys: pytest.CaptureFixture) -> None:
    mods = [a for p in sources for a in ("--module", str(p))]
    common = ["kprobe", "--arch", "x86_64", *mods, "--workload", "beta:beta_main",
              "--size", "6", "--cycles", "count"]
    assert main([*common, "--at", "run"]) == 2
    err = capsys.readouterr().err
    assert "'run' is ambiguous" in err and "module alpha" in err and "module beta" in err
    assert main([*common, "--at", "beta:run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"] == 6
    assert main([*common, "--at", "kmalloc", "--handler", "run"]) == 2
    assert "ambiguous" in capsys.readouterr().err


@pytest.mark.parametrize("arch", NAMES)
def test_a_module_may_not_redefine_a_kernel_symbol(arch: str, tmp_path: Path) -> None:
    clash = tmp_path / "clash.c"
    clash.write_text("long sys_getppid(long a0, long a1, long a2) { return 42; }\n")
    with pytest.raises(ModuleError, match=r"clash\.c: duplicate symbol: sys_getppid "
                                          r"\(the kernel defines it in kernel/syscall\.c"):
        build(arch, modules=[clash])
    both_static = tmp_path / "quiet.c"          # static in both: linked, the name ambiguous
    both_static.write_text("#include <linux/module.h>\n"
                           "static noinline __attribute__((used)) long sys_getppid(long n)\n"
                           "{ return n * 3 + 1; }\n"
                           "long quiet_run(long n) { return sys_getppid(n); }\n")
    guest = Guest(build(arch, modules=[both_static]), workload="quiet:quiet_run", size=3)
    with pytest.raises(SymbolError, match=r"2 definitions \(0x\w+ in module quiet, "
                                          r"0x\w+ in the kernel \(syscall\.c\)\)"):
        guest.image.symbols["sys_getppid"]
    assert guest.image.symbols["quiet:sys_getppid"] and guest.run().checksum == 10


@pytest.mark.parametrize("arch", NAMES)
def test_symbols_lists_functions_and_probeability(arch: str, sources: list[Path],
                                                  capsys: pytest.CaptureFixture) -> None:
    mods = [a for p in sources for a in ("--module", str(p))]
    assert main(["symbols", "--arch", arch, *mods, "gamma", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["functions"]}
    assert set(rows) == {"hidden", "wide"}
    assert rows["wide"]["probeable"] and rows["wide"]["size"] > 0
    assert not rows["hidden"]["probeable"]
    assert "NOKPROBE_SYMBOL(hidden)" in rows["hidden"]["reason"]
    assert main(["symbols", "--arch", arch, *mods]) == 0
    out = capsys.readouterr().out
    assert "alpha:run" in out and "beta:run" in out and "no: EINVAL" in out
    assert main(["symbols", "--arch", arch, *mods, "delta"]) == 2
    assert "no module 'delta'" in capsys.readouterr().err


@pytest.mark.parametrize("arch", NAMES)
@pytest.mark.parametrize("mode", ["pre", "post", "ret", "opt"])
def test_every_instruction_of_a_module_is_transparent(arch: str, mode: str,
                                                      sources: list[Path]) -> None:
    if mode == "opt" and "optprobes" not in get_arch(arch).capabilities:
        pytest.skip(f"no optprobes on {arch}")
    found = every_instruction(build(arch, modules=sources), "beta", workload="beta:beta_main",
                              size=9, mode=mode, expect=beta_reference(9, get_arch(arch).bits))
    assert found.ok, found.mismatches[:3]
    assert found.functions == 2 and found.probed > 10
    assert all("ftrace (mcount) site" in r.reason for r in found.refused)   # ARM, PowerPC
    assert found.hits == found.counted > 9 and found.nmissed == 0
    if mode == "opt" and arch == "x86_64":
        assert found.optimized > 0 and found.batches > 1


def test_every_instruction_from_the_cli(sources: list[Path],
                                        capsys: pytest.CaptureFixture) -> None:
    mods = [a for p in sources for a in ("--module", str(p))]
    assert main(["kprobe", "--arch", "arm", *mods, "--every-instruction", "gamma",
                 "--workload", "gamma:wide", "--size", "3"]) == 0
    out = capsys.readouterr().out
    assert "mismatches    0" in out and "NOKPROBE_SYMBOL(hidden)" in out
    assert main(["kprobe", "--arch", "ppc32", *mods, "--every-instruction", "beta:run",
                 "--workload", "beta:beta_main", "--size", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["functions"] == 1 and doc["ok"] and not doc["mismatches"]
    assert doc["hits"] == doc["counted"] > 0 and doc["hits"] % 4 == 0    # 4 calls
    assert main(["kprobe", "--arch", "ppc32", *mods, "--every-instruction", "run",
                 "--workload", "beta:beta_main"]) == 2
    assert "ambiguous" in capsys.readouterr().err


@pytest.mark.parametrize("arch", NAMES)
def test_workload_returns_an_unsigned_long(arch: str, sources: list[Path],
                                           capsys: pytest.CaptureFixture) -> None:
    bits = get_arch(arch).bits
    want = (1 | (~0 << 28)) & ((1 << bits) - 1)          # wide(0): hidden(0) | ~0UL << 28
    mods = [a for p in sources for a in ("--module", str(p))]
    assert main(["boot", "--arch", arch, *mods, "--workload", "gamma:wide", "--size", "0",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["size"] == 0 and doc["checksum"] == want
    assert main(["boot", "--arch", arch, *mods, "--workload", "gamma:wide", "--size", "0",
                 "--expect", "1234"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH: expected 0x00001234" in out and "reference" not in out


#: NOKPROBE_SYMBOL, __kprobes, and a compiler's copy of a listed function (GCC names
#: its clones NAME.part.N, NAME.constprop.N, NAME.cold).
BLACKLISTED = r"""
#include <linux/module.h>
#include <linux/kprobes.h>
static noinline unsigned long bl_hidden(unsigned long n) { return n + 1; }
NOKPROBE_SYMBOL(bl_hidden);
__kprobes noinline unsigned long bl_first(unsigned long n) { return n * 3; }
__kprobes noinline unsigned long bl_second(unsigned long n) { return n * 5; }
unsigned long bl_run(unsigned long n) { return bl_hidden(n) + bl_first(n) + bl_second(n); }
asm(".text\n.globl bl_hidden.part.0\n.type bl_hidden.part.0, @function\n"
    "bl_hidden.part.0:\n\tret\n.size bl_hidden.part.0, 1\n");
"""


def test_the_blacklist_takes_kprobes_text_and_a_listed_functions_copies(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """v5.10 populate_kprobe_blacklist lists a module's NOKPROBE_SYMBOL function and
    each function of .kprobes.text; within_kprobe_blacklist also refuses
    ``NAME.suffix`` where NAME is listed. ``kisim kprobe blacklist`` prints them."""
    source = tmp_path / "bl.c"
    source.write_text(BLACKLISTED)
    image = build("x86_64", modules=[source])
    k = Kprobes(Guest(image, workload="bl:bl_run", size=3))
    listed = {e.name: e.why for e in k.blacklist_entries}
    assert (listed["bl_hidden"], listed["bl_first"], listed["bl_second"]) == (
        "NOKPROBE_SYMBOL(bl_hidden)", "in .kprobes.text", "in .kprobes.text")
    assert "bl_run" not in listed and "bl_hidden.part.0" not in listed
    # in .text, between the symbols KPROBES_TEXT defines, each kallsyms-sized: to the next
    entries = {e.name: e for e in k.blacklist_entries}
    elf = k.guest.image
    first, end = elf.symbols["__kprobes_text_start"], elf.symbols["__kprobes_text_end"]
    text = elf.sections[".text"]
    assert text.addr <= first <= entries["bl_first"].start < entries["bl_first"].end \
        == entries["bl_second"].start < entries["bl_second"].end == end <= text.addr + text.size
    for name, why in (("bl_first", "in .kprobes.text"), ("bl_second", "in .kprobes.text"),
                      ("bl_hidden.part.0", "NOKPROBE_SYMBOL(bl_hidden)")):
        with pytest.raises(PatchError, match=rf"is blacklisted \({re.escape(why)}\)$"):
            k.register_kprobe(Kprobe(symbol_name=name))
    k.unregister_kprobe(k.register_kprobe(Kprobe(symbol_name="bl_run")))
    assert main(["kprobe", "blacklist", "--arch", "x86_64", "--module", str(source),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["blacklist"] == k.blacklist()
    assert [(e["function"], e["why"]) for e in doc["entries"]][-2:] == [
        ("bl_first", "in .kprobes.text"), ("bl_second", "in .kprobes.text")]
    assert main(["kprobe", "blacklist", "--arch", "x86_64", "--at", "kmalloc"]) == 2
    assert "it takes no --at" in capsys.readouterr().err
