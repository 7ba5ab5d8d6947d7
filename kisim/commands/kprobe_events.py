"""``kisim kprobe-events``: define kprobe events as tracefs takes them, and show them.

Each definition (``--file`` first, then the arguments, in order) is written
to the guest's ``kprobe_events`` file (probes/trace_kprobe.py): parsed with
v5.10's rules and registered as a real kprobe or kretprobe on the built
kernel, without running a workload. Prints what reading ``kprobe_events``
shows, then each event's ``events/GRP/EVENT/format``. A definition v5.10
refuses prints the kernel's error_log entry and exits 2. ``kisim trace
--kprobe-event`` records their hits.
"""
from __future__ import annotations

import argparse

from kbuild import build
from kisim.commands.common import (add_arch, add_modules, add_set, kprobe_lines, overrides,
                                   warn_kprobe_events)
from kisim.errors import UsageError
from patcher.instrument import attach
from probes.kprobe_events import split_lines
from probes.trace_kprobe import kprobe_events
from sim.guest import Guest


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("kprobe-events", help="define kprobe events (tracefs syntax) and "
                                                    "show their kprobe_events line and format",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arch(p)
    p.add_argument("kprobe_event", nargs="*", metavar="DEF",
                   help="'p[:[GRP/]EVENT] SYM[+OFFS]|ADDR [FETCHARGS]', "
                        "'r[MAXACTIVE][:[GRP/]EVENT] SYM[+0] [FETCHARGS]' or '-:[GRP/]EVENT'")
    p.add_argument("--file", dest="kprobe_events", metavar="FILE",
                   help="definitions, one a line, '#' comments")
    add_set(p)
    add_modules(p, expect=False)
    p.set_defaults(func=cmd_kprobe_events)


def cmd_kprobe_events(args: argparse.Namespace) -> int:
    lines = kprobe_lines(args)
    if not (lines or args.kprobe_events):
        raise UsageError("give a definition or --file FILE")
    if not any(True for text in lines for _ in split_lines(text)):
        given = f" (--file {args.kprobe_events})" if args.kprobe_events else ""
        raise UsageError(f"no definition given: blank lines and comments define nothing{given}")
    guest = Guest(build(args.arch, overrides=overrides(args), modules=args.modules), cpus=1)
    events = kprobe_events(guest, attach(guest), lines)
    warn_kprobe_events(events)
    for line in events.listing() if events else ():
        print(line)
    for tk in events.events.values() if events else ():
        print(f"\n# events/{tk.event.group}/{tk.event.event}/format")
        print(tk.format(), end="")
    return 0
