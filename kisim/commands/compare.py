"""``kisim compare``: every instrumentation mechanism, side by side, per arch.

Per arch, the guest is built once per mechanism (only that mechanism
compiled in, plus a build with nothing) and runs the same workload,
dormant and armed at the same two points: the kmalloc and sched_switch
sites (markers with a memory flag or an immediate value, jump-label
tracepoints to an empty probe or recording into the ring buffers) and the
functions holding them, kmalloc() and schedule() (mcount nops and the
function tracer; kprobe, boosted kprobe, optprobe, kretprobe with empty
handlers; a line-number probe on a line of each, nothing compiled in).
Per pass / per hit costs come from differencing runs and dividing by
exact pass and hit counts. Prints a table per arch with the published
orderings checked under it, writes one JSON document and plots (PNG, SVG)
into --out.
"""
from __future__ import annotations

import argparse
import json

import fsio
from arches import NAMES, get_arch
from kisim.commands.common import (add_cpus, add_cycles, add_jobs, add_json, add_layouts,
                                   add_modules, add_workload, check_arches, jobs, layout_sweep,
                                   note_removed, only_with, path, print_json, timing,
                                   with_warnings)
from kisim.errors import UsageError
from kisim.progress import progress
from lab.compare import compare_arch, compare_document, over_samples
from lab.report import breakdown_line
from lab.measure import CompareError, CostModel, load_cost_model
from lab.mechanisms import MECHANISMS, runs_per_arch, select
from lab.samples import SampleError, run_samples, tasks
from lab.verdict import FAILS, HOLDS, UNDECIDED
from sim.guest import check_workload
from tracing.outdir import POLICY, OutDir

#: The files ``--out DIR`` receives; kisim writes no other name there.
OUTPUTS = ("compare.json", "compare.png", "compare.svg")


