"""``kisim``: the command-line entry point.

Every subcommand lives in its own module under :mod:`kisim.commands` and
exposes ``register(subparsers)``, which adds its parser and sets ``func``.
Bad input ends with one line on stderr and exit 2; a guest fault prints its
report (under ``--json``: a JSON ``fault`` object on stdout) and exits 1.
SIGINT exits 130 and SIGTERM 143 (128 + the signal number); one that lands
while the guest runs stops it at the end of the slice (:mod:`sim.signals`).
A signal that arrives while the first is being handled is ignored. None of
these ever shows a traceback. The handlers are installed first, before the
commands (and the simulator under them) are imported: a second of imports
is a second a Ctrl-C or a SIGTERM is likely to land in.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import signal
import sys
import threading
import time
from types import FrameType
from typing import Iterator, NoReturn

from kisim.errors import INTERRUPTED, TERMINATED, Terminated, one_line, user_errors

#: Long-running commands with no progress bar of their own: they get a spinner
#: with elapsed time on stderr (a terminal only; never under --json).
SPINNER_COMMANDS = ("ftrace", "kprobe", "probe", "kmemtrace")


_GIVEN = "_kisim_options_given"     # the options a parse has seen, by dest (removed after)


class _StoreOnce(argparse._StoreAction):
    """An option of one value given twice is refused, where argparse keeps the last
    without a word (options that repeat say so: ``action="append"``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        if option_string is not None:
            given = vars(namespace).setdefault(_GIVEN, {})
            if self.dest in given:
                parser.error(f"{given[self.dest]} given twice ({getattr(namespace, self.dest)!r}"
                             f", then {values!r}); give it once")
            given[self.dest] = option_string
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2), for every subcommand too, and each
    option of one value given at most once (:class:`_StoreOnce`)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)               # type: ignore[arg-type]
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def parse_known_args(self, args: list[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        parsed, rest = super().parse_known_args(args, namespace)
        vars(parsed).pop(_GIVEN, None)
        return parsed, rest

    def parse_args(self, args: list[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """argparse's, but words no parser took are the subcommand's error (the
        subcommand's parser leaves them to this one, which would name itself)."""
        parsed, rest = self.parse_known_args(args, namespace)
        if rest:
            command = getattr(parsed, "command", None)
            prog = f"{self.prog} {command}" if command else self.prog
            self.exit(2, f"{prog}: error: unrecognized arguments: {' '.join(rest)} "
                         f"(see '{prog} -h')\n")
        return parsed

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} -h')\n")

    def _parse_optional(self, arg_string: str):  # type: ignore[no-untyped-def]
        """argparse's, but a word starting '-:' is a kprobe_events deletion
        (``-:[GRP/]EVENT``), not an option: no option of kisim's starts so."""
        if arg_string.startswith("-:"):
            return None
        return super()._parse_optional(arg_string)


def build_parser() -> argparse.ArgumentParser:
    from kisim import commands
    parser = _Parser(
        prog="kisim",
        description="Emulated multi-architecture kernel instrumentation simulator: "
                    "x86-64, ARM and PowerPC guests under Unicorn, with markers, "
                    "immediate values, jump labels, tracepoints, ftrace and kprobes.")
    parser.add_argument("--version", action="version", version=f"kisim {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"kisim.commands.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def _version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" run from
    a checkout that was never installed."""
    from importlib import metadata
    try:
        return metadata.version("kisim")
    except metadata.PackageNotFoundError:
        return "unknown"


#: Seconds the process waits at exit for threads still running, before it leaves them.
STRAY_SECONDS = 2.0
#: A signal's exception raised before :mod:`sim.signals` was imported. Python may
#: lose it (raised in a weakref callback of the imports): it is raised again once
#: they are done.
_early: list[BaseException] = []


def main(argv: list[str] | None = None) -> int:
    """The ``kisim`` command: ``argv`` (default: the process's) parsed and run;
    the exit status."""
    status = _main(argv)
    if argv is None:                    # the program, not a caller in this process
        _leave_stray_threads(status)
    return status


def _leave_stray_threads(status: int) -> None:
    """End the process now if threads are still running after :data:`STRAY_SECONDS`
    (a ``--protocol`` module's, say): the interpreter would wait for them at exit,
    for ever. One ending on its own (a pool's manager thread) is waited for."""
    deadline = time.monotonic() + STRAY_SECONDS
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
    stray = [t.name for t in threading.enumerate()
             if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if stray:
        print(f"kisim: warning: not waiting for {len(stray)} thread(s) still running "
              f"({', '.join(stray[:3])}): started by a --protocol module?", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _main(argv: list[str] | None) -> int:
    if sys.stdout is None:              # started with fd 1 closed: print() would drop it all
        print("kisim: standard output is closed", file=sys.stderr)
        return 2
    with _signals():
        try:
            return _dispatch(argv)
        except BrokenPipeError:
            # the reader went away (e.g. `| head`): not an error; point stdout at
            # /dev/null so the interpreter's final flush does not complain
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except KeyboardInterrupt:
            print("kisim: interrupted", file=sys.stderr)
            return INTERRUPTED
        except Terminated:
            print("kisim: terminated", file=sys.stderr)
            return TERMINATED


def _dispatch(argv: list[str] | None) -> int:
    """Import the commands, run one; map what it raises to an exit status (see the
    module doc; a signal's exception goes up to :func:`main`)."""
    from kbuild.image import forget_warnings
    from kisim.commands.common import check_parsed
    from kisim.progress import ambient
    from sim import signals
    from sim.errors import GuestFault
    if _early:
        raise _early[0]                 # it came during the imports, and may have been lost
    forget_warnings()                   # this command's builds report their own
    parser = build_parser()
    signals.raise_pending()             # one lost while the commands were imported
    args: argparse.Namespace | None = None
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as done:      # --help, or argparse's one-line usage error
            return done.code if isinstance(done.code, int) else 2
        check_parsed(args)
        quiet = args.command not in SPINNER_COMMANDS or getattr(args, "json", False)
        with ambient(f"kisim {args.command}: running", enabled=not quiet):
            status = args.func(args) or 0
        if status not in (INTERRUPTED, TERMINATED):
            signals.raise_pending()     # its exception was lost (in a callback)
        return status
    except GuestFault as fault:
        if getattr(args, "json", False):
            from kisim.commands.common import print_json
            print_json({"command": args.command, "fault": fault.to_json()})
            print(f"kisim: guest fault: {fault}", file=sys.stderr)
        else:
            print(fault.report(), file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise                           # an OSError, but not an error: main handles it
    except user_errors() as err:
        print(f"kisim: error: {one_line(err)}", file=sys.stderr)
        if getattr(err, "detail", ""):      # e.g. the kernel's error_log command and caret
            print(err.detail, file=sys.stderr)
        return 2


@contextlib.contextmanager
def _signals() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt and SIGTERM :class:`Terminated`, once:
    a later SIGINT or SIGTERM (a second Ctrl-C while workers are being
    stopped) is ignored, so cleanup runs to its end. The old handlers come
    back on exit unless a signal fired: then the process is on its way out
    and both stay ignored (through interpreter shutdown, which would
    otherwise reset them to the default action and die of the second one).
    Until :mod:`sim.signals` is imported no slice can be running, and the
    exception is raised at once (:func:`sim.signals.arrived` would do the same)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        if fired:
            return
        fired.append(signum)
        exc = KeyboardInterrupt() if signum == signal.SIGINT else Terminated()
        signals = sys.modules.get("sim.signals")
        if signals is None:
            _early.append(exc)
            raise exc
        signals.arrived(exc)

    def unraisable(info: sys.UnraisableHookArgs) -> None:
        if _early and info.exc_value is _early[0]:
            return                      # lost, and raised again after the imports
        signals = sys.modules.get("sim.signals")
        (signals.unraisable if signals else sys.__unraisablehook__)(info)

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    old_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, signal.SIG_IGN if fired else previous)
        sys.unraisablehook = old_hook
        _early.clear()
        if "sim.signals" in sys.modules:
            sys.modules["sim.signals"].clear()


if __name__ == "__main__":
    sys.exit(main())
