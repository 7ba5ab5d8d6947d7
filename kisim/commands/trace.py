"""``kisim trace``: record a guest run through per-CPU ring buffers into a trace.

The guest's own probes record the chosen events into per-CPU ring buffers
of sub-buffers (so recording costs guest instructions); a host consumer
drains full sub-buffers every ``--drain-every`` turn boundaries; the trace
is CTF 1.8 (babeltrace2, Trace Compass), Chrome JSON (ui.perfetto.dev) or
ftrace-style text. The summary gives, per CPU and in total, events
produced, recorded, discarded and overwritten (produced = recorded +
discarded + overwritten, checked), packets, lost packets and the size.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Callable

from kbuild import build
from kisim.commands.boot import add_run_args
from kisim.commands.build import overrides
from kisim.commands.common import add_json, int_in, print_json
from kisim.errors import UsageError
from kisim.progress import progress
from sim.guest import Guest, check_workload
from tracing.chrome import write_chrome
from tracing.ctf import CtfWriter, TraceInfo
from tracing.ctfread import CtfTrace
from tracing.events import EVENTS, GROUPS, parse_probes
from tracing.ring import MAX_RING_BYTES, MAX_SUBBUF_SIZE, MAX_SUBBUFS, MODES
from tracing.session import TraceOptions, TraceResult, TraceSession
from tracing.text import write_text

FORMATS = ("ctf", "chrome", "text")
#: Namespace of the deterministic trace UUIDs (uuid5 of the run's parameters).
TRACE_NAMESPACE = uuid.UUID("6b697369-6d2d-7472-6163-652d63746631")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("trace", help="record a run into per-CPU ring buffers and a trace")
    add_run_args(p)
    p.add_argument("--probes", default="kmem,sched", metavar="LIST",
                   help=f"events or groups, comma-separated: {', '.join(EVENTS)}; "
                        f"groups {', '.join(GROUPS)} (default kmem,sched)")
    p.add_argument("--out", required=True, metavar="DIR", help="trace directory to write")
    p.add_argument("--format", choices=FORMATS, default="ctf",
                   help="ctf: CTF 1.8 directory; chrome: DIR/trace.json; "
                        "text: DIR/trace.txt (default ctf)")
    add_buffer_args(p)
    add_json(p)
    p.set_defaults(func=cmd_trace)


def add_buffer_args(p: argparse.ArgumentParser) -> None:
    """--mode, --subbuf-size, --subbufs, --drain-every: the ring buffers and their consumer."""
    p.add_argument("--mode", choices=tuple(MODES), default="discard",
                   help="when the buffer is full: drop new events, or overwrite the oldest "
                        "sub-buffer (default discard)")
    p.add_argument("--subbuf-size", type=int_in(1, MAX_SUBBUF_SIZE), default=None, metavar="S",
                   help=f"bytes per sub-buffer, at most {MAX_SUBBUF_SIZE} (default "
                        "CONFIG_RING_BUFFER_SUBBUF_SIZE)")
    p.add_argument("--subbufs", type=int_in(2, MAX_SUBBUFS), default=None, metavar="K",
                   help=f"sub-buffers per CPU, 2..{MAX_SUBBUFS} (default "
                        f"CONFIG_RING_BUFFER_SUBBUFS); all buffers of all CPUs together "
                        f"at most {MAX_RING_BYTES} bytes")
    p.add_argument("--drain-every", type=int, default=1, metavar="T",
                   help="the consumer drains every T turn boundaries (default 1; "
                        "larger values put the buffers under pressure)")


def buffer_geometry(args: argparse.Namespace, config: dict[str, str]) -> tuple[int, int]:
    """--subbuf-size/--subbufs, else the Kconfig values (unset without TRACEPOINTS)."""
    size = args.subbuf_size or int(config.get("RING_BUFFER_SUBBUF_SIZE") or 4096)
    count = args.subbufs or int(config.get("RING_BUFFER_SUBBUFS") or 8)
    return size, count


def trace_options(args: argparse.Namespace, config: dict[str, str], probes: tuple[str, ...],
                  max_instructions: int | None) -> TraceOptions:
    """The session's options from the buffer arguments (UsageError if out of range)."""
    if args.drain_every < 1:
        raise UsageError(f"--drain-every must be at least 1, not {args.drain_every}")
    size, count = buffer_geometry(args, config)
    return TraceOptions(probes, subbuf_size=size, subbufs=count, mode=args.mode,
                        drain_every=args.drain_every, max_instructions=max_instructions)


