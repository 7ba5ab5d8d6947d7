"""Errors of the tracing layer."""
from __future__ import annotations


class TraceError(ValueError):
    """A trace that cannot be read or written: corrupt, truncated, or not kisim's."""


#: v5.10 kernel/trace/trace.h: the bytes of tracing_log_err's command buffer, its NUL included.
MAX_FILTER_STR_VAL = 256
CMD_PREFIX = "  Command: "


def error_log_entry(message: str, command: str, pos: int) -> str:
    """A tracefs ``error_log`` entry without its timestamp (kernel/trace/trace.c
    tracing_err_log_seq_show): the message, ``  Command: `` and the command, and
    a caret under the command's character ``pos``. As v5.10's tracing_log_err
    keeps them: the command's line, newline and all, cut to the buffer (a long
    command loses its end and the newline before the caret), and ``pos`` a u8."""
    kept = f"\n{CMD_PREFIX}{command}\n"[:MAX_FILTER_STR_VAL - 1]      # snprintf
    return f"{message}{kept}{' ' * (len(CMD_PREFIX) + pos % 256)}^"


__all__ = ["TraceError", "error_log_entry"]
