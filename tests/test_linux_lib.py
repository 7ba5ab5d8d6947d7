"""Linux v5.10's lib/rbtree.c and lib/crc32.c built unchanged as modules
(tests/linux_lib/), checked against Python on every arch."""
from __future__ import annotations

import importlib.util
import shutil
import zlib
from pathlib import Path

import pytest

import patcher.instrument  # noqa: F401  (serves the module API)
import probes.kprobes  # noqa: F401
from arches import NAMES, get_arch
from kbuild import build
from sim.guest import Guest
from test_module_headers import LINUX_LIB, _xorshift

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location("gen_crc32table", LINUX_LIB / "gen_crc32table.py")
gen_crc32table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_crc32table)


def _fnv(values: list[int]) -> int:
    h = 2166136261
    for v in values:
        h = ((h ^ (v & 0xFFFF_FFFF)) * 16777619) & 0xFFFF_FFFF
    return h


def _run(arch: str, module: Path, workload: str, size: int) -> int:
    result = Guest(build(arch, modules=[module]), workload=workload, size=size).run()
    assert result.ok, result.console
    return result.checksum


def rbtree_reference(size: int) -> int:
    """test_rbtree_run's checksum: walks, augmented max, leftmost, rules hold."""
    vals, out = _xorshift(size), []
    for kept in (range(size), range(0, size, 2)):
        keys = sorted(vals[i] % 1000 for i in kept)
        out += [sum((i + 1) * k for i, k in enumerate(keys)),
                sum((i + 1) * k for i, k in enumerate(reversed(keys))),
                max(vals[i] >> 20 for i in kept), keys[0], 1]
    return _fnv(out)


def _crc_bitwise(data: bytes, poly: int, reflected: bool) -> int:
    """An independent bit-at-a-time CRC-32 (crc32c when reflected with
    0x82F63B78, CRC-32/BZIP2 = crc32_be when not), seeded ~0, inverted."""
    crc = 0xFFFF_FFFF
    for byte in data:
        if reflected:
            crc ^= byte
            for _ in range(8):
                crc = (crc >> 1) ^ (poly if crc & 1 else 0)
        else:
            crc ^= byte << 24
            for _ in range(8):
                crc = ((crc << 1) ^ (poly if crc & 0x8000_0000 else 0)) & 0xFFFF_FFFF
    return crc ^ 0xFFFF_FFFF


def crc32_reference(size: int) -> int:
    data = bytes(v >> 24 for v in _xorshift(size))
    return _fnv([zlib.crc32(data), _crc_bitwise(data, 0x82F63B78, True),
                 _crc_bitwise(data, 0x04C11DB7, False), 1])


def crc32_module(arch: str, where: Path) -> Path:
    """tests/linux_lib/crc32 with the crc32table.h lib/Makefile would generate
    for ARCH (CRC_LE_BITS 64 with CONFIG_64BIT, else 32)."""
    mod = where / "crc32"
    shutil.copytree(LINUX_LIB / "crc32", mod)
    gen_crc32table.write(mod, get_arch(arch).bits)
    return mod


def test_the_crc_references_are_right() -> None:
    assert _crc_bitwise(b"123456789", 0x82F63B78, True) == 0xE3069283     # CRC-32C check
    assert _crc_bitwise(b"123456789", 0x04C11DB7, False) == 0xFC891918    # CRC-32/BZIP2
    table = gen_crc32table.crc32init_le(gen_crc32table.CRC32_POLY_LE, 64)
    assert table[0][1] == 0x77073096 and len(table) == 8


@pytest.mark.parametrize("arch", NAMES)
def test_linux_lib_rbtree_builds_unchanged(arch: str) -> None:
    assert _run(arch, LINUX_LIB / "rbtree", "rbtree:test_rbtree_run", 300) \
        == rbtree_reference(300)


@pytest.mark.parametrize("arch", NAMES)
def test_linux_lib_crc32_builds_unchanged(arch: str, tmp_path: Path) -> None:
    mod = crc32_module(arch, tmp_path)
    assert _run(arch, mod, "crc32:test_crc32_run", 1000) == crc32_reference(1000)


#: (module, workload, size): each run small, since every instruction traps.
TRANSPARENT = [("sort", "sort:test_sort_run", 40), ("list_sort", "list_sort:test_list_sort_run", 40),
               ("rbtree", "rbtree:test_rbtree_run", 40), ("crc32", "crc32:test_crc32_run", 64)]


@pytest.mark.parametrize("module, workload, size", TRANSPARENT, ids=[t[0] for t in TRANSPARENT])
@pytest.mark.parametrize("arch", NAMES)
def test_a_kprobe_on_every_instruction_changes_nothing(arch: str, module: str, workload: str,
                                                        size: int, tmp_path: Path) -> None:
    """What `kisim kprobe --every-instruction MOD` does, on the four library modules: every
    probe's hits equal an unprobed run's count of that instruction, the checksum is kept."""
    from lab.transparency import every_instruction
    path = crc32_module(arch, tmp_path) if module == "crc32" else LINUX_LIB / module
    found = every_instruction(build(arch, modules=[path]), module, workload=workload, size=size)
    assert found.ok, (found.mismatches[:3], found.checksum_ok)
    assert found.probed > 0 and found.hits == found.counted and found.nmissed == 0
