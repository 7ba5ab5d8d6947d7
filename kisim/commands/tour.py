"""``kisim tour``: one instrumentation site on one arch, step by step.

The kmalloc() marker of the guest kernel: its C source, the bytes of its
enable check dormant, the same bytes armed as a marker, what a kprobe
would write there, what a line-number probe finds for the same line when
nothing is compiled in, and what each costs (modeled, from the same runs
as ``kisim compare``). Plain text, through a pager unless --no-pager.
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
from patcher.instrument import attach
from probes.dwarf import DebugInfo
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

    _step(4, "as a kprobe or an optprobe")
    original = before[:arch.max_insn_len]
    first = disassemble(arch, original, site)[0]
    trap = arch.kprobe_breakpoint(first.bytes)
    print(f"  A kprobe would replace {first.bytes.hex(' ')} ({first.text}) with the breakpoint "
          f"{trap.hex(' ')}, single-step\n  a copy of the original, and charge a trap per hit.")
    print("  NOT RUN: kprobes and optprobes do not run in kisim yet (issue 10); this step"
          "\n  shows the encoding only, and the cost table below has no kprobe row.")

    _step(5, "as a line-number probe (nothing compiled in)")
    bare = build(arch.name, overrides={**BASE_CONFIG, **NONE})
    with DebugInfo(bare.elf, arch) as debug:
        addrs = debug.line_addresses(file, mark_line)
        if addrs:
            print(f"  Without markers, {file}:{mark_line} still has code at "
                  f"{', '.join(f'{a.address:#x}' for a in addrs)}: a probe can go there.")
        else:
            before_l, after_l = debug.nearest_lines(file, mark_line)
            print(f"  Without markers, {file}:{mark_line} has NO code: the compiler placed none "
                  f"(nearest lines with code: {before_l}, {after_l}).")
        print("  A line probe costs nothing while unused; it can only see what the optimizer"
              "\n  kept (`kisim probe --arch A FILE:LINE --fetch VAR` shows it).")

    _step(6, "what each costs (modeled cycles, kmalloc workload, 1 CPU)")
    doc = compare_arch(arch.name)
    print(f"  {'mechanism':26} {'dormant/pass':>13} {'armed/hit':>10}")
    print(f"  {'line probe (nothing in)':26} {0:>13.2f} {'(kprobe)':>10}")
    for r in doc["rows"]:
        print(f"  {r['label']:26} {r['dormant']['per_pass_modeled_cycles']:>13.2f} "
              f"{r['active']['per_hit_modeled_cycles']:>10.2f}")
    print("  The line probe's armed cost is a kprobe's, which kisim cannot run yet.")
    print("\n  Next: `kisim compare` for every arch, `kisim probe` for a line of your own.")


def run(args: argparse.Namespace) -> int:
    arch = args.arch or NAMES[0]
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
