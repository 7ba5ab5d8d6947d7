"""The build's errors (kept apart so that every kbuild module can raise them)."""
from __future__ import annotations


class BuildError(Exception):
    """A kernel build failed: one summary line, then the tool's diagnostics."""


class ModuleError(BuildError):
    """A guest module that cannot be built: the first error, on one line."""


__all__ = ["BuildError", "ModuleError"]
