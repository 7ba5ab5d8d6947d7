"""Text output of the function tracers, in the formats of their time.

- ``seed``: the mcount RFC's line (LKML, 2008-01-03),
  ``CPU <cpu>: <comm>:<pid> <func>+<off>/<size> <-- <parent>+<off>/<size>``;
  ``<func>+<off>`` is the mcount call site, ``<parent>+<off>`` the return
  address into the caller, sizes from the ELF symbols.
- ``ftrace``: the function tracer's ``trace`` file in 2.6.28
  (Documentation/ftrace.txt, kernel/trace/trace.c print_trace_fmt): a
  four-line header, then ``%16s-%-5d [%02d] %5lu.%06lu: func <-parent``.
- ``graph``: the function_graph tracer's ``trace`` file (2.6.29
  kernel/trace/trace_functions_graph.c): ``CPU) DURATION | FUNCTION``,
  a leaf call on one line, nested calls as ``func() {`` ... ``}``, the
  overhead mark ``+`` above 10 us and ``!`` above 100 us, and a separator
  with ``prev => next`` where a CPU switches tasks.

Durations and timestamps are the modeled clock (``sim.event``), not host time.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from probes.function_tracer import Symbolizer
from sim.event import Event

FTRACE_HEADER = ("# tracer: function\n"
                 "#\n"
                 "#           TASK-PID   CPU#    TIMESTAMP  FUNCTION\n"
                 "#              | |      |          |         |\n")
GRAPH_HEADER = ("# tracer: function_graph\n"
                "#\n"
                "# CPU  DURATION                  FUNCTION CALLS\n"
                "# |     |   |                     |   |   |   |\n")
FORMATS = ("seed", "ftrace", "graph")


def _comm(e: Event) -> str:
    """The task's comm; the idle task, which has none here, is the kernel's swapper/N."""
    return e.comm or (f"swapper/{e.cpu}" if e.tid == 0 else "")


def seed_lines(events: Iterable[Event], sym: Symbolizer) -> Iterator[str]:
    for e in events:
        if e.name != "function":
            continue
        ip, parent = e.values
        yield (f"CPU {e.cpu}: {_comm(e)}:{e.tid} {sym.offset_size(ip)} "
               f"<-- {sym.offset_size(parent, return_address=True)}")


def ftrace_lines(events: Iterable[Event], sym: Symbolizer) -> Iterator[str]:
    yield from FTRACE_HEADER.splitlines()
    for e in events:
        if e.name != "function":
            continue
        ip, parent = e.values
        usecs = e.timestamp // 1000
        yield (f"{_comm(e):>16}-{e.tid:<5} [{e.cpu:02d}] {usecs // 1_000_000:5d}."
               f"{usecs % 1_000_000:06d}: {sym.name(ip)} <-{sym.name(parent, return_address=True)}")


def _overhead(ns: int | None) -> str:
    """print_graph_overhead: '!' above 100 us, '+' above 10 us."""
    if ns is not None and ns > 100_000:
        return "! "
    if ns is not None and ns > 10_000:
        return "+ "
    return "  "


def _duration(ns: int | None) -> str:
    """The 15 characters between ``N)`` and ``|`` (print_graph_duration).

    The overhead mark, the microseconds, then as many nanosecond digits as
    fit in 7 digits in all, `` us ``, and spaces up to that width.
    """
    if ns is None:
        return " " * 15
    usecs = str(ns // 1000)
    width = len(usecs)
    text = usecs
    if width < 7:
        nsecs = f"{ns % 1000:03d}"[:7 - width]
        text += "." + nsecs
        width += len(nsecs)
    return " " + _overhead(ns) + text + " us " + " " * max(0, 7 - width)


def graph_lines(events: Iterable[Event], sym: Symbolizer) -> Iterator[str]:
    """The function_graph text; entries and exits are paired per task."""
    evs = [e for e in events if e.name in ("funcgraph_entry", "funcgraph_exit")]
    open_at: dict[tuple[int, int], Event] = {}      # (tid, depth) -> entry
    last_task: dict[int, tuple[str, int]] = {}
    yield from GRAPH_HEADER.splitlines()
    i = 0
    while i < len(evs):
        e = evs[i]
        func, depth = e.values
        task = (_comm(e), e.tid)
        if e.cpu in last_task and last_task[e.cpu] != task:
            prev = last_task[e.cpu]
            yield " ------------------------------------------"
            yield f" {e.cpu:>1}) {prev[0]:>8}-{prev[1]:<5}  =>  {task[0]:>8}-{task[1]:<5}"
            yield " ------------------------------------------"
        last_task[e.cpu] = task
        indent = "  " * depth
        nxt = evs[i + 1] if i + 1 < len(evs) else None
        if e.name == "funcgraph_entry":
            if (nxt is not None and nxt.name == "funcgraph_exit" and nxt.tid == e.tid
                    and nxt.cpu == e.cpu and nxt.values == e.values):
                yield (f"{e.cpu:2d}){_duration(nxt.timestamp - e.timestamp)}|"
                       f"{indent}{sym.name(func)}();")
                i += 2
                continue
            open_at[(e.tid, depth)] = e
            yield f"{e.cpu:2d}){_duration(None)}|{indent}{sym.name(func)}() {{"
        else:
            start = open_at.pop((e.tid, depth), None)
            ns = None if start is None else e.timestamp - start.timestamp
            yield f"{e.cpu:2d}){_duration(ns)}|{indent}}}"
        i += 1


def render(fmt: str, events: Iterable[Event], sym: Symbolizer) -> Iterator[str]:
    """``fmt`` lines of ``events``, merged across CPUs by timestamp as the trace file is."""
    events = sorted(events, key=lambda e: (e.timestamp, e.cpu))
    if fmt == "seed":
        return seed_lines(events, sym)
    if fmt == "ftrace":
        return ftrace_lines(events, sym)
    if fmt == "graph":
        return graph_lines(events, sym)
    raise ValueError(f"unknown format {fmt!r} (valid: {', '.join(FORMATS)})")


__all__ = ["FORMATS", "FTRACE_HEADER", "GRAPH_HEADER", "ftrace_lines", "graph_lines",
           "render", "seed_lines"]
