"""What ``kisim tour`` shows, measured: one instrumentation site on one arch, step by step.

The kmalloc() marker of the guest kernel: its C source, the bytes of its
enable check dormant and armed as a marker (immediate-value build),
kmalloc() armed as a kprobe and as an optprobe (:class:`lab.kprobe.ProbeRuns`),
a line-number probe on the same line when nothing is compiled in, and
the comparison table of every mechanism (:func:`lab.compare.compare_arch`).
:func:`tour` returns it all as data; the CLI prints it.
"""
from __future__ import annotations

from pathlib import Path

from arches import NAMES, Arch, get_arch
from kbuild import build
from lab.compare import compare_arch
from lab.kprobe import ProbeRuns
from lab.mechanisms import BASE_CONFIG, NONE, mechanism
from patcher.errors import PatchError
from patcher.instrument import attach
from probes.dwarf import DebugInfo
from probes.kprobes import Kprobes
from probes.lineprobe import LineProbe
from sim.asm import disassemble
from sim.guest import Guest

REPO = Path(__file__).resolve().parent.parent
SITE = "kmalloc"
MECH = "marker_imv"
CONTEXT = 3          # source lines shown before and after the site's line
SHOWN = 4            # instructions shown at the site


def _code(arch: Arch, data: bytes, address: int, count: int = SHOWN) -> list[dict]:
    return [{"address": i.address, "bytes": i.bytes.hex(" "), "text": i.text}
            for i in disassemble(arch, data, address)[:count]]


def _source(arch: Arch, image, site: int) -> dict:
    """The site's C source: the file, DWARF's line, the trace_mark() line, the excerpt."""
    with DebugInfo(image.elf, arch) as debug:
        file, line = debug.line_at(site) or ("?", 0)
    src = (REPO / file).read_text().splitlines() if (REPO / file).is_file() else []
    mark_line = next((n + 1 for n in range(max(0, line - 1), len(src))
                      if f"trace_mark({SITE}," in src[n]), line)
    excerpt = [(n, src[n - 1])
               for n in range(max(1, line - CONTEXT), min(len(src), line + CONTEXT + 4) + 1)]
    return {"file": file, "dwarf_line": line, "mark_line": mark_line, "excerpt": excerpt}


def _kprobe_steps(arch: Arch) -> list[dict]:
    """kmalloc() as a kprobe, then as an optprobe (or the arch's refusal)."""
    steps, runs = [], ProbeRuns(arch.name, SITE, overrides={**BASE_CONFIG, **NONE})
    for optimize in (False, True):
        try:
            steps.append({"optimize": optimize,
                          "cost": runs.measure(optimize=optimize).to_json()})
        except PatchError as err:
            steps.append({"optimize": optimize, "refused": err.message,
                          "arches_with_optprobes": [name for name in NAMES
                                                    if "optprobes" in get_arch(name).capabilities]})
    return steps


def _line_probe(arch: Arch, file: str, mark_line: int) -> dict:
    """A line probe on the site's line (or the nearest with code) with nothing compiled in."""
    bare = build(arch.name, overrides={**BASE_CONFIG, **NONE})
    with DebugInfo(bare.elf, arch) as debug:
        addrs = [a.address for a in debug.line_addresses(file, mark_line)]
        nearest = None if addrs else debug.nearest_lines(file, mark_line)
        line = mark_line if addrs else (nearest[0] or nearest[1])
        guest = Guest(bare, workload="kmalloc")
        probe = LineProbe(Kprobes(guest), debug, file, line, ["size"])
        probe.arm()
        guest.run()
    return {"line": line, "addresses_at_site": addrs, "nearest": nearest,
            "probed": [a.address for a in probe.addresses], "hits": len(probe.hits),
            "read": [h.values["size"] for h in probe.hits if "size" in h.values],
            "gone": sorted({h.unavailable["size"] for h in probe.hits
                            if "size" in h.unavailable})}


def tour(arch_name: str) -> dict:
    """Every step of the tour on one arch, as data."""
    arch = get_arch(arch_name)
    image = build(arch.name, overrides={**BASE_CONFIG, **mechanism(MECH).config})
    guest = Guest(image, workload="kmalloc")
    inst = attach(guest)
    marker = inst.tables.markers_named(SITE)[0]
    site = marker.sites[0]
    source = _source(arch, image, site)
    before = guest.machine.read(site, SHOWN * arch.max_insn_len)
    empty = inst.tables.image.symbols.pointer("__mark_empty_function")
    inst.markers.marker_probe_register(SITE, marker.format, empty)
    inst.markers.marker_arm(SITE)
    after = guest.machine.read(site, SHOWN * arch.max_insn_len)
    return {"arch": arch.name, "site": site, "format": marker.format,
            "function": inst.tables.image.symbol_at(site)[0], "source": source,
            "dormant": _code(arch, before, site), "armed": _code(arch, after, site),
            "changed": [site + i for i in range(len(before)) if before[i] != after[i]],
            "kprobes": _kprobe_steps(arch),
            "line_probe": _line_probe(arch, source["file"], source["mark_line"]),
            "compare": compare_arch(arch.name)}


__all__ = ["SITE", "tour"]
