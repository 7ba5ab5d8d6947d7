"""Errors of the tracing layer."""
from __future__ import annotations


class TraceError(ValueError):
    """A trace that cannot be read or written: corrupt, truncated, or not kisim's."""


def error_log_entry(message: str, command: str, pos: int) -> str:
    """A tracefs ``error_log`` entry without its timestamp (kernel/trace/trace.c
    tracing_err_log_seq_show): the message, ``  Command: `` and the command, and
    a caret under the command's character ``pos``."""
    return f"{message}\n  Command: {command}\n{' ' * (len('  Command: ') + pos)}^"


__all__ = ["TraceError", "error_log_entry"]
