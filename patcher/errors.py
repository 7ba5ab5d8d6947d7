"""Errors raised by the patcher.

:class:`PatchError` is a refused patch: bad input or a conflict the caller
can act on. It carries the kernel's errno name, so callers and tests match
on ``err.errno`` the way kernel code checks ``-EBUSY``. Its message is one
line (the CLI prints it as is).

:class:`LockNotHeld` is a bug in the caller, like a failed
``lockdep_assert_held(&text_mutex)``: text written without the text lock.
"""
from __future__ import annotations

from sim.textlock import LockNotHeld

__all__ = ["ERRNOS", "LockNotHeld", "PatchError"]

ERRNOS = ("EPERM", "EBUSY", "ENOENT", "EINVAL", "ENOMEM", "ERANGE", "EEXIST", "EILSEQ",
          "ENODEV")


class PatchError(Exception):
    """A patch refused before anything was written.

    ``errno`` is one of :data:`ERRNOS`: ``EBUSY`` another owner holds the
    text, ``EINVAL`` the bytes found are not the ones expected or the site
    is malformed, ``ERANGE`` a branch cannot reach, ``ENOENT`` nothing to
    release, ``EILSEQ`` not an instruction boundary (x86 ``can_probe``),
    ``ENODEV`` the facility is not there or was killed (ftrace after an
    ``ftrace_bug``), ``EPERM`` and ``ENOMEM`` as the layers above define them.
    """

    def __init__(self, errno: str, message: str) -> None:
        if errno not in ERRNOS:
            raise ValueError(f"PatchError errno {errno!r} is not one of {', '.join(ERRNOS)}")
        self.errno = errno
        self.message = " ".join(message.split())
        super().__init__(f"{self.errno}: {self.message}")