def _trace_uuid(args: argparse.Namespace, key: str, probes: tuple[str, ...],
                geometry: tuple[int, int]) -> uuid.UUID:
    return uuid.uuid5(TRACE_NAMESPACE, repr((key, args.cpus, args.workload, args.size,
                                             args.seed, args.quantum, probes, args.mode,
                                             geometry, args.drain_every)))


def cmd_trace(args: argparse.Namespace) -> int:
    check_workload(args.workload, args.size)
    probes = parse_probes(args.probes)
    if args.drain_every < 1:          # before a possibly long build
        raise UsageError(f"--drain-every must be at least 1, not {args.drain_every}")
    b = build(args.arch, args.config, overrides=overrides(args))
    options = trace_options(args, b.config, probes, args.max_instructions)
    geometry = (options.subbuf_size, options.subbufs)
    guest = Guest(b, cpus=args.cpus, workload=args.workload, size=args.size,
                  quantum=args.quantum, seed=args.seed)
    session = TraceSession(guest, options)
    out = Path(args.out)
    ctf_dir = out if args.format == "ctf" else Path(tempfile.mkdtemp(prefix="kisim-ctf-"))
    info = TraceInfo(guest.arch.endian, _trace_uuid(args, b.key, probes, geometry),
                     guest.arch.name,
                     env={"kisim_workload": args.workload, "kisim_cpus": args.cpus,
                          "kisim_mode": args.mode, "kisim_cpu_clock_hz": guest.arch.clock_hz})
    try:
        with progress(f"tracing {args.workload} on {args.arch}", enabled=not args.json) as adv:
            with CtfWriter(ctf_dir, info, session.classes) as writer:
                result = session.run(writer, on_progress=lambda n: adv(
                    0, description=f"tracing: {n:,} instructions"))
                writer.update_env({f"kisim_events_{k}": v
                                   for k, v in result.total.to_json().items()})
            files = convert(args.format, ctf_dir, out, f"kisim {args.arch} kernel")
    finally:
        if ctf_dir != out:
            shutil.rmtree(ctf_dir, ignore_errors=True)
    size = sum(f.stat().st_size for f in files)
    if args.json:
        data = result.to_json()
        data.update(format=args.format, out=str(out), trace_bytes=size,
                    files=[str(f) for f in files], trace_uuid=str(info.trace_uuid))
        print_json(data)
    else:
        _print_summary(result, args.format, out, size)
    return 0 if result.checksum_ok else 1


def convert(fmt: str, ctf_dir: Path, out: Path, process: str,
            symbolize: Callable[[int], str] | None = None) -> list[Path]:
    if fmt == "ctf":
        return [p for p in out.iterdir() if p.is_file()]
    out.mkdir(parents=True, exist_ok=True)
    events = CtfTrace(ctf_dir).events()
    if fmt == "chrome":
        write_chrome(events, out / "trace.json", process, symbolize)
        return [out / "trace.json"]
    write_text(events, out / "trace.txt")
    return [out / "trace.txt"]


def _print_summary(r: TraceResult, fmt: str, out: Path, size: int) -> None:
    o = r.options
    print(f"{r.arch}, {r.cpus} CPUs, {r.workload} (size {r.size}): probes {', '.join(o.probes)}")
    print(f"buffers: {o.subbufs} x {o.subbuf_size} bytes per CPU, {o.mode} mode, "
          f"drained every {o.drain_every} turn(s)")
    head = ("CPU", "produced", "recorded", "discarded", "overwritten", "packets", "lost pkts")
    print(f"{head[0]:>4} " + " ".join(f"{h:>11}" for h in head[1:]))
    rows = [(str(i), c) for i, c in enumerate(r.per_cpu)] + [("all", r.total)]
    for name, c in rows:
        print(f"{name:>4} " + " ".join(f"{v:>11,}" for v in (
            c.produced, c.recorded, c.discarded, c.overwritten, c.packets, c.lost_packets)))
    print(f"produced = recorded + discarded + overwritten on every CPU; "
          f"{r.instructions:,} guest instructions, {r.seconds:.2f} s host time")
    print(f"trace: {out} ({fmt}, {size:,} bytes)")
    if not r.checksum_ok:
        print("workload checksum MISMATCH")
