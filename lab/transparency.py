"""Kprobes are transparent: a probe on every instruction changes no result.

The kprobe self-test at scale (v5.10 ``kernel/test_kprobes.c`` probes a few
functions; this probes every instruction of the functions asked for). Each
instruction of each function gets a kprobe with the empty guest handlers
(``kprobe_empty_pre_handler``, and ``kprobe_empty_post_handler`` with
``post``); with ``ret`` each function's entry gets a kretprobe instead (the
empty ``kretprobe_empty_handler`` at every return); with ``optimize`` each
probe is optimized where the arch and ``can_optimize()`` allow. What the
kernel refuses (``register_kprobe``'s ``-errno``) is counted with its reason.

The workload then runs, and each probe's hits must equal how often its
instruction ran in a run of the same kernel without probes, counted by a
Unicorn code hook (:meth:`sim.machine.Machine.watch`) when its condition
passes (an ARM instruction whose condition fails does not hit), plus, in the
code an ftrace-based kprobe's site calls (``ftrace_regs_caller``, which
probes on mcount sites bring in), once for each time such a site was reached. Optprobe
detours cover several instructions, and no probe may sit inside another's
detour (``can_optimize``): with ``optimize`` the probes are registered in
batches, each run of its own, whose detours do not overlap. One CPU: with
more, spin-wait and idle loops run a number of times that depends on the
interleaving, which the probes change.

Used by ``kisim kprobe --every-instruction`` and
``benchmarks/bench_kprobes.py --transparency``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Iterable

import capstone

from kbuild import Build
from lab.symbols import Function, functions_of
from patcher.errors import PatchError
from patcher.ftrace import KPROBE_CALLERS
from probes.kprobes import Kprobe, Kprobes, Kretprobe, arch_kprobes, check_optprobes
from sim.guest import Guest

#: The probe each mode registers, as ``kisim kprobe`` names them.
MODES = ("pre", "post", "ret", "opt")


@dataclass
class Refusal:
    """An instruction the kernel would not probe, and why."""

    where: str                  # function+offset
    address: int
    errno: str
    reason: str


@dataclass
class Mismatch:
    """A probe whose hits differ from how often its instruction ran."""

    where: str
    address: int
    hits: int
    counted: int


@dataclass
class Transparency:
    """A kprobe on every instruction of some functions: what it changed (nothing)."""

    arch: str
    workload: str
    size: int
    mode: str
    functions: int
    probed: int
    optimized: int
    batches: int
    hits: int
    counted: int
    nmissed: int
    checksum: int | None        # the probed run's (the last batch's)
    checksum_ok: bool           # every run's checksum matches the unprobed run's
    refused: list[Refusal] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    #: ``ret``: the kretprobes' own nmissed, entries that found no free instance
    #: (their returns were not probed; the entry probe's hit still counts).
    kretprobe_nmissed: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def failure(self) -> str | None:
        """Why the check failed (None: it passed)."""
        if not self.probed:
            return (f"nothing probed: the kernel refused all {len(self.refused)} instruction(s)"
                    if self.refused else "nothing probed: no instructions")
        if self.mismatches:
            return f"{len(self.mismatches)} probe(s) hit a different number of times"
        if not self.checksum_ok:
            return "the checksum differs from the unprobed run's"
        return None

    def refusal_reasons(self) -> Counter[str]:
        """How many instructions each reason refused: a reason without its place, what
        follows the address it names ("X is ...", "cannot probe X: ...")."""
        def why(r: Refusal) -> str:
            _, named, after = r.reason.partition(r.where)
            return after.removeprefix(" is ").removeprefix(": ") if named else r.reason
        return Counter(f"{r.errno}: {why(r)}" for r in self.refused)

    def to_json(self) -> dict:
        return {**asdict(self), "ok": self.ok, "failure": self.failure}


def instructions(guest: Guest, functions: Iterable[Function]) -> list[int]:
    """Every instruction boundary of ``functions`` ((start, size, name)), as the
    arch's decoder reads the unprobed text, once each: an alias (lib/crc32.c's
    ``crc32_le`` is ``__alias(crc32_le_base)``) names the same instructions again."""
    md = capstone.Cs(*guest.arch.cs_mode)
    return sorted({addr for start, size, _ in functions
                   for addr, _, _, _ in md.disasm_lite(guest.machine.read(start, size), start)})


def count_executions(guest: Guest, addrs: Iterable[int]) -> Counter[int]:
    """How often each of ``addrs`` runs in ``guest``'s run (filled as it runs): code
    hooks, counting an execution only when the instruction's condition passes (ARM),
    as the kprobe breakpoint carries the same condition."""
    counts: Counter[int] = Counter()
    ops = arch_kprobes(guest.arch)
    code = {addr: guest.machine.read(addr, guest.arch.max_insn_len) for addr in addrs}

    def count(cpu, addr: int) -> None:
        if ops.condition_passes(addr, code[addr], cpu):
            counts[addr] += 1

    for addr in code:
        guest.machine.watch(addr, lambda cpu, a=addr: count(cpu, a))
    return counts


def _kprobe_callers(guest: Guest) -> list[tuple[int, int]]:
    """The code an ftrace-based kprobe's site calls with the function tracer off
    (patcher.ftrace.KPROBE_CALLERS), as [start, end) ranges: it runs only because
    the probes are there, once per site reached, so a probe on it hits that many
    times more than the unprobed run counted (none in a kernel without it)."""
    return [(start, start + size) for start, size, name in guest.image.functions
            if name == KPROBE_CALLERS[False]]


def _register(kprobes: Kprobes, addr: int, entry: bool, mode: str) -> Kprobe | Kretprobe:
    """One probe at ``addr`` as ``mode`` asks (PatchError: the kernel's refusal)."""
    if mode == "ret" and entry:
        return kprobes.register_kretprobe(Kretprobe(addr=addr,
                                                    handler="kretprobe_empty_handler"))
    return kprobes.register_kprobe(Kprobe(
        addr=addr, pre_handler="kprobe_empty_pre_handler",
        post_handler="kprobe_empty_post_handler" if mode == "post" else None))


def every_instruction(kernel: Build, target: str | None = None, *, workload: str,
                      size: int | None = None, mode: str = "pre",
                      expect: int | None = None) -> Transparency:
    """Probe every instruction of ``target`` (``MOD`` or ``[MOD:]FUNC``,
    :func:`lab.symbols.functions_of`; None: every function of ``kernel``) as
    ``mode`` (:data:`MODES`) says, run ``workload``, and compare each probe's
    hits with an unprobed run's code-hook count."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    kw = dict(cpus=1, workload=workload, size=size, expect=expect)
    reference = Guest(kernel, **kw)
    if mode == "opt":
        check_optprobes(reference)          # as --at X --opt: no run of "0 optimized"
    functions = (reference.image.functions if target is None
                 else functions_of(reference.image, target))
    entries = {start for start, _, _ in functions}
    pending = instructions(reference, functions)
    counts = count_executions(reference, pending)
    unprobed = reference.run()

    callers = _kprobe_callers(reference)
    refused: list[Refusal] = []
    probes: list[Kprobe] = []
    kretprobes: list[Kretprobe] = []
    expected = Counter(counts)
    batches = 0
    checksum_ok, checksum = True, None
    while pending:
        guest = Guest(kernel, **kw)
        kprobes = Kprobes(guest)
        batch = len(probes)
        later, end = [], 0          # end: where the last optimized detour ends
        for addr in pending:
            if addr < end:          # inside a detour of this batch: the next batch's
                later.append(addr)
                continue
            try:
                probe = _register(kprobes, addr, addr in entries, mode)
            except PatchError as err:
                refused.append(Refusal(guest.image.describe(addr), addr, err.errno, err.message))
                continue
            if isinstance(probe, Kretprobe):
                kretprobes.append(probe)
                probe = probe.kp
            probes.append(probe)
            if mode == "opt":
                try:
                    kprobes.optimize_now(probe)
                    end = addr + probe.top.opt_region
                except PatchError:          # stays a kprobe: can_optimize() said no
                    pass
        result = guest.run()
        batches += 1
        checksum = result.checksum
        checksum_ok &= result.checksum == unprobed.checksum and result.ok
        pending = later
        # the callers ran once for each time a site of an ftrace-based probe was reached
        calls = sum(kp.hits + kp.nmissed for kp in probes[batch:] if kp.ftrace)
        for kp in probes[batch:]:
            if any(start <= kp.addr < stop for start, stop in callers):
                expected[kp.addr] += calls
    mismatches = [Mismatch(kp.describe(), kp.addr, kp.hits, expected[kp.addr])
                  for kp in probes if kp.hits != expected[kp.addr]]
    return Transparency(
        arch=kernel.arch, workload=workload, size=unprobed.size, mode=mode,
        functions=len(functions), probed=len(probes),
        optimized=sum(kp.top.optimized for kp in probes), batches=batches,
        hits=sum(kp.hits for kp in probes), counted=sum(expected[kp.addr] for kp in probes),
        nmissed=sum(kp.nmissed for kp in probes), checksum=checksum,
        checksum_ok=checksum_ok and unprobed.ok, refused=refused, mismatches=mismatches,
        kretprobe_nmissed=sum(rp.nmissed for rp in kretprobes))


__all__ = ["MODES", "Mismatch", "Refusal", "Transparency", "count_executions", "every_instruction",
           "instructions"]
