"""A fourth arch is one package: the registry finds it, checks its hooks, and
generic code (machine, text patcher, ELF lookup) runs it without naming it."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import arches
import arches.base
from arches import ArchDefinitionError, check_arch, discover
from patcher.text import TextPatcher
from sim import Machine

BASE = 0x10000
ARCHES_ARM = arches.ARCHES["arm"]

# The fake arch borrows the ARM engine (Unicorn/Capstone/Keystone modes,
# encodings) under its own name and its own hooks; only its package is new.
FAKE_INIT = '''
from dataclasses import replace
from typing import Sequence

from arches import ARCHES
from arches.base import (DEFAULT_ICACHE_LINE, DynamicFtrace, Kprobes, Optprobes, TextPort,
                         patch_words)

CALLS = []


class FakeOps({capabilities}):
    @staticmethod
    def text_poke_batch(port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
        CALLS.append(list(sites))
        patch_words("fake4", port, sites, DEFAULT_ICACHE_LINE)

    {imv}


ARCH = replace(ARCHES["arm"], name="fake4", summary="a fourth arch, for the registry test",
               ops=FakeOps(), elf_machine="EM_FAKE4")
'''
GOOD_IMV = ("@staticmethod\n    def imv_load_of_zero(insn: bytes, address: int, imv: int, "
            "size: int) -> bool:\n        return False")


def write_package(root: Path, package: str, imv: str, capabilities: tuple = ()) -> Path:
    """``root/package/fake4/__init__.py`` with the given imv_load_of_zero text, its
    ops class inheriting the named capability classes (``Kprobes``, ...)."""
    pkg = root / package
    (pkg / "fake4").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    text = textwrap.dedent(FAKE_INIT).replace("{imv}", imv)
    (pkg / "fake4" / "__init__.py").write_text(text.replace("{capabilities}",
                                                             ", ".join(capabilities)))
    return pkg


def load(tmp_path: Path, monkeypatch, package: str, imv: str, capabilities: tuple = ()) -> dict:
    pkg = write_package(tmp_path, package, imv, capabilities)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        return discover([str(pkg)], package)
    finally:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


def test_registry_discovers_and_accepts_a_fourth_arch(tmp_path, monkeypatch) -> None:
    found = load(tmp_path, monkeypatch, "fourth_ok", GOOD_IMV)
    assert list(found) == ["fake4"]
    fake = found["fake4"]
    assert fake.elf_machine == "EM_FAKE4" and fake.site_nop == fake.nop(fake.site_len)
    assert fake.name not in arches.NAMES      # discovery did not touch the real registry


def test_generic_patcher_drives_the_fourth_arch_through_its_ops(tmp_path, monkeypatch) -> None:
    fake = load(tmp_path, monkeypatch, "fourth_run", GOOD_IMV)["fake4"]
    calls = type(fake.ops).text_poke_batch.__globals__["CALLS"]
    nop = fake.site_nop
    m = Machine(fake, 2)
    m.load_code(nop * 4 + fake.syscall_insn, BASE)
    jump = fake.encode_jump(BASE, BASE + 3 * len(nop))
    with TextPatcher(m).batch() as b:
        b.queue(BASE, nop, jump, "ftrace")
    assert calls == [[(BASE, jump)]]                 # the patcher went through FakeOps
    assert m.read(BASE, len(jump)) == jump
    assert m.sync_rounds == 1


@pytest.mark.parametrize("imv, message", [
    ("", "arch 'fake4': ops hook 'imv_load_of_zero' (tables) is missing"),
    ("imv_load_of_zero = 3", "arch 'fake4': ops hook 'imv_load_of_zero' (tables) is a int, "
                             "not a function"),
    ("@staticmethod\n    def imv_load_of_zero(insn: bytes) -> bool:\n        return False",
     "arch 'fake4': ops hook 'imv_load_of_zero' (tables) takes 1 arguments, expected 4"),
])
def test_registry_rejects_a_bad_hook_with_one_line(tmp_path, monkeypatch, imv, message) -> None:
    package = f"fourth_bad{abs(hash(imv)) % 10_000}"
    with pytest.raises(ArchDefinitionError) as err:
        load(tmp_path, monkeypatch, package, imv)
    assert str(err.value) == message and "\n" not in str(err.value)


@pytest.mark.parametrize("capability, name, hook", [
    ("Kprobes", "kprobes", "arch_prepare_kprobe"),
    ("Optprobes", "optprobes", "arch_prepare_optimized_kprobe"),
    ("DynamicFtrace", "dynamic_ftrace", "ftrace_nop_replace")])
def test_declaring_a_capability_without_its_hooks_fails_with_one_line(
        tmp_path, monkeypatch, capability, name, hook) -> None:
    """HAVE_KPROBES / HAVE_OPTPROBES / HAVE_DYNAMIC_FTRACE declared (the ops class
    inherits the capability), hooks absent: refused at registry load."""
    with pytest.raises(ArchDefinitionError) as err:
        load(tmp_path, monkeypatch, f"fourth_{name}", GOOD_IMV, (capability,))
    assert str(err.value) == f"arch 'fake4': ops hook '{hook}' ({name}) is missing"


def test_capabilities_are_read_off_the_ops_classes(tmp_path, monkeypatch) -> None:
    """One declaration: the ops class's capability bases are the arch's capabilities."""
    plain = load(tmp_path, monkeypatch, "fourth_plain", GOOD_IMV)["fake4"]
    assert plain.capabilities == ()
    for name in arches.NAMES:
        arch = arches.ARCHES[name]
        assert arch.capabilities == tuple(c.NAME for c in type(arch.ops).__mro__
                                          if c in arches.base.OPTIONAL_CAPABILITIES.values())


def test_kprobe_hooks_are_reached_through_the_ops_object(tmp_path, monkeypatch) -> None:
    """An arch without the kprobes capability gets a one-line ConfigError from the
    kprobe layer; an arch with it hands over its ops object."""
    from dataclasses import replace

    from arches.base import ArchOps
    from probes.kprobes import arch_kprobes
    from sim.errors import ConfigError
    fake = load(tmp_path, monkeypatch, "fourth_nokprobes", GOOD_IMV)["fake4"]
    with pytest.raises(ConfigError, match=r"^kprobe: fake4 has no kprobes \(HAVE_KPROBES\)$"):
        arch_kprobes(fake)
    for name in arches.NAMES:
        arch = arches.ARCHES[name]
        assert "kprobes" in arch.capabilities and arch_kprobes(arch) is arch.ops
        with pytest.raises(ConfigError):
            arch_kprobes(replace(arch, ops=ArchOps))     # the common hooks only


def test_a_package_without_an_arch_object_is_rejected(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "fourth_noarch"
    (pkg / "fake4").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "fake4" / "__init__.py").write_text("ARCH = {'name': 'fake4'}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ArchDefinitionError, match=r"fourth_noarch.fake4: ARCH is dict, not"):
        discover([str(pkg)], "fourth_noarch")


def test_every_real_arch_passes_the_same_check() -> None:
    for name in arches.NAMES:
        assert check_arch(sys.modules[f"arches.{name}"]) is arches.ARCHES[name]


FTRACE_OPS = '''@staticmethod
    def imv_load_of_zero(insn: bytes, address: int, imv: int, size: int) -> bool:
        return False

    MCOUNT_INSN_SIZE = 4
    MCOUNT_ADDR = "__gnu_mcount_nc"
    FTRACE_ADDR = {ftrace_addr}
    IDLE_SITE_INSNS = 2
    MCOUNT_SITE_PREFIX_ASM = "push {{lr}}"
    MCOUNT_STUB_ASM = "bx lr"

    @staticmethod
    def ftrace_nop_replace() -> bytes:
        return bytes.fromhex("0040bde8")

    @staticmethod
    def ftrace_call_replace(ip: int, addr: int) -> bytes:
        return ARCHES["arm"].encode_call(ip, addr)'''


def test_dynamic_ftrace_is_a_checked_capability(tmp_path, monkeypatch) -> None:
    """Opting into dynamic_ftrace needs both hooks and every constant, typed."""
    ok = load(tmp_path, monkeypatch, "fourth_ftrace_ok",
              FTRACE_OPS.format(ftrace_addr='"ftrace_caller"'), ("DynamicFtrace",))["fake4"]
    assert ok.ops.ftrace_nop_replace() == bytes.fromhex("0040bde8")
    assert ok.ops.ftrace_call_replace(0x1000, 0x1008) == ARCHES_ARM.encode_call(0x1000, 0x1008)
    with pytest.raises(ArchDefinitionError, match=r"^arch 'fake4': ops constant 'FTRACE_ADDR' "
                                                  r"\(dynamic_ftrace\) must be a str, not int$"):
        load(tmp_path, monkeypatch, "fourth_ftrace_badconst",
             FTRACE_OPS.format(ftrace_addr="7"), ("DynamicFtrace",))


def test_every_real_arch_declares_dynamic_ftrace() -> None:
    for arch in arches.ARCHES.values():
        assert "dynamic_ftrace" in arch.capabilities
        assert arch.ops.ftrace_call_replace(0x10000, 0x10100) == arch.encode_call(0x10000, 0x10100)



def test_kprobes_constants_are_checked(tmp_path, monkeypatch) -> None:
    """Every kprobes hook present, one constant missing: refused in one line."""
    kprobes = arches.base.Kprobes
    body = "\n    ".join(["from arches.arm.kprobes import ArmKprobes as _arm"]
                         + [f'{n} = _arm.__dict__["{n}"]' for n in kprobes.hooks()]
                         + [f'{n} = _arm.{n}' for n in kprobes.CONSTANTS if n != "PT_REGS"])
    with pytest.raises(ArchDefinitionError) as err:
        load(tmp_path, monkeypatch, "fourth_kconst", GOOD_IMV + "\n    " + body, ("Kprobes",))
    assert str(err.value) == ("arch 'fake4': ops constant 'PT_REGS' (kprobes) must be a tuple, "
                              "not NoneType")
    found = load(tmp_path, monkeypatch, "fourth_kok",
                 GOOD_IMV + "\n    " + body + '\n    PT_REGS = _arm.__dict__["PT_REGS"]',
                 ("Kprobes",))
    assert found["fake4"].ops.PT_REGS == arches.ARCHES["arm"].ops.PT_REGS