def _fmt(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def _published(ordering: dict) -> str:
    p = ordering["published_on"]
    return f"published on: {p['machines']}; {p['kernel']}"


def print_table(doc: dict) -> None:
    base = doc["uninstrumented"]
    print(f"\n{doc['arch']}: {doc['workload']} on {doc['cpus']} CPU(s), sites "
          f"{', '.join(doc['sites'])} (functions {', '.join(doc['kprobe_points'])})"
          + (f", memory pressure (size {doc['size']}, each step walks 2x the outermost cache)"
             if doc["memory_pressure"] else ""))
    print(f"uninstrumented: {base['instructions']:,} instructions, "
          f"{base['modeled_cycles']:,.0f} modeled cycles ({doc['cycles']})")
    head = (f"  {'mechanism':32} {'passes':>7} {'dormant/pass':>13} {'dormant/pass':>13} "
            f"{'dormant':>8} {'hits':>6} {'armed/hit':>10} {'armed/hit':>11} {'armed':>8} "
            f"{'arming':>8}")
    unit = (f"  {'':32} {'':>7} {'instrs':>13} {'mod. cycles':>13} {'% wkld':>8} {'':>6} "
            f"{'instrs':>10} {'mod. cycles':>11} {'% wkld':>8} {'mod. cyc':>8}")
    print(head)
    print(unit)
    for r in doc["rows"]:
        d, a = r["dormant"], r["active"]
        line = (f"  {r['label']:32} {r['passes']:>7,} {_fmt(d['per_pass_instructions']):>13} "
                f"{_fmt(d['per_pass_modeled_cycles']):>13} "
                f"{d['percent_over_uninstrumented']:>7.2f}% ")
        if a is None:
            print(line + f"  not armed: {r['unavailable']}")
            continue
        print(line + f"{r['hits']:>6,} {_fmt(a['per_hit_instructions']):>10} "
              f"{_fmt(a['per_hit_modeled_cycles']):>11} "
              f"{a['percent_over_uninstrumented']:>7.2f}% {r['arming_modeled_cycles']:>8,.0f}")
    print("  how each ran:")
    for r in doc["rows"]:
        if r["detail"]:
            print(f"    {r['label']}: {r['detail']}")
    if any(r["dormant"]["per_pass_breakdown"] for r in doc["rows"]):
        print("  where the modeled cycles went (per pass dormant | per hit armed):")
        for r in doc["rows"]:
            armed = (r["active"] or {}).get("per_hit_breakdown") or {}
            print(f"    {r['label']}: {breakdown_line(r['dormant']['per_pass_breakdown'])}"
                  f" | {breakdown_line(armed)}")
    if not doc["exact"]:
        print("  NOTE: with more than one CPU the runs also differ in interleaving and lock "
              "spinning,\n  so per-pass and per-hit figures are not exact (they can even be "
              "negative).")
    print("  published orderings, checked on these modeled numbers:")
    for o in doc["orderings"]:
        mark = {True: "holds", False: "FAILS", None: "  -  "}[o["holds"]]
        print(f"   [{mark}] {o['claim']}\n           varies: {o['variable']}"
              f"\n           {_published(o)}\n           {o['text']}")


def _spread(s: dict | None) -> str:
    return "n/a" if not s else f"{s['median']:,.2f} [{s['min']:,.2f}, {s['max']:,.2f}]"


#: How each verdict is marked in the table.
MARKS = {HOLDS: "holds", FAILS: "FAILS", UNDECIDED: "undecided"}


def print_samples(doc: dict) -> None:
    """One arch over samples: each row's median and range, each ordering's k/N verdict."""
    seeds = doc["layouts"]
    print(f"\n{doc['arch']}: {doc['workload']} on {doc['cpus']} CPU(s), sites "
          f"{', '.join(doc['sites'])} (functions {', '.join(doc['kprobe_points'])}), "
          f"over {doc['n']} layouts (seeds {seeds[0]}.."
          f"{seeds[-1]}; one alone: --layouts 1 --layout-seed SEED"
          + (" --vary-assumptions" if doc["assumptions"][0] is not None else "") + ")"
          + (", memory pressure" if doc["memory_pressure"] else ""))
    if doc["assumptions"][0] is not None:
        core = get_arch(doc["arch"]).core
        print("  each sample also draws the reference core's modelling assumptions: "
              + ", ".join(f"{name} {r.low:g}..{r.high:g} ({v:g})"
                          for name, (r, v) in sorted(core.assumptions().items())))
    print(f"  {'mechanism':32} {'dormant/pass, mod. cycles':>32} {'armed/hit, mod. cycles':>36}")
    print(f"  {'':32} {'median [min, max]':>32} {'median [min, max]':>36}")
    for r in doc["rows"]:
        armed = (_spread(r["active"]["per_hit_modeled_cycles_spread"]) if r["active"]
                 else "not armed")
        print(f"  {r['label']:32} {_spread(r['dormant']['per_pass_modeled_cycles_spread']):>32}"
              f" {armed:>36}")
    print(f"  published orderings over the {doc['n']} layouts (holds: in at least 95 %; "
          "FAILS: in at most 5 %; undecided by the model: between):")
    for o in doc["orderings"]:
        mark = MARKS.get(o["verdict"], "  -  ")
        print(f"   [{mark} {o['k']}/{o['n']}] {o['claim']}\n           varies: {o['variable']}"
              f"\n           {_published(o)}")
        if o.get("not_judged") or o["n"] == 0:
            print(f"           {o.get('not_judged') or o['text']}")
        if o["sides"]:
            print("           " + " vs ".join(f"{s['name']} {_spread(s)}" for s in o["sides"])
                  + (f", ratio {_spread(o['ratio'])}" if o.get("ratio") else ""))
        d = o["deciding"]
        if d:
            print(f"           decided by {d['entry']}: {d['margin']} {d['when_holds']:+.2f} "
                  f"in the {d['samples_holding']} holding, {d['when_fails']:+.2f} in the "
                  f"{d['samples_failing']} failing (modeled cycles per pass or hit)")


def _over_layouts(args: argparse.Namespace, arches: list[str], model: CostModel,
                  seeds: range) -> list[dict]:
    """``--layouts``: every arch over its layouts, each layout a sample run alone."""
    todo = tasks(compare_arch, arches, seeds,
                 vary=args.vary_assumptions, workload=args.workload, cpus=args.cpus,
                 size=args.size, model=model,
                 memory_pressure=args.memory_pressure, mechanisms=args.mechanism,
                 modules=args.modules, expect=args.expect, timing=timing(args),
                 sites=args.site)
    docs: dict[str, list[dict]] = {name: [] for name in arches}
    with progress("kisim compare", total=len(todo), enabled=not args.json) as advance:
        for task, doc in zip(todo, run_samples(todo, jobs=jobs(args),
                                               scheduler=args.scheduler)):
            docs[task.arch].append(doc)
            advance(description=f"{task.arch}: layout {task.layout}")
    return [over_samples(d) for d in docs.values()]


def _as_linked(args: argparse.Namespace, arches: list[str], model: CostModel,
               mechs: tuple) -> list[dict]:
    """Every arch in the one layout kernel/kernel.lds links."""
    with progress("kisim compare", total=runs_per_arch(mechs) * len(arches),
                  enabled=not args.json) as advance:
        return [compare_arch(name, workload=args.workload, cpus=args.cpus, size=args.size,
                             model=model, memory_pressure=args.memory_pressure,
                             mechanisms=args.mechanism, advance=advance, modules=args.modules,
                             expect=args.expect, timing=timing(args), sites=args.site)
                for name in arches]


def run(args: argparse.Namespace) -> int:
    arches = args.arch or list(NAMES)
    check_arches(arches)
    check_workload(args.workload, args.size)
    try:
        model = load_cost_model(args.cost_model, NAMES) if args.cost_model else CostModel()
        mechs = select(args.mechanism)
    except CompareError as err:
        raise UsageError(str(err)) from None
    seeds = layout_sweep(args)
    if seeds is None:
        only_with("--layouts N", (("--jobs", args.jobs is not None),
                                  ("--scheduler", bool(args.scheduler))),
                  "without it compare is one serial run per arch")
    out = OutDir(args.out)             # claimed and locked before any run, as trace's
    try:
        for name in OUTPUTS:           # a link or FIFO there: refused before any run
            out.target(name)
        try:
            docs = (_over_layouts(args, arches, model, seeds) if seeds is not None
                    else _as_linked(args, arches, model, mechs))
        except (CompareError, SampleError) as err:
            raise UsageError(str(err)) from None
        from lab.plot import plot       # matplotlib only when plotting
        plots = plot(docs, out.path)
        report = out.target("compare.json")
        document = with_warnings(compare_document(docs, plots, args.cost_model))
        fsio.atomic_write(report, json.dumps(document, indent=2) + "\n")
    except BaseException:
        out.release()
        raise
    out.commit([report, *plots])
    note_removed(out)
    if args.json:
        print_json(document)
    else:
        for doc in docs:
            (print_table if args.layouts is None else print_samples)(doc)
        print(f"\nwrote {report}, {', '.join(str(p) for p in plots)}")
        print("Cycles are modeled (the reference cores of docs/timing.md, or counts only "
              "with --cycles count; `--json` lists each constant and its source). Dormant "
              "costs include the compiler's reaction to the site "
              "(register allocation, spills), not only the enable check.")
    return 0 if all(d["checksums_ok"] for d in docs) else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="markers, tracepoints, ring buffers, ftrace, kprobes "
                                       "and line probes, dormant and armed, per arch",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", action="extend", nargs="+", metavar="ARCH",
                   help=f"arches to compare (default all: {', '.join(NAMES)})")
    p.add_argument("--mechanism", action="extend", nargs="+", metavar="KEY",
                   help="only these rows (and the rows their figures come from): "
                        + ", ".join(m.key for m in MECHANISMS))
    add_workload(p, "kmalloc")
    p.add_argument("--site", action="append", default=None, metavar="NAME",
                   help="arm the markers and tracepoints named NAME (e.g. a --module's own "
                        "trace_mark()), and the kprobe family and function tracer at the "
                        "functions holding them, instead of the kernel's kmalloc and "
                        "sched_switch; the ring-buffer and line-probe rows have no "
                        "counterpart there (repeatable)")
    add_cpus(p)
    add_cycles(p, "timing")
    p.add_argument("--out", default="kisim-compare", metavar="DIR", type=path,
                   help="where compare.json, compare.png and compare.svg go (default "
                        f"./kisim-compare); as trace's --out: {POLICY}; each file is "
                        "written to a temporary name renamed over the old one, and a link "
                        "or FIFO at any of them is refused")
    p.add_argument("--cost-model", metavar="FILE.toml",
                   help="override insn/trap/ipi/serialize/icache_flush/clock_read cycles: "
                        "[default] and [ARCH] tables of event = cycles")
    p.add_argument("--memory-pressure", action="store_true",
                   help="every workload step first walks a working set twice the size of "
                        "the reference core's outermost cache (CONFIG_WORKLOAD_MEMORY_PRESSURE), "
                        "so flag loads miss as the timing model makes them; needs --cycles "
                        "timing; default size a twentieth of the workload's")
    add_modules(p)
    add_layouts(p)
    add_jobs(p)
    add_json(p)
    p.set_defaults(func=run)
