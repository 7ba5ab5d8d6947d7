"""Tracing: recording cost per event in the guest, and host throughput of the CTF writer.

Part 1, per arch: the kmalloc workload on one CPU, once with the slab
tracepoints dormant and once recording ``kmem`` into the ring buffers.
The difference in retired guest instructions and modeled cycles, divided
by the events recorded, is the cost of one recorded event (tracepoint
enabled branch, probe-array walk, probe, reserve with its clock read,
commit). One CPU, so the two runs execute the same workload path. Shown
beside LTTng's published marker figures (Pentium 4 3 GHz, LTTng
markers-microbench: an enabled marker with an empty probe costs 48.11
cycles; a disabled one 1.17 to 2.50).

Part 2, per arch: what an exact timestamp costs the host. The kmalloc
workload on one CPU, about ``--clock-events`` events (default 200,000),
in one process: untraced, and traced with every event timestamped, on
each of the clock's paths (``sim.clock.CLOCK_PATHS``): ``host``, the
default (the machine's host trap hook serves each read in C from
Unicorn's instruction counter, without entering Python); ``counter`` (the
Python handler reads the same counter in place); ``spin``, the reference
(each read pauses the slice in the counting loop, and the turn goes on in
a new slice). Ratios: traced / untraced on each path, and untraced on the
counter / untraced in the loop (the fast path must not slow untraced
runs; each untraced time is the best of 3 runs). The last row is a bound,
not a mode: the traced run with the ``HC_CLOCK`` instruction replaced by
the arch's nop (timestamps all 0), i.e. what recording costs when reading
the clock costs nothing. Last, the split that bounds any host-side method:
the seconds spent inside Unicorn (``emu_start``) in the untraced and the
traced run (host path), and their ratio: the traced run's guest executes
the workload plus the recording path of every event, so its emulation alone
costs that many times the untraced run's (measured in separate runs, as
timing each ``emu_start`` adds a little to the run).

Part 3, one arch: a run of about ``--events`` events (default 1,000,000).
Times: the workload untraced; the traced run with a sink that drops
packets; the traced run writing CTF, and the time spent inside the CTF
writer (decoding sub-buffers into events and encoding packets). The
target is CTF writing <= 2x the untraced workload. Peak RSS of a run of
a tenth of the events and of the full run, each in a fresh process, shows
whether memory stays flat. Times are CPU seconds of the benchmark process
(``time.process_time``), so other load on the host does not inflate them.
Run:

    .venv/bin/python benchmarks/bench_trace.py [--events N] [--arch A] [--quantum Q] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Iterator

from arches import NAMES
from benchlib import parse_args, run_main
from kbuild import build
from sim import machine
from sim.clock import CLOCK_PATHS
from sim.guest import Guest
from sim.hypercall import HYPERCALLS
from tracing.ctf import CtfWriter, PacketInfo, TraceInfo, trace_size
from lab.measure import Tally, measure
from lab.published import EVENT, LTTNG
from tracing.events import parse_probes
from tracing.session import TraceOptions, TraceSession

UNTRACED_REPEATS = 3             # the untraced runs are short: the best of 3 of each
EVENTS_PER_ITERATION = 8          # kmalloc workload: 4 tasks x (one alloc + one free)


class NullSink:
    """Consumes each packet's events (decoding them) and drops them."""

    def write_packet(self, packet: PacketInfo, events) -> int:
        return sum(1 for _ in events)


class TimedSink:
    """A CTF writer that keeps the host time spent inside it."""

    def __init__(self, writer: CtfWriter) -> None:
        self.writer = writer
        self.seconds = 0.0

    def write_packet(self, packet: PacketInfo, events) -> int:
        started = time.process_time()
        n = self.writer.write_packet(packet, events)
        self.seconds += time.process_time() - started
        return n


@contextlib.contextmanager
def emulation_seconds() -> Iterator[list[float]]:
    """Host CPU seconds spent inside Unicorn's ``emu_start`` in the block (``[0]``):
    every slice enters it through :func:`sim.machine.emu_start`."""
    spent = [0.0]
    emu_start = machine.emu_start

    def timed(*args) -> None:
        started = time.process_time()
        try:
            emu_start(*args)
        finally:
            spent[0] += time.process_time() - started
    machine.emu_start = timed
    try:
        yield spent
    finally:
        machine.emu_start = emu_start


