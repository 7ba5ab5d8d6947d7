"""ftrace-style text, for reading a trace at a glance.

One line per event, in time order, as the ftrace ``trace`` file prints it
(kernel/trace/trace_output.c): the task as ``comm-pid``, the CPU in
brackets, the timestamp in seconds with microseconds, the event name and
its fields as ``name=value`` (hex for addresses and flags).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from sim.event import Event

HEADER = ("# tracer: kisim\n"
          "#\n"
          "#            TASK-PID    CPU#  TIMESTAMP  FUNCTION\n"
          "#               | |       |      |         |\n")


def format_event(ev: Event) -> str:
    secs, ns = divmod(ev.timestamp, 1_000_000_000)
    fields = " ".join(f"{name}={value:#x}" if ftype.kind == "int" and ftype.base == 16
                      else f"{name}={value}" for name, ftype, value in ev.typed_fields())
    return (f"{ev.comm:>16}-{ev.tid:<5} [{ev.cpu:03d}] {secs:5d}.{ns // 1000:06d}: "
            f"{ev.name}: {fields}")


def write_text(events: Iterable[Event], out: str | Path) -> int:
    """Write ``events`` (in time order) in ftrace style; return the lines written."""
    count = 0
    with open(out, "w") as f:
        f.write(HEADER)
        for ev in events:
            f.write(format_event(ev) + "\n")
            count += 1
    return count


__all__ = ["format_event", "write_text"]
