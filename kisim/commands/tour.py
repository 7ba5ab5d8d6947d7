"""``kisim tour``: one instrumentation site on one arch, step by step.

The kmalloc() marker of the guest kernel: its C source, the bytes of its
enable check dormant, the same bytes armed as a marker, kmalloc() armed as
a kprobe and as an optprobe (each registered and run on the workload),
a line-number probe on the same line when nothing is compiled in (placed
and run), and what each costs (modeled, from the same runs as ``kisim
compare``). Plain text, through a pager unless --no-pager.
"""
from __future__ import annotations

import argparse
import io
import pydoc
import sys
from contextlib import redirect_stdout
from pathlib import Path

from arches import NAMES, get_arch
from kbuild import build
from kisim.compare import BASE_CONFIG, NONE, compare_arch, mechanism
from kisim.errors import UsageError
from patcher.errors import PatchError
from patcher.instrument import attach
from probes.dwarf import DebugInfo
from probes.kprobes import Kprobe, Kprobes
from probes.lineprobe import LineProbe
from sim.asm import disassemble
from sim.guest import Guest

REPO = Path(__file__).resolve().parent.parent.parent
SITE = "kmalloc"
MECH = "marker_imv"
CONTEXT = 3          # source lines shown before and after the site's line


def _step(n: int, title: str) -> None:
    print(f"\n== {n}. {title} " + "=" * max(0, 60 - len(title)))


def _show_code(arch, data: bytes, address: int, mark: int, count: int = 4) -> None:
    for insn in disassemble(arch, data, address)[:count]:
        arrow = "=>" if insn.address == mark else "  "
        print(f"  {arrow} {insn.address:#010x}  {insn.bytes.hex(' '):24} {insn.text}")


