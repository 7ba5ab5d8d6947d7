"""Instrumentation tables: what each CONFIG_ option puts in the image, checked with Capstone.

The checks here decode the code themselves (Capstone, skipping data)
rather than trusting patcher.tables' own verification.
"""
from __future__ import annotations

import shutil

import capstone
import pytest
from elftools.elf.elffile import ELFFile

from arches import NAMES, get_arch
from kbuild import build
from patcher.tables import TableError, load_tables
from sim.elf import read_elf

KERNEL_MARKERS = {
    "sched_switch": "prev_pid %d next_pid %d prev_state %ld",
    "kmalloc": "type_id %d call_site %lu ptr %lu bytes_req %lu bytes_alloc %lu "
               "gfp_flags %lu node %d",
    "kmem_cache_alloc": "type_id %d call_site %lu ptr %lu bytes_req %lu bytes_alloc %lu "
                        "gfp_flags %lu node %d",
    "kfree": "type_id %d call_site %lu ptr %lu",
    "kmem_cache_free": "type_id %d call_site %lu ptr %lu",
    "syscall_entry": "syscall_id %d ip %lu",
    "syscall_exit": "ret %ld",
}
TRACEPOINTS = {"sched_switch", "sched_wakeup", "kmalloc", "kfree", "kmem_cache_alloc",
               "kmem_cache_free"}


def tables(arch: str, **overrides: str):
    return load_tables(build(arch, overrides=overrides or None).elf)


def decode(arch: str, image, addr: int):
    spec = get_arch(arch)
    cs = capstone.Cs(*spec.cs_mode)
    text = image.sections[".text"]
    off = addr - text.addr
    return next(cs.disasm(text.data[off:off + spec.max_insn_len], addr, 1))


def calls_to(arch: str, image, targets: set[int]) -> set[int]:
    """Every call/bl in .text whose destination is in ``targets`` (linear sweep)."""
    spec = get_arch(arch)
    cs = capstone.Cs(*spec.cs_mode)
    cs.skipdata = True
    text = image.sections[".text"]
    found = set()
    for insn in cs.disasm(text.data, text.addr):
        if insn.mnemonic in ("call", "bl") and insn.op_str.lstrip("#").startswith("0x"):
            if int(insn.op_str.lstrip("#"), 16) in targets:
                found.add(insn.address)
    return found


def mcount_targets(arch: str, image) -> set[int]:
    return {image.symbols[s] for s in get_arch(arch).mcount_symbols if s in image.symbols}


def section_size(image, name: str) -> int:
    section = image.sections.get(name)
    return section.size if section else 0


def all_loaded_bytes(image) -> bytes:
    return b"".join(s.data for s in image.sections.values() if s.addr)


@pytest.mark.parametrize("name", NAMES)
def test_kernel_marker_sites(name):
    t = tables(name)
    found = {m.name: m.format for m in t.markers}
    for marker, fmt in KERNEL_MARKERS.items():
        assert found.get(marker) == fmt, marker
    for m in t.markers:
        assert m.state == 0 and m.call == t.image.symbols["__mark_empty_function"]
        assert m.enable == "imv" and m.sites          # defconfig: IMMEDIATE=y
    assert {tp.name for tp in t.tracepoints} == TRACEPOINTS
    for tp in t.tracepoints:
        assert tp.enable == "jump_label" and tp.sites  # defconfig: JUMP_LABEL=y
        assert t.image.describe(tp.hc_probe) == f"__tp_hc_{tp.name}+0x0"
        assert tp.state == 0 and tp.funcs == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_markers_n_compiles_marker_sites_out(name):
    full, bare = tables(name), tables(name, MARKERS="n")
    assert bare.markers == [] and section_size(bare.image, "__markers") == 0
    image = all_loaded_bytes(bare.image)
    for fmt in KERNEL_MARKERS.values():
        assert fmt.encode() not in image
    assert fmt.encode() in all_loaded_bytes(full.image)
    # no enable checks left for markers: every imv/jump site belongs to a tracepoint
    assert bare.imv == []
    assert {e.key for e in bare.jump_entries} <= {tp.state_addr for tp in bare.tracepoints}
    assert bare.image.sections[".text"].size < full.image.sections[".text"].size


