"""Every trace output format: one sink interface, one registry.

A sink consumes the drained event stream directly, packet by packet, as
:meth:`tracing.session.TraceSession.run` hands it over
(:class:`tracing.ring.PacketSink`), and :meth:`Sink.close` finishes it:

- ``ctf``: CTF 1.8, streamed to one file per CPU (:class:`tracing.ctf.CtfWriter`);
- ``chrome``: Chrome trace JSON for ui.perfetto.dev, ``DIR/trace.json``
  (:mod:`tracing.chrome`);
- ``trace-cmd``: trace-cmd's ``DIR/trace.dat`` (file version 6) for
  ``trace-cmd report`` and KernelShark (:mod:`tracing.tracedat`);
- ``text``, ``seed``, ``graph``: the text renderings of :mod:`tracing.text`
  (the kernel's ``trace`` file, the mcount RFC's lines, the function_graph
  tracer's), ``DIR/trace.txt`` or lines for stdout.

Chrome JSON and text are in time order across CPUs, so those sinks keep
the events until close and merge them there; no CTF is written and read
back. Every file goes through :mod:`fsio`, into a directory claimed by
:class:`tracing.outdir.OutDir`.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

from arches import Arch
import fsio
from sim.event import Event, EventClass
from tracing.chrome import write_chrome
from tracing.ctf import CtfWriter, PacketInfo, TraceInfo
from tracing.errors import TraceError
from tracing.outdir import OutDir
from tracing.text import Header, Symbols, render, time_order
from tracing.tracedat import FILE as TRACE_DAT, TraceDatSink

#: Namespace of the deterministic trace UUIDs (uuid5 of the run's parameters).
TRACE_NAMESPACE = uuid.UUID("6b697369-6d2d-7472-6163-652d63746631")


class Sink(Protocol):
    """Consumes packets of drained events; ``close`` finishes the output."""

    #: The directory it writes into (None: a file, or nothing), whose ``removed``
    #: names what ``close`` took away of the earlier output there.
    out: OutDir | None

    def write_packet(self, packet: PacketInfo, events: Iterable[Event]) -> int: ...

    def close(self) -> list[Path]: ...

    def abort(self) -> None: ...


@dataclass
class SinkContext:
    """What a sink may need besides the events."""

    info: TraceInfo
    classes: Sequence[EventClass]
    #: The tracer named in a text header (``nop`` for tracepoint events, as the kernel's).
    tracer: str = "nop"
    #: Function names for function-tracer events (seed, graph, the text's ``func <-parent``).
    symbols: Symbols | None = None
    #: The guest image (``sim.elf.Image``), whose symbols trace.dat carries as kallsyms.
    image: Any = None
    #: The kprobe events (``probes.trace_kprobe.TraceKprobes``), whose trace.dat
    #: ``format`` and records are their own.
    dynamic: Any = None
    #: The guest's CPUs (a text header's ``#P``).
    cpus: int = 1

    @property
    def process(self) -> str:
        return f"kisim {self.info.arch} kernel"


class _Buffered:
    """Keeps every event (every sink needing time order across CPUs does)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.out: OutDir | None = None     # the directory it writes into, if any

    def write_packet(self, packet: PacketInfo, events: Iterable[Event]) -> int:
        batch = list(events)
        self.events.extend(batch)
        return len(batch)

    def abort(self) -> None:
        self.events.clear()
        if self.out is not None:
            self.out.release()


class ChromeSink(_Buffered):
    """Chrome JSON into ``DIR/trace.json``."""

    FILE = "trace.json"

    def __init__(self, out: OutDir, ctx: SinkContext) -> None:
        super().__init__()
        self.out, self.ctx = out, ctx
        self.path = out.target(self.FILE)

    def close(self) -> list[Path]:
        sym = self.ctx.symbols
        write_chrome(time_order(self.events), self.path, self.ctx.process,
                     sym.name if sym is not None else None)
        self.out.commit([self.path])
        return [self.path]


class TextSink(_Buffered):
    """One of :data:`tracing.text.RENDERERS`, into ``DIR/trace.txt`` or as lines."""

    FILE = "trace.txt"

    def __init__(self, fmt: str, out: OutDir | None, ctx: SinkContext) -> None:
        super().__init__()
        self.fmt, self.out, self.ctx = fmt, out, ctx
        self.path = out.target(self.FILE) if out is not None else None
        self.overwritten: dict[int, int] = {}     # CPU -> events overwritten (cumulative)

    def write_packet(self, packet: PacketInfo, events: Iterable[Event]) -> int:
        self.overwritten[packet.cpu] = packet.events_overwritten
        return super().write_packet(packet, events)

    def lines(self) -> Iterable[str]:
        head = Header(self.ctx.tracer, sum(self.overwritten.values()), self.ctx.cpus)
        return render(self.fmt, self.events, self.ctx.symbols, head)

    def close(self) -> list[Path]:
        if self.out is None or self.path is None:
            return []
        with fsio.atomic_open(self.path, "w") as f:
            for line in self.lines():
                f.write(line + "\n")
        self.out.commit([self.path])
        return [self.path]


