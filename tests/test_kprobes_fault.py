"""kprobe fault_handler (Linux v5.10): faults in a kprobe's handlers and in
the single-stepped copy, delivered as traps to the guest's
kprobe_fault_handler path (probes/kprobes.py, docs/kprobes.md)."""
from __future__ import annotations

import pytest

from arches import NAMES, get_arch
from kbuild import build
from patcher.errors import PatchError
from probes.kprobes import Kprobe, Kprobes, arch_kprobes
from sim.errors import GuestFault
from sim.guest import Guest

FUNCTION = "kmalloc"
SIZE = 300
TARGET = "kprobe_fault_target"       # faults when given KPROBE_FAULT_BAD
BAD = 0x1234                         # KPROBE_FAULT_BAD (asm/kprobes-core.h)
TF = 0x100                           # X86_EFLAGS_TF, the only arch with a fault trap today

FAULTING = [a for a in NAMES if arch_kprobes(get_arch(a)).FAULT_TRAPS]
PAGE_FAULT_ONLY = [a for a in NAMES if not arch_kprobes(get_arch(a)).FAULT_TRAPS]


def guest(arch: str, cpus: int = 1) -> Guest:
    return Guest(build(arch), cpus=cpus, workload="kmalloc", size=SIZE)


def trapnr(arch: str) -> int:
    (number,) = arch_kprobes(get_arch(arch)).FAULT_TRAPS
    return number


def traps(result) -> int:
    return sum(c["events"].get("trap", 0) for c in result.per_cpu)


class FixArgument:
    """A host fault_handler: records each call, then makes the faulting
    instruction's argument harmless so that running it again succeeds."""

    def __init__(self, arch: str, fix: bool = True) -> None:
        self.arg = get_arch(arch).args[0]
        self.pc = get_arch(arch).pc
        self.fix = fix
        self.calls: list[tuple[int, int, int]] = []

    def __call__(self, kp: Kprobe, regs, trapnr: int) -> int:
        self.calls.append((trapnr, regs[self.pc], regs.cpu))
        if not self.fix:
            return 0
        regs[self.arg] = 0
        return 1


@pytest.mark.slow
@pytest.mark.parametrize("arch", FAULTING)
def test_fault_in_pre_handler_runs_fault_handler_once_per_fault(arch: str) -> None:
    """KPROBE_HIT_ACTIVE: nmissed and the fault_handler once per fault, with
    the trap number and the faulting PC; returning 1 resumes there and the
    workload ends as without probes (2 CPUs, hundreds of faults each)."""
    base = guest(arch, cpus=2).run()
    g = guest(arch, cpus=2)
    k = Kprobes(g)
    handler = FixArgument(arch)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_fault_pre_handler",
                                  fault_handler=handler))
    result = g.run()
    assert result.ok and result.checksum == base.checksum
    target = g.image.symbols[TARGET]
    assert kp.hits > 100
    assert len(handler.calls) == kp.hits == kp.nmissed
    assert {(nr, pc) for nr, pc, _ in handler.calls} == {(trapnr(arch), target)}
    assert {cpu for _, _, cpu in handler.calls} == {0, 1}


@pytest.mark.slow
@pytest.mark.parametrize("arch", FAULTING)
def test_fault_in_post_handler_runs_fault_handler(arch: str) -> None:
    """KPROBE_HIT_SSDONE: a post_handler that faults (inside the single-step
    trap's handler) is fixed by the fault_handler, once per hit."""
    base = guest(arch).run()
    g = guest(arch)
    k = Kprobes(g)
    handler = FixArgument(arch)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler",
                                  post_handler="kprobe_fault_post_handler",
                                  fault_handler=handler))
    result = g.run()
    assert result.ok and result.checksum == base.checksum
    assert kp.hits > 100 and len(handler.calls) == kp.hits == kp.nmissed
    assert {(nr, pc) for nr, pc, _ in handler.calls} == {(trapnr(arch), g.image.symbols[TARGET])}


@pytest.mark.slow
@pytest.mark.parametrize("arch", FAULTING)
def test_guest_fault_handler_and_exact_traps(arch: str) -> None:
    """A guest fault_handler fixes each fault; each hit costs exactly the
    breakpoint path plus one fault trap, and two runs agree bit for bit."""
    base = guest(arch).run()
    runs = []
    for _ in range(2):
        g = guest(arch)
        k = Kprobes(g)
        kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                      pre_handler="kprobe_fault_pre_handler",
                                      fault_handler="kprobe_fault_fixup_handler"))
        result = g.run()
        assert result.ok and result.checksum == base.checksum
        assert kp.hits > 100 and kp.nmissed == kp.hits
        # the breakpoint, and a single-step trap unless the copy runs without one
        # (boosted, or from the detour of a probe queued for the optimizer)
        per_hit = 2 if k.kind(kp) == "single-step (TF)" else 1
        assert traps(result) - traps(base) == (per_hit + 1) * kp.hits
        runs.append((result.instructions, result.per_cpu))
    assert runs[0] == runs[1]


