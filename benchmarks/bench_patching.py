"""Batched text patching: enable then disable every site of a large image.

A synthetic image holds N back-to-back jump-label sites (x86: 5-byte
``P6_NOP5``; ARM and PowerPC: one 4-byte nop each). All sites are toggled
to a jump and back, each direction in ONE batch (one protocol run: three
sync rounds on x86, one flush and one sync round on ARM/PowerPC), from the
host. Reported: host seconds per direction, sync rounds, microseconds per
site. Target: at most 1 s per direction for 50,000 sites. Then the
defconfig guest kernel (every feature): every marker armed and every
tracepoint activated, then undone, with host seconds and sync rounds. Run:

    .venv/bin/python benchmarks/bench_patching.py [--sites N] [--arch A] [--cpus N] [--json] [--smallest]

:func:`toggle_sites` takes any list of sites, so a real kernel image's
``__jump_table`` (or ``__mcount_loc``) can be benchmarked the same way.
"""
from __future__ import annotations

import argparse
import json
import time
from typing import Sequence

from arches import ARCHES, Arch
from benchlib import parse_args, run_main
from patcher.text import TextPatcher
from sim.machine import Machine

BASE = 0x100000


def synthetic_image(arch: Arch, sites: int, cpus: int = 4) -> tuple[Machine, list[tuple]]:
    """A machine whose text is ``sites`` nops of jump-label size, then a return path.

    Returns the machine and ``[(addr, disabled, enabled)]``: each site's nop
    and the jump to the end of the region that enabling patches in.
    """
    size, nop = arch.site_len, arch.site_nop
    end = BASE + sites * size
    machine = Machine(arch, cpus)
    machine.load_code(nop * sites + arch.syscall_insn, BASE)
    return machine, [(BASE + i * size, nop, arch.encode_jump(BASE + i * size, end))
                     for i in range(sites)]


def toggle_sites(patcher: TextPatcher, sites: Sequence[tuple[int, bytes, bytes]],
                 owner: str = "jump_label") -> dict:
    """Enable every ``(addr, disabled, enabled)`` site in one batch, then disable them."""
    machine = patcher.machine
    out: dict = {"sites": len(sites)}
    for direction, pick in (("enable", lambda s: (s[1], s[2])), ("disable", lambda s: (s[2], s[1]))):
        rounds = machine.sync_rounds
        begin = time.perf_counter()
        with patcher.batch() as b:
            for site in sites:
                old, new = pick(site)
                b.queue(site[0], old, new, owner)
        seconds = time.perf_counter() - begin
        out[direction] = {"seconds": round(seconds, 4),
                          "us_per_site": round(seconds / max(len(sites), 1) * 1e6, 2),
                          "sync_rounds": machine.sync_rounds - rounds}
    return out


def bench_arch(arch: Arch, sites: int, cpus: int) -> dict:
    machine, table = synthetic_image(arch, sites, cpus)
    original = machine.read(BASE, len(table) * len(table[0][1]))
    result = toggle_sites(TextPatcher(machine), table)
    assert machine.read(BASE, len(original)) == original, "disable must restore every byte"
    return {"arch": arch.name, "cpus": cpus, **result}


def bench_kernel(arch: Arch, cpus: int) -> dict:
    """Arm every marker and activate every tracepoint of the defconfig kernel, then undo it.

    The defconfig enables every feature; each marker or tracepoint is its
    own key, so each is one protocol run (the kernel batches per key too).
    """
    from kbuild import build
    from patcher.instrument import attach
    from sim.guest import Guest

    inst = attach(Guest(build(arch.name), cpus=cpus))
    text = inst.guest.image.sections[".text"]
    original = inst.guest.machine.read(text.addr, text.size)
    machine = inst.guest.machine
    markers = inst.tables.marker_names()
    tracepoints = [tp.name for tp in inst.tables.tracepoints]
    noop = lambda *args: None  # noqa: E731
    for n in markers:                      # marker_arm needs a probe (ENOENT otherwise)
        inst.markers.marker_probe_register(n, inst.tables.markers_named(n)[0].format, noop)
    out: dict = {"arch": arch.name, "cpus": cpus, "markers": len(markers),
                 "tracepoints": len(tracepoints),
                 "text_sites": len(inst.tables.jump_entries) + len(inst.tables.imv)}
    steps = (("enable", lambda: ([inst.markers.marker_arm(n) for n in markers],
                                 [inst.tracepoints.register_trace(n, noop) for n in tracepoints])),
             ("disable", lambda: ([inst.markers.marker_disarm(n) for n in markers],
                                  [inst.tracepoints.unregister_trace(n, noop) for n in tracepoints])))
    for direction, step in steps:
        rounds = machine.sync_rounds
        begin = time.perf_counter()
        step()
        out[direction] = {"seconds": round(time.perf_counter() - begin, 4),
                          "sync_rounds": machine.sync_rounds - rounds}
    assert machine.read(text.addr, text.size) == original, "disable must restore every byte"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=50_000)
    parser.add_argument("--arch", choices=sorted(ARCHES), default=None, help="default: all")
    parser.add_argument("--cpus", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, sites=100, cpus=2)
    names = [args.arch] if args.arch else sorted(ARCHES)
    rows = [bench_arch(ARCHES[name], args.sites, args.cpus) for name in names]
    kernel = [bench_kernel(ARCHES[name], args.cpus) for name in names]
    if args.json:
        print(json.dumps({"synthetic": rows, "kernel": kernel}, indent=2))
        return
    print(f"{'arch':8} {'sites':>7} {'cpus':>4}  {'enable s':>9} {'disable s':>9} "
          f"{'us/site':>8} {'sync rounds':>11}")
    for r in rows:
        e, d = r["enable"], r["disable"]
        print(f"{r['arch']:8} {r['sites']:>7} {r['cpus']:>4}  {e['seconds']:>9.3f} "
              f"{d['seconds']:>9.3f} {e['us_per_site']:>8.2f} "
              f"{e['sync_rounds']:>5} + {d['sync_rounds']}")
    print("\nDefconfig kernel (every feature): arm every marker and tracepoint, then disarm")
    print(f"{'arch':8} {'markers':>7} {'tracepts':>8} {'text sites':>10}  {'enable s':>9} "
          f"{'disable s':>9} {'sync rounds':>11}")
    for r in kernel:
        e, d = r["enable"], r["disable"]
        print(f"{r['arch']:8} {r['markers']:>7} {r['tracepoints']:>8} {r['text_sites']:>10}  "
              f"{e['seconds']:>9.4f} {d['seconds']:>9.4f} {e['sync_rounds']:>5} + {d['sync_rounds']}")


if __name__ == "__main__":
    run_main(main)
