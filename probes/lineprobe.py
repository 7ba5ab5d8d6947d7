"""Line-number probes: ``FILE:LINE`` plus DWARF, nothing compiled in.

The dprobe idea (Bottomley, LKML July 2008): the kernel carries no marker
at all; a tool finds the line's address in the DWARF line table, puts a
kprobe there, and reads the variables it wants through their DWARF
locations. Its cost is zero while nobody probes, and its weakness is the
optimizer: a line may have no code, a variable no location at that PC.

Each of the line's addresses gets a real kprobe
(:meth:`probes.kprobes.Kprobes.register_kprobe`) whose pre_handler is a
host callable: the breakpoint, the trap, the guest's ``kprobe_handler``
and its instruction counts and modeled cost are a kprobe's. The handler
evaluates each variable's DWARF location on the registers the trap saved
(``struct pt_regs``) and on guest memory, before the probed instruction
runs, as SystemTap's generated handler does with ``regs``. The variable
fetch itself is host work, not charged (docs/lineprobes.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from patcher.errors import PatchError
from probes.dwarf import (DebugInfo, DwarfError, LineAddress, Unavailable, evaluate,
                          is_identifier)
from probes.kprobes import Kprobe, KprobeRegs, Kprobes

#: How the probe is placed (stated in every output).
MECHANISM = "kprobe (register_kprobe, host pre_handler reading DWARF locations from pt_regs)"


class LineProbeError(ValueError):
    """A line probe that cannot be placed: no code for the line, or a kprobe refusal."""


@dataclass
class LineHit:
    """One hit: which CPU, which of the line's addresses, and each fetched variable."""

    cpu: int
    address: int
    values: dict[str, int] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)   # name -> why


def parse_location(text: str) -> tuple[str, int]:
    """``"kernel/slab.c:225"`` -> ``("kernel/slab.c", 225)``, ``"kmalloc:16"`` ->
    ``("kmalloc", 16)``; DwarfError when malformed."""
    where, sep, line = text.rpartition(":")
    if (not sep or not where or not (line.isascii() and line.isdigit() and len(line) < 10)
            or int(line) < (0 if is_identifier(where) else 1)):
        raise DwarfError(f"probe point {text!r}: expected FILE:LINE or FUNC:N, e.g. "
                         "kernel/slab.c:232 or kmalloc:16")
    return where, int(line)


def resolve_location(debug: DebugInfo, text: str) -> tuple[str, int]:
    """The file and line of ``FILE:LINE``, or of perf probe's ``FUNC:N``: the line N
    after the one that declares FUNC, in its file (a C name is a function, as
    perf probe's parse_perf_probe_point takes it)."""
    where, line = parse_location(text)
    if not is_identifier(where):
        return where, line
    found = debug.function_lines(where)
    return found.file, found.decl + line


@dataclass(frozen=True)
class LineRange:
    """Lines of one source file to list (perf probe -L): ``start`` to ``end`` (None:
    the end of the file), each shown as its number less ``offset`` (a function's
    declaration line, or 0)."""

    function: str | None
    file: str
    start: int
    end: int | None
    offset: int


_RANGE = re.compile(r"(?P<where>[^:]+)(?::(?P<start>\d{1,9})"
                    r"(?:(?P<op>[+-])(?P<other>\d{1,9}))?)?")

#: Lines perf probe -L shows past a function's last line with code (its closing brace).
EXTRA_LINES = 2


def line_range(debug: DebugInfo, spec: str) -> LineRange:
    """perf probe -L's range (v5.10 probe-event.c parse_line_range_desc):
    ``FUNC[:RLN[+NUM|-RLN2]]``, lines relative to FUNC's declaration, to a
    little past its last line with code when no end is given; or
    ``FILE[:ALN[+NUM|-ALN2]]``, absolute, to the end of the file."""
    m = _RANGE.fullmatch(spec)
    if m is None:
        raise DwarfError(f"line range {spec!r}: expected FUNC[:N[+NUM|-M]] or "
                         "FILE[:A[+NUM|-B]], e.g. kmalloc:0-20 or kernel/slab.c:216+20")
    where, op = m["where"], m["op"]
    start = int(m["start"]) if m["start"] else None
    other = int(m["other"]) if m["other"] else None
    if is_identifier(where):
        found = debug.function_lines(where)
        function, file, offset = where, found.file, found.decl
        first = offset + (start or 0)
        default_end: int | None = found.last + EXTRA_LINES
    else:
        if start == 0:
            raise DwarfError(f"line range {spec!r}: lines of a file count from 1")
        function, file, offset = None, debug.source_file(where), 0
        first, default_end = start or 1, None
    last = (first + other - 1 if op == "+" else offset + other if op == "-" else default_end)
    if last is not None and last < first:
        raise DwarfError(f"line range {spec!r}: the start line must not be after the end "
                         "line")
    return LineRange(function, file, first, last, offset)


class LineProbe:
    """A kprobe on every address of one source line, fetching named variables at each hit."""

    mechanism = MECHANISM

    def __init__(self, kprobes: Kprobes, debug: DebugInfo, file: str, line: int,
                 fetch: list[str] | tuple[str, ...] = ()) -> None:
        self.kprobes = kprobes
        self.debug = debug
        self.addresses: list[LineAddress] = debug.line_addresses(file, line)
        if not self.addresses:
            before, after = debug.nearest_lines(file, line)
            near = ", ".join(f"{n}" for n in (before, after) if n is not None)
            raise LineProbeError(f"{file}:{line}: no code for this line (the compiler placed "
                                 f"none; nearest lines with code: {near or 'none'})")
        self.fetch = list(fetch)
        # every argument must name a variable in scope at every address, and a path
        # through its type that ends in a scalar
        self._fetches = {la.address: {text: debug.fetch(la.address, text)
                                      for text in self.fetch} for la in self.addresses}
        self.hits: list[LineHit] = []
        self.kps: list[Kprobe] = []

    def arm(self) -> None:
        """register_kprobe on each address of the line; a refusal undoes the others."""
        try:
            self.kps = self.kprobes.register_kprobes(
                [Kprobe(addr=la.address, pre_handler=self._pre_handler)
                 for la in self.addresses])
        except PatchError as err:
            raise LineProbeError(f"{self.addresses[0].file}:{self.addresses[0].line}: "
                                 f"{err.message}") from None

    def disarm(self) -> None:
        for kp in self.kps:
            self.kprobes.unregister_kprobe(kp)
        self.kps = []

    @property
    def kprobe_hits(self) -> int:
        """Hits the guest's kprobe_hits counters saw (handlers ran)."""
        return sum(kp.hits for kp in self.kps)

    def _pre_handler(self, kp: Kprobe, regs: KprobeRegs) -> int:
        """Fetch each variable at ``kp.addr`` from the trapped registers and memory."""
        address = kp.addr
        pc = self.kprobes.arch.pc

        def reg(name: str) -> int:
            return address if name == pc else regs[name]

        hit = LineHit(regs.cpu, address)
        for text, fetch in self._fetches[address].items():
            try:
                hit.values[text] = evaluate(self.debug, fetch.variable, address, reg,
                                            self.kprobes.machine.read, fetch)
            except (Unavailable, KeyError) as why:
                hit.unavailable[text] = str(why).strip("'\"")
        self.hits.append(hit)
        return 0


__all__ = ["EXTRA_LINES", "LineHit", "LineProbe", "LineProbeError", "LineRange", "MECHANISM",
           "line_range", "parse_location", "resolve_location"]
