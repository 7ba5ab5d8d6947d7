"""The patch checker on the real guest kernel: markers toggled under hackbench.

One seed boots the guest kernel (the arch's defconfig build, with any
``overrides``: ``THUMB2_KERNEL=y`` boots the Thumb-2 kernel) on ``cpus``
CPUs running a workload (hackbench by default) with seeded turn lengths.
Every CPU fetches the kernel's text pages through its own view
(:mod:`sim.fetch`). After seeded turns the host arms or disarms a seeded
marker, or registers or unregisters a tracepoint probe, through the public
patcher API (:mod:`patcher.markers`, :mod:`patcher.tracepoint`, which patch
jump-label and immediate-value sites through :mod:`patcher.text`); with the
``ftrace`` site kind (the boot converted every mcount site to the arch's
nop before the CPUs started, ``ftrace_init``), the host registers or
unregisters a tracer function (``ftrace_stub``) under a seeded filter (no
filter, or one function), so :mod:`patcher.ftrace` turns the filtered
sites into calls and back in one batch. The protocol's stores, flushes and
sync rounds interleave with the other CPUs exactly as in
:mod:`patchcheck.checker`.

A code hook on every patchable site (``__jump_table``, ``__imv`` and, with
``ftrace``, ``__mcount_loc`` entries) checks each execution against memory:

- ``torn``: the CPU fetched bytes that the site never held, neither old
  nor new nor the breakpoint;
- ``stale``: outside any patch operation, the CPU fetched a value the site
  held before but memory no longer holds;
- ``fault``: the run crashed or panicked;
- ``wrong checksum``: the workload finished with a checksum other than
  the reference (:func:`sim.guest.reference_checksum`).

A finding is reported once per CPU, site and kind in a run.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import unicorn

from arches.base import TextPokeBatch, TextPort
from patchcheck.checker import Finding, InterleavingPort, unpredictable
from patchcheck.sites import DEFAULT_SITES, CheckerError, arch_label, parse_sites
from patcher.ftrace import Ftrace, ftrace_for
from sim.asm import disasm_one, disassemble
from sim.errors import GuestFault
from sim.fetch import FetchViews
from sim.machine import PAGE, Machine

OP_CHANCE = 0.02          # chance of starting a patch operation after one turn
QUANTUM = 2_000           # most instructions in one seeded turn
STEP_RUN = 1_000           # most instructions a CPU runs between two protocol steps
MAX_INSTRUCTIONS = 50_000_000   # a run longer than this has hung: a fault


def _text_pages(image: object) -> tuple[int, int]:
    """The whole pages of .text that hold no other allocated section."""
    text = image.sections[".text"]
    begin = text.addr - text.addr % PAGE
    end = text.addr + text.size + (-(text.addr + text.size)) % PAGE
    for s in image.sections.values():
        if s is text or not s.addr or not s.size:
            continue
        if s.addr < end and begin < s.addr + s.size:
            if s.addr >= text.addr + text.size:
                end = min(end, s.addr - s.addr % PAGE)
            else:
                begin = max(begin, s.addr + s.size + (-(s.addr + s.size)) % PAGE)
    return begin, end


@dataclass
class KernelRun:
    """One seed's outcome on the guest kernel."""

    seed: int
    operations: int = 0
    by_switch: Counter = field(default_factory=Counter)
    site_executions: int = 0
    checksum_ok: bool = False
    findings: list[Finding] = field(default_factory=list)


