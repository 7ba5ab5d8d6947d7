"""The mcount seed's overhead figures, in modeled terms, and boot conversion per site.

The "mcount tracing utility" RFC (LKML, 2008-01-03) measured hackbench 50:
2.221 s without mcount, 2.531 s with mcount compiled in and tracing off
(+14 %; the post says 13 %), 113.350 s tracing every function (about 51x;
``lab.published.SEED_002``). This runs hackbench
on each arch, one CPU (so that every row runs the same guest schedule):

1. ``FUNCTION_TRACER=n``;
2. ``-pg`` with live mcount calls, no tracer (``DYNAMIC_FTRACE=n``, the RFC);
3. dynamic ftrace: every site converted to the arch's nop at boot;
4. the function tracer on every function, recording into the ring buffers;
5. the function tracer with a filter (``kmalloc``).

It prints retired instructions, modeled cycles and the ratio of cycles to
row 1, the host seconds (CPU time of this process, the best of ``--repeats``
runs, default 3) of row 4 over row 3
(every call timestamped, against the same kernel untraced), with clock
reads served in the machine's host trap hook (the default), in Python on
Unicorn's counter, and on the reference (each read pauses the slice in the
counting loop; ``sim.clock.CLOCK_PATHS``, docs/machine.md), and for row 3 what the nop leaves per call (traced calls x the
instructions an idle site still executes: x86 the 5-byte nop; ARM
``push {lr}`` and the ``pop {lr}`` nop; PowerPC the nop), so the rest of
the difference is code generation (``-pg`` makes every function a
non-leaf with a frame).

Then boot conversion: ``ftrace_init`` over N synthetic sites (default
50,000; target <= 1 s host), beside the kernel's ~49,904 sites in ~14 ms.

    .venv/bin/python benchmarks/bench_ftrace.py [--arch A] [--size N] [--sites N]
        [--repeats N] [--json] [--smallest]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from arches import ARCHES, Arch
from benchlib import parse_args, run_main
from kbuild import build
from kisim.progress import progress
from lab.measure import Tally, measure
from lab.published import SEED_002, mcount_text
from patcher.ftrace import Ftrace, arch_ftrace
from patcher.tables import load_tables
from probes.function_tracer import FunctionTracer
from sim.elf import Image, Symbol, SymbolTable
from sim.guest import Guest, boot
from sim.machine import Machine
from tracing.session import EventList, TraceOptions, TraceSession

SEED = {"FUNCTION_TRACER=n": SEED_002["base"], "mcount live": SEED_002["live"],
        "tracing all": SEED_002["traced"]}
ROWS = ("FUNCTION_TRACER=n", "mcount live", "dynamic nops", "tracing all", "filter kmalloc")
BASE = 0x100000


def run_row(b, size: int | None, tracing: bool, filt: str | None,
            path: str = "host") -> tuple:
    """One booted hackbench run: (result, its machine's tally, recorded events, host CPU s)."""
    guest = Guest(b, workload="hackbench", size=size)              # booted: every site a nop
    guest.machine.clock.use(path)
    tracer = FunctionTracer(guest, load_tables(b.elf, b.spec))
    if filt:
        tracer.ftrace.write_filter(filt)
    started = time.process_time()
    if not tracing:
        r = guest.run()
        return r, Tally.of_machine(guest.machine), 0, time.process_time() - started
    session = TraceSession(guest, TraceOptions(tracer.event_names))
    tracer.start()               # recording into the ring buffers, drained by the host
    sink = EventList()
    r = session.run(sink)
    return r, Tally.of_machine(guest.machine), len(sink.events), time.process_time() - started


def host_seconds(b, size: int | None, tracing: bool, path: str = "host") -> float:
    """Host CPU seconds of one more unfiltered run."""
    return run_row(b, size, tracing, None, path)[3]


def hackbench_rows(arch: str, size: int | None, repeats: int) -> list[dict]:
    """The five rows on ``arch``; host times each the best of ``repeats`` runs."""
    rows = []
    plain = boot(build(arch, overrides={"FUNCTION_TRACER": "n"}), workload="hackbench",
                 size=size)
    rows.append({"row": ROWS[0], "instructions": plain.instructions,
                 "modeled_cycles": plain.modeled_cycles, "ok": plain.ok})
    live = boot(build(arch, overrides={"DYNAMIC_FTRACE": "n"}), workload="hackbench", size=size)
    rows.append({"row": ROWS[1], "instructions": live.instructions,
                 "modeled_cycles": live.modeled_cycles, "ok": live.ok})
    calls = 0
    b = build(arch)
    tallies: dict[str, Tally] = {}
    for row, tracing, filt in ((ROWS[2], False, None), (ROWS[3], True, None),
                               (ROWS[4], True, "kmalloc")):
        r, tallies[row], events, host = run_row(b, size, tracing, filt)
        if row in ROWS[2:4]:                  # the host ratio's two runs: the best of a few
            host = min([host, *(host_seconds(b, size, tracing) for _ in range(repeats - 1))])
        rows.append({"row": row, "instructions": r.instructions,
                     "modeled_cycles": r.modeled_cycles, "ok": r.ok, "events": events,
                     "host_s": round(host, 3)})
        if row == ROWS[3]:
            calls = events
            rows[-1]["host_ratio"] = round(host / rows[2]["host_s"], 2)
            for path, key in (("counter", "python"), ("spin", "reference")):
                seconds = min(host_seconds(b, size, True, path) for _ in range(repeats))
                rows[-1][f"host_s_{key}"] = round(seconds, 3)
                rows[-1][f"host_ratio_{key}"] = round(seconds / rows[2]["host_s"], 2)
    base = rows[0]["modeled_cycles"]
    for row in rows:
        row["ratio"] = round(row["modeled_cycles"] / base, 4)
    nop = rows[2]
    # tracing every function minus the nop row, per recorded call
    rows[3]["per_recorded_call"] = measure(ARCHES[arch], tallies[ROWS[2]], tallies[ROWS[3]],
                                           calls).to_json()
    nop["traced_calls"] = calls
    nop["idle_site_insns"] = calls * arch_ftrace(ARCHES[arch]).IDLE_SITE_INSNS
    nop["codegen_insns"] = nop["instructions"] - rows[0]["instructions"] - nop["idle_site_insns"]
    return rows


def synthetic_ftrace(arch: Arch, sites: int) -> Ftrace:
    """A machine whose text is ``sites`` compiler mcount calls, and its Ftrace."""
    ops = arch_ftrace(arch)
    size = ops.MCOUNT_INSN_SIZE
    mcount = BASE + sites * size
    code = b"".join(ops.ftrace_call_replace(BASE + i * size, mcount) for i in range(sites))
    machine = Machine(arch, 1)
    machine.load_code(code + arch.syscall_insn * 4, BASE)
    names = (ops.MCOUNT_ADDR, ops.FTRACE_ADDR, "ftrace_stub", "ftrace_trace_function")
    symbols = SymbolTable(Symbol(name, mcount + 4 * i, 4, "func", None)   # as read_elf reads
                          for i, name in enumerate(names))
    image = Image(Path("synthetic"), arch.name, BASE, [], {}, symbols)
    return Ftrace(machine, image, [(BASE + i * size, f"f{i}") for i in range(sites)],
                  dynamic=True)


def boot_conversion(arch: Arch, sites: int) -> dict:
    """ftrace_init over ``sites`` synthetic sites: the conversion (what a Guest boot runs)
    and, in the host total, taking the records over (each reserved for ftrace)."""
    ft = synthetic_ftrace(arch, sites)
    started = time.perf_counter()
    stats = ft.ftrace_init()
    total = time.perf_counter() - started
    nop = ft.ftrace_nop()
    assert all(ft.machine.read(ip, len(nop)) == nop for ip in ft.sites[:: max(1, sites // 100)])
    return {"sites": stats.sites, "host_seconds": round(total, 4),
            "conversion_seconds": round(stats.seconds, 4),
            "us_per_site": round(total / sites * 1e6, 2),
            "modeled_cycles": stats.modeled_cycles}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=sorted(ARCHES), action="append")
    parser.add_argument("--size", type=int, default=None, help="hackbench loops")
    parser.add_argument("--sites", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3, help="host times: the best of N runs")
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, size=1, sites=100, repeats=1)
    arches = args.arch or sorted(ARCHES)
    out: dict = {"hackbench": {}, "boot_conversion": {}}
    with progress("bench_ftrace", total=2 * len(arches), enabled=not args.json) as advance:
        for name in arches:
            out["hackbench"][name] = hackbench_rows(name, args.size, args.repeats)
            advance()
            out["boot_conversion"][name] = boot_conversion(ARCHES[name], args.sites)
            advance()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"hackbench, 1 CPU: modeled cycles, ratio to FUNCTION_TRACER=n ({mcount_text()})")
    print(f"{'arch':7} {'row':18} {'instructions':>13} {'modeled cycles':>15} {'ratio':>8}"
          f" {'seed':>9}")
    for name in arches:
        for row in out["hackbench"][name]:
            seed = SEED.get(row["row"])
            seed_ratio = f"{seed / SEED['FUNCTION_TRACER=n']:.3f}x" if seed else ""
            print(f"{name:7} {row['row']:18} {row['instructions']:>13,} "
                  f"{row['modeled_cycles']:>15,.0f} {row['ratio']:>7.4f}x {seed_ratio:>9}"
                  f"{'' if row['ok'] else '  CHECKSUM MISMATCH'}")
        nop, every = out["hackbench"][name][2], out["hackbench"][name][3]
        call = every["per_recorded_call"]
        print(f"{'':7} tracing all - nop row: {call['instructions']:.1f} instructions, "
              f"{call['modeled_cycles']:.1f} modeled cycles per recorded call "
              f"({every['events']:,} calls)")
        print(f"{'':7} host: tracing all {every['host_s']} s = {every['host_ratio']}x the nop "
              f"row's {nop['host_s']} s (clock read in Python: {every['host_s_python']} s = "
              f"{every['host_ratio_python']}x; reference: {every['host_s_reference']} s = "
              f"{every['host_ratio_reference']}x)")
        print(f"{'':7} nop row - row 1: {nop['instructions'] - out['hackbench'][name][0]['instructions']:,}"
              f" instructions = {nop['traced_calls']:,} calls x "
              f"{arch_ftrace(ARCHES[name]).IDLE_SITE_INSNS} idle-site"
              f" instruction(s) ({nop['idle_site_insns']:,}) + {nop['codegen_insns']:,} from "
              "-pg code generation")
    print(f"\nboot conversion (ftrace_init) of {args.sites:,} synthetic sites "
          "(kernel: ~49,904 sites in ~14 ms):")
    for name in arches:
        c = out["boot_conversion"][name]
        print(f"{name:7} {c['host_seconds']:.3f} s host ({c['conversion_seconds']:.3f} s "
              f"converting), {c['us_per_site']:.2f} us/site, "
              f"{c['modeled_cycles']:,.0f} modeled cycles charged to the boot CPU")


if __name__ == "__main__":
    run_main(main)
