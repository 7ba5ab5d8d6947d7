"""Randomized text layouts (kbuild/layout.py): the same code, placed as a seed draws."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

import kbuild
from arches import NAMES, get_arch
from kbuild import BuildError
from kbuild.layout import CATCH_ALL, MODULE_OFFSET_MAX, PAD_LINES, Layout, linker_script
from kbuild.image import LINKER_SCRIPT


@functools.lru_cache(maxsize=None)
def laid_out(arch: str, seed: int | None) -> kbuild.Build:
    return kbuild.build(arch, overrides={"FUNCTION_TRACER": "n"}, layout=seed)


def functions(elf_path: Path) -> dict[tuple[str | None, str], tuple[int, bytes, tuple]]:
    """Every function of the image: (its STT_FILE for a static one, name) -> (address,
    its bytes with every relocated field zeroed, the relocation types in its range).

    A relocated field is 4 bytes at the relocation's offset (8 for a 64-bit absolute
    one): the displacement or address the linker wrote, which a layout changes."""
    with open(elf_path, "rb") as f:
        elf = ELFFile(f)
        text = elf.get_section_by_name(".text")
        base, data = text["sh_addr"], bytearray(text.data())
        relocs = sorted((r["r_offset"], r["r_info_type"])
                        for s in elf.iter_sections() if isinstance(s, RelocationSection)
                        and elf.get_section(s["sh_info"]).name == ".text"
                        for r in s.iter_relocations())
        assert relocs, "the image keeps its relocations (--emit-relocs)"
        for offset, kind in relocs:
            width = 8 if kind in (1,) and elf["e_machine"] == "EM_X86_64" else 4  # R_X86_64_64
            start = offset - base
            data[start:start + width] = bytes(len(data[start:start + width]))
        found, unit = {}, None
        for sym in elf.get_section_by_name(".symtab").iter_symbols():
            kind = sym["st_info"]["type"]
            if kind == "STT_FILE":
                unit = sym.name
            elif kind == "STT_FUNC" and sym["st_size"]:
                lo, hi = sym["st_value"] & ~1, (sym["st_value"] & ~1) + sym["st_size"]
                key = (unit if sym["st_info"]["bind"] == "STB_LOCAL" else None, sym.name)
                found[key] = (lo, bytes(data[lo - base:hi - base]),
                              tuple(k for o, k in relocs if lo <= o < hi))
        return found


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_two_layouts_move_every_function_and_keep_its_bytes(name):
    one, two = (functions(laid_out(name, seed).elf) for seed in (1, 2))
    assert one.keys() == two.keys() and len(one) > 50
    moved = [k for k in one if one[k][0] != two[k][0]]
    assert len(moved) > 0.9 * len(one)                      # the text addresses differ
    for key in one:                                         # the code does not
        assert one[key][1:] == two[key][1:], key
    # the negative control: without the relocated fields zeroed, bytes do differ
    assert laid_out(name, 1).elf.read_bytes() != laid_out(name, 2).elf.read_bytes()


@pytest.mark.slow
def test_the_same_seed_links_the_same_image_in_another_cache(tmp_path):
    name = NAMES[0]
    again = kbuild.build(name, overrides={"FUNCTION_TRACER": "n"}, layout=1,
                         cache_dir=tmp_path)
    first = laid_out(name, 1)
    assert not again.cached and again.key == first.key
    assert again.elf.read_bytes() == first.elf.read_bytes()
    assert again.info["layout"] == first.info["layout"]


@pytest.mark.slow
def test_a_plan_is_a_function_of_its_seed():
    """The drawing, on real objects: same seed, same plan; another seed, another."""
    built = laid_out(NAMES[0], 1)
    plan = built.info["layout"]
    assert plan["seed"] == 1
    arch = get_arch(NAMES[0])
    assert 0 <= plan["module_offset"] <= MODULE_OFFSET_MAX
    pads = [pad for obj in plan["objects"] for _, pad in obj["sections"]]
    assert all(0 <= p <= PAD_LINES * arch.icache_line and p % arch.insn_align == 0
               for p in pads) and len(set(pads)) > 5
    other = laid_out(NAMES[0], 2).info["layout"]
    assert [o["object"] for o in plan["objects"]] == [o["object"] for o in other["objects"]]
    orders = [[s for s, _ in o["sections"]] for o in plan["objects"]]
    assert orders != [[s for s, _ in o["sections"]] for o in other["objects"]]
    assert [sorted(x) for x in orders] == [sorted(s for s, _ in o["sections"])
                                           for o in other["objects"]]


def test_the_script_places_each_function_before_the_catch_all():
    plan = {"format": "f", "seed": 7, "module_offset": 0x40, "modules": 0,
            "objects": [{"object": "kernel__slab.o", "sections": [[".text.b", 0],
                                                                  [".text.a", 0x10]]}]}
    script = linker_script(plan, LINKER_SCRIPT.read_text())
    head = script[:script.index(CATCH_ALL)]
    assert head.index(". = . + 0x40;") < head.index("*/kernel__slab.o(.text.b)") \
        < head.index(". = . + 0x10;") < head.index("*/kernel__slab.o(.text.a)")
    with pytest.raises(BuildError, match="catch-all"):
        linker_script(plan, "SECTIONS { }")


@pytest.mark.parametrize("seed", [-1, 2 ** 63, True, "1"])
def test_a_bad_seed_is_refused(seed):
    with pytest.raises(BuildError, match="layout seed"):
        Layout(seed)


@pytest.mark.slow
def test_layouts_of_one_build_compile_once(tmp_path):
    """N layouts link the objects of one cache entry (``<key>-objects``): the second
    layout compiles nothing; a build without a layout keeps compiling its own."""
    name = NAMES[-1]
    kw = dict(overrides={"FUNCTION_TRACER": "n"}, cache_dir=tmp_path)
    first, second = (kbuild.build(name, layout=seed, **kw) for seed in (1, 2))
    shared = [p for p in tmp_path.iterdir() if p.name.endswith("-objects")]
    assert len(shared) == 1 and first.key != second.key
    stamp = (shared[0] / "build.json").stat().st_mtime_ns
    third = kbuild.build(name, layout=3, **kw)
    assert (shared[0] / "build.json").stat().st_mtime_ns == stamp   # not rebuilt
    assert not third.cached and third.info["compile_seconds"] == 0.0
    assert kbuild.build(name, **kw).info["compile_seconds"] > 0
