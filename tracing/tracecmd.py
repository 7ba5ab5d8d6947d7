"""Run the real ``trace-cmd report`` on a trace.dat and parse what it prints.

Used by the tests to check kisim's trace.dat with the reference reader.
``trace-cmd report`` (tracecmd/trace-read.c, 3.1.6) prints one line per
event, ``%16s-%-5d [%03d] %6.1000d: NAME: INFO`` (comm, pid, CPU, seconds
rounded to the microsecond, the event's name, its print format or plugin
output), and before the first event of a page that follows lost events,
``CPU:N [COUNT EVENTS DROPPED]``.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d{6}):\s+(\S+):\s*(.*)$")
_DROPPED = re.compile(r"^CPU:(\d+) \[(\d+) EVENTS DROPPED\]$")
TIMEOUT = 120
INTERRUPTED = "trace-cmd: Received SIGINT"


@dataclass(frozen=True)
class ReportLine:
    comm: str
    pid: int
    cpu: int
    time: str            # "secs.usecs" as printed
    name: str
    info: str


@dataclass
class Report:
    lines: list[ReportLine] = field(default_factory=list)
    dropped: dict[int, int] = field(default_factory=dict)     # cpu -> events reported lost
    other: list[str] = field(default_factory=list)             # anything else on stdout
    stderr: str = ""


def available() -> str | None:
    """The trace-cmd executable, or None when it is not installed."""
    return shutil.which("trace-cmd")


def run(*args: str | Path) -> subprocess.CompletedProcess:
    """``trace-cmd ARGS``; an error exit raises, and so does an interrupted report:
    trace-cmd's SIGINT handler (tracecmd/trace-read.c ``sig_end()``) says so on
    stderr and exits 0, with what it had printed so far."""
    exe = available()
    if exe is None:
        raise FileNotFoundError("trace-cmd is not installed")
    done = subprocess.run([exe, *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, check=True)
    if INTERRUPTED in done.stderr:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout,
                                            done.stderr)
    return done


def report(path: str | Path, *options: str) -> Report:
    """``trace-cmd report OPTIONS PATH``, parsed."""
    return _parse(run("report", *options, path))


def _parse(done: subprocess.CompletedProcess) -> Report:
    out = Report(stderr=done.stderr)
    for line in done.stdout.splitlines():
        m = _LINE.match(line)
        if m:
            comm, pid, cpu, time, name, info = m.groups()
            out.lines.append(ReportLine(comm, int(pid), int(cpu), time, name, info))
            continue
        m = _DROPPED.match(line)
        if m:
            cpu = int(m.group(1))
            out.dropped[cpu] = out.dropped.get(cpu, 0) + int(m.group(2))
        elif line.strip() and not line.startswith("cpus="):
            out.other.append(line)
    return out


__all__ = ["Report", "ReportLine", "available", "report", "run"]
