"""``kisim kprobe-events``: define kprobe events as tracefs takes them, and show them.

Each definition (``--file`` first, then the arguments, in order) is written
to the guest's ``kprobe_events`` file (probes/trace_kprobe.py): parsed with
v5.10's rules and registered as a real kprobe or kretprobe on the built
kernel, without running a workload. Prints what reading ``kprobe_events``
shows, then each event's ``events/GRP/EVENT/format``; ``--json`` gives the
same as data: the listing, and each event's id, probes (with the address
each is registered at, null while its module is not loaded) and record
fields. A definition v5.10 refuses prints the kernel's error_log entry and
exits 2. ``kisim trace --kprobe-event`` records their hits.
"""
from __future__ import annotations

import argparse
from typing import Any

from kbuild import build
from kisim.commands.common import (add_arch, add_json, add_modules, add_set, kprobe_lines,
                                   overrides, print_json, warn_kprobe_events)
from kisim.errors import UsageError
from patcher.instrument import attach
from probes.kprobe_events import split_lines
from probes.trace_kprobe import TraceKprobe, entry_kprobe, kprobe_events
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
    add_json(p)
    p.set_defaults(func=cmd_kprobe_events)


def event_doc(tk: TraceKprobe) -> dict[str, Any]:
    """One event for --json: its probes, and its record's fields at the offsets its
    format file gives them."""
    ev = tk.event
    return {"event": f"{ev.group}/{ev.event}", "id": tk.id,
            "type": "kretprobe" if ev.is_return else "kprobe",
            "probes": [{"definition": d.show(), "place": d.place(),
                        "address": None if p is None else entry_kprobe(p).addr}
                       for d, p in tk.probes],
            "fields": [{"name": a.name, "fetch": a.comm, "type": a.fieldtype,
                        "offset": ev.head_size + a.offset, "size": a.size} for a in ev.args],
            "format": tk.format()}


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
    listing = events.listing() if events else []
    found = list(events.events.values()) if events else []
    if args.json:
        print_json({"arch": args.arch, "kprobe_events": listing,
                    "events": [event_doc(tk) for tk in found],
                    "trace_kprobe_warnings": events.warnings if events else []})
        return 0
    for line in listing:
        print(line)
    for tk in found:
        print(f"\n# events/{tk.event.group}/{tk.event.event}/format")
        print(tk.format(), end="")
    return 0