class KernelChecker:
    """Boot the guest kernel per seed and patch its marker sites while it runs."""

    def __init__(self, arch: str, cpus: int = 2, *, protocol: TextPokeBatch | None = None,
                 protocol_name: str = "", workload: str = "hackbench",
                 size: int | None = None, sites: str | tuple[str, ...] = DEFAULT_SITES,
                 modules: tuple = (), overrides: Mapping[str, str] | None = None) -> None:
        from kbuild import build
        self.sites = parse_sites(sites)
        other = [k for k in self.sites if k not in DEFAULT_SITES + ("ftrace",)]
        if other:
            raise CheckerError(f"--kernel toggles markers, tracepoints and ftrace; "
                               f"{','.join(other)} sites are checked on the loop only")
        # the defconfig with ``overrides`` (--set), on the arch it builds (Build.spec:
        # THUMB2_KERNEL=y boots the Thumb-2 kernel)
        self.build = build(arch, overrides=overrides, modules=modules)
        if self.build.is_set("PATCHING_IN_GUEST"):
            raise CheckerError("--kernel checks the host's protocols on the kernel; a kernel "
                               "built with PATCHING_IN_GUEST=y patches itself, which --kernel "
                               "does not check (--guest checks that C on the loop)")
        if "ftrace" in self.sites and not self.build.is_set("DYNAMIC_FTRACE"):
            raise CheckerError(f"{arch_label(self.build.spec)}: --kernel --site ftrace "
                               "needs CONFIG_DYNAMIC_FTRACE=y")
        self.cpus, self.workload, self.size = cpus, workload, size
        self.protocol = protocol
        self.protocol_name = f"{protocol_name} on the guest kernel ({workload})"
        self.executed: Counter[str] = Counter()

    def run_seed(self, seed: int) -> list[Finding]:
        """One boot; its findings. Counts land in :attr:`executed`."""
        run = self.run_kernel(seed)
        self.executed.update({"patch operations": run.operations,
                              "site executions": run.site_executions,
                              "checksums right": int(run.checksum_ok)})
        self.executed.update({f"{kind} operations": n for kind, n in run.by_switch.items()})
        return run.findings

    def run_kernel(self, seed: int) -> KernelRun:
        """One boot with seeded turns, seeded patch operations and the fetch model."""
        from patcher.instrument import attach
        from sim.guest import Guest, reference_checksum

        guest = Guest(self.build, cpus=self.cpus, workload=self.workload, size=self.size,
                      quantum=QUANTUM, seed=seed)
        inst = attach(guest)
        ftrace = ftrace_for(guest, inst.tables) if "ftrace" in self.sites else None
        run = _Run(guest.machine, random.Random(seed), seed, inst.text.protocol
                   if self.protocol is None else self.protocol, guest.image)
        for patcher in [inst.text] + ([ftrace.patcher] if ftrace else []):
            patcher.port = InterleavingPort(run)
            patcher.protocol = run.tracked
        run.hook_sites([e.code for e in inst.tables.jump_entries]
                       + [e.insn for e in inst.tables.imv]
                       + ([r.ip for r in ftrace.records] if ftrace else []))
        # (kind, name): markers are armed/disarmed, tracepoints get a probe or lose it,
        # the function tracer is registered (under a seeded filter) or unregistered
        markers = any(k in DEFAULT_SITES for k in self.sites)
        switches = ([("marker", n) for n in inst.tables.marker_names()]
                    + [("tracepoint", tp.name) for tp in inst.tables.tracepoints]
                    if markers else []) + ([("ftrace", "function tracer")] if ftrace else [])
        on: set[tuple[str, str]] = set()

        def probe(*_args: object) -> None:
            """A marker or tracepoint probe that records nothing."""

        formats = {m.name: m.format for m in inst.tables.markers}
        for name in inst.tables.marker_names():     # 2.6.27: arming needs a probe
            inst.markers.marker_probe_register(name, formats[name], probe)

        def on_turn(_machine: Machine) -> None:
            run.drift_all()
            if not switches or run.rng.random() >= OP_CHANCE:
                return
            switch = run.rng.choice(switches)
            kind, name = switch
            enable = switch not in on
            run.phase = f"{'enable' if enable else 'disable'} {kind} {name}"
            if kind == "marker":
                (inst.markers.marker_arm if enable else inst.markers.marker_disarm)(name)
            elif kind == "ftrace":
                _switch_ftrace(ftrace, enable, run.rng)
            elif enable:
                inst.tracepoints.tracepoint_probe_register(name, probe)
            else:
                inst.tracepoints.tracepoint_probe_unregister(name, probe)
            on.symmetric_difference_update({switch})
            run.result.operations += 1
            run.result.by_switch[kind] += 1
            run.phase = "running"

        try:
            guest.machine.run(max_instructions=MAX_INSTRUCTIONS, on_turn=on_turn)
            size = guest.size
            run.result.checksum_ok = guest.checksum == reference_checksum(self.workload, size)
            if not run.result.checksum_ok:
                run.report(0, 0, "-", "wrong checksum",
                           f"checksum {guest.checksum} != reference "
                           f"{reference_checksum(self.workload, size)}")
        except GuestFault as fault:
            run.report(fault.cpu, fault.pc, fault.insn, "fault", fault.reason)
        return run.result


def _switch_ftrace(ftrace: Ftrace, enable: bool, rng: random.Random) -> None:
    """Register ``ftrace_stub`` as the tracer under a seeded filter (every function, or
    one), or unregister it: one batch of ftrace_make_call or ftrace_make_nop."""
    if not enable:
        ftrace.unregister_ftrace_function()
        return
    functions = sorted({r.function for r in ftrace.records})
    ftrace.write_filter("" if rng.random() < 0.5 else rng.choice(functions))
    ftrace.register_ftrace_function("ftrace_stub")


