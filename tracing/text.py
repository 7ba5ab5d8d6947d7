"""Text renderings of a trace: the kernel's ``trace`` file, the mcount RFC's lines, the
function_graph tracer's.

- ``text``: the ``trace`` file of the kernel's tracers, one line per event in
  time order, as ``kernel/trace/trace_output.c`` prints it without irq
  information (``trace_print_context``): the task as ``%16s-%-5d`` (comm,
  pid), the CPU as ``[%03d]``, the timestamp as `` %5lu.%06lu:`` (seconds,
  microseconds, rounded as ``ns2usecs`` rounds). A function-tracer event then reads ``func <-parent``
  (``trace_fn_trace``); any other event ``name: field=value ...`` (hex for
  addresses and flags), as a trace event's print format does.
- ``seed``: the mcount RFC's line (LKML, 2008-01-03),
  ``CPU <cpu>: <comm>:<pid> <func>+<off>/<size> <-- <parent>+<off>/<size>``;
  ``<func>+<off>`` is the mcount call site, ``<parent>+<off>`` the return
  address into the caller, sizes from the ELF symbols.
- ``graph``: the function_graph tracer's ``trace`` file (2.6.29
  ``kernel/trace/trace_functions_graph.c``): ``CPU) DURATION | FUNCTION``,
  a leaf call on one line, nested calls as ``func() {`` ... ``}``, the
  overhead mark ``+`` above 10 us and ``!`` above 100 us, and a separator
  with ``prev => next`` where a CPU switches tasks.

Timestamps and durations are the modeled clock (``sim.event``), not host time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Protocol, Sequence

from sim.event import Event


class Symbols(Protocol):
    """Function names for addresses (``probes.function_tracer.Symbolizer``)."""

    def name(self, addr: int) -> str: ...

    def offset_size(self, addr: int) -> str: ...


@dataclass(frozen=True)
class Header:
    """What the ``trace`` file says above its events: the tracer, and for v5.10's
    ``print_event_info`` the events overwritten before they could be read (the
    ring buffer's overrun) and the CPUs online."""

    tracer: str = "nop"
    overwritten: int = 0
    cpus: int = 1


def header(head: Header, entries: int) -> str:
    """v5.10's header with irq-info off (kernel/trace/trace.c ``s_show``,
    ``print_event_info``, ``print_func_help_header`` without tgid): ``entries`` in
    the buffer, of ``entries`` + the overrun written. The columns are the
    kernel's, which do not line up with :func:`kernel_line`'s."""
    return (f"# tracer: {head.tracer}\n"
            "#\n"
            f"# entries-in-buffer/entries-written: {entries}/{entries + head.overwritten}"
            f"   #P:{head.cpus}\n"
            "#\n"
            "#           TASK-PID     CPU#   TIMESTAMP  FUNCTION\n"
            "#              | |         |       |         |\n")


GRAPH_HEADER = ("# tracer: function_graph\n"
                "#\n"
                "# CPU  DURATION                  FUNCTION CALLS\n"
                "# |     |   |                     |   |   |   |\n")


def task_key(e: Event) -> tuple[int, int]:
    """The task that recorded ``e``: its pid, and for pid 0 its CPU too (each CPU
    has its own idle task, all with pid 0)."""
    return (e.cpu if e.tid == 0 else -1, e.tid)


def _comm(e: Event) -> str:
    """The task's comm; the idle task, which has none here, is the kernel's swapper/N."""
    return e.comm or (f"swapper/{e.cpu}" if e.tid == 0 else "")


def _cmdline(e: Event) -> str:
    """The comm the trace file shows for the task (v5.10 kernel/trace/trace.c
    __trace_find_cmdline): ``<idle>`` for pid 0."""
    return "<idle>" if e.tid == 0 else _comm(e)


def _proc(comm: str, pid: int) -> str:
    """``comm-pid`` centred in TRACE_GRAPH_PROCINFO_LENGTH (14) columns, the comm cut
    to 7 characters (v5.10 kernel/trace/trace_functions_graph.c print_graph_proc)."""
    text = f"{comm[:7]}-{pid}"
    spaces = max(0, 14 - len(text))
    return " " * (spaces // 2) + text + " " * (spaces - spaces // 2)


def _fields(e: Event) -> str:
    return " ".join(f"{name}={value:#x}" if ftype.kind == "int" and ftype.base == 16
                    else f"{name}={value}" for name, ftype, value in e.typed_fields())


def timestamp(ns: int) -> str:
    """``%5lu.%06lu`` seconds of a nanosecond time, rounded to the nearest
    microsecond as ``ns2usecs`` (kernel/trace/trace.c) rounds it."""
    usecs = (ns + 500) // 1000
    return f"{usecs // 1_000_000:5d}.{usecs % 1_000_000:06d}"


def kernel_line(e: Event, sym: Symbols | None = None) -> str:
    """One event as the kernel's ``trace`` file prints it (trace_print_context + event)."""
    context = f"{_cmdline(e):>16}-{e.tid:<5} [{e.cpu:03d}]  {timestamp(e.timestamp)}: "
    if e.cls.output is not None:
        return context + e.cls.output(e)
    if e.name == "function" and sym is not None:
        ip, parent = e.values
        return context + f"{sym.name(ip)} <-{sym.name(parent)}"
    return context + f"{e.name}: {_fields(e)}"


def text_lines(events: Sequence[Event], sym: Symbols | None = None,
               head: Header = Header()) -> Iterator[str]:
    yield from header(head, len(events)).splitlines()
    for e in events:
        yield kernel_line(e, sym)


def seed_lines(events: Iterable[Event], sym: Symbols) -> Iterator[str]:
    for e in events:
        if e.name != "function":
            continue
        ip, parent = e.values
        yield (f"CPU {e.cpu}: {_comm(e)}:{e.tid} {sym.offset_size(ip)} "
               f"<-- {sym.offset_size(parent)}")


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


def graph_lines(events: Iterable[Event], sym: Symbols) -> Iterator[str]:
    """The function_graph text; entries and exits are paired per task. A call is a
    leaf (``func();``) when the next event of its CPU is its return, whatever
    the other CPUs recorded between (v5.10 get_return_for_leaf peeks that CPU's
    buffer); a return whose entry was lost names its function (``} /* func */``)."""
    evs = [e for e in events if e.name in ("funcgraph_entry", "funcgraph_exit")]
    following: dict[int, int] = {}          # index -> the next index on the same CPU
    last_on: dict[int, int] = {}
    for i, e in enumerate(evs):
        if e.cpu in last_on:
            following[last_on[e.cpu]] = i
        last_on[e.cpu] = i
    open_at: dict[tuple[tuple[int, int], int], Event] = {}      # (task, depth) -> entry
    last_task: dict[int, tuple[str, int]] = {}
    leaf_exits: set[int] = set()
    yield from GRAPH_HEADER.splitlines()
    for i, e in enumerate(evs):
        if i in leaf_exits:
            continue
        func, depth = e.values
        task = (_cmdline(e), e.tid)
        if e.cpu in last_task and last_task[e.cpu] != task:      # verif_pid
            yield " ------------------------------------------"
            yield f" {e.cpu}) {_proc(*last_task[e.cpu])} => {_proc(*task)}"
            yield " ------------------------------------------"
            yield ""
        last_task[e.cpu] = task
        indent = "  " * depth
        nxt = evs[following[i]] if i in following else None
        if e.name == "funcgraph_entry":
            if (nxt is not None and nxt.name == "funcgraph_exit" and nxt.tid == e.tid
                    and nxt.values == e.values):
                yield (f"{e.cpu:2d}){_duration(nxt.timestamp - e.timestamp)}|"
                       f"{indent}{sym.name(func)}();")
                leaf_exits.add(following[i])
                continue
            open_at[(task_key(e), depth)] = e
            yield f"{e.cpu:2d}){_duration(None)}|{indent}{sym.name(func)}() {{"
        else:
            start = open_at.pop((task_key(e), depth), None)
            if start is None:
                yield f"{e.cpu:2d}){_duration(None)}|{indent}}} /* {sym.name(func)} */"
            else:
                yield f"{e.cpu:2d}){_duration(e.timestamp - start.timestamp)}|{indent}}}"


#: Each text rendering: name -> (events in time order, symbols, header) -> lines.
RENDERERS: dict[str, Callable[[list[Event], Symbols | None, Header], Iterator[str]]] = {
    "text": text_lines,
    "seed": lambda events, sym, _head: seed_lines(events, sym),
    "graph": lambda events, sym, _head: graph_lines(events, sym),
}


def time_order(events: Iterable[Event]) -> list[Event]:
    """Merged across CPUs by timestamp (ties by CPU, then arrival), as the trace file is."""
    return sorted(events, key=lambda e: (e.timestamp, e.cpu))


def render(fmt: str, events: Iterable[Event], sym: Symbols | None = None,
           head: Header = Header()) -> Iterator[str]:
    """``fmt`` lines of ``events`` in time order."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown text format {fmt!r} (valid: {', '.join(RENDERERS)})")
    return RENDERERS[fmt](time_order(events), sym, head)


__all__ = ["GRAPH_HEADER", "Header", "RENDERERS", "Symbols", "graph_lines", "header",
           "kernel_line",
           "render", "seed_lines", "task_key", "text_lines", "time_order", "timestamp"]