@pytest.mark.parametrize("name", NAMES)
def test_function_tracer_sites_decode_as_mcount_calls(name):
    t = tables(name)
    targets = mcount_targets(name, t.image)
    swept = calls_to(name, t.image, targets)
    assert swept and swept == {site.address for site in t.mcount}
    for site in t.mcount:
        insn = decode(name, t.image, site.address)
        assert insn.mnemonic in ("call", "bl")
        assert int(insn.op_str.lstrip("#"), 16) in targets
    if name == "arm":       # -meabi gnu: push {lr}; bl __gnu_mcount_nc
        assert {s.target for s in t.mcount} == {"__gnu_mcount_nc"}
        for site in t.mcount:
            assert decode(name, t.image, site.address - 4).mnemonic in ("push", "stmdb", "str")
    functions = {fn for _, _, fn in t.image.functions}
    assert {s.function for s in t.mcount} <= functions
    assert "schedule" in {s.function for s in t.mcount}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_function_tracer_n_has_no_mcount_calls(name):
    t = tables(name, FUNCTION_TRACER="n")
    assert t.mcount == []
    assert calls_to(name, t.image, mcount_targets(name, t.image)) == set()


@pytest.mark.parametrize("name", NAMES)
def test_notrace_functions_never_call_mcount(name):
    t = tables(name)
    names = {f.name for f in t.notrace}
    assert {"__mark_empty_function", "marker_probe_hc", "panic"} <= names
    targets = mcount_targets(name, t.image)
    calls = calls_to(name, t.image, targets)
    for fn in t.notrace:
        assert not [c for c in calls if fn.address <= c < fn.address + fn.size], fn.name
    assert {"__switch_to_asm", "ret_from_fork", "marker_probe_hc"} <= {f.name for f in t.nokprobe}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_jump_label_sites_are_the_kernel_nop(name):
    arch = get_arch(name)
    t = tables(name)
    assert t.jump_entries
    nop = arch.nop(5 if name == "x86_64" else 4)
    for e in t.jump_entries:
        insn = decode(name, t.image, e.code)
        assert bytes(insn.bytes) == nop
        assert insn.mnemonic in ("nop", "nopl", "mov") and (name != "arm" or insn.op_str == "r0, r0")
        assert t.image.symbol_at(e.target)[0] == t.image.symbol_at(e.code)[0]
    off = tables(name, JUMP_LABEL="n")
    assert off.jump_entries == [] and section_size(off.image, "__jump_table") == 0
    # without jump labels the tracepoints fall back to immediate values
    assert {tp.enable for tp in off.tracepoints} == {"imv"}


@pytest.mark.parametrize("name", NAMES)
def test_immediate_sites_are_immediate_loads(name):
    t = tables(name)
    assert t.imv
    for e in t.imv:
        insn = decode(name, t.image, e.insn)
        if name == "x86_64":
            assert insn.mnemonic == "mov" and insn.op_str.endswith(", 0")
            assert e.imv == e.insn + insn.size - e.size and e.imv % e.size == 0
        elif name == "arm":
            assert insn.mnemonic == "mov" and insn.op_str.endswith(", #0") and e.imv == e.insn
        else:
            assert insn.mnemonic == "li" and insn.op_str.endswith(", 0") and e.imv == e.insn + 2
        assert t.image.sections[".text"].data[e.imv - t.image.sections[".text"].addr] == 0
    off = tables(name, IMMEDIATE="n")
    assert off.imv == [] and section_size(off.image, "__imv") == 0
    # markers now test their state through jump labels
    assert {m.enable for m in off.markers} == {"jump_label"}
    assert len(off.jump_entries) == sum(len(m.sites) for m in off.markers) + \
        sum(len(tp.sites) for tp in off.tracepoints)


def test_x86_immediate_of_an_int_is_padded_to_alignment():
    t = tables("x86_64", JUMP_LABEL="n")       # tracepoint state (int) via imv
    wide = [e for e in t.imv if e.size == 4]
    assert wide and all(e.imv % 4 == 0 for e in wide)
    for e in wide:
        assert decode("x86_64", t.image, e.insn).mnemonic == "mov"
        assert t.image.sections[".text"].data[e.insn - 1 - t.image.sections[".text"].addr] == 0x90


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_without_immediate_or_jump_label_markers_load_their_state(name):
    t = tables(name, IMMEDIATE="n", JUMP_LABEL="n")
    assert t.markers and {m.enable for m in t.markers} == {"load"}
    assert t.imv == [] and t.jump_entries == []
    assert all(m.sites == () for m in t.markers)


def test_a_corrupted_site_is_refused(tmp_path):
    b = build("x86_64")
    t = load_tables(b.elf)
    site = t.jump_entries[0].code
    bad = tmp_path / "vmlinux"
    shutil.copy(b.elf, bad)
    with open(bad, "r+b") as f:
        text = ELFFile(f).get_section_by_name(".text")
        offset = text["sh_offset"] + site - text["sh_addr"]
        f.seek(offset)
        f.write(b"\xcc")
    with pytest.raises(TableError, match="neither the kernel nop"):
        load_tables(bad)
    assert load_tables(read_elf(b.elf)).counts() == t.counts()
