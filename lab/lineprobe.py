"""One line-number probe on a running guest, and what each of its hits costs.

The guest is built (its Kconfig chooses the optimization level), the
line's addresses come from the DWARF line table, a kprobe goes on each, and
at every hit the named variables are read through their DWARF locations.
The same workload also runs without the probe; :func:`lab.measure.measure`
gives the cost of a hit, exact on one CPU. Used by ``kisim probe``.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

import fsio
from arches import Arch
from kbuild import build
from kbuild.image import REPO
from lab.measure import Tally, measure
from probes.dwarf import DebugInfo, DwarfError, Unavailable
from probes.kprobes import Kprobes
from probes.lineprobe import (MECHANISM, LineProbe, kprobe_definitions, line_range,
                              probe_addresses)
from sim.elf import read_elf
from sim.guest import Guest

#: The largest source file -L reads.
SOURCE_LIMIT = 4 << 20


def _in_scope(debug: DebugInfo, address: int) -> list[dict]:
    """Each variable in scope at ``address``, with its DWARF location (or why it has none)."""
    scope = []
    for var in debug.variables_at(address):
        try:
            ops = var.expression(debug, address)
            where = " ".join(op.op_name.removeprefix("DW_OP_")
                             + ("(" + ",".join(map(str, op.args)) + ")" if op.args else "")
                             for op in ops)
        except Unavailable as why:
            where, ops = str(why), None
        scope.append({"name": var.name, "kind": var.kind, "type": var.type_name,
                      "location": where, "available": ops is not None})
    return scope


def probe_line(arch: Arch, location: str, fetch: list[str], *, workload: str,
               cpus: int = 1, size: int | None = None,
               overrides: dict[str, str] | None = None, modules: Sequence = (),
               expect: int | None = None, timing: bool = True) -> dict:
    """Probe ``location`` (``FILE:LINE`` or ``FUNC:N``) under ``workload``: its sites,
    hits, fetched values and cost per hit.

    Raises the probe layer's errors (no such line, function or variable, a
    kprobe refusal) for the caller to report."""
    image = build(arch.name, overrides=overrides, modules=modules)
    kw = dict(cpus=cpus, workload=workload, size=size, expect=expect, timing=timing)
    guest = Guest(image, **kw)
    kprobes = Kprobes(guest)
    with DebugInfo(image.elf, arch) as debug:
        file, line, addresses = probe_addresses(debug, location)
        probe = LineProbe(kprobes, debug, file, line, fetch, addresses)
        sites = [{"address": la.address, "function": la.function,
                  "in_scope": _in_scope(debug, la.address)} for la in probe.addresses]
        probe.arm()
        listing = kprobes.list()
        result = guest.run(on_turn=kprobes.kprobe_optimizer)
    base = Tally.of(Guest(image, **kw).run())
    cost = measure(arch, base, Tally.of(result), len(probe.hits))
    per_address = Counter(h.address for h in probe.hits)
    return {"arch": arch.name, "location": location, "file": file,
            "line": line,
            "optimization": next(f for f in image.info["cflags"] if f.startswith("-O")),
            "mechanism": MECHANISM, "workload": workload, "cpus": cpus,
            "checksum_ok": result.ok, "sites": sites, "kprobes": listing,
            "hits": len(probe.hits), "kprobe_hits": probe.kprobe_hits,
            "nmissed": probe.nmissed,
            # the kprobe optimizer as the run ended: of the line's kprobes, those
            # queued at registration and still waiting (its 5 jiffies not passed),
            # and those it optimized during the run; null without optprobes
            "optimizer": {"queued": sum(kprobes.queued(kp) for kp in probe.kps),
                          "optimized": sum(kp.top.optimized for kp in probe.kps)}
            if kprobes.optprobes else None,
            "cost_per_hit": None if cost.instructions is None else
            {"instructions": cost.instructions, "modeled_cycles": cost.modeled_cycles,
             "traps": cost.traps, "exact": cpus == 1, "breakdown": cost.breakdown},
            "cycles": guest.machine.cycles_from,
            "hits_per_address": {f"{a:#x}": n for a, n in sorted(per_address.items())},
            "events": [{"cpu": h.cpu, "address": h.address, "values": h.values,
                        "unavailable": h.unavailable} for h in probe.hits]}


def _source(path: str) -> list[str]:
    """The lines of a source file the debug information names: a kernel file relative
    to the repository (the build maps its directory to ``.``), a module's as given."""
    where = Path(path) if Path(path).is_absolute() else REPO / path.removeprefix("./")
    try:
        return fsio.read_text(where, limit=SOURCE_LIMIT, what="source file").splitlines()
    except fsio.UnsafePath as err:
        raise DwarfError(str(err)) from None


def list_lines(arch: Arch, spec: str, *, overrides: dict[str, str] | None = None,
               modules: Sequence = ()) -> dict:
    """perf probe -L: the lines of ``spec`` (:func:`probes.lineprobe.line_range`), each
    with whether the compiler placed code for it (an is_stmt row: a line probe can go
    there)."""
    image = build(arch.name, overrides=overrides, modules=modules)
    with DebugInfo(image.elf, arch) as debug:
        rng = line_range(debug, spec)
        code = set(rng.code)
    text = _source(rng.file)
    end = len(text) if rng.end is None else min(rng.end, len(text))
    if rng.start > len(text):
        raise DwarfError(f"line range {spec!r}: {rng.file} has {len(text)} lines")
    return {"arch": arch.name, "range": spec, "function": rng.function, "file": rng.file,
            "start": rng.start, "end": end, "offset": rng.offset,
            "lines": [{"line": n, "shown": n - rng.offset, "code": n in code,
                       "text": text[n - 1]} for n in range(rng.start, end + 1)]}


def available_variables(arch: Arch, location: str, *,
                        overrides: dict[str, str] | None = None, modules: Sequence = ()) -> dict:
    """perf probe -V: at each address of ``location``, the variables in scope, each with
    its type and whether it has a location there (and why not)."""
    image = build(arch.name, overrides=overrides, modules=modules)
    with DebugInfo(image.elf, arch) as debug:
        file, line, addresses = probe_addresses(debug, location)
        if not addresses:
            raise DwarfError(f"{location}: no code for this line")
        elf = read_elf(image.elf)
        sites = [{"address": la.address, "function": la.function,
                  "offset": (elf.symbol_at(la.address) or (la.function, 0))[1],
                  "in_scope": _in_scope(debug, la.address)} for la in addresses]
    return {"arch": arch.name, "location": location, "file": file, "line": line,
            "sites": sites}


def definitions(arch: Arch, location: str, fetch: list[str], *,
                overrides: dict[str, str] | None = None, modules: Sequence = ()) -> dict:
    """perf probe -D: the kprobe_events definitions of a line probe
    (:func:`probes.lineprobe.kprobe_definitions`), for ``kisim trace --kprobe-event``."""
    image = build(arch.name, overrides=overrides, modules=modules)
    with DebugInfo(image.elf, arch) as debug:
        file, line, lines = kprobe_definitions(debug, read_elf(image.elf), location, fetch)
    return {"arch": arch.name, "location": location, "file": file, "line": line,
            "definitions": lines}


__all__ = ["available_variables", "definitions", "list_lines", "probe_line"]
