"""The errors the CLI turns into one-line messages.

Each layer raises its own exception types; this module is the one place
that lists them, so that ``kisim`` never shows a traceback for bad input.
"""
from __future__ import annotations


class UsageError(Exception):
    """Bad command-line input detected by the CLI itself."""


def user_errors() -> tuple[type[BaseException], ...]:
    """Exception types that mean bad input: one line, exit 2."""
    from arches import EncodingError, UnknownArch
    from sim.errors import AsmError, ConfigError
    errors: list[type[BaseException]] = [UsageError, UnknownArch, EncodingError,
                                         AsmError, ConfigError, OSError]
    for module, name in (("kconfig", "KconfigError"),
                         ("kbuild", "BuildError"),
                         ("sim.guest", "WorkloadError"),
                         ("fsio", "UnsafePath"),
                         ("patcher.errors", "PatchError"),
                         ("tracing.errors", "TraceError"),
                         ("tracing.events", "ProbeListError"),
                         ("probes.kprobe_events", "ProbeEventError"),
                         ("tracing.filter", "FilterError")):
        try:
            errors.append(getattr(__import__(module, fromlist=[name]), name))
        except (ImportError, AttributeError):
            continue
    return tuple(errors)



def one_line(err: BaseException) -> str:
    """The error as one line; an OSError as ``FILE: reason``. A character that does
    not print (a terminal's escape, a NUL from a user's file) is shown escaped."""
    if isinstance(err, OSError) and err.strerror:
        text = f"{err.filename}: {err.strerror}" if err.filename else err.strerror
    else:
        text = " ".join(str(err).split())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)

INTERRUPTED = 130    # 128 + SIGINT (2): the shell's convention, bash(1) "EXIT STATUS"
TERMINATED = 143     # 128 + SIGTERM (15)


class Terminated(BaseException):
    """SIGTERM arrived: like KeyboardInterrupt, it unwinds every ``finally``
    (so worker processes are stopped) and is not caught as an error."""
