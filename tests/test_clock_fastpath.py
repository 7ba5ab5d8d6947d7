"""Clock reads in the host hook and on Unicorn's counter give the reference's traces, bit for bit.

Three ways to serve a trace clock read (``HC_CLOCK``), named by
:data:`sim.clock.CLOCK_PATHS`: ``"host"`` (the default), the machine's host trap hook
(``sim/native/hooks.c``) serves it in C from Unicorn's instruction
counter, without entering Python; ``"counter"``, the Python handler reads
the same counter in place (``ModeledClock.native = False``); ``"spin"``,
the reference, pauses the CPU's slice in the counting loop at every read
and the turn goes on in a new slice. None ends the turn. Same seed: same
events, same timestamps, same loss accounting, same instruction counts and
modeled cycles, on every arch, 1-4 CPUs, both buffer modes, for the trace
events and for the function tracer.
"""
from __future__ import annotations

import ctypes

import pytest
import unicorn

from arches import ARCHES, NAMES, Arch
from kbuild import build
from patcher.tables import load_tables
from probes.function_tracer import FunctionTracer
from sim.clock import CLOCK_PATHS
from sim.errors import ConfigError, GuestFault
from sim.guest import Guest
from sim.event import cycles_to_ns
from sim.hypercall import HYPERCALLS, HypercallTable
from sim.machine import SPIN_BASE, TURN_ENDS, Machine
from sim.native import MAX_REGIONS
from sim.uccount import counter_offset
from tracing.events import parse_probes
from tracing.session import EventList, TraceOptions, TraceSession

PRESSURE = {"subbuf_size": 512, "subbufs": 2, "drain_every": 6}    # both modes lose events
BASE = 0x10000
#: yielding_machine's turn ends: 4 x (3 nops, hypercall, 5 nops, hypercall) + hypercall
YIELDS = [4, 10, 14, 20, 24, 30, 34, 40, 41]


def traced(arch: str, cpus: int, mode: str, path: str, *, ftrace: bool = False,
           skew: int = 0, host_skew: int = 0, python_reads: list | None = None) -> tuple:
    """Everything a traced kmalloc run produced, comparable with ``==``.

    Negative controls: ``skew`` puts the Python path's counter that many
    instructions ahead; ``host_skew`` makes the host hook charge that many
    instructions' cycles more per read. ``python_reads`` collects the reads
    that entered Python.
    """
    b = build(arch)
    guest = Guest(b, cpus=cpus, workload="kmalloc", size=12 if ftrace else 60,
                  seed=cpus, quantum=3000)
    guest.machine.clock.use(path)
    for cpu in guest.machine.cpus:
        if skew:
            cpu._counter = _Plus(cpu, skew)
        cpu._state.clock_read_cost += host_skew * guest.arch.cost("insn")
    names = parse_probes("kmem,sched")
    if ftrace:
        tracer = FunctionTracer(guest, load_tables(b.elf, b.spec))
        names = tracer.event_names
    session = TraceSession(guest, TraceOptions(names, mode=mode, **PRESSURE))
    if python_reads is not None:
        table = guest.hypercalls
        number = HYPERCALLS["HC_CLOCK"]
        served = table.handlers[number]
        session.clock._handler = table.handlers[number] = \
            lambda *args: python_reads.append(args[0].index) or served(*args)
    if ftrace:
        tracer.start()
    sink = EventList()
    r = session.run(sink)
    assert r.checksum_ok
    events = [(e.name, e.cpu, e.timestamp, e.tid, e.comm, e.values) for e in sink.events]
    counts = [c.to_json() for c in r.per_cpu]
    return (events, counts, r.end_ns, r.clock_reads, dict(guest.hypercalls.counts),
            [(c.instructions, c.modeled_cycles, dict(c.events)) for c in guest.machine.cpus])


class _Plus:
    """A counter view reading ``skew`` more than Unicorn's."""

    def __init__(self, cpu, skew: int) -> None:
        self.real = ctypes.c_uint64.from_address(cpu.uc._uch.value + counter_offset(cpu.arch))
        self.skew = skew

    @property
    def value(self) -> int:
        return self.real.value + self.skew


#: Two CPUs in the fast subset; one, three and four (a second or more each) in
#: ``make test``.
CPUS = [2, *(pytest.param(n, marks=pytest.mark.slow) for n in (1, 3, 4))]


