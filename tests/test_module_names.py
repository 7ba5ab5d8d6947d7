"""Module names: KBUILD_MODNAME is the file's or directory's stem with each
'-' made '_', as kbuild's name-fix does (scripts/Makefile.lib, v5.10)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kbuild import ModuleError
from kbuild.modules import load_module, load_modules, module_flags


def _c(path: Path) -> Path:
    path.write_text("#include <linux/module.h>\n")
    return path


def test_a_dash_in_a_file_name_is_an_underscore(tmp_path: Path) -> None:
    mod = load_module(_c(tmp_path / "crc-ccitt.c"))
    assert mod.name == "crc_ccitt"
    assert '-DKBUILD_MODNAME="crc_ccitt"' in module_flags([], mod)


def test_a_dash_in_a_directory_name_is_an_underscore(tmp_path: Path) -> None:
    (tmp_path / "crc-itu-t").mkdir()
    _c(tmp_path / "crc-itu-t" / "crc-itu-t.c")
    assert load_module(tmp_path / "crc-itu-t").name == "crc_itu_t"


def test_what_is_still_not_a_c_identifier_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModuleError, match=r"'1_x' .*'-' read as '_'.* is not a C identifier"):
        load_module(_c(tmp_path / "1-x.c"))
    with pytest.raises(ModuleError, match="is not a C identifier"):
        load_module(_c(tmp_path / "a.b.c"))


def test_a_b_and_a_dash_b_are_the_same_module_name(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    with pytest.raises(ModuleError, match="two modules named 'a_b'"):
        load_modules([_c(tmp_path / "one" / "a-b.c"), _c(tmp_path / "two" / "a_b.c")])
