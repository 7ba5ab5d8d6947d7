"""``kisim trace``: record a guest run through per-CPU ring buffers into a trace.

The guest's own probes record the chosen events into per-CPU ring buffers
of sub-buffers (so recording costs guest instructions); a host consumer
drains full sub-buffers every ``--drain-every`` turn boundaries into the
chosen sink (``tracing.sinks``): CTF 1.8 (babeltrace2, Trace Compass),
Chrome JSON (ui.perfetto.dev) or the kernel's text trace format. The
summary gives, per CPU and in total, events produced, recorded, discarded
and overwritten (produced = recorded + discarded + overwritten, checked),
packets, lost packets and the size.
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from kbuild import build
from kisim.commands.common import (add_buffer_args, add_cycles, add_json, add_kprobe_args,
                                   add_run_args, check_drain, checksum_checked, checksum_word,
                                   close_sink,
                                   config_note, cpus_text, filter_args, kprobe_counts,
                                   kprobe_lines, kprobe_session, note_removed, overrides, path,
                                   print_json, print_kprobe_counts, run_traced, timing,
                                   trace_options)
from sim.guest import Guest, check_workload
from tracing.events import GROUPS, PROBE_EVENTS, parse_probes
from tracing.outdir import POLICY
from tracing.session import TraceResult
from tracing.sinks import SinkContext, format_names, help_text, open_sink, run_info

FORMATS = format_names()


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("trace", help="record a run into per-CPU ring buffers and a trace")
    add_run_args(p)
    p.add_argument("--probes", default="kmem,sched", metavar="LIST",
                   help=f"events or groups, comma-separated: {', '.join(PROBE_EVENTS)}; "
                        f"groups {', '.join(GROUPS)} (default kmem,sched)")
    p.add_argument("--out", required=True, metavar="DIR", type=path,
                   help=f"trace directory to write. {POLICY}")
    p.add_argument("--format", choices=FORMATS, default="ctf",
                   help=f"{help_text(FORMATS)} (default ctf)")
    add_kprobe_args(p)
    p.add_argument("--filter", action="append", default=[], metavar="[GRP/]EVENT:EXPR",
                   help="an event's filter in v5.10's grammar (events/GRP/EVENT/filter), for a "
                        "recorded event or a kprobe event, e.g. 'kmem/kmalloc:bytes_req > 64', "
                        "or a system's (kmem, sched: events/SYSTEM/filter); repeatable; a "
                        "rejected event never reaches the buffer")
    add_buffer_args(p)
    add_cycles(p, "count")
    add_json(p)
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    check_workload(args.workload, args.size)
    probes = parse_probes(args.probes)
    check_drain(args)                 # before a possibly long build
    config_note(args)
    b = build(args.arch, args.config, overrides=overrides(args), modules=args.modules)
    options = replace(trace_options(args, b.config, probes, args.max_instructions),
                      kprobe_events=kprobe_lines(args), filters=filter_args(args.filter))
    guest = Guest(b, cpus=args.cpus, workload=args.workload, size=args.size,
                  quantum=args.quantum, seed=args.seed, expect=args.expect,
                  timing=timing(args))
    session, events = kprobe_session(guest, options)
    info = run_info(guest.arch, (
        b.key, args.cpus, args.workload, args.size, args.seed, args.quantum, probes,
        args.mode, (options.subbuf_size, options.subbufs), args.drain_every,
        options.kprobe_events), workload=args.workload, cpus=args.cpus,
        probes=",".join(probes), mode=args.mode)
    out = Path(args.out)
    sink = open_sink(args.format, out, SinkContext(info, session.classes, cpus=args.cpus,
                                                    image=guest.image,
                                                    dynamic=events))
    result = run_traced(session, sink, "tracing", args)
    info.add_totals(result.total.to_json())
    files = close_sink(sink)
    note_removed(sink.out)
    size = sum(f.stat().st_size for f in files)
    if args.json:
        data = result.to_json()
        data.update(format=args.format, out=str(out), trace_bytes=size,
                    checksum_checked=checksum_checked(args),
                    files=[str(f) for f in files], trace_uuid=str(info.trace_uuid),
                    kprobe_event_counts=kprobe_counts(events))
        print_json(data)
    else:
        _print_summary(result, args.format, out, size)
        if not result.checksum_ok or not checksum_checked(args):
            print(f"workload checksum {checksum_word(args, result.checksum_ok)}")
        for name, count in result.filtered.items():
            print(f"event {name}: {count:,} kept out by its filter")
        print_kprobe_counts(events)
    return 0 if result.checksum_ok else 1


def _print_summary(r: TraceResult, fmt: str, out: Path, size: int) -> None:
    o = r.options
    print(f"{r.arch}, {cpus_text(r.cpus)}, {r.workload} (size {r.size}): "
          f"probes {', '.join(o.probes)}")
    print(f"buffers: {o.subbufs} x {o.subbuf_size} bytes per CPU, {o.mode} mode, "
          f"drained every {o.drain_every} turn(s)")
    head = ("CPU", "produced", "recorded", "discarded", "overwritten", "packets", "lost pkts")
    print(f"{head[0]:>4} " + " ".join(f"{h:>11}" for h in head[1:]))
    rows = [(str(i), c) for i, c in enumerate(r.per_cpu)] + [("all", r.total)]
    for name, c in rows:
        print(f"{name:>4} " + " ".join(f"{v:>11,}" for v in (
            c.produced, c.recorded, c.discarded, c.overwritten, c.packets, c.lost_packets)))
    print(f"produced = recorded + discarded + overwritten on every CPU; "
          f"{r.instructions:,} guest instructions, {r.seconds:.2f} s host time")
    print(f"trace: {out} ({fmt}, {size:,} bytes)")