def run(arch: str, size: int, quantum: int, probes: str | None, sink=None, *,
        path: str = "host", clock_sites: tuple[int, ...] = ()) -> dict:
    """One kmalloc run with the clock ``path``; ``clock_sites``: HC_CLOCK
    instructions to replace by nops first."""
    b = build(arch)
    guest = Guest(b, cpus=1, workload="kmalloc", size=size, quantum=quantum)
    guest.machine.clock.use(path)
    if probes is None:
        started = time.process_time()
        result = guest.run()
        return {"seconds": time.process_time() - started, "instructions": result.instructions,
                "cycles": result.modeled_cycles, "events": 0, "tally": Tally.of(result)}
    session = TraceSession(guest, TraceOptions(parse_probes(probes), subbuf_size=65536,
                                               subbufs=8))
    nop = guest.arch.nop(len(guest.arch.syscall_insn))
    for site in clock_sites:          # before the first instruction: no block is translated yet
        guest.machine.memory.write(site, nop)
    started = time.process_time()
    result = session.run(sink if sink is not None else NullSink())
    assert result.checksum_ok and result.total.discarded == 0
    return {"seconds": time.process_time() - started, "instructions": result.instructions,
            "cycles": result.modeled_cycles, "events": result.total.recorded,
            "tally": Tally.of_machine(guest.machine)}


def recording_cost(arch: str, size: int, quantum: int) -> dict:
    from arches import get_arch
    dormant = run(arch, size, quantum, None)
    traced = run(arch, size, quantum, "kmem")
    n = traced["events"]
    spec = get_arch(arch)
    cost = measure(spec, dormant["tally"], traced["tally"], n)
    hz = spec.clock_hz
    return {"arch": arch, "events": n, "insn_per_event": round(cost.instructions, 2),
            "cycles_per_event": round(cost.modeled_cycles, 2),
            "ns_per_event": round(cost.modeled_cycles * 1e9 / hz, 1), "clock_hz": hz}


def clock_sites(arch: str, quantum: int) -> tuple[int, ...]:
    """Addresses of the HC_CLOCK instructions a short traced run executes."""
    guest = Guest(build(arch), cpus=1, workload="kmalloc", size=4, quantum=quantum)
    session = TraceSession(guest, TraceOptions(parse_probes("kmem")))
    table = guest.hypercalls
    served = table.handlers[HYPERCALLS["HC_CLOCK"]]
    sites: set[int] = set()

    def record(cpu, a1: int, a2: int, a3: int):
        sites.add(table.address)
        return served(cpu, a1, a2, a3)

    table.handlers[HYPERCALLS["HC_CLOCK"]] = record
    session.run(NullSink())
    return tuple(sorted(sites))


