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
import os
import subprocess
import sys
from contextlib import redirect_stdout

from arches import NAMES
from kisim.commands.common import check_arches
from lab.tour import SITE, tour


def _step(n: int, title: str) -> None:
    print(f"\n== {n}. {title} " + "=" * max(0, 60 - len(title)))


def _show_code(code: list[dict], mark: int) -> None:
    for insn in code:
        arrow = "=>" if insn["address"] == mark else "  "
        print(f"  {arrow} {insn['address']:#010x}  {insn['bytes']:24} {insn['text']}")


def _kprobe_step(step: dict) -> None:
    what = "kprobe" if not step["optimize"] else "optprobe"
    if "refused" in step:
        print(f"\n  not optimized: {step['refused']}.")
        print("  (Linux selects HAVE_OPTPROBES per arch; kisim's arches that have it: "
              f"{', '.join(step['arches_with_optprobes'])}.)")
        return
    c = step["cost"]
    print(f"\n  register_kprobe({SITE}){', the optimizer run' if step['optimize'] else ''}: "
          f"{'; '.join(c['list_lines'])}")
    print(f"  before: {c['site_before']}")
    print(f"  armed:  {c['site_after']}")
    if not c["hits"]:
        print(f"  ran kmalloc: no {what} hits")
        return
    kind = "detour buffer, no trap" if step["optimize"] else c["kind"]
    print(f"  ran kmalloc: {c['hits']:,} hits ({kind}), checksum "
          f"{'ok' if c['checksum_ok'] else 'WRONG'}; per hit "
          f"{c['instructions_per_hit']:.1f} guest instructions, {c['traps_per_hit']:.1f} traps, "
          f"{c['modeled_cycles_per_hit']:.1f} modeled cycles")
    if c["optimizer"] == "queued":
        print("  (register_kprobe queued it for the kprobe optimizer, which writes the jump\n"
              "  5 jiffies later, after this run: the optprobe below)")


def print_tour(t: dict) -> None:
    """Print the steps of :func:`lab.tour.tour` (to stdout)."""
    src, site = t["source"], t["site"]
    _step(1, f"the site in C: {src['file']}:{src['mark_line']}, in {t['function']}()")
    for n, text in src["excerpt"]:
        print(f"  {'>' if n == src['mark_line'] else ' '} {n:4} {text}")
    print(f"\n  DWARF puts the enable check ({site:#x}) on line {src['dwarf_line']}."
          f"\n  trace_mark() placed a struct marker in __markers (format {t['format']!r})"
          f"\n  and, with CONFIG_IMMEDIATE, an immediate-value load as its enable check.")

    _step(2, f"dormant: the enable check at {site:#x} ({t['arch']})")
    _show_code(t["dormant"], site)
    print("  The immediate operand is 0: the branch to the probe call is not taken.")

    _step(3, "armed as a marker, to the empty probe __mark_empty_function")
    _show_code(t["armed"], site)
    print(f"  {len(t['changed'])} byte(s) changed at "
          f"{', '.join(f'{a:#x}' for a in t['changed'])}: only the immediate, patched "
          f"with the arch's live-patching protocol.")

    _step(4, f"as a kprobe, then an optprobe, on {SITE}() (nothing compiled in)")
    for step in t["kprobes"]:
        _kprobe_step(step)

    _step(5, "as a line-number probe (nothing compiled in)")
    lp, file, mark = t["line_probe"], src["file"], src["mark_line"]
    if lp["addresses_at_site"]:
        print(f"  Without markers, {file}:{mark} still has code at "
              f"{', '.join(f'{a:#x}' for a in lp['addresses_at_site'])}: a probe can go there.")
    else:
        before_l, after_l = lp["nearest"]
        print(f"  Without markers, {file}:{mark} has NO code: the compiler placed none "
              f"(nearest lines with code: {before_l}, {after_l}).")
    read = lp["read"]
    print(f"  kisim probe {file}:{lp['line']} --fetch size: a kprobe at "
          f"{', '.join(f'{a:#x}' for a in lp['probed'])}, {lp['hits']:,} "
          f"hits; size read at {len(read):,}"
          + (f" (first: {', '.join(map(str, read[:5]))})" if read else "")
          + (f"; {'; '.join(lp['gone'])}" if lp["gone"] else ""))
    print("  A line probe costs nothing while unused; it can only see what the optimizer"
          "\n  kept (`kisim probe --arch A FILE:LINE --fetch VAR` shows it).")

    _step(6, "what each costs (modeled cycles, kmalloc workload, 1 CPU)")
    print(f"  {'mechanism':32} {'dormant/pass':>13} {'armed/hit':>10}")
    for r in t["compare"]["rows"]:
        armed = ("n/a" if r["active"] is None
                 else f"{r['active']['per_hit_modeled_cycles']:.2f}")
        print(f"  {r['label']:32} {r['dormant']['per_pass_modeled_cycles']:>13.2f} "
              f"{armed:>10}")
    print("  Rows without code compiled in (kprobes, the line probe) cost 0 dormant.")
    print("\n  Next: `kisim compare` for every arch, `kisim probe` for a line of your own.")


def run(args: argparse.Namespace) -> int:
    arch = NAMES[0] if args.arch is None else args.arch
    check_arches([arch])
    facts = tour(arch)
    if args.no_pager or not sys.stdout.isatty():
        print_tour(facts)
        return 0
    buf = io.StringIO()
    with redirect_stdout(buf):
        print_tour(facts)
    page(buf.getvalue())
    return 0


def page(text: str) -> None:
    """``text`` through ``$PAGER`` (a shell command, ``less`` by default, as pydoc
    and git run it); printed here, with a warning, where the pager fails, so it
    is never lost (pydoc.pager ignores the pager's exit)."""
    command = os.environ.get("PAGER") or "less"
    try:
        done = subprocess.run(command, shell=True, input=text.encode(), check=False)
        failed = done.returncode != 0
    except OSError:
        failed = True
    if failed:
        print(f"kisim: warning: the pager ({command!r}) failed; printing here",
              file=sys.stderr)
        sys.stdout.write(text)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tour", help="one site on one arch: source, bytes, arming, costs",
                       description=__doc__)
    p.add_argument("--arch", metavar="ARCH", help=f"arch ({', '.join(NAMES)}; default {NAMES[0]})")
    p.add_argument("--no-pager", action="store_true", help="print straight to stdout")
    p.set_defaults(func=run)
