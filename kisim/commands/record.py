"""``kisim record``: ``trace-cmd record``'s common flags, on a guest run, into a trace.dat.

``kisim record --arch A [-e SYSTEM[:EVENT] [-f FILTER]]... [-p function|function_graph]
[-l FUNC]... [-n FUNC]... [-g FUNC]... [-b KB] [-o FILE] [-C global]
[--kprobe-event DEF]... [--kprobe-events FILE] [WORKLOAD]``
boots the guest, enables what the flags say, runs WORKLOAD (a kisim workload or
``MOD:FUNC``, default hackbench) and writes trace.dat (default ``./trace.dat``) for
``trace-cmd report`` and KernelShark. As in trace-cmd 3.1.6: ``-e`` takes ``SYSTEM``,
``SYSTEM:EVENT``, ``EVENT`` or ``all`` (globs too) and repeats; ``-f`` filters the
``-e`` before it (after ``-e SYSTEM``, it is the system's filter); ``-l``/``-n`` are
set_ftrace_filter / set_ftrace_notrace words and
select the function tracer if ``-p`` names none, ``-g`` set_graph_function words
(selecting function_graph); ``-b`` is the buffer per CPU in KiB; ``-C`` names the
clock. kisim has one, the modeled clock, synchronized across CPUs (trace-cmd's
``global``). Its other flags are refused by name; ``--module`` is kisim's (a guest
module's source), not trace-cmd's function filter. Every kprobe event
defined is recorded; ``-e GROUP:EVENT`` names one for a ``-f`` filter. ``-e markers``
records every marker hit (the ``markers:marker`` event), ``-e markers:NAME`` those of
the markers called NAME (a glob).
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from typing import NoReturn

from arches import get_arch
from kbuild import build
from kisim.commands.common import (add_buffer_args, add_cycles, add_json, add_kprobe_args,
                                   add_run_args, check_drain, check_function_tracer,
                                   checksum_checked, checksum_word, config_note, cpus_text,
                                   function_tracer, int_in, kprobe_counts, kprobe_lines,
                                   kprobe_session, overrides, path, print_json,
                                   print_kprobe_counts, run_traced, timing, trace_options)
from kisim.errors import UsageError
from patcher.tables import load_tables
from sim.guest import Guest, check_workload
from tracing.ring import MAX_SUBBUFS
from tracing.selection import kprobe_filters, select, subbufs_for
from tracing.tracedat import TraceDatSink, output_file

TRACERS = ("nop", "function", "function_graph")
#: The most -b may ask for, KiB per CPU (tracing.ring.MAX_RING_BYTES bounds all CPUs).
MAX_KB = 64 << 10
#: trace-cmd record's other options (``trace-cmd record -h``, 3.1.6), refused by name.
UNSUPPORTED = {
    "-F": "filter only on the given process", "-P": "trace the given pid",
    "-c": "also trace the children", "-T": "do a stacktrace on all events",
    "-m": "max size per CPU", "-M": "set CPU mask to trace",
    "-v": "negate -e", "-d": "disable function tracer when running",
    "-D": "full disable of function tracing", "-O": "option to enable",
    "-r": "real time priority of the capture threads", "-s": "sleep interval between recording",
    "-S": "used with --profile", "-N": "host:port to connect to", "-V": "cid:port to connect to",
    "-t": "used with -N", "-B": "create sub buffer", "-k": "do not reset the buffers",
    "-i": "do not fail if an event is not found", "-q": "print no output",
    "-G": "soft and hard irqs as global", "-R": "trigger for previous -e event",
    "-A": "agent", "--quiet": "print no output", "--temp": "directory for temp files",
    "--by-comm": "used with --profile", "--profile": "options for report --profile",
    "--func-stack": "stack trace for function tracer",
    "--max-graph-depth": "limit function_graph depth",
    "--cmdlines-size": "kernel saved_cmdlines_size", "--no-filter": "include trace-cmd threads",
    "--proc-map": "save the traced processes' address map", "--user": "run as a given user",
    "--tsc2nsec": "convert the clock with the TSC multiplier",
    "--tsync-interval": "guest timestamp synchronization", "--poll": "don't block reading",
    "--name": "agent name", "--file-version": "trace file version",
    "--compression": "compress the trace file", "--proxy": "vsocket proxy"}


class _Refuse(argparse.Action):
    """A trace-cmd record option kisim does not have: one line, exit 2."""

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:
        parser.error(f"{option_string} ({UNSUPPORTED[option_string]}) is a trace-cmd record "
                     "option kisim record does not support")


class _Event(argparse.Action):
    """``-e SPEC``: one more (spec, filter) pair, in order."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        namespace.events = [*namespace.events, [values, None]]


