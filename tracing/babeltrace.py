"""Run the real babeltrace2 CLI on a trace and parse what it prints.

Used by the tests and the benchmark to check traces with the reference
reader. The ``pretty`` sink prints one event per line on stdout
(``[s.nnnnnnnnn] (+delta) host name: { packet ctx }, { event ctx }, { fields }``
with ``--clock-seconds``) and the discarded-event and discarded-packet
warnings on stderr (babeltrace2 src/plugins/text/pretty/print.c).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_LINE = re.compile(r"^\[(\d+)\.(\d{9})\] (?:\([^)]*\) )?\S+ (\S+): (.*)$")
_DISCARDED = re.compile(r"Tracer discarded (\d+) events? between")
_MAYBE = re.compile(r"Tracer may have discarded events")
_PACKETS = re.compile(r"Tracer discarded (\d+) packets? between")


@dataclass
class BtEvent:
    timestamp: int
    name: str
    cpu: int
    tid: int
    procname: str
    fields: dict[str, int | str]


@dataclass
class BtOutput:
    events: list[BtEvent] = field(default_factory=list)
    discarded_events: list[int] = field(default_factory=list)
    discarded_packets: list[int] = field(default_factory=list)
    unknown_discards: int = 0
    stderr: str = ""


def available() -> str | None:
    """The babeltrace2 executable, or None when it is not installed."""
    return shutil.which("babeltrace2")


def _split(body: str) -> list[str]:
    """Split ``a = 1, b = "x, y"`` at the top-level commas."""
    parts, depth, quoted, start = [], 0, False, 0
    i = 0
    while i < len(body):
        ch = body[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
        i += 1
    if body[start:].strip():
        parts.append(body[start:].strip())
    return parts


def _value(text: str) -> int | str:
    if text.startswith('"'):
        return text[1:-1]
    return int(text, 0)


def _struct(text: str) -> dict[str, int | str]:
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"not a babeltrace2 structure: {text!r}")
    out: dict[str, int | str] = {}
    for item in _split(text[1:-1]):
        key, _, value = item.partition(" = ")
        out[key.strip()] = _value(value.strip())
    return out


def read(trace_dir: str | Path, exe: str = "babeltrace2") -> BtOutput:
    """Run ``babeltrace2 --clock-seconds DIR`` and parse events and warnings."""
    proc = subprocess.run([exe, "--clock-seconds", "--no-delta", str(trace_dir)],
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"babeltrace2 failed ({proc.returncode}): "
                           f"{proc.stderr.strip().splitlines()[-1:]}")
    out = BtOutput(stderr=proc.stderr)
    for line in proc.stdout.splitlines():
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"unparsed babeltrace2 line: {line!r}")
        ts = int(m[1]) * 1_000_000_000 + int(m[2])
        packet, context, fields = (_struct(p) for p in _split(m[4]))
        out.events.append(BtEvent(ts, m[3], int(packet["cpu_id"]), int(context["tid"]),
                                  str(context["procname"]), fields))
    for line in proc.stderr.splitlines():
        if (m := _DISCARDED.search(line)):
            out.discarded_events.append(int(m[1]))
        elif (m := _PACKETS.search(line)):
            out.discarded_packets.append(int(m[1]))
        elif _MAYBE.search(line):
            out.unknown_discards += 1
    return out


__all__ = ["BtEvent", "BtOutput", "available", "read"]
