"""lib/test_static_keys.c with lib/test_static_key_base.c (v5.10): static keys
initially true and false, old and new API, likely and unlikely branches, keys
of "another module" and keys that module inverted, each checked as built,
inverted and inverted back (docs/selftest/static_keys.md). Generic: the same
two modules on every arch."""
from __future__ import annotations

from pathlib import Path
from selftests import Suite, register

HERE = Path(__file__).parent / "c"
#: The base module first: its keys exist, and four are inverted, before the test runs.
SOURCES = (HERE / "static_key_base.c", HERE / "static_keys.c")
#: 18 table entries, each checked in 3 passes.
CASES = 54


SUITE = register(Suite(name="static_keys", kernel_file="lib/test_static_keys.c", version="v5.10",
                      sources=lambda arch: list(SOURCES), config={"JUMP_LABEL": "y"},
                      expected_cases=lambda arch: CASES))