@dataclass(frozen=True)
class Format:
    """One output format of the registry."""

    name: str
    help: str
    #: Builds the sink; ``out`` is None when the format prints lines instead (text only).
    make: Callable[[OutDir | None, SinkContext], Sink]
    #: Lines for stdout are possible (the text renderings).
    text: bool = False
    #: The event family the format needs (None: any).
    needs: str | None = None
    aliases: tuple[str, ...] = field(default=())
    #: The file it writes in DIR (None: the CTF directory's own files).
    file: str | None = None


def trace_uuid(parameters: tuple) -> uuid.UUID:
    """The trace's UUID: the same run parameters give the same UUID (determinism)."""
    return uuid.uuid5(TRACE_NAMESPACE, repr(parameters))


def run_info(arch: Arch, parameters: tuple, **env: int | str) -> TraceInfo:
    """A run's trace metadata: the UUID its ``parameters`` give (:func:`trace_uuid`),
    the guest's byte order and arch, and each of ``env`` as ``kisim_NAME``, followed
    by the reference core's clock (``kisim_cpu_clock_hz``)."""
    return TraceInfo(arch.endian, trace_uuid(parameters), arch.name,
                     env={**{f"kisim_{k}": v for k, v in env.items()},
                          "kisim_cpu_clock_hz": arch.clock_hz})


def _ctf(out: OutDir | None, ctx: SinkContext) -> Sink:
    if out is None:
        raise TraceError("--format ctf needs --out DIR")
    return CtfWriter(out, ctx.info, ctx.classes)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("ctf", "CTF 1.8 directory (babeltrace2, Trace Compass)", _ctf),
    Format("chrome", "Chrome JSON (ui.perfetto.dev)", lambda out, ctx: ChromeSink(out, ctx),
           file=ChromeSink.FILE),
    Format("trace-cmd", "trace-cmd's trace.dat, version 6 (trace-cmd report, KernelShark)",
           lambda out, ctx: TraceDatSink(out, ctx.info.arch, ctx.classes, ctx.image,
                                          ctx.dynamic),
           file=TRACE_DAT),
    Format("text", "the kernel's trace file (kernel/trace/trace_output.c)",
           lambda out, ctx: TextSink("text", out, ctx), text=True, aliases=("ftrace",),
           file=TextSink.FILE),
    Format("seed", "the mcount RFC's lines (function tracer)",
           lambda out, ctx: TextSink("seed", out, ctx), text=True, needs="function"),
    Format("graph", "the function_graph tracer's trace file",
           lambda out, ctx: TextSink("graph", out, ctx), text=True, needs="funcgraph"),
)}


def format_names(*, needs: Sequence[str | None] = (None,), aliases: bool = False) -> list[str]:
    """The names of the formats whose needs are among ``needs`` (and their aliases)."""
    return [n for f in FORMATS.values() if f.needs in needs
            for n in (f.name, *(f.aliases if aliases else ()))]


def get_format(name: str) -> Format:
    for f in FORMATS.values():
        if name == f.name or name in f.aliases:
            return f
    raise TraceError(f"unknown format {name!r} (valid: {', '.join(format_names())})")


def open_sink(name: str, out: str | Path | None, ctx: SinkContext) -> Sink:
    """The sink of format ``name``; ``out`` (a trace directory) is claimed here, before
    the run: a directory kisim may not write into is refused now."""
    fmt = get_format(name)
    if out is None and not fmt.text:
        raise TraceError(f"--format {fmt.name} needs --out DIR")
    return fmt.make(None if out is None else OutDir(out), ctx)


def help_text(names: Sequence[str], *, text_to_stdout: bool = False) -> str:
    """``--format`` help: each format (not its aliases), with the file it writes in DIR."""
    out = []
    for n in names:
        f = get_format(n)
        if f.name != n:
            continue
        where = "" if f.file is None or (f.text and text_to_stdout) else f", DIR/{f.file}"
        out.append(f"{n}: {f.help}{where}")
    return "; ".join(out)


__all__ = ["FORMATS", "Format", "Sink", "SinkContext", "TRACE_NAMESPACE", "TextSink",
           "format_names", "get_format", "help_text", "open_sink", "run_info", "trace_uuid"]
