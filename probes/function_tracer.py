"""The function and function-graph tracers: guest hypercalls to :class:`sim.event.Event`.

The guest tracers (``kernel/ftrace.c``) hand each traced call to the host
with a hypercall: ``HC_FTRACE`` (ip, parent_ip, current) from
``function_trace_call`` and ``ftrace_selftest_recursive_call``, and
``HC_FTRACE_GRAPH`` (func, depth | FTRACE_GRAPH_RETURN, current) from the
function-graph entry and ``ftrace_return_to_handler``. Each becomes one
event stamped with the CPU's modeled clock and the current task's pid and
comm (read from the task_struct at the offsets the guest exports in
``ftrace_task_layout``).

Each recording hypercall ends its CPU's turn, so that the event is
stamped with the CPU's exact modeled clock at the hypercall (instruction
counts are exact at turn ends only; see :meth:`FunctionTracer.on_turn`).
The events are recorded host-side, in order; the per-CPU guest ring
buffer is not used yet (see ``docs/ftrace.md``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from patcher.ftrace import ftrace_for
from patcher.tables import Tables
from sim.event import Event, EventClass, make_event, u
from sim.guest import MAX_INSTRUCTIONS, BootResult, Guest
from sim.machine import Cpu, Machine

Tracer = Literal["function", "function_graph", "selftest"]
TRACERS: tuple[str, ...] = ("function", "function_graph", "selftest")

#: The guest function each tracer registers with ftrace.
TRACER_FUNCTIONS = {"function": "function_trace_call",
                    "function_graph": "ftrace_graph_caller_entry",
                    "selftest": "ftrace_selftest_recursive_call"}

GRAPH_RETURN = 0x10000          # FTRACE_GRAPH_RETURN in linux/ftrace.h
TASK_COMM_LEN = 16


def event_classes(bits: int) -> dict[str, EventClass]:
    addr = u(bits, 16)
    return {"function": EventClass("function", (("ip", addr), ("parent_ip", addr))),
            "funcgraph_entry": EventClass("funcgraph_entry", (("func", addr), ("depth", u(32)))),
            "funcgraph_exit": EventClass("funcgraph_exit", (("func", addr), ("depth", u(32))))}


@dataclass
class Symbolizer:
    """Addresses to ``func+off/size`` from the ELF symbols."""

    tables: Tables

    def lookup(self, addr: int, *, return_address: bool = False) -> tuple[str, int, int] | None:
        """``(function, offset, size)`` of the function holding ``addr``.

        A return address is looked up one byte back, in the call that made
        it (as %pB does, lib/vsprintf.c): after a call to a function that
        never returns, the return address is the caller's end.
        """
        found = self.tables.image.symbol_at(addr - 1 if return_address else addr)
        if found is None:
            return None
        name, off = found
        start = (addr - 1 if return_address else addr) - off
        size = next(sz for a, sz, n in self.tables.image.functions if n == name and a == start)
        return name, addr - start, size

    def name(self, addr: int, *, return_address: bool = False) -> str:
        found = self.lookup(addr, return_address=return_address)
        return found[0] if found else f"{addr:#x}"

    def offset_size(self, addr: int, *, return_address: bool = False) -> str:
        found = self.lookup(addr, return_address=return_address)
        return f"{found[0]}+{found[1]:#x}/{found[2]:#x}" if found else f"{addr:#x}"


class FunctionTracer:
    """One tracer attached to a guest: register it, run, read :attr:`events`."""

    def __init__(self, guest: Guest, tables: Tables, *, tracer: Tracer = "function") -> None:
        if tracer not in TRACERS:
            raise ValueError(f"unknown tracer {tracer!r} (valid: {', '.join(TRACERS)})")
        self.guest = guest
        self.machine = guest.machine
        self.tracer = tracer
        self.tables = tables
        self.ftrace = ftrace_for(guest, tables)
        self.symbols = Symbolizer(tables)
        self.classes = event_classes(guest.arch.bits)
        self.events: list[Event] = []
        layout = guest.image.symbols.get("ftrace_task_layout")
        if layout is None:
            raise ValueError("the guest has no ftrace_task_layout: "
                             "not built with CONFIG_FUNCTION_TRACER")
        word = guest.arch.word
        self._pid_off, self._comm_off = guest.read_words(layout, 2, word)
        self._pending: list[list[tuple]] = [[] for _ in self.machine.cpus]
        guest.hypercalls.register("HC_FTRACE", self._hc_function)
        guest.hypercalls.register("HC_FTRACE_GRAPH", self._hc_graph)

    # -- control ---------------------------------------------------------------
    def start(self) -> None:
        """Register this tracer's guest function (replacing any other)."""
        self.ftrace.register_ftrace_function(TRACER_FUNCTIONS[self.tracer])

    def stop(self) -> None:
        self.ftrace.unregister_ftrace_function()

    # -- recording -------------------------------------------------------------
    def _task(self, task: int, cpu: Cpu) -> tuple[int, str]:
        if not task:
            return 0, f"swapper/{cpu.index}"
        pid = self.guest.arch.to_int(self.machine.read(task + self._pid_off, 4))
        raw = self.machine.read(task + self._comm_off, TASK_COMM_LEN)
        return pid, raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def _hc_function(self, cpu: Cpu, ip: int, parent_ip: int, task: int) -> None:
        """HC_FTRACE: one traced call (ip, parent_ip) of ``task``."""
        self._record(cpu, task, self.classes["function"], (ip, parent_ip))

    def _hc_graph(self, cpu: Cpu, func: int, depth: int, task: int) -> None:
        """HC_FTRACE_GRAPH: a function-graph entry or (GRAPH_RETURN set) exit."""
        kind = "funcgraph_exit" if depth & GRAPH_RETURN else "funcgraph_entry"
        self._record(cpu, task, self.classes[kind], (func, depth & ~GRAPH_RETURN))

    def _record(self, cpu: Cpu, task: int, cls: EventClass, values: tuple[int, int]) -> None:
        pid, comm = self._task(task, cpu)
        self._pending[cpu.index].append((cls, pid, comm, values))
        cpu.yield_turn()                    # stamped with the exact clock at the turn's end

    def on_turn(self, machine: Machine) -> None:
        """Stamp the events of the turn that just ended (pass to ``Guest.run``).

        A CPU's instruction count is exact only at the end of a turn, so
        each recording hypercall ends its CPU's turn there: the turn's
        count then stops at the hypercall, and its events get that clock.
        """
        for cpu in machine.cpus:
            pending = self._pending[cpu.index]
            for cls, pid, comm, values in pending:
                self.events.append(make_event(cls, cpu=cpu.index, timestamp=cpu.clock_ns,
                                              tid=pid, comm=comm, values=values))
            pending.clear()

    def run(self, max_instructions: int | None = MAX_INSTRUCTIONS) -> BootResult:
        """Run the guest with this tracer's clock stamping."""
        return self.guest.run(max_instructions=max_instructions, on_turn=self.on_turn)

    def recursion_caught(self) -> list[int]:
        """Per CPU: tracer entries the "disabled" counter refused."""
        addr = self.guest.image.symbols["ftrace_recursion_caught"]
        return self.guest.read_words(addr, len(self.machine.cpus), self.guest.arch.word)


__all__ = ["FunctionTracer", "Symbolizer", "TRACERS", "TRACER_FUNCTIONS", "event_classes"]
