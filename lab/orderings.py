"""The published orderings, checked against the modeled numbers of one comparison.

Each ordering compares like with like: it names the one variable it
changes and the rows it reads, and those rows differ only in that
variable (same sites or functions, same workload, same hits; for the
build options, the same build with one option flipped). Each result is a
dict: ``claim`` (with its source), ``variable``, ``rows``, ``holds``
(True, False, or None when a row is missing or the arch lacks the
mechanism), ``text`` (the figures), ``sides`` (each side's name, modeled
cycles and the timing model's stall cycles by entry, which
:mod:`lab.verdict` reads over samples) and, for a claim on a ratio of two
per-hit costs, ``ratio``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from arches import Arch, get_arch
from arches.base import PublishedHit
from lab.published import EVENT, KRETPROBE_OVER_KPROBE, kprobes_hit, static_key_change
from probes.kprobes import arch_kprobes

#: The kprobe family's rows all probe the entries of kmalloc() and schedule() in the same
#: build (nothing compiled in), with the same hits on one CPU.
_SAME_POINTS = "same functions (kmalloc, schedule), same build (nothing compiled in), same hits"


def _per_hit(row: dict | None) -> float | None:
    return row["active"]["per_hit_modeled_cycles"] if row and row["active"] else None


def _per_pass(row: dict | None) -> float | None:
    return row["dormant"]["per_pass_modeled_cycles"] if row else None


def _stalls(breakdown: dict) -> dict[str, float]:
    return dict(breakdown.get("stall_cycles", {})) if breakdown else {}


def _pass_stalls(row: dict | None) -> dict[str, float]:
    return _stalls(row["dormant"].get("per_pass_breakdown", {})) if row else {}


def _hit_stalls(row: dict | None) -> dict[str, float]:
    return _stalls(row["active"].get("per_hit_breakdown", {})) if row and row["active"] else {}


def _side(name: str, value: float | None, stalls: dict[str, float]) -> dict:
    """One side of a claim: its name, its modeled cycles, its stall cycles by entry."""
    return {"name": name, "value": value, "stall_cycles": stalls}


def _pass_side(name: str, row: dict | None) -> dict:
    return _side(name, _per_pass(row), _pass_stalls(row))


def _hit_side(name: str, row: dict | None) -> dict:
    return _side(name, _per_hit(row), _hit_stalls(row))


def _result(claim: str, variable: str, rows: tuple[str, ...], holds: bool | None,
            text: str, sides: tuple[dict, ...] = ()) -> dict:
    return {"claim": claim, "variable": variable, "rows": list(rows), "holds": holds,
            "text": text, "sides": list(sides)}


def _cheaper(claim: str, variable: str, rows: tuple[str, str], a: dict, b: dict,
             what: str) -> dict:
    """The claim that side ``a`` costs less than side ``b``."""
    x, y = a["value"], b["value"]
    if x is None or y is None:
        return _result(claim, variable, rows, None, "not measured")
    if abs(x - y) < 1e-9:
        return _result(claim, variable, rows, False,
                       f"does not hold: {a['name']} and {b['name']} cost the same {x:.2f} "
                       f"modeled {what}", (a, b))
    verb = "holds" if x < y else "does not hold"
    return _result(claim, variable, rows, x < y,
                   f"{verb}: {a['name']} {x:.2f} vs {b['name']} {y:.2f} modeled {what}", (a, b))


def _ratio(claim: str, variable: str, rows: tuple[str, str], a: dict, b: dict,
           test: Callable[[float], bool], unavailable: str = "") -> dict:
    """A claim on the ratio of two modeled per-hit costs, side ``a`` over side ``b``."""
    x, y = a["value"], b["value"]
    if x is None or y is None or y <= 0:
        return _result(claim, variable, rows, None,
                       f"not measured{': ' + unavailable if unavailable else ''}")
    ratio = x / y
    verb = "holds" if test(ratio) else "does not hold"
    return {**_result(claim, variable, rows, test(ratio),
                      f"{verb}: {a['name']} {x:.2f} vs {b['name']} {y:.2f} modeled cycles "
                      f"per hit, x{ratio:.2f}", (a, b)), "ratio": ratio}


@dataclass(frozen=True)
class Conditions:
    """Where and on what kernel a claim's figures were measured, and where kisim judges it.

    ``hit``: the claim is judged only on the arch of that published hit's ISA family
    (its ``PUBLISHED`` holds it); None: on every arch. ``two_trap_kretprobe``: only
    where the kretprobe trampoline is itself a kprobe, as on the claim's kernels."""

    machines: str
    kernel: str
    hit: PublishedHit | None = None
    two_trap_kretprobe: bool = False
    why: str = ""

    def here(self, arch: Arch | None) -> str | None:
        """Why the claim is not judged on ``arch`` (None: it is, or no arch is named)."""
        if arch is None:
            return None
        if self.hit is not None and self.hit not in arch_kprobes(arch).PUBLISHED:
            return f"not judged on {arch.name}: {self.why}"
        if self.two_trap_kretprobe and not arch.ops.KRETPROBE_TRAMPOLINE_KPROBE:
            return (f"not judged on {arch.name}: its v5.10 kretprobe trampoline is plain code "
                    f"(one trap per hit); {self.why}")
        return None

    def to_json(self) -> dict:
        return {"machines": self.machines, "kernel": self.kernel}