class _Filter(argparse.Action):
    """``-f FILTER``: the filter of the ``-e`` before it."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if not namespace.events:
            parser.error("-f FILTER filters the -e EVENT before it; give -e first")
        if namespace.events[-1][1] is not None:
            parser.error(f"-e {namespace.events[-1][0]} has a filter already")
        namespace.events[-1][1] = values


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("record", help="trace-cmd record's flags: record a run "
                                             "into trace.dat",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(p)
    p.set_defaults(events=[])
    p.add_argument("-e", action=_Event, metavar="SYSTEM[:EVENT]",
                   help="enable events (repeatable): kmem, sched, kmem:kmalloc, "
                        "sched_switch, all, globs")
    p.add_argument("-f", action=_Filter, metavar="FILTER",
                   help="filter for the previous -e (v5.10's filter grammar)")
    p.add_argument("-p", choices=TRACERS, default=None, dest="plugin",
                   help="tracer: function or function_graph (nop: none)")
    p.add_argument("-l", action="append", default=[], metavar="FUNC", dest="funcs",
                   help="set_ftrace_filter word (repeatable)")
    p.add_argument("-n", action="append", default=[], metavar="FUNC", dest="notrace",
                   help="set_ftrace_notrace word (repeatable); notrace wins")
    p.add_argument("-g", action="append", default=[], metavar="FUNC", dest="graph",
                   help="set_graph_function word (repeatable): function_graph records "
                        "only these functions' calls and what they call")
    p.add_argument("-b", type=int_in(1, MAX_KB), default=None, metavar="KB",
                   help="buffer per CPU in KiB (sub-buffers of --subbuf-size bytes)")
    p.add_argument("-o", default="trace.dat", metavar="FILE", dest="output", type=path,
                   help="output file (default trace.dat)")
    p.add_argument("-C", default="global", metavar="CLOCK", dest="clock",
                   help="trace clock: global, kisim's modeled clock (the only one)")
    add_kprobe_args(p)
    p.add_argument("named_workload", nargs="?", default=None, metavar="WORKLOAD",
                   help="what to run (like --workload; default hackbench)")
    add_buffer_args(p)
    add_cycles(p, "count")
    add_json(p)
    for flag in UNSUPPORTED:
        p.add_argument(flag, action=_Refuse, nargs="?", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_record, workload=None)     # None: not given (cmd_record)


def cmd_record(args: argparse.Namespace) -> int:
    if args.named_workload is not None and args.workload is not None:
        raise UsageError(f"WORKLOAD {args.named_workload} and --workload {args.workload}: "
                         "name the workload once")
    args.workload = args.named_workload or args.workload or "hackbench"
    check_workload(args.workload, args.size)
    if args.clock != "global":
        raise UsageError(f"-C {args.clock}: kisim records with one clock, the modeled "
                         "clock synchronized across CPUs: global")
    if args.b is not None and args.subbufs is not None:
        raise UsageError("-b KB and --subbufs both size the buffers; give one")
    tracer = args.plugin or ("function_graph" if args.graph else
                             "function" if args.funcs or args.notrace else "nop")
    if tracer == "nop" and (args.funcs or args.notrace):
        raise UsageError("-l/-n filter the function tracers; -p nop has none")
    if args.graph and tracer != "function_graph":
        raise UsageError(f"-g sets the function_graph tracer's functions; not for -p {tracer}")
    lines = kprobe_lines(args)
    chosen = select(get_arch(args.arch), [tuple(e) for e in args.events], bool(lines))
    probes = chosen.probes
    if not probes and tracer == "nop" and not lines:
        raise UsageError("no event or tracer to record: give -e EVENT or -p TRACER")
    check_drain(args)
    output = output_file(args.output)          # refused now, before the build and the run
    config_note(args)
    b = build(args.arch, args.config, overrides=overrides(args), modules=args.modules)
    if tracer != "nop":
        check_function_tracer(b, tracer, bool(args.funcs or args.notrace or args.graph))
    guest = Guest(b, cpus=args.cpus, workload=args.workload, size=args.size,
                  quantum=args.quantum, seed=args.seed, expect=args.expect,
                  timing=timing(args))
    ft = None
    if tracer != "nop":
        ft = function_tracer(guest, load_tables(b.elf, b.spec), tracer, args.funcs,
                             args.notrace, graph=args.graph)
        probes += ft.event_names
    options = replace(trace_options(args, b.config, probes, args.max_instructions),
                      markers=chosen.markers)
    if args.b is not None:
        subbufs = subbufs_for(args.b, options.subbuf_size)
        if subbufs > MAX_SUBBUFS:
            raise UsageError(f"-b {args.b}: {subbufs} sub-buffers of {options.subbuf_size} "
                             f"bytes, over the {MAX_SUBBUFS} of a CPU's ring (at most "
                             f"-b {MAX_SUBBUFS * options.subbuf_size // 1024} here)")
        options = replace(options, subbufs=subbufs)
    session, events = kprobe_session(
        guest, replace(options, filters=chosen.filters, kprobe_events=lines),
        lambda events: kprobe_filters(chosen.kprobe_specs, events))
    options = session.options
    sink = TraceDatSink(output, guest.arch.name, session.classes, guest.image, events)
    if ft is not None:
        ft.start()
    result = run_traced(session, sink, "recording", args)
    sink.close()
    size = output.stat().st_size
    if args.json:
        data = result.to_json()
        data.update(tracer=tracer, output=str(output), trace_bytes=size,
                    checksum_checked=checksum_checked(args),
                    kprobe_event_counts=kprobe_counts(events))
        print_json(data)
        return 0 if result.checksum_ok else 1
    recorded = [*options.probes, *(f"{g}:{e}" for g, e in (events.events if events else ()))]
    for cpu in range(result.cpus):       # trace-cmd record's closing per-CPU stats
        print(sink.stats[cpu].text(cpu) if cpu in sink.stats else f"CPU: {cpu}\n(no events)")
    print(f"{result.arch}, {cpus_text(result.cpus)}, {result.workload}: events "
          f"{', '.join(recorded) or 'none'}; tracer {tracer}; {result.total.recorded:,} recorded, "
          f"{result.total.discarded:,} discarded, {result.total.overwritten:,} overwritten; "
          f"checksum {checksum_word(args, result.checksum_ok)}")
    print_kprobe_counts(events)
    print(f"trace: {output} (trace.dat version 6, {size:,} bytes)")
    return 0 if result.checksum_ok else 1
