"""A user's protocol, run under guard: whatever it does wrong is one
:class:`ProtocolError` naming it, and a run that never returns is stopped.

The checker calls a protocol as the kernel calls ``text_poke_bp`` or
``patch_text`` (arch/x86/kernel/alternative.c, arch/arm/kernel/patch.c):
``protocol(port, sites)``. A user's function that raises, takes other
arguments or recurses without end is a bad input, not a checker crash;
one that loops is stopped after ``timeout`` seconds of one run (a real
timer, SIGALRM, so it fires inside a Python loop too), and so is a module
whose import loops (:func:`time_limited`); ``sys.exit()`` in either is an
error too, never the command's exit. A guest CPU that
crashes while the protocol runs (the CPUs run at every step of it) is the
protocol's finding, not its error: :class:`~sim.errors.GuestFault` passes
through to the checker, which reports it with its seed.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import signal
import threading
from types import FrameType
from typing import Iterator

from arches.base import TextPokeBatch
from patchcheck.sites import CheckerError
from sim import signals
from sim.errors import GuestFault

#: Seconds one run of a user protocol may take (--protocol-timeout). A run
#: of the arch's own protocols takes well under 0.1 s on the loop and under
#: a second on the guest kernel; 30 s leaves slack for a slow host.
DEFAULT_PROTOCOL_TIMEOUT = 30.0
MAX_PROTOCOL_TIMEOUT = 86_400.0


class ProtocolError(CheckerError):
    """A user's protocol raised, has the wrong signature, or did not return."""


class _Expired(BaseException):
    """The timer fired (a BaseException, so a protocol's ``except Exception``
    cannot swallow it)."""


def check_signature(fn: object, name: str) -> None:
    """Refuse, before any run, a protocol that cannot be called as ``fn(port, sites)``."""
    try:
        signature = inspect.signature(fn)              # type: ignore[arg-type]
    except ValueError:                  # no signature to inspect (a builtin): try at run time
        return
    try:
        signature.bind(None, None)
    except TypeError:                   # its words are the call's ("too many ... arguments")
        raise ProtocolError(f"--protocol {name}: must take (port, sites); it takes "
                            f"{signature}") from None


def described(err: BaseException) -> str:
    """``Type: message`` of a user protocol's exception, whose own ``__str__`` may fail."""
    try:
        message = str(err)
    except Exception:                   # the user's __str__: any failure at all
        message = "(its message could not be printed)"
    return f"{type(err).__name__}: {message}"


def guarded(fn: TextPokeBatch, name: str, timeout: float | None) -> TextPokeBatch:
    """``fn`` with every failure turned into one :class:`ProtocolError` naming ``name``."""

    @functools.wraps(fn)
    def run(port: object, sites: object) -> object:
        try:
            with time_limited(name, timeout):
                return fn(port, sites)               # type: ignore[arg-type]
        except (ProtocolError, GuestFault):
            raise
        except RecursionError:
            raise ProtocolError(f"--protocol {name}: recursed too deeply "
                                "(RecursionError)") from None
        except BaseException as err:                 # the user's code: any error at all
            if isinstance(err, (SystemExit, _Expired)) or signals.is_signal(err):
                raise                                # time_limited's, or the user's Ctrl-C
            raise ProtocolError(f"--protocol {name}: raised {described(err)}") from None
    return run


@contextlib.contextmanager
def time_limited(name: str, timeout: float | None, doing: str = "") -> Iterator[None]:
    """Run the block as the user's code of protocol ``name`` (a run, or ``doing``,
    e.g. its import): :class:`ProtocolError` if it takes over ``timeout`` seconds
    or calls ``sys.exit()``."""
    what = f"--protocol {name}:" + (f" {doing}" if doing else "")
    try:
        with _deadline(timeout):
            yield
    except _Expired:
        raise ProtocolError(f"{what} did not return within {timeout:g} s "
                            "(--protocol-timeout)") from None
    except SystemExit as done:
        raise ProtocolError(f"{what} called sys.exit({done.code!r})") from None


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`_Expired` in this thread after ``seconds`` (main thread only:
    a signal handler cannot be set elsewhere, e.g. in a Dask worker thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise _Expired

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