@pytest.mark.slow
@pytest.mark.parametrize("arch", FAULTING)
def test_fault_path_costs_a_whole_constant_per_hit(arch: str) -> None:
    """Exact counts: over an empty-handler probe, a hit whose pre_handler
    faults and is fixed up costs the same whole number of instructions and
    exactly one more trap, whatever the number of hits."""
    per_hit = set()
    for size in (SIZE, 2 * SIZE):
        runs = []
        for pre, fault in (("kprobe_empty_pre_handler", None),
                           ("kprobe_fault_pre_handler", "kprobe_fault_fixup_handler")):
            g = Guest(build(arch), cpus=1, workload="kmalloc", size=size)
            kp = Kprobes(g).register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler=pre,
                                                   fault_handler=fault))
            result = g.run()
            assert result.ok
            runs.append((result.instructions, traps(result), kp.hits))
        (empty, empty_traps, hits), (faulting, faulting_traps, same_hits) = runs
        assert hits == same_hits > 100 and faulting_traps - empty_traps == hits
        assert (faulting - empty) % hits == 0
        per_hit.add((faulting - empty) // hits)
    assert len(per_hit) == 1 and per_hit.pop() > 0


@pytest.mark.parametrize("arch", FAULTING)
@pytest.mark.parametrize("fault_handler", [None, "declines"])
def test_unhandled_fault_in_handler_is_a_guest_fault(arch: str, fault_handler: str) -> None:
    """No fault_handler, or one that returns 0: no exception-table fixup
    either, so the kernel dies at the faulting instruction."""
    g = guest(arch)
    k = Kprobes(g)
    handler = FixArgument(arch, fix=False) if fault_handler else None
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_fault_pre_handler",
                                  fault_handler=handler))
    with pytest.raises(GuestFault) as err:
        g.run()
    assert err.value.pc == g.image.symbols[TARGET]
    assert get_arch(arch).exception_names[trapnr(arch)] in str(err.value)
    assert kp.hits == kp.nmissed == 1
    assert handler is None or len(handler.calls) == 1


def redirect_to_target(arch: str, g: Guest):
    """A host pre_handler that makes the probed function's caller run
    TARGET(BAD) instead, outside any kprobe handler (as a jprobe would)."""
    target, regs_arch = g.image.symbols[TARGET], get_arch(arch)

    def pre(kp: Kprobe, regs) -> int:
        regs[regs_arch.pc] = target
        regs[regs_arch.args[0]] = BAD
        return 1
    return pre


@pytest.mark.parametrize("arch", FAULTING)
def test_fault_while_single_stepping_resets_pc_to_the_probe(arch: str) -> None:
    """KPROBE_HIT_SS: the copy faults in its slot; kprobe_fault_handler puts
    the PC back on the probe address, clears TF, resets the current kprobe
    and returns 0, so the fault is the kernel's, reported there. The
    probe's fault_handler is not asked."""
    g = guest(arch)
    k = Kprobes(g)
    k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler=redirect_to_target(arch, g)))
    handler = FixArgument(arch)
    ss = k.register_kprobe(Kprobe(symbol_name=TARGET, pre_handler="kprobe_empty_pre_handler",
                                  post_handler="kprobe_empty_post_handler",
                                  fault_handler=handler))
    assert k.kind(ss) != "boosted"
    with pytest.raises(GuestFault) as err:
        g.run()
    assert err.value.pc == ss.addr != ss.slot
    assert not err.value.registers["rflags"] & TF
    assert g.machine.read_word(k.sym["current_kprobe"]) == 0
    assert ss.hits == 1 and ss.nmissed == 0 and handler.calls == []


@pytest.mark.parametrize("arch", FAULTING)
def test_fault_while_single_stepping_a_reentry_restores_the_previous_kprobe(arch: str) -> None:
    """KPROBE_REENTER: a probe hit inside a pre_handler is stepped without
    handlers; its copy faults, the PC goes back to it, and the running
    kprobe becomes the outer one again (restore_previous_kprobe)."""
    g = guest(arch)
    k = Kprobes(g)
    outer = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                     pre_handler="kprobe_fault_pre_handler"))
    inner = k.register_kprobe(Kprobe(symbol_name=TARGET, pre_handler="kprobe_empty_pre_handler",
                                     post_handler="kprobe_empty_post_handler"))
    with pytest.raises(GuestFault) as err:
        g.run()
    assert err.value.pc == inner.addr != inner.slot
    assert inner.nmissed == 1 and inner.hits == 0
    # the running kprobe is what kprobe_table holds: the optimized_kprobe v5.10 made
    assert g.machine.read_word(k.sym["current_kprobe"]) == outer.top.struct
    assert outer.nmissed == 0          # the fault was in the step, not in a handler


@pytest.mark.slow
@pytest.mark.parametrize("arch", FAULTING)
def test_aggr_fault_handler_asks_the_probe_whose_handler_faulted(arch: str) -> None:
    """aggr_fault_handler: of two probes at one address, the fault_handler of
    the one whose pre_handler was running (kprobe_instance) is asked;
    nmissed counts for both (kprobes_inc_nmissed_count)."""
    g = guest(arch)
    k = Kprobes(g)
    quiet, faulting = FixArgument(arch), FixArgument(arch)
    first = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler",
                                     fault_handler=quiet))
    second = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                      pre_handler="kprobe_fault_pre_handler",
                                      fault_handler=faulting))
    assert g.run().ok
    assert quiet.calls == [] and len(faulting.calls) == second.hits == first.hits > 100
    assert first.nmissed == second.nmissed == second.hits


@pytest.mark.parametrize("arch", PAGE_FAULT_ONLY)
def test_fault_handler_refused_where_only_page_faults_call_it(arch: str) -> None:
    """ARM and PowerPC call kprobe_fault_handler from page faults only, which
    kisim cannot deliver: a fault_handler is refused, in one line, rather
    than accepted and never run."""
    g = guest(arch)
    k = Kprobes(g)
    with pytest.raises(PatchError) as err:
        k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler",
                                 fault_handler=lambda kp, regs, nr: 1))
    assert err.value.errno == "EINVAL"
    assert "page faults" in str(err.value) and "\n" not in str(err.value)
    assert list(k) == list(k.arch_probes)          # nothing of the test's left
    assert k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                    pre_handler="kprobe_empty_pre_handler")).addr
