"""The kprobe self-test at scale, for return probes: a kretprobe on every
function that accepts one, all registered at once, one CPU. The workload's
checksum is unchanged and each function's returns, as its kretprobe handler
counts them, equal its calls counted independently (a Unicorn code hook on
the function's entry, in a separate run without probes).

Marked ``transparency`` (pyproject.toml): ``make test`` runs it; ``pytest -m
"not transparency"`` leaves it out. Each run takes a few seconds per arch.
"""
from __future__ import annotations

from collections import Counter

import pytest

from arches import NAMES
from kbuild import build
from patcher.errors import PatchError
from probes.kprobes import Kprobes, Kretprobe
from sim.guest import Guest

pytestmark = pytest.mark.transparency

#: Functions that never return to their caller here: the task exit path and
#: the idle loop. Their instances stay in flight, as they would in Linux.
NORETURN = ("do_exit", "schedule_tail_and_run", "cpu_idle")
#: A task that exits leaves its last schedule() call for good: schedule()
#: returns once less per do_exit() call.
EXITS_THROUGH = ("schedule", "do_exit")
#: Turns the boot stack into the idle task's, so ``current`` at its return is
#: not the task that entered it and no instance can be found. Linux's
#: equivalent is __init text, freed before any kprobe can be registered.
BOOT_ONLY = ("sched_init_idle",)
#: More instances than tasks (hackbench has 17), so that none is missed.
MAXACTIVE = 32
SIZES = {"kmalloc": 100, "hackbench": 20}


@pytest.mark.parametrize("arch", NAMES)
@pytest.mark.parametrize("workload", sorted(SIZES))
def test_kretprobes_on_every_function(arch: str, workload: str) -> None:
    kernel = build(arch)
    guest = Guest(kernel, cpus=1, workload=workload, size=SIZES[workload])
    kprobes = Kprobes(guest)
    returns: Counter[int] = Counter()
    rps = []
    for start, _, name in guest.image.functions:
        if name in BOOT_ONLY:
            continue
        try:
            rps.append(kprobes.register_kretprobe(Kretprobe(
                addr=start, maxactive=MAXACTIVE,
                handler=lambda rp, regs: returns.update([rp.addr]))))
        except PatchError as err:        # blacklist, entry text, the trampoline
            assert err.errno == "EINVAL", err
    assert len(rps) > 50
    assert guest.run().ok

    reference = Guest(kernel, cpus=1, workload=workload, size=SIZES[workload])
    calls: Counter[int] = Counter()
    for rp in rps:
        reference.machine.watch(rp.addr, lambda cpu, a=rp.addr: calls.update([a]))
    assert reference.run().ok
    symbols = guest.image.symbols
    exits = calls[symbols[EXITS_THROUGH[1]]]
    expected = {}
    for rp in rps:
        name = guest.image.symbol_at(rp.addr)[0]
        expected[name] = (0 if name in NORETURN
                          else calls[rp.addr] - exits if name == EXITS_THROUGH[0]
                          else calls[rp.addr])
    got = {guest.image.symbol_at(rp.addr)[0]: returns[rp.addr] for rp in rps}
    assert got == expected
    assert all(rp.nmissed == 0 for rp in rps)
    assert exits > 0 and sum(returns.values()) > 1000