def tour(arch_name: str) -> None:
    """Print the tour for one arch (to stdout)."""
    arch = get_arch(arch_name)
    mech = mechanism(MECH)
    image = build(arch.name, overrides={**BASE_CONFIG, **mech.config})
    guest = Guest(image, workload="kmalloc")
    inst = attach(guest)
    marker = inst.tables.markers_named(SITE)[0]
    site = marker.sites[0]
    with DebugInfo(image.elf, arch) as debug:
        file, line = debug.line_at(site) or ("?", 0)
    src = (REPO / file).read_text().splitlines() if (REPO / file).is_file() else []

    mark_line = next((n + 1 for n in range(max(0, line - 1), len(src))
                      if f"trace_mark({SITE}," in src[n]), line)
    _step(1, f"the site in C: {file}:{mark_line}, in {inst.tables.image.symbol_at(site)[0]}()")
    for n in range(max(1, line - CONTEXT), min(len(src), line + CONTEXT + 4) + 1):
        print(f"  {'>' if n == mark_line else ' '} {n:4} {src[n - 1]}")
    print(f"\n  DWARF puts the enable check ({site:#x}) on line {line}."
          f"\n  trace_mark() placed a struct marker in __markers (format {marker.format!r})"
          f"\n  and, with CONFIG_IMMEDIATE, an immediate-value load as its enable check.")

    _step(2, f"dormant: the enable check at {site:#x} ({arch.name})")
    before = guest.machine.read(site, 4 * arch.max_insn_len)
    _show_code(arch, before, site, site)
    print("  The immediate operand is 0: the branch to the probe call is not taken.")

    _step(3, "armed as a marker, to the empty probe __mark_empty_function")
    empty = inst.tables.image.symbols["__mark_empty_function"]
    inst.markers.marker_probe_register(SITE, marker.format, empty)
    inst.markers.marker_arm(SITE)
    after = guest.machine.read(site, 4 * arch.max_insn_len)
    _show_code(arch, after, site, site)
    changed = [i for i in range(len(before)) if before[i] != after[i]]
    print(f"  {len(changed)} byte(s) changed at "
          f"{', '.join(f'{site + i:#x}' for i in changed)}: only the immediate, patched "
          f"with the arch's live-patching protocol.")

    bare = build(arch.name, overrides={**BASE_CONFIG, **NONE})
    base = Guest(bare, workload="kmalloc").run()
    _step(4, f"as a kprobe, then an optprobe, on {SITE}() (nothing compiled in)")
    for optimize in (False, True):
        guest = Guest(bare, workload="kmalloc")
        kprobes = Kprobes(guest)
        entry = guest.image.symbols[SITE]
        before = guest.machine.read(entry, 2 * arch.max_insn_len)
        kp = kprobes.register_kprobe(Kprobe(symbol_name=SITE,
                                            pre_handler="kprobe_empty_pre_handler"))
        what = "kprobe"
        if optimize:
            what = "optprobe"
            try:
                kprobes.optimize_kprobe(kp)
            except PatchError as err:
                print(f"\n  optimize_kprobe refused: {err.message}.")
                print("  (Linux selects HAVE_OPTPROBES on x86 and 32-bit ARM; on PowerPC only "
                      "for PPC64.)")
                continue
        after = guest.machine.read(entry, 2 * arch.max_insn_len)
        print(f"\n  register_kprobe({SITE}){' + optimize_kprobe' if optimize else ''}: "
              f"{kprobes.list()[0]}")
        print("  before:")
        _show_code(arch, before, entry, entry, 2)
        print("  armed:")
        _show_code(arch, after, entry, entry, 2)
        result = guest.run()
        hits = kp.hits
        kind = "detour buffer, no trap" if kp.optimized else kprobes.kind(kp)
        traps = sum(c["events"].get("trap", 0) for c in result.per_cpu) - \
            sum(c["events"].get("trap", 0) for c in base.per_cpu)
        print(f"  ran kmalloc: {hits:,} hits ({kind}), checksum "
              f"{'ok' if result.ok else 'WRONG'}; per hit "
              f"{(result.instructions - base.instructions) / hits:.1f} guest instructions, "
              f"{traps / hits:.1f} traps, "
              f"{(result.modeled_cycles - base.modeled_cycles) / hits:.1f} modeled cycles"
              if hits else f"  ran kmalloc: no {what} hits")

    _step(5, "as a line-number probe (nothing compiled in)")
    with DebugInfo(bare.elf, arch) as debug:
        addrs = debug.line_addresses(file, mark_line)
        probe_line = mark_line
        if addrs:
            print(f"  Without markers, {file}:{mark_line} still has code at "
                  f"{', '.join(f'{a.address:#x}' for a in addrs)}: a probe can go there.")
        else:
            before_l, after_l = debug.nearest_lines(file, mark_line)
            probe_line = before_l or after_l
            print(f"  Without markers, {file}:{mark_line} has NO code: the compiler placed none "
                  f"(nearest lines with code: {before_l}, {after_l}).")
        guest = Guest(bare, workload="kmalloc")
        probe = LineProbe(Kprobes(guest), debug, file, probe_line, ["size"])
        probe.arm()
        guest.run()
        read = [h.values["size"] for h in probe.hits if "size" in h.values]
        gone = sorted({h.unavailable["size"] for h in probe.hits if "size" in h.unavailable})
        print(f"  kisim probe {file}:{probe_line} --fetch size: a kprobe at "
              f"{', '.join(f'{a.address:#x}' for a in probe.addresses)}, {len(probe.hits):,} "
              f"hits; size read at {len(read):,}"
              + (f" (first: {', '.join(map(str, read[:5]))})" if read else "")
              + (f"; {'; '.join(gone)}" if gone else ""))
        print("  A line probe costs nothing while unused; it can only see what the optimizer"
              "\n  kept (`kisim probe --arch A FILE:LINE --fetch VAR` shows it).")

    _step(6, "what each costs (modeled cycles, kmalloc workload, 1 CPU)")
    doc = compare_arch(arch.name)
    print(f"  {'mechanism':30} {'dormant/pass':>13} {'armed/hit':>10}")
    for r in doc["rows"]:
        armed = ("n/a" if r["active"] is None
                 else f"{r['active']['per_hit_modeled_cycles']:.2f}")
        print(f"  {r['label']:30} {r['dormant']['per_pass_modeled_cycles']:>13.2f} "
              f"{armed:>10}")
    print("  Rows without code compiled in (kprobes, the line probe) cost 0 dormant.")
    print("\n  Next: `kisim compare` for every arch, `kisim probe` for a line of your own.")


def run(args: argparse.Namespace) -> int:
    arch = NAMES[0] if args.arch is None else args.arch
    if arch not in NAMES:
        raise UsageError(f"unknown arch {arch!r} (valid: {', '.join(NAMES)})")
    if args.no_pager or not sys.stdout.isatty():
        tour(arch)
        return 0
    buf = io.StringIO()
    with redirect_stdout(buf):
        tour(arch)
    pydoc.pager(buf.getvalue())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tour", help="one site on one arch: source, bytes, arming, costs",
                       description=__doc__)
    p.add_argument("--arch", metavar="ARCH", help=f"arch ({', '.join(NAMES)}; default {NAMES[0]})")
    p.add_argument("--no-pager", action="store_true", help="print straight to stdout")
    p.set_defaults(func=run)
