"""Clock reads on Unicorn's counter give the reference's traces, bit for bit.

The reference (``turn_end="spin"``) pauses a CPU's slice in the counting
loop at every clock read, and the turn goes on in a new slice; the fast
path (``turn_end="counter"``) reads Unicorn's own instruction counter in
place (:mod:`sim.uccount`) and the slice goes on. Neither ends the turn.
Same seed: same events, same timestamps, same loss accounting, same
instruction counts and modeled cycles, on every arch, 1-4 CPUs, both
buffer modes, for the trace events and for the function tracer.
"""
from __future__ import annotations

import ctypes

import pytest
import unicorn

from arches import ARCHES, NAMES, Arch
from kbuild import build
from patcher.tables import load_tables
from probes.function_tracer import FunctionTracer
from sim.errors import ConfigError
from sim.guest import Guest
from sim.event import cycles_to_ns
from sim.machine import SPIN_BASE, TURN_ENDS, Machine
from sim.uccount import counter_offset
from tracing.events import parse_probes
from tracing.session import EventList, TraceOptions, TraceSession

PRESSURE = {"subbuf_size": 512, "subbufs": 2, "drain_every": 6}    # both modes lose events
BASE = 0x10000
#: yielding_machine's turn ends: 4 x (3 nops, hypercall, 5 nops, hypercall) + hypercall
YIELDS = [4, 10, 14, 20, 24, 30, 34, 40, 41]


def traced(arch: str, cpus: int, mode: str, turn_end: str, *, ftrace: bool = False,
           skew: int = 0) -> tuple:
    """Everything a traced kmalloc run produced, comparable with ``==``."""
    b = build(arch)
    guest = Guest(b, cpus=cpus, workload="kmalloc", size=12 if ftrace else 40,
                  seed=cpus, quantum=3000)
    guest.machine.turn_end = turn_end
    if skew:                                  # negative control: a counter off by ``skew``
        for cpu in guest.machine.cpus:
            cpu._counter = _Plus(cpu, skew)
    names = parse_probes("kmem,sched")
    if ftrace:
        tracer = FunctionTracer(guest, load_tables(b.elf, b.arch))
        names = tracer.event_names
    session = TraceSession(guest, TraceOptions(names, mode=mode, **PRESSURE))
    if ftrace:
        tracer.start()
    sink = EventList()
    r = session.run(sink)
    assert r.checksum_ok
    events = [(e.name, e.cpu, e.timestamp, e.tid, e.comm, e.values) for e in sink.events]
    counts = [c.to_json() for c in r.per_cpu]
    return (events, counts, r.end_ns, r.clock_reads,
            [(c.instructions, c.modeled_cycles) for c in guest.machine.cpus])


class _Plus:
    """A counter view reading ``skew`` more than Unicorn's."""

    def __init__(self, cpu, skew: int) -> None:
        self.real = ctypes.c_uint64.from_address(cpu.uc._uch.value + counter_offset(cpu.arch))
        self.skew = skew

    @property
    def value(self) -> int:
        return self.real.value + self.skew


@pytest.mark.parametrize("mode", ["discard", "overwrite"])
@pytest.mark.parametrize("cpus", [1, 2, 3, 4])
@pytest.mark.parametrize("name", NAMES)
def test_trace_events_fast_path_equals_reference(name: str, cpus: int, mode: str) -> None:
    fast = traced(name, cpus, mode, "counter")
    assert fast == traced(name, cpus, mode, "spin")
    events, counts = fast[0], fast[1]
    assert len(events) > 50 and len({e[1] for e in events}) == cpus
    lost = "discarded" if mode == "discard" else "overwritten"
    assert sum(c[lost] for c in counts) > 0          # the buffers were under pressure


@pytest.mark.parametrize("mode", ["discard", "overwrite"])
@pytest.mark.parametrize("cpus", [1, 2, 3, 4])
@pytest.mark.parametrize("name", NAMES)
def test_function_tracer_fast_path_equals_reference(name: str, cpus: int, mode: str) -> None:
    fast = traced(name, cpus, mode, "counter", ftrace=True)
    assert fast == traced(name, cpus, mode, "spin", ftrace=True)
    assert {e[0] for e in fast[0]} == {"function"} and len(fast[0]) > 50