def clock_cost(arch: str, events: int, quantum: int) -> dict:
    """Host seconds untraced and traced, on each clock path."""
    size = max(1, events // EVENTS_PER_ITERATION)
    out: dict = {"arch": arch, "quantum": quantum}
    for path in ("host", "spin"):             # untraced, "counter" runs as "host"
        out[f"untraced_{path}_s"] = min(run(arch, size, quantum, None, path=path)[
            "seconds"] for _ in range(UNTRACED_REPEATS))
    for path in CLOCK_PATHS:
        traced = run(arch, size, quantum, "kmem", path=path)
        out[f"traced_{path}_s"] = traced["seconds"]
        out["events"] = traced["events"]
    free = run(arch, size, quantum, "kmem", clock_sites=clock_sites(arch, quantum))
    out["traced_free_clock_s"] = free["seconds"]
    for path in CLOCK_PATHS:
        out[f"ratio_{path}"] = out[f"traced_{path}_s"] / out[
            f"untraced_{'spin' if path == 'spin' else 'host'}_s"]
    out["ratio_free_clock"] = out["traced_free_clock_s"] / out["untraced_host_s"]
    out["untraced_counter_vs_spin"] = out["untraced_host_s"] / out["untraced_spin_s"]
    for probes, key in ((None, "untraced"), ("kmem", "traced")):
        with emulation_seconds() as spent:
            run(arch, size, quantum, probes)
        out[f"emulation_{key}_s"] = spent[0]
    out["ratio_emulation"] = out["emulation_traced_s"] / out["emulation_untraced_s"]
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def throughput(arch: str, events: int, quantum: int) -> dict:
    size = max(1, events // EVENTS_PER_ITERATION)
    untraced = run(arch, size, quantum, None)
    null = run(arch, size, quantum, "kmem")
    with tempfile.TemporaryDirectory(prefix="kisim-bench-") as tmp:
        from arches import get_arch
        a = get_arch(arch)
        b = build(arch)
        guest = Guest(b, cpus=1, workload="kmalloc", size=size, quantum=quantum)
        session = TraceSession(guest, TraceOptions(parse_probes("kmem"), subbuf_size=65536))
        writer = CtfWriter(tmp, TraceInfo(a.endian, uuid.UUID(int=1), arch), session.classes)
        sink = TimedSink(writer)
        started = time.process_time()
        result = session.run(sink)
        writer.close()
        total = time.process_time() - started
        nbytes = trace_size(tmp)
    return {"arch": arch, "quantum": quantum, "events": result.total.recorded,
            "untraced_s": round(untraced["seconds"], 2),
            "traced_null_sink_s": round(null["seconds"], 2),
            "traced_ctf_s": round(total, 2), "ctf_writer_s": round(sink.seconds, 2),
            "ctf_writer_vs_untraced": round(sink.seconds / untraced["seconds"], 2),
            "ctf_writer_us_per_event": round(sink.seconds / result.total.recorded * 1e6, 2),
            "trace_bytes": nbytes}


def peak_rss(arch: str, events: int, quantum: int) -> int:
    """Max RSS (KiB) of a fresh process tracing ``events`` events to CTF."""
    proc = subprocess.run([sys.executable, __file__, "--child", arch, str(events), str(quantum)],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout.strip().splitlines()[-1])


def child(arch: str, events: int, quantum: int) -> None:
    size = max(1, events // EVENTS_PER_ITERATION)
    with tempfile.TemporaryDirectory(prefix="kisim-bench-") as tmp:
        from arches import get_arch
        guest = Guest(build(arch), cpus=1, workload="kmalloc", size=size, quantum=quantum)
        session = TraceSession(guest, TraceOptions(parse_probes("kmem"), subbuf_size=65536))
        with CtfWriter(tmp, TraceInfo(get_arch(arch).endian, uuid.UUID(int=1), arch),
                       session.classes) as w:
            session.run(w)
    print(peak_rss_kib())


def peak_rss_kib() -> int:
    """This process image's peak RSS (``VmHWM``). Not ``ru_maxrss``: on Linux that
    keeps the high-water mark of the process before ``exec``, i.e. of the forked
    copy of the (large) benchmark parent."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1])


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--arch", default=NAMES[0], choices=NAMES,
                   help=f"arch of the throughput run (default {NAMES[0]})")
    p.add_argument("--quantum", type=int, default=1000,
                   help="instructions per turn (default 1000)")
    p.add_argument("--clock-events", type=int, default=200_000,
                   help="events of each per-arch clock-cost run (default 200,000)")
    p.add_argument("--cost-size", type=int, default=2000,
                   help="kmalloc iterations of the recording-cost runs (default 2000)")
    p.add_argument("--json", action="store_true")
    args = parse_args(p, events=1000, clock_events=1000, cost_size=10)
    enabled = EVENT["enabled marker, empty probe"]
    out: dict = {"recording_cost": [], "lttng": {"enabled_marker_empty_probe_cycles": enabled,
                                                  "source": LTTNG}}
    for arch in NAMES:
        out["recording_cost"].append(recording_cost(arch, args.cost_size, args.quantum))
        if not args.json:
            c = out["recording_cost"][-1]
            print(f"{arch:>7}: {c['insn_per_event']:8.1f} guest instructions, "
                  f"{c['cycles_per_event']:8.1f} modeled cycles ({c['ns_per_event']} ns) "
                  f"per recorded event, over {c['events']:,} events", flush=True)
    if not args.json:
        print(f"LTTng: enabled marker with an empty probe {enabled:.2f} cycles ({LTTNG})",
              flush=True)
    out["clock_cost"] = []
    for arch in NAMES:
        c = clock_cost(arch, args.clock_events, args.quantum)
        out["clock_cost"].append(c)
        if not args.json:
            print(f"{arch:>7}: {c['events']:,} events, host s: untraced "
                  f"{c['untraced_host_s']} (reference turn end "
                  f"{c['untraced_spin_s']}, {c['untraced_counter_vs_spin']}x); traced "
                  f"{c['traced_host_s']} = {c['ratio_host']}x untraced (clock read in "
                  f"Python {c['traced_counter_s']} = {c['ratio_counter']}x; reference "
                  f"{c['traced_spin_s']} = {c['ratio_spin']}x); clock free (HC_CLOCK a nop) "
                  f"{c['traced_free_clock_s']} = {c['ratio_free_clock']}x; inside Unicorn "
                  f"{c['emulation_traced_s']} / {c['emulation_untraced_s']} = "
                  f"{c['ratio_emulation']}x", flush=True)
    t = throughput(args.arch, args.events, args.quantum)
    out["throughput"] = t
    if not args.json:
        print(f"{t['arch']}, {t['events']:,} events: untraced {t['untraced_s']} s; traced, "
              f"packets dropped {t['traced_null_sink_s']} s; traced to CTF "
              f"{t['traced_ctf_s']} s, of which the CTF writer {t['ctf_writer_s']} s "
              f"({t['ctf_writer_vs_untraced']}x the untraced workload, "
              f"{t['ctf_writer_us_per_event']} us/event); {t['trace_bytes']:,} bytes",
              flush=True)
    small, full = (peak_rss(args.arch, n, args.quantum) for n in (args.events // 10,
                                                                  args.events))
    out["peak_rss_kib"] = {str(args.events // 10): small, str(args.events): full}
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        print()
    else:
        print(f"peak RSS: {small:,} KiB for {args.events // 10:,} events, "
              f"{full:,} KiB for {args.events:,} events")
    return 0


if __name__ == "__main__":
    run_main(main)
