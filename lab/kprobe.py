"""What one kprobe costs per hit: a workload run without, then with, the probe.

Both runs use the same kernel, CPUs, seed and quantum, so on one CPU the
difference is exactly the kprobe path (its guest instructions and the
modeled cycles of its traps); :func:`lab.measure.measure` divides it by the
hits. Several probes at one site share the run without a probe
(:class:`ProbeRuns`). Used by ``kisim kprobe``, ``kisim demo``, ``kisim
tour`` and ``kisim validate``.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from arches.base import ReferenceCore
from kbuild import build
from lab.measure import Tally, measure
from patcher.errors import PatchError
from probes.kprobes import BlacklistEntry, Kprobe, Kprobes, Kretprobe, has_optprobes
from sim.asm import disasm_one
from sim.elf import SymbolTable
from sim.errors import UnmappedAccess
from sim.guest import Guest, check_workload

_AT = re.compile(r"^(?P<sym>(?:[A-Za-z_]\w*:)?[A-Za-z_][\w.]*)"
                 r"(?:\+(?P<off>0x[0-9a-fA-F]+|\d+))?$")


def parse_at(text: str) -> tuple[str, int]:
    """``[MODULE:]SYMBOL[+OFF]`` (OFF decimal or 0x hex) -> (symbol, offset)."""
    match = _AT.match(text)
    if match is None:
        raise PatchError("EINVAL", f"kprobe: {text!r} is not [MODULE:]SYMBOL[+OFFSET]")
    return match["sym"], int(match["off"] or "0", 0)


@dataclass
class KprobeCost:
    """One probe's hits and its cost per hit."""

    arch: str
    at: str
    address: int
    workload: str
    cpus: int
    handlers: str
    kind: str
    hits: int
    nmissed: int
    checksum_ok: bool
    #: Per hit; None without hits.
    instructions_per_hit: float | None
    modeled_cycles_per_hit: float | None
    traps_per_hit: float | None
    site_before: str
    site_after: str
    #: debugfs kprobes/list at the address: one line per probe there (kr: r and k).
    list_lines: tuple[str, ...]
    cycles: str = ""
    #: The timing model's counts and stall cycles per hit (empty when count-only).
    breakdown: dict = field(default_factory=dict)
    #: A kretprobe's own: entries that found no free instance (struct kretprobe's
    #: nmissed: their returns were not probed), and its instances; None for a kprobe.
    kretprobe_nmissed: int | None = None
    maxactive: int | None = None
    #: The run's debug.kprobes-optimization sysctl; None in a kernel without optprobes.
    optimization: bool | None = None
    #: The probe and the kprobe optimizer as the run ended: "queued" (flagged
    #: optimized, its jump not yet written: the optimizer runs OPTIMIZE_DELAY jiffies,
    #: 20 ms of modeled time, after registration), "optimized" (before the run, with
    #: ``optimize``), "optimized during the run" (its first hits trapped), or "" (not
    #: queued: the sysctl, a post_handler, or a region the arch cannot detour).
    optimizer: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def path_letters(post_traps: float, plain_traps: float) -> dict[str, str]:
    """Documentation/trace/kprobes.rst's letter (:data:`arches.base.KPROBE_PATHS`) for
    each way kisim probes one site, from the traps a hit takes with a post_handler
    (which no kernel boosts: k) and without one. A plain probe that takes fewer
    traps is boosted, b; else it is k itself. A kretprobe's entry is a plain
    probe, so it is rb where b exists, else r. The optimizer's detour is o."""
    boosted = plain_traps < post_traps
    return {"post": "k", "plain": "b" if boosted else "k", "ret": "rb" if boosted else "r",
            "optimize": "o"}


def check_handler(symbols: SymbolTable, name: str) -> None:
    """A handler names a guest function: :class:`PatchError` (EINVAL) for data
    or anything else that is no function (an unknown name is ENOENT later)."""
    kinds = {s.kind for s in symbols.candidates(name)}
    if kinds and "func" not in kinds:
        what = "data" if "object" in kinds else "not a function"
        raise PatchError("EINVAL", f"kprobe: handler {name!r} is {what}, not a function")


def keep_breakpoints(kprobes: Kprobes) -> bool:
    """Set debug.kprobes-optimization to 0 where the kernel has optprobes, before
    probes register: they keep their breakpoints, as kprobes.rst measures k, b and
    r (x86 would otherwise send a queued probe's hits through its detour).
    Whether the kernel has the sysctl (and so whether it was set)."""
    if kprobes.optprobes:
        kprobes.set_optimization(False)
    return kprobes.optprobes