_LTTNG = "Linux 2.6.2x with the LTTng patch set (markers, immediate values)"
_ENABLED = EVENT["enabled marker, empty probe"]
#: The kprobes.rst hits the claims quote (machine, path): arches' PUBLISHED.
_OPTERON = {p: kprobes_hit(p, "Opteron") for p in ("k", "r")}
_XEON = {p: kprobes_hit(p, "Xeon E5410") for p in ("k", "b", "o", "rb")}
_RET_LOW, _RET_HIGH = KRETPROBE_OVER_KPROBE


def _us(hit: PublishedHit) -> str:
    return f"{hit.microseconds:.2f}"


def _in_cycles(hit: PublishedHit) -> str:
    return f"{_us(hit)} us = ~{round(hit.cycles, -1):.0f} cycles at {hit.mhz:g} MHz"
_P4 = "Intel Pentium 4 3 GHz (Desnoyers)"
#: The published conditions of each claim, in :func:`orderings`' order.
IMMEDIATE = Conditions(_P4, _LTTNG)
STATIC_KEYS = Conditions("not named in the document (its listings are x86-64 code)",
                         "Linux v3.x (Documentation/static-keys.txt, perf stat)")
ARMED = Conditions(_P4 + ", LTTV markers microbenchmark", _LTTNG)
#: The ratio claims set two machines' figures side by side: judged on their ISA family.
_FAMILY_WHY = ("the claim sets x86 machines' figures side by side; judged on the arch of "
               "their ISA family")
KPROBE_VS_MARKER = Conditions("AMD Opteron 246 2 GHz (kprobe) vs " + _P4 + " (marker)",
                              "Linux 2.6.1x (kprobes.txt, 2005) vs " + _LTTNG,
                              hit=_OPTERON["k"], why=_FAMILY_WHY)
OPTPROBE_VS_MARKER = Conditions("Intel Xeon E5410 2.33 GHz (optprobe) vs " + _P4 + " (marker)",
                                "Linux 2.6.3x with optprobes (kprobes.txt) vs " + _LTTNG,
                                hit=_XEON["o"], why=_FAMILY_WHY)
KPROBE_PATHS = Conditions("Intel Xeon E5410 2.33 GHz", "Linux 2.6.3x with optprobes "
                          "(kprobes.txt, 'Optimized Probe Overhead')")
KRETPROBE = Conditions("Intel Pentium M 1.5 GHz, AMD Opteron 246 2 GHz, IBM POWER5 1.66 GHz",
                       "Linux 2.6.1x (kprobes.txt, 'Probe Overhead', 2005), whose kretprobe "
                       "trampoline was itself a kprobe: two traps per hit",
                       two_trap_kretprobe=True,
                       why="judged where the trampoline is a kprobe, as on the claim's kernels")
