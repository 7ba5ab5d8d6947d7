"""A signal stops the run at a slice boundary, whatever code it lands in.

A Python signal handler runs between two bytecodes of the main thread,
wherever it is. While ``emu_start`` runs, that is inside a hook Unicorn
calls through ctypes; elsewhere it may be a weakref callback or a
``__del__``. An exception raised in any of these is printed ("Exception
ignored on calling ctypes callback function") and lost: the run goes on.

So the handler calls :func:`arrived`, which keeps the exception. Inside a
slice (:func:`emulating`) it stops every running slice and returns: the
exception is raised when the outermost slice has ended, outside Unicorn.
Elsewhere it is raised at once; if that one is lost (quietly, under
:func:`unraisable`), the next slice boundary raises it again, and the
caller ends with :func:`raise_pending`.
"""
from __future__ import annotations

import contextlib
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import unicorn

_running: list[unicorn.Uc] = []        # the main thread's slices, innermost last
_pending: list[BaseException] = []     # the signal's exception, until clear()
_MAIN = threading.main_thread().ident   # signal handlers only run in the main thread


class emulating:
    """``with emulating(uc):`` runs a slice of ``uc`` (its ``emu_start``) at a signal
    boundary: a pending signal is raised before it starts and, when the outermost
    slice ends, in place of whatever the slice raised. A class, not a generator,
    and reusable (one per CPU, made once): it wraps every slice of every run."""

    __slots__ = ("uc", "main")

    def __init__(self, uc: unicorn.Uc) -> None:
        self.uc = uc
        self.main = False

    def __enter__(self) -> None:
        self.main = threading.get_ident() == _MAIN
        if self.main:
            if _pending:
                raise _pending[0]
            _running.append(self.uc)

    def __exit__(self, *exc: object) -> None:
        if self.main:
            _running.pop()
            if _pending and not _running:
                raise _pending[0]


def arrived(exc: BaseException) -> None:
    """From a signal handler: keep ``exc``; inside a slice stop it (``exc`` is
    raised at its end), elsewhere raise ``exc`` now."""
    if not _pending:
        _pending.append(exc)
    if not _running:
        raise exc
    import unicorn                      # loaded already: a slice is running
    for uc in _running:
        with contextlib.suppress(unicorn.UcError):
            uc.emu_stop()


def is_signal(exc: BaseException) -> bool:
    """Whether ``exc`` is the exception of a signal that arrived (not one code raised)."""
    return bool(_pending) and exc is _pending[0]


def raise_pending() -> None:
    """Raise the exception of a signal that arrived, if one did."""
    if _pending:
        raise _pending[0]


def unraisable(info: sys.UnraisableHookArgs) -> None:
    """A ``sys.unraisablehook`` that keeps the signal's lost exception quiet
    (it is raised again at the next boundary) and reports any other."""
    if not (_pending and info.exc_value is _pending[0]):
        sys.__unraisablehook__(info)


def clear() -> None:
    """Forget the signal (the process is done handling it)."""
    _pending.clear()


__all__ = ["arrived", "clear", "emulating", "raise_pending", "unraisable"]