class ProbeRuns:
    """One kernel and workload, run once without a probe, and each probe placed at
    ``at`` measured against that run (:meth:`measure`): several probes at one site
    cost one run without a probe, not one each.

    ``modules`` are guest modules built in (kbuild.modules); ``handler`` names
    a guest function (a module's) to use as the pre_handler, or a kretprobe's
    return handler, instead of the empty one. ``timing`` runs on the timing
    model (else count-only), in the randomized text layout of seed ``layout``
    (:mod:`kbuild.layout`) and on ``core`` if given (the reference core with
    other values of its assumptions).
    """

    def __init__(self, arch: str, at: str, *, workload: str = "kmalloc", cpus: int = 1,
                 size: int | None = None, overrides: dict[str, str] | None = None,
                 modules: Sequence = (), handler: str | None = None,
                 expect: int | None = None, timing: bool = True, layout: int | None = None,
                 core: ReferenceCore | None = None) -> None:
        check_workload(workload, size)
        self.symbol, self.offset = parse_at(at)
        if handler == "":
            raise PatchError("EINVAL", "kprobe: the handler name is empty")
        self.handler, self.workload, self.cpus = handler, workload, cpus
        self.kernel = build(arch, overrides=overrides, modules=modules, layout=layout)
        self.kw = dict(cpus=cpus, workload=workload, size=size, expect=expect, timing=timing,
                       core=core)
        unprobed = Guest(self.kernel, **self.kw)
        if handler is not None:
            check_handler(unprobed.image.symbols, handler)
        #: The kernel has optprobes, and so the debug.kprobes-optimization sysctl.
        self.optprobes = has_optprobes(unprobed)
        self.base = Tally.of(unprobed.run())

    def measure(self, *, post: bool = False, ret: bool = False, with_kprobe: bool = False,
                optimize: bool = False, maxactive: int = 0,
                optimization: bool | None = None, breakpoints: bool = False) -> KprobeCost:
        """The workload run again with a kprobe (empty guest handlers), its cost per hit.

        ``ret`` places a kretprobe on the same function entry (``at`` must be
        one) whose empty handler runs at every return; its entry probe then
        carries the kprobe's place; ``with_kprobe`` adds a kprobe with the empty
        pre_handler there too (the two then share an aggr_kprobe: kprobes.rst's
        "kr"). ``maxactive`` is the kretprobe's (0: v5.10's default, one instance per
        possible CPU). ``optimize`` runs the kprobe optimizer before the workload, as
        if its delay had passed; without it, a queued probe is optimized when the
        run's modeled clock passes the delay. ``optimization`` sets the
        debug.kprobes-optimization sysctl first (None: the kernel's default, on);
        ``breakpoints`` sets it to 0 where the kernel has it (:func:`keep_breakpoints`)."""
        symbol, offset, handler = self.symbol, self.offset, self.handler
        guest = Guest(self.kernel, **self.kw)
        kprobes = Kprobes(guest)
        if optimization is not None:
            kprobes.set_optimization(optimization)
        if breakpoints:
            keep_breakpoints(kprobes)
        addr = kprobes.resolve(Kprobe(symbol_name=symbol, offset=offset))
        try:
            before = disasm_one(guest.arch, guest.machine.read(addr, guest.arch.max_insn_len),
                                addr)
        except UnmappedAccess:      # no text there: register_kprobe() says so, as the kernel
            before = None
        rp = None
        if ret:
            rp = kprobes.register_kretprobe(Kretprobe(
                symbol_name=symbol, offset=offset, handler=handler or "kretprobe_empty_handler",
                maxactive=maxactive))
            kp = rp.kp
            if with_kprobe:
                kprobes.register_kprobe(Kprobe(symbol_name=symbol, offset=offset,
                                               pre_handler="kprobe_empty_pre_handler"))
        else:
            kp = kprobes.register_kprobe(Kprobe(
                symbol_name=symbol, offset=offset,
                pre_handler=handler or "kprobe_empty_pre_handler",
                post_handler="kprobe_empty_post_handler" if post else None))
            if optimize:
                kprobes.optimize_now(kp)
        after = disasm_one(guest.arch, guest.machine.read(addr, guest.arch.max_insn_len), addr)
        optimized_first = kp.top.optimized          # by ``optimize``, before the run
        kind = "optprobe (detour)" if optimized_first else kprobes.kind(kp)
        result = guest.run(on_turn=kprobes.kprobe_optimizer)
        hits = kp.hits
        cost = measure(guest.arch, self.base, Tally.of(result), hits)
        return KprobeCost(
            arch=guest.arch.name, at=kp.describe(), address=addr, workload=self.workload,
            cpus=self.cpus,
            handlers=("kretprobe" + (" and a kprobe" if with_kprobe else "") if ret
                      else "pre+post" if post else "pre")
            + (f" ({handler})" if handler else ""),
            kind=kind if kp.top.optimized or not hits else kprobes.kind(kp),
            hits=hits, nmissed=kp.nmissed, checksum_ok=result.ok,
            instructions_per_hit=cost.instructions, modeled_cycles_per_hit=cost.modeled_cycles,
            traps_per_hit=cost.traps,
            site_before=before, site_after=after,
            list_lines=tuple(line for line in kprobes.list() if f"{addr:x}  " in line),
            cycles=guest.machine.cycles_from, breakdown=cost.breakdown,
            kretprobe_nmissed=rp.nmissed if rp else None, maxactive=rp.maxactive if rp else None,
            optimization=kprobes.allow_optimization if kprobes.optprobes else None,
            optimizer="optimized" if optimized_first else "optimized during the run"
            if kp.top.optimized else "queued" if kprobes.queued(kp) else "")


def measure_kprobe(arch: str, at: str, *, post: bool = False, ret: bool = False,
                   with_kprobe: bool = False, optimize: bool = False, maxactive: int = 0,
                   optimization: bool | None = None, **runs: Any) -> KprobeCost:
    """Run a workload without and with one kprobe at ``at``: :class:`ProbeRuns`
    (``runs``: its options) and its :meth:`~ProbeRuns.measure`."""
    return ProbeRuns(arch, at, **runs).measure(post=post, ret=ret, with_kprobe=with_kprobe,
                                               optimize=optimize, maxactive=maxactive,
                                               optimization=optimization)


def kprobe_blacklist(arch: str, *, modules: Sequence = (),
                     overrides: dict[str, str] | None = None
                     ) -> tuple[list[str], list[BlacklistEntry]]:
    """debugfs ``kprobes/blacklist`` of the built kernel, its modules' entries
    included, and the entries behind its lines (:meth:`probes.kprobes.Kprobes.blacklist`)."""
    kprobes = Kprobes(Guest(build(arch, overrides=overrides, modules=modules), cpus=1))
    return kprobes.blacklist(), kprobes.blacklist_entries