LINE_PROBE = Conditions("none: a claim about what is compiled in",
                        "the dprobe seed (LKML, July 2008)")


class _Judged(list):
    """The orderings of one arch, each added with its conditions (:func:`_under`)."""

    def __init__(self, arch: Arch | None) -> None:
        super().__init__()
        self.arch = arch

    def add(self, conditions: Conditions, result: dict) -> None:
        self.append(_under(result, conditions, self.arch))


def _under(result: dict, conditions: Conditions, arch: Arch | None) -> dict:
    """``result`` with the claim's published conditions; not judged where they exclude
    ``arch`` (holds None, the reason in the text, the figures kept)."""
    result["published_on"] = conditions.to_json()
    why = conditions.here(arch)
    if why is not None and result["holds"] is not None:
        result.update(holds=None, not_judged=why, text=f"{why} ({result['text']})")
    return result


def orderings(doc: dict) -> list[dict]:
    """Each published ordering whose rows ``doc`` holds, and whether the numbers obey it
    (where the claim's conditions apply to ``doc``'s arch: :class:`Conditions`)."""
    row = {r["mechanism"]: r for r in doc["rows"]}
    arch = get_arch(doc["arch"]) if "arch" in doc else None
    out = _Judged(arch)
    if "marker_imv" in row and "marker_flag" in row:
        out.add(IMMEDIATE, _cheaper(
            "a dormant immediate-value marker is cheaper than a memory-flag marker "
            f"(Documentation/immediate.txt: {EVENT['immediate value per site']:+.2f} vs "
            f"{EVENT['L1-hit flag load per site']:+.2f} L1 / "
            f"{EVENT['cache-cold load per site']:+.0f} cold, cycles)",
            "CONFIG_IMMEDIATE (y vs n): the same marker sites, the same build otherwise",
            ("marker_imv", "marker_flag"), _pass_side("immediate", row["marker_imv"]),
            _pass_side("memory flag", row["marker_flag"]), "cycles per pass"))
    if "tracepoint_jump_label" in row and "tracepoint_flag" in row:
        out.add(STATIC_KEYS, _cheaper(
            "a dormant jump-label site is cheaper than a flag test "
            f"(Documentation/static-keys.txt: cycles {100 * static_key_change():+.1f} %)",
            "CONFIG_JUMP_LABEL (y vs n): the same tracepoint sites, the same build otherwise",
            ("tracepoint_jump_label", "tracepoint_flag"),
            _pass_side("jump label", row["tracepoint_jump_label"]),
            _pass_side("flag test", row["tracepoint_flag"]), "cycles per pass"))
    for key in ("marker_imv", "marker_flag", "tracepoint_jump_label", "tracepoint_flag"):
        r = row.get(key)
        if r is None or r["active"] is None:
            continue
        d, act = _per_pass(r), _per_hit(r)
        armed = d + act if d is not None and act is not None else None
        stalls = _pass_stalls(r)
        for k, v in _hit_stalls(r).items():
            stalls[k] = stalls.get(k, 0.0) + v
        result = _cheaper(f"{r['label']}: a site armed to an empty probe costs more than the "
                          f"same site dormant (LTTng: {_ENABLED:.2f} cycles enabled vs "
                          f"{EVENT['disabled marker, load+test+branch']:.2f}-"
                          f"{EVENT['disabled marker, immediate value']:.2f} disabled, P4 3 GHz)",
                          "armed to the empty probe vs dormant: the same site, the same build",
                          (key, key), _pass_side("dormant", r),
                          _side("armed (dormant + call)", armed, stalls), "cycles per pass")
        if armed and d and d > 0:
            result["text"] += f", x{armed / d:.1f}"
        out.add(ARMED, result)
    kp, boosted, opt, ret = (row.get(k) for k in ("kprobe", "kprobe_boosted", "optprobe",
                                                  "kretprobe"))
    opt_why = opt["unavailable"] if opt and opt["unavailable"] else ""
    how_hit = ("how a probe call is reached: a kprobe trap at the function's entry vs the "
               "immediate-value marker's call inside it; each row differenced against its own "
               "dormant run, both with empty handlers, the same hits")
    out.add(KPROBE_VS_MARKER, _ratio(
        "a kprobe hit costs at least 10x a marker hit armed to an empty probe "
        f"(kprobes.txt {_in_cycles(_OPTERON['k'])} vs LTTng {_ENABLED:.2f} cycles)",
        how_hit, ("kprobe", "marker_imv"), _hit_side("kprobe", kp),
        _hit_side("marker", row.get("marker_imv")), lambda x: x >= 10))
    out.add(OPTPROBE_VS_MARKER, _ratio(
        f"an optprobe hit costs within 2x a marker hit (kprobes.txt {_in_cycles(_XEON['o'])} "
        f"vs {_ENABLED:.2f})", how_hit, ("optprobe", "marker_imv"),
        _hit_side("optprobe", opt), _hit_side("marker", row.get("marker_imv")),
        lambda x: x <= 2, opt_why))
    k, b, o = _per_hit(kp), _per_hit(boosted), _per_hit(opt)
    claim = ("kprobe > boosted kprobe > optprobe per hit (kprobes.txt, Xeon E5410: "
             + ", ".join(f"{p} {_us(_XEON[p])}" for p in ("k", "b", "o")) + " us)")
    variable = f"the kprobe's path: post_handler (single-step), pre only (boosted), " \
               f"optimized (detour); {_SAME_POINTS}"
    chain_rows = ("kprobe", "kprobe_boosted", "optprobe")
    if k is None or b is None:
        out.add(KPROBE_PATHS, _result(claim, variable, chain_rows, None, "not measured"))
    else:
        chain = [("kprobe", k), ("boosted", b)] + ([("optprobe", o)] if o is not None else [])
        holds = all(x > y for (_, x), (_, y) in zip(chain, chain[1:]))
        text = " > ".join(f"{n} {v:.2f}" for n, v in chain) + " modeled cycles per hit"
        if o is None:
            text += f" (optprobe not measured: {opt_why or 'no row'})"
        sides = [_hit_side(n, row.get(k)) for (n, _), k in zip(chain, chain_rows)]
        out.add(KPROBE_PATHS, _result(claim, variable, chain_rows, holds,
                           f"{'holds' if holds else 'does not hold'}: {text}", sides))
    out.add(KRETPROBE, _ratio(f"a kretprobe hit is {100 * (_RET_LOW - 1):.0f}-"
                      f"{100 * (_RET_HIGH - 1):.0f} % slower than a kprobe hit, both without "
                      f"post_handler (kprobes.txt: r {_us(_OPTERON['r'])} vs "
                      f"k {_us(_OPTERON['k'])} us; rb {_us(_XEON['rb'])} vs "
                      f"b {_us(_XEON['b'])})",
                      f"return probe vs entry probe, no post_handler; {_SAME_POINTS}",
                      ("kretprobe", "kprobe_boosted"), _hit_side("kretprobe", ret),
                      _hit_side("boosted kprobe", boosted),
                      lambda x: _RET_LOW <= x <= _RET_HIGH))
    line = row.get("line_probe")
    if line is not None:
        d = _per_pass(line)
        out.add(LINE_PROBE, _result(
            "a line-number probe costs nothing while unused: nothing is compiled in (dprobe "
            "seed, LKML July 2008)",
            "a line probe defined but unarmed vs no probe: the same build (nothing compiled in)",
            ("line_probe",), None if d is None else d == 0,
            "not measured" if d is None else
            f"{'holds' if d == 0 else 'does not hold'}: {d:.2f} modeled cycles per pass "
            f"dormant; armed, a hit costs {_per_hit(line) or 0:.2f} (a kprobe's)",
            (_pass_side("unused line probe", line),)))
    return list(out)


__all__ = ["Conditions", "orderings"]
