"""Chrome trace JSON for ui.perfetto.dev (and chrome://tracing).

The JSON object form, ``{"traceEvents": [...], "displayTimeUnit": "ns"}``,
written as a stream. Keys per the Trace Event Format (name, cat, ph, ts in
microseconds with a fractional part, pid, tid, args):

- every probe hit is an instant event (``ph: "i"``, thread scope ``s: "t"``)
  on the task that hit it, its fields as ``args``;
- ``sched_switch`` also closes a complete event (``ph: "X"`` with ``dur``)
  for the slice the previous task ran on that CPU, so tasks show as bars;
  a task runs on one CPU at a time, so its slices never overlap (Perfetto
  requires exact nesting);
- the function-graph tracer's ``funcgraph_entry`` / ``funcgraph_exit``
  become duration events (``ph: "B"`` / ``"E"``) on the task's track, named
  after the function (``symbolize``, else its address), so calls nest as
  slices; an exit that does not close the task's innermost open call
  (its entry was lost) stays an instant event;
- metadata events (``ph: "M"``) name the process (the guest kernel) and
  each thread after the guest task's comm. The idle task of CPU n
  (pid 0, ``swapper/n``) gets tid ``IDLE_TID_BASE + n`` so that each CPU's
  idle task is its own track.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterable

import fsio
from sim.event import Event

PID = 1
IDLE_TID_BASE = 1_000_000


def _tid(tid: int, cpu: int) -> int:
    return IDLE_TID_BASE + cpu if tid == 0 else tid


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def _args(event: Event) -> dict:
    out: dict[str, int | str] = {"cpu": event.cpu}
    for name, ftype, value in event.typed_fields():
        out[name] = f"{value:#x}" if ftype.kind == "int" and ftype.base == 16 else value
    return out


def write_chrome(events: Iterable[Event], out: str | Path, process_name: str,
                 symbolize: Callable[[int], str] | None = None) -> int:
    """Write ``events`` (in time order) as Chrome JSON; return the records written.

    ``symbolize`` names a function-graph event's function address. The file
    is written through :func:`fsio.atomic_open`.
    """
    names: dict[int, str] = {}
    running: dict[int, tuple[int, int, str]] = {}     # cpu -> (start ns, tid, comm)
    calls: dict[int, list[int]] = {}                  # tid -> open function-graph calls
    name_of = symbolize or (lambda addr: f"{addr:#x}")
    count = 0
    with fsio.atomic_open(out, "w") as f:
        f.write('{"displayTimeUnit": "ns", "traceEvents": [\n')

        def emit(record: dict) -> None:
            nonlocal count
            f.write((",\n" if count else "") + json.dumps(record, separators=(",", ":")))
            count += 1

        emit({"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
              "args": {"name": process_name}})
        for ev in events:
            tid = _tid(ev.tid, ev.cpu)
            if names.get(tid) != ev.comm:
                names[tid] = ev.comm
                emit({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid,
                      "args": {"name": ev.comm}})
            if ev.name == "sched_switch":
                start = running.get(ev.cpu)
                if start is not None and start[1] == tid:
                    emit({"name": start[2], "cat": "sched", "ph": "X", "ts": _us(start[0]),
                          "dur": _us(ev.timestamp - start[0]), "pid": PID, "tid": tid,
                          "args": {"cpu": ev.cpu}})
                f_ = ev.fields
                running[ev.cpu] = (ev.timestamp, _tid(int(f_["next_tid"]), ev.cpu),
                                   str(f_["next_comm"]))
            stack = calls.setdefault(tid, [])
            func = int(ev.values[0]) if ev.name.startswith("funcgraph_") else None
            if ev.name == "funcgraph_entry":
                stack.append(func)
                phase = "B"
            elif ev.name == "funcgraph_exit" and stack and stack[-1] == func:
                stack.pop()
                phase = "E"
            else:
                phase = "i"
            record = {"name": ev.name if func is None else name_of(func),
                      "cat": ev.name.split("_", 1)[0], "ph": phase,
                      "ts": _us(ev.timestamp), "pid": PID, "tid": tid, "args": _args(ev)}
            if phase == "i":
                record["s"] = "t"
                record["name"] = ev.name
            emit(record)
        f.write("\n]}\n")
    return count


__all__ = ["write_chrome"]
