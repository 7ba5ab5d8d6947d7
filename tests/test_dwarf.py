"""Guest struct layouts from the kernel's DWARF, against the C declarations."""
from __future__ import annotations

import pytest

from arches import NAMES, get_arch
from kbuild import build
from sim.dwarf import layouts, struct
from sim.elf import read_elf
from sim.errors import ConfigError


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_marker_and_tracepoint_layouts_match_the_c_structs(name):
    arch, elf = get_arch(name), build(name).elf
    w = arch.word
    marker = struct(elf, "marker")       # 2.6.27: { name, format, state, ptype, call,
    assert marker.members == {"name": 0, "format": w, "state": 2 * w,   # single, multi }
                              "ptype": 2 * w + 1, "call": 3 * w, "single": 4 * w,
                              "multi": 6 * w}
    assert marker.size == (7 * w + 7) // 8 * 8
    assert struct(elf, "marker_probe_closure").members == {"func": 0, "probe_private": w}
    tp = struct(elf, "tracepoint")
    assert list(tp.members) == ["name", "state", "funcs", "hc_probe"]
    assert tp.members["funcs"] == 2 * w and tp.members["hc_probe"] == 3 * w
    sections = read_elf(elf).sections
    assert sections["__markers"].size % marker.size == 0
    assert sections["__tracepoints"].size % tp.size == 0
    task = struct(elf, "task_struct")
    assert task.offset("pid") == 2 * w and task.offset("comm") > task.offset("pid")


def test_layouts_are_cached_per_elf_and_errors_are_one_line(tmp_path):
    elf = build("x86_64").elf
    assert layouts(elf) is layouts(elf)
    with pytest.raises(ConfigError, match="no struct nonesuch"):
        struct(elf, "nonesuch")
    with pytest.raises(ConfigError, match="has no member 'bogus'"):
        struct(elf, "marker").offset("bogus")
    junk = tmp_path / "junk"
    junk.write_bytes(b"nope")
    with pytest.raises(ConfigError, match="cannot read DWARF"):
        layouts(junk)


def test_structs_read_lazily_equal_the_whole_pass():
    """struct() parses compile units only until the name is found (the task_struct of
    kernel/init.c leaves later units unread), with the layout a whole pass finds first."""
    from sim import dwarf
    elf = build("arm").elf
    dwarf._structs.cache_clear()
    task = struct(elf, "task_struct")
    assert dwarf._of(elf)._units is not None       # units left unread
    every = layouts(elf)
    assert dwarf._of(elf)._units is None
    dwarf._structs.cache_clear()
    assert task == every["task_struct"]
    assert {name: struct(elf, name) for name in every} == every
