"""read_elf parses each file once per process; every read still gets its own Image."""
from __future__ import annotations

import shutil

from kbuild import build
from sim import elf as elfmod
from sim.elf import read_elf


def test_one_parse_per_file_and_a_fresh_image_per_read(tmp_path, monkeypatch) -> None:
    source = build("arm").elf
    copy = tmp_path / "vmlinux"
    shutil.copyfile(source, copy)
    parses = []
    real = elfmod._parse
    monkeypatch.setattr(elfmod, "_parse", lambda *a: parses.append(a[0]) or real(*a))
    first, second = read_elf(copy), read_elf(copy)
    assert len(parses) == 1
    assert first is not second and first.symbols is not second.symbols
    assert first.symbols == second.symbols and first.segments == second.segments
    first.symbols.bind_modules({"m": ([], ["start_kernel"])})   # one image's binding only
    assert first.symbols.modules == ["m"] and second.symbols.modules == []
    first.sections.pop(".text")
    assert ".text" in read_elf(copy).sections
    # Another file at the same path (a rebuild) is parsed anew.
    shutil.copyfile(build("x86_64").elf, tmp_path / "other")
    (tmp_path / "other").replace(copy)
    assert read_elf(copy).machine == "x86_64" and len(parses) == 2
