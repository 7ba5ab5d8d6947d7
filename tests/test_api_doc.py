"""docs/api.md's example runs as written and prints what the page shows."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"

pytestmark = pytest.mark.slow


def test_the_api_example_runs_and_prints_what_the_page_shows() -> None:
    text = DOC.read_text()
    code, shown = re.search(r"```python\n(.*?)```.*?```\n(.*?)```", text, re.S).groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_api"})
    assert out.getvalue() == shown
