"""Fuzz round 5 (issue 38): each finding's reproducer, now a one-line answer."""
from __future__ import annotations

from pathlib import Path

import pytest

from arches import NAMES
from kisim.cli import main

A = NAMES[0]


# -- a --module path that is a symbolic link loop ----------------------------------------

@pytest.fixture
def loops(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "loop.c").symlink_to("loop.c")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "x.c").symlink_to("x.c")          # the directory's only C file
    (tmp_path / "ok.c").write_text("int ok(void) { return 0; }\n")
    return {"file": str(tmp_path / "loop.c"), "dir": str(tmp_path / "dir"),
            "list": f"{tmp_path / 'ok.c'},{tmp_path / 'loop.c'}"}


LOOP_RUNS = [(cmd, form) for cmd in (("boot", "--arch", A), ("symbols", "--arch", A),
                                     ("patchcheck", "--arch", A, "--seeds", "1", "--guest"))
             for form in ("file", "dir", "list")]


@pytest.mark.parametrize("cmd, form", LOOP_RUNS, ids=[f"{c[0]}-{f}" for c, f in LOOP_RUNS])
def test_a_looping_module_path_is_one_line(cmd, form, loops, capsys) -> None:
    assert main([*cmd, "--module", loops[form]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    looping = loops["file"] if form != "dir" else loops["dir"] + "/x.c"
    assert err == f"kisim: error: {looping}: a symbolic link loop\n"
