"""Line-number probes: ``FILE:LINE`` plus DWARF, nothing compiled in.

The dprobe idea (Bottomley, LKML July 2008): the kernel carries no marker
at all; a tool finds the line's address in the DWARF line table, puts a
kprobe there, and reads the variables it wants through their DWARF
locations. Its cost is zero while nobody probes, and its weakness is the
optimizer: a line may have no code, a variable no location at that PC.

Until kprobes exist in kisim (issue 10), the probe fires through a Unicorn
code hook on each of the line's addresses (:meth:`sim.Machine.watch`):
it runs before the instruction at that address, as a kprobe's
pre_handler does, but it patches no text and charges no trap, so its
modeled cost is NOT a kprobe's. :attr:`LineProbe.mechanism` says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from probes.dwarf import DebugInfo, DwarfError, LineAddress, Unavailable, evaluate
from sim.machine import Cpu, Machine

#: How the probe is placed today (stated in every output).
MECHANISM = "unicorn code hook (stands in for a kprobe until issue 10 lands; no trap charged)"


@dataclass
class LineHit:
    """One hit: which CPU, which of the line's addresses, and each fetched variable."""

    cpu: int
    address: int
    values: dict[str, int] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)   # name -> why


def parse_location(text: str) -> tuple[str, int]:
    """``"kernel/slab.c:225"`` -> ``("kernel/slab.c", 225)``; DwarfError when malformed."""
    file, sep, line = text.rpartition(":")
    if not sep or not file or not line.isdigit() or int(line) < 1:
        raise DwarfError(f"probe point {text!r}: expected FILE:LINE, e.g. kernel/slab.c:225")
    return file, int(line)


class LineProbe:
    """A probe on every address of one source line, fetching named variables at each hit."""

    mechanism = MECHANISM

    def __init__(self, machine: Machine, debug: DebugInfo, file: str, line: int,
                 fetch: list[str] | tuple[str, ...] = ()) -> None:
        self.machine = machine
        self.debug = debug
        self.addresses: list[LineAddress] = debug.line_addresses(file, line)
        if not self.addresses:
            before, after = debug.nearest_lines(file, line)
            near = ", ".join(f"{n}" for n in (before, after) if n is not None)
            raise DwarfError(f"{file}:{line}: no code for this line (the compiler placed "
                             f"none; nearest lines with code: {near or 'none'})")
        self.fetch = list(fetch)
        for la in self.addresses:       # every name must at least be in scope there
            for name in self.fetch:
                debug.variable(la.address, name)
        self.hits: list[LineHit] = []
        self._vars = {la.address: {v.name: v for v in debug.variables_at(la.address)}
                      for la in self.addresses}

    def arm(self) -> None:
        """Place the probe on each address of the line."""
        for la in self.addresses:
            self.machine.watch(la.address, lambda cpu, a=la.address: self._hit(cpu, a))

    def _hit(self, cpu: Cpu, address: int) -> None:
        hit = LineHit(cpu.index, address)
        for name in self.fetch:
            var = self._vars[address][name]
            try:
                hit.values[name] = evaluate(self.debug, var, address, cpu.reg, self.machine.read)
            except Unavailable as why:
                hit.unavailable[name] = str(why)
        self.hits.append(hit)


__all__ = ["LineHit", "LineProbe", "MECHANISM", "parse_location"]