class _Run:
    """The per-seed state the interleaving port and the site hooks share."""

    def __init__(self, machine: Machine, rng: random.Random, seed: int,
                 protocol: TextPokeBatch, image: object) -> None:
        self.machine, self.rng, self.seed, self.protocol = machine, rng, seed, protocol
        self.views = FetchViews(machine, *_span(_text_pages(image)))
        self.result = KernelRun(seed)
        self.phase = "running"
        self.inflight: dict[int, tuple[bytes, bytes]] = {}
        self.history: dict[int, set[bytes]] = {}
        self.lengths: dict[int, int] = {}
        self._seen: set[tuple[int, int, str]] = set()
        self.breakpoint = machine.arch.kprobe_breakpoint(machine.arch.nop(machine.arch.insn_align))

    # -- the protocol, tracked ------------------------------------------------
    def tracked(self, port: TextPort, sites: Sequence[tuple[int, bytes]]) -> None:
        """Run the protocol with its sites marked in flight."""
        for addr, new in sites:
            old = port.read(addr, len(new))
            self.inflight[addr] = (old, new)
            self.history.setdefault(addr, set()).update((old, new))
        try:
            self.protocol(port, sites)
        finally:
            self.inflight.clear()

    # -- interleaving (the InterleavingPort's side) ------------------------------
    def interleave(self) -> None:
        order = [c.index for c in self.machine.cpus if not c.halted]
        self.rng.shuffle(order)
        for i in order:
            self.views.drift(i, self.rng)
            self.machine.step(i, self.rng.randint(1, STEP_RUN))

    def stored(self, addr: int, size: int) -> None:
        """A protocol store. The kernel run checks what its hooked sites fetch
        (:meth:`_on_site`); a store elsewhere in the kernel's text is not checked
        byte for byte here, as it is in the loop of :mod:`patchcheck.checker`."""

    def drift_all(self) -> None:
        for cpu in self.machine.cpus:
            self.views.drift(cpu.index, self.rng)

    # -- checks -----------------------------------------------------------------
    def hook_sites(self, addrs: list[int]) -> None:
        arch = self.machine.arch
        for addr in sorted(set(addrs)):
            if not self.views.covers(addr):
                continue
            insn = disassemble(arch, self.machine.read(addr, arch.max_insn_len), addr, 1)
            self.lengths[addr] = len(insn[0].bytes) if insn else arch.insn_align
            self.history[addr] = {self.machine.read(addr, self.lengths[addr])}
            for cpu in self.machine.cpus:
                cpu.uc.hook_add(unicorn.UC_HOOK_CODE, self._on_site, cpu.index, addr, addr)
        self.views.reset()                    # drop blocks translated before the hooks

    def _on_site(self, uc: unicorn.Uc, addr: int, size: int, cpu: int) -> None:
        self.result.site_executions += 1
        length = self.lengths[addr]
        fetched = self.views.read(cpu, addr, length)
        why = unpredictable(self.machine.arch, self.views, cpu, addr, length)
        if why is not None:
            self.report(cpu, addr, disasm_one(self.machine.arch, fetched, addr),
                        "unpredictable", why)
            return
        now = self.machine.read(addr, length)
        if fetched == now:
            return
        if self.views.read(cpu, addr, len(self.breakpoint)) == self.breakpoint:
            if addr in self.inflight:
                return
            self.report(cpu, addr, disasm_one(self.machine.arch, fetched, addr), "stale",
                        "fetched the patch protocol's breakpoint after it returned")
        elif fetched not in self.history.get(addr, ()):
            self.report(cpu, addr, disasm_one(self.machine.arch, fetched, addr), "torn",
                        "fetched bytes the site never held")
        elif addr not in self.inflight or fetched not in self.inflight[addr]:
            self.report(cpu, addr, disasm_one(self.machine.arch, fetched, addr), "stale",
                        f"fetched an old value; memory holds {now.hex(' ')}")

    def report(self, cpu: int, pc: int, insn: str, kind: str, detail: str) -> None:
        if (cpu, pc, kind) in self._seen:
            return
        self._seen.add((cpu, pc, kind))
        self.result.findings.append(Finding(self.seed, cpu, pc, insn, kind, detail, self.phase))


def _span(pages: tuple[int, int]) -> tuple[int, int]:
    begin, end = pages
    return begin, end - begin
