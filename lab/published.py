"""The published figures kisim's figures are set beside: one home.

Each constant is a figure as its source prints it; the per-event costs
(:data:`EVENTS`) are differences of two published loops. kprobes.rst's hits
live with each arch's kprobes (``PUBLISHED``, :class:`arches.base.PublishedHit`),
since which ones apply depends on the ISA. ``lab.microbench`` runs the
experiments these figures come from, ``lab.compare`` names them beside its
rows and ``lab.plot`` draws them; docs/timing.md says where each was found.
"""
from __future__ import annotations

from arches import NAMES, get_arch
from arches.base import PublishedHit
from probes.kprobes import arch_kprobes

#: Documentation/immediate.txt, "Memory hit for a data-based branch" (3 GHz Pentium 4):
#: mean cycles per iteration, 100 tests x 100,000 branches.
IMMEDIATE_PUBLISHED = {"base": 77.5044, "imv": 85.3438, "l1": 89.6413, "memory": 636.611}

#: markers-microbench-0.2.txt (LTTV tests/markers/, Desnoyers 2006, 3 GHz Pentium 4,
#: Linux 2.6.17): cycles per loop, empty and with one dormant marker of each build, and
#: with the "optimized" (immediate-value) marker armed to an empty var-args probe.
MARKERS_PUBLISHED = {"empty": 1.50, "optimized": 4.00, "generic": 2.67, "armed": 52.11}

#: The same write-up, "with an empty kprobe attached": 4233.97 cycles per loop, so the
#: "kprobe adds 4178.23 cycles" per hit over the loop without it (55.74).
MARKERS_KPROBE_ADDED = 4178.23

#: Seed 002: hackbench 50 seconds, mcount compiled in vs not, and every function traced.
SEED_002 = {"base": 2.221, "live": 2.531, "traced": 113.350}

#: The one published call density found: a FreeBSD send(2) "makes about 70 function calls"
#: in about 4,000 cycles on an Athlon (Bruce Evans, FreeBSD commit d5c90663b2,
#: sys/i386/isa/prof_machdep.c), so about 17.5 calls per 1,000 cycles. No figure for Linux
#: under hackbench was found.
PUBLISHED_CALLS_PER_KCYCLE = (70 / 4000 * 1000, "FreeBSD send(2): about 70 calls in about "
                              "4,000 cycles (Bruce Evans, FreeBSD commit d5c90663b2)")

#: Documentation/trace/kprobes.rst, "Probe Overhead": "A return-probe hit typically takes
#: 50-75% longer than a kprobe hit."
KRETPROBE_OVER_KPROBE = (1.50, 1.75)

#: Documentation/staging/static-keys.rst (v5.10), "Performance": ``perf stat`` cycles of
#: 'pipe-test' with the getppid() printk behind a flag test and behind a static key.
STATIC_KEYS_CYCLES = {"flag": 1_474_374_262, "jump_label": 1_432_559_428}

LTTNG = "LTTng markers microbenchmark, P4 3 GHz"
IMMEDIATE = "Documentation/immediate.txt, P4 3 GHz"
STATIC_KEYS = "Documentation/staging/static-keys.rst"
SEED_002_SOURCE = "mcount RFC, LKML Jan 2008 (seed 002); real seconds"

_M, _I = MARKERS_PUBLISHED, IMMEDIATE_PUBLISHED
#: Published per-event costs in cycles: (label, cycles, source), each the difference
#: of two published loops, all on Desnoyers' Pentium 4.
EVENTS: tuple[tuple[str, float, str], ...] = (
    ("disabled marker, load+test+branch", _M["generic"] - _M["empty"], LTTNG),
    ("disabled marker, immediate value", _M["optimized"] - _M["empty"], LTTNG),
    ("immediate value per site", _I["imv"] - _I["base"], IMMEDIATE),
    ("L1-hit flag load per site", _I["l1"] - _I["base"], IMMEDIATE),
    ("enabled marker, empty probe", _M["armed"] - _M["optimized"], LTTNG),
    ("cache-cold load per site", _I["memory"] - _I["base"], IMMEDIATE),
)
EVENT = {label: cycles for label, cycles, _ in EVENTS}


def kprobes_hit(path: str, machine: str) -> PublishedHit:
    """kprobes.rst's hit of ``path`` on the machine whose name holds ``machine``, from
    the ``PUBLISHED`` of whichever arch's ISA family that machine is."""
    for name in NAMES:
        for hit in arch_kprobes(get_arch(name)).PUBLISHED:
            if hit.path == path and machine in hit.machine:
                return hit
    raise LookupError(f"kprobes.rst times no {path} hit on a {machine}")


def static_key_change() -> float:
    """The static key's cycles against the flag test's, as a fraction (-0.028)."""
    return STATIC_KEYS_CYCLES["jump_label"] / STATIC_KEYS_CYCLES["flag"] - 1


def mcount_text() -> str:
    """Seed 002's two figures, as ratios of its hackbench times."""
    live, traced = (SEED_002[k] / SEED_002["base"] for k in ("live", "traced"))
    return (f"hackbench 50: {SEED_002['base']:g} s -> {SEED_002['live']:g} s "
            f"(+{100 * (live - 1):.0f} %, which the post calls 13 %) with mcount calls live, "
            f"{SEED_002['traced']:g} s (x{traced:.0f}) tracing every function ({SEED_002_SOURCE})")


__all__ = ["EVENT", "EVENTS", "IMMEDIATE", "IMMEDIATE_PUBLISHED", "KRETPROBE_OVER_KPROBE",
           "LTTNG", "MARKERS_KPROBE_ADDED", "MARKERS_PUBLISHED", "PUBLISHED_CALLS_PER_KCYCLE",
           "SEED_002", "STATIC_KEYS", "STATIC_KEYS_CYCLES", "kprobes_hit", "mcount_text",
           "static_key_change"]