@pytest.mark.parametrize("name", NAMES)
def test_a_counter_off_by_one_is_caught(name: str) -> None:
    """Negative control: the comparison above sees a one-instruction error."""
    assert traced(name, 2, "discard", "counter", skew=1) != traced(name, 2, "discard", "spin")


def yielding_machine(arch: Arch, turn_end: str) -> tuple[Machine, list[int]]:
    """Nops with a hypercall every few instructions; each hypercall ends the turn."""
    nop = arch.nop(arch.insn_align)
    code = (nop * 3 + arch.syscall_insn + nop * 5 + arch.syscall_insn) * 4 + arch.syscall_insn
    m = Machine(arch, 1, turn_end=turn_end)
    m.load_code(code, BASE)
    calls = [0]

    def on_trap(cpu, trap):
        calls[0] += 1
        cpu.halt() if calls[0] == 9 else cpu.yield_turn()
    m.on_trap = on_trap
    spins: list[int] = []
    m.watch(SPIN_BASE, lambda cpu: spins.append(cpu.instructions))
    return m, spins


def test_turns_end_at_the_trap_with_the_counter_and_in_the_loop_without(arch: Arch) -> None:
    counts = {}
    for turn_end in ("counter", "spin"):
        m, spins = yielding_machine(arch, turn_end)
        retired = []
        m.run(on_turn=lambda mach: retired.append(mach.cpus[0].instructions))
        counts[turn_end] = retired
        assert bool(spins) == (turn_end == "spin")   # only the reference enters the loop
    assert counts["counter"] == counts["spin"] == YIELDS


def test_the_counter_is_located_for_every_arch() -> None:
    for arch in ARCHES.values():
        offset = counter_offset(arch)
        assert offset is not None and offset % 8 == 0
        uc = unicorn.Uc(*arch.uc_mode)
        assert ctypes.c_uint64.from_address(uc._uch.value + offset).value == 0


def test_unknown_turn_end_is_refused() -> None:
    with pytest.raises(ConfigError, match="turn_end 'fast' is not one of counter, spin"):
        Machine(NAMES[0], turn_end="fast")


def test_without_a_located_counter_turns_end_in_the_loop(arch: Arch, monkeypatch) -> None:
    """Another Unicorn build, where the counter is not found: the reference, same counts."""
    monkeypatch.setattr("sim.machine.instruction_counter", lambda uc, arch: None)
    m, spins = yielding_machine(arch, "counter")
    retired = []
    m.run(on_turn=lambda mach: retired.append(mach.cpus[0].instructions))
    assert spins and retired == YIELDS


@pytest.mark.parametrize("turn_end", TURN_ENDS)
def test_a_clock_read_is_exact_and_does_not_end_the_turn(arch: Arch, turn_end: str) -> None:
    """Ten reads, one every 4 instructions, under turns of 7: the turns end at
    7, 14, ... whatever reads the clock, and each reading is the clock at its
    hypercall (4k instructions and k trap charges)."""
    nop = arch.nop(arch.insn_align)
    m = Machine(arch, 1, quantum=7, turn_end=turn_end)
    m.load_code((nop * 3 + arch.syscall_insn) * 10 + arch.syscall_insn, BASE)
    readings: list[int] = []
    slices = []

    def on_trap(cpu, trap):
        if len(readings) == 10:
            cpu.halt()
        else:
            m.clock.read(cpu, readings.append)
    m.on_trap = on_trap
    m.run(on_turn=lambda mach: slices.append(mach.cpus[0].instructions))
    assert slices == [7, 14, 21, 28, 35, 41]
    insn, trap = arch.cost("insn"), arch.cost("trap")
    assert readings == [cycles_to_ns(4 * k * insn + k * trap, arch.clock_hz)
                        for k in range(1, 11)]
