"""Shared fixtures: every arch-dependent test runs once per registered arch."""
from __future__ import annotations

import pytest

from arches import ARCHES, Arch


@pytest.fixture(params=sorted(ARCHES), ids=sorted(ARCHES))
def arch(request: pytest.FixtureRequest) -> Arch:
    return ARCHES[request.param]