@pytest.mark.parametrize("mode", ["discard", "overwrite"])
@pytest.mark.parametrize("cpus", CPUS)
@pytest.mark.parametrize("name", NAMES)
def test_trace_events_fast_paths_equal_reference(name: str, cpus: int, mode: str) -> None:
    reference = traced(name, cpus, mode, "spin")
    assert traced(name, cpus, mode, "host") == reference
    assert traced(name, cpus, mode, "counter") == reference
    events, counts = reference[0], reference[1]
    assert len(events) > 50 and len({e[1] for e in events}) == cpus
    lost = "discarded" if mode == "discard" else "overwritten"
    assert sum(c[lost] for c in counts) > 0          # the buffers were under pressure


@pytest.mark.parametrize("mode", ["discard", "overwrite"])
@pytest.mark.parametrize("cpus", CPUS)
@pytest.mark.parametrize("name", NAMES)
def test_function_tracer_fast_paths_equal_reference(name: str, cpus: int, mode: str) -> None:
    reference = traced(name, cpus, mode, "spin", ftrace=True)
    assert traced(name, cpus, mode, "host", ftrace=True) == reference
    assert traced(name, cpus, mode, "counter", ftrace=True) == reference
    assert {e[0] for e in reference[0]} == {"function"} and len(reference[0]) > 50


@pytest.mark.parametrize("path", CLOCK_PATHS)
def test_only_the_host_path_keeps_reads_out_of_python(arch: Arch, path: str) -> None:
    entered: list[int] = []
    result = traced(arch.name, 2, "discard", path, python_reads=entered)
    reads = result[3]
    assert reads > 50 and result[4]["HC_CLOCK"] == reads
    assert len(entered) == (0 if path == "host" else reads)


@pytest.mark.parametrize("name", NAMES)
def test_a_counter_off_by_one_is_caught(name: str) -> None:
    """Negative control: the comparison above sees a one-instruction error."""
    assert traced(name, 2, "discard", "counter", skew=1) != traced(name, 2, "discard", "spin")


@pytest.mark.parametrize("name", NAMES)
def test_a_host_hook_off_by_one_instruction_is_caught(name: str) -> None:
    """Negative control for the host path: one instruction's cycles too many per read."""
    assert traced(name, 2, "discard", "host", host_skew=1) != traced(name, 2, "discard", "spin")


def clock_machine(arch: Arch, path: str, where: int | None, regions: int = 0) -> Machine:
    """A bare machine whose seventh instruction reads the clock into ``where``
    (None: a slot mapped after ``regions`` small mappings)."""
    nop = arch.nop(arch.insn_align)
    m = Machine(arch, 1)
    m.clock.use(path)
    m.load_code(nop * 6 + arch.syscall_insn + nop, BASE)
    for k in range(regions):
        m.map(0x4000_0000 + 2 * k * 0x1000, 0x1000, "rw")
    if where is None:
        where = 0x4000_0000 + 2 * regions * 0x1000 + 8
        m.map(where, 0x1000, "rw")
    m.clock.serve(HypercallTable(m))
    cpu = m.cpus[0]
    cpu.set_reg(arch.ret, 0x5A)
    cpu.set_reg(arch.args[0], HYPERCALLS["HC_CLOCK"])
    cpu.set_reg(arch.args[1], where)
    return m


@pytest.mark.parametrize("regions", [0, MAX_REGIONS + 2])
@pytest.mark.parametrize("path", CLOCK_PATHS)
def test_a_read_stores_the_clock_at_its_hypercall(arch: Arch, path: str, regions: int) -> None:
    """Seven instructions, one of them a clock read, stored in guest byte order and
    returning 0; past the host hook's memory table the read is Python's, same value."""
    m = clock_machine(arch, path, None, regions)
    cpu = m.cpus[0]
    where = cpu.arg(1)
    assert m.step(0, 7) == 7
    expected = cycles_to_ns(7 * arch.cost("insn") + arch.cost("clock_read"), arch.clock_hz)
    assert m.read(where, 8) == expected.to_bytes(8, arch.endian)
    assert cpu.reg(arch.ret) == 0 and m.clock.reads == 1 and cpu.events["clock_read"] == 1
    assert cpu.modeled_cycles == 7 * arch.cost("insn") + arch.cost("clock_read")


@pytest.mark.parametrize("path", CLOCK_PATHS)
def test_a_read_into_unmapped_memory_faults_the_same_way(arch: Arch, path: str) -> None:
    m = clock_machine(arch, path, 0x7000_0000)
    with pytest.raises(GuestFault, match="bad pointer: host access to unmapped memory 0x70000000"):
        m.step(0, 7)


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


def test_unknown_turn_end_or_clock_path_is_refused() -> None:
    with pytest.raises(ConfigError, match="turn_end 'fast' is not one of counter, spin"):
        Machine(NAMES[0], turn_end="fast")
    with pytest.raises(ConfigError, match="clock path 'fast' is not one of host, counter, spin"):
        Machine(NAMES[0]).clock.use("fast")


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
