"""The function and function-graph tracers: which guest tracer ftrace calls, and symbols.

The guest tracers (``kernel/ftrace.c``) record into the per-CPU ring
buffers of the trace-buffers work, as 2.6.28's function tracer writes into
its trace buffer: ``function`` (ip, parent_ip) from ``function_trace_call``
and ``ftrace_selftest_recursive_call``, ``funcgraph_entry`` /
``funcgraph_exit`` (func, depth) from the function-graph entry and
``ftrace_return_to_handler``. Each record carries the modeled timestamp
and the current task's pid and comm, and is counted by the buffer's loss
accounting like every other trace event.

:class:`FunctionTracer` chooses the tracer and drives ftrace
(:mod:`patcher.ftrace`: filters, registration, the sysctl);
:class:`tracing.session.TraceSession` records the run and drains the
buffers into a sink (the CLI puts the two together). :class:`Symbolizer`
turns addresses into ``func+off/size`` from the ELF symbols.
"""
from __future__ import annotations

from collections import Counter

from dataclasses import dataclass
from typing import Iterable, Literal

from patcher.ftrace import ftrace_for
from patcher.tables import Tables
from sim.event import Event
from sim.guest import Guest

Tracer = Literal["function", "function_graph", "selftest"]
TRACERS: tuple[str, ...] = ("function", "function_graph", "selftest")

#: The guest function each tracer registers with ftrace.
TRACER_FUNCTIONS = {"function": "function_trace_call",
                    "function_graph": "ftrace_graph_caller_entry",
                    "selftest": "ftrace_selftest_recursive_call"}

#: The ring-buffer events each tracer records (tracing.events.FTRACE_EVENTS).
TRACER_EVENTS: dict[str, tuple[str, ...]] = {
    "function": ("function",), "selftest": ("function",),
    "function_graph": ("funcgraph_entry", "funcgraph_exit")}


@dataclass
class Symbolizer:
    """Addresses to ``func+off/size``, as kallsyms names them."""

    tables: Tables

    def lookup(self, addr: int) -> tuple[str, int, int] | None:
        """``(function, offset, size)`` of the function holding ``addr``, looked up
        at ``addr`` itself, a return address too (v5.10 kernel/trace/trace_output.c
        seq_print_sym: kallsyms_lookup / sprint_symbol, not the backtrace's
        address - 1): a call that ends a function names the next one, on A32
        and on Thumb-2 (whose return addresses carry bit 0) alike. The size is
        kallsyms' (:meth:`sim.elf.Image.kallsyms_lookup`): up to the next symbol,
        so an address in the padding after a function names that function, and
        one past the text names none."""
        found = self.tables.image.kallsyms_lookup(addr)
        if found is None:
            return None
        start, size, name = found
        return name, addr - start, size

    def name(self, addr: int) -> str:
        found = self.lookup(addr)
        return found[0] if found else f"{addr:#x}"

    def offset_size(self, addr: int) -> str:
        found = self.lookup(addr)
        return f"{found[0]}+{found[1]:#x}/{found[2]:#x}" if found else f"{addr:#x}"


class FunctionTracer:
    """One tracer attached to a guest's ftrace: register it, stop it, read its counters."""

    def __init__(self, guest: Guest, tables: Tables, *, tracer: Tracer = "function") -> None:
        if tracer not in TRACERS:
            raise ValueError(f"unknown tracer {tracer!r} (valid: {', '.join(TRACERS)})")
        self.guest = guest
        self.machine = guest.machine
        self.tracer = tracer
        self.tables = tables
        self.ftrace = ftrace_for(guest, tables)
        self.symbols = Symbolizer(tables)
        self.event_names = TRACER_EVENTS[tracer]    # what it records (TraceOptions.probes)

    def start(self) -> None:
        """Register this tracer's guest function (replacing any other)."""
        self.ftrace.register_ftrace_function(TRACER_FUNCTIONS[self.tracer])

    def stop(self) -> None:
        self.ftrace.unregister_ftrace_function()

    def summary(self, events: Iterable[Event]) -> dict:
        """What the tracer did over the run that recorded ``events``: mcount sites and
        how many are live (every one without DYNAMIC_FTRACE: its calls are never
        nops), the functions set_ftrace_filter let through (None without
        DYNAMIC_FTRACE), and each traced function's calls, most called first."""
        ft, sites = self.ftrace, len(self.tables.mcount)
        calls = Counter(self.symbols.name(e.values[0]) for e in events
                        if e.name in ("function", "funcgraph_entry"))
        return {"dynamic_ftrace": ft.dynamic, "sites": sites,
                "sites_enabled": len(ft.enabled_sites()) if ft.dynamic else sites,
                "functions_traced": ft.filtered_functions() if ft.dynamic else None,
                "calls": dict(calls.most_common())}

    def recursion_caught(self) -> list[int]:
        """Per CPU: tracer entries the "disabled" counter refused."""
        addr = self.guest.image.symbols["ftrace_recursion_caught"]
        return self.machine.read_words(addr, len(self.machine.cpus))


__all__ = ["FunctionTracer", "Symbolizer", "TRACERS", "TRACER_EVENTS", "TRACER_FUNCTIONS"]
