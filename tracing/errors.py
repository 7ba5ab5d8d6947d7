"""Errors of the tracing layer."""
from __future__ import annotations


class TraceError(ValueError):
    """A trace that cannot be read or written: corrupt, truncated, or not kisim's."""


__all__ = ["TraceError"]
