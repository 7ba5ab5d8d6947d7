"""The machine's clock service: readings exact at any instruction, synchronized forward-only."""
from __future__ import annotations

import pytest

from arches import ARCHES, NAMES
from sim import Machine

BASE = 0x10000


@pytest.mark.parametrize("name", NAMES)
def test_readings_are_the_cpu_clock_between_slices_and_never_go_back(name):
    arch = ARCHES[name]
    code = bytes(arch.spin.code)                # the arch's two-instruction counting loop
    m = Machine(arch, 2)
    m.load_code(code, BASE)
    got: list[tuple[int, int]] = []
    m.step(0, 1000)
    m.clock.read(m.cpus[0], lambda ns: got.append((0, ns)))
    m.clock.deliver()
    assert got == [(0, m.cpus[0].clock_ns)] and m.clock.reads == 1
    m.step(1, 10)                               # CPU 1 is behind CPU 0's last reading
    m.clock.read(m.cpus[1], lambda ns: got.append((1, ns)))
    m.clock.deliver()
    assert m.cpus[1].clock_ns < got[0][1] and got[1] == (1, got[0][1] + 1)
    m.step(1, 1000)                             # then it advances with its own cycles
    m.clock.read(m.cpus[1], lambda ns: got.append((1, ns)))
    m.clock.deliver()
    assert got[2] == (1, m.cpus[1].clock_ns + m.clock.offset[1]) and got[2][1] > got[1][1]
    assert m.clock.offset[0] == 0 and m.clock.offset[1] > 0
    assert m.clock.end_ns() == [max(c.clock_ns + m.clock.offset[c.index], m.clock.last_ns)
                                for c in m.cpus]
