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
from typing import Sequence

from patcher.errors import PatchError
from probes.dwarf import (DebugInfo, DwarfError, Fetch, LineAddress, Unavailable, evaluate,
                          is_identifier)
from probes.kprobe_events import (MAX_TRACE_ARGS, ProbeEventError, parse_kprobe_event,
                                  probe_target)
from probes.kprobes import Kprobe, KprobeRegs, Kprobes, arch_kprobes
from sim.elf import Image

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


#: The group perf probe adds its events to (tools/perf/util/probe-event.h PERFPROBE_GROUP).
GROUP = "probe"
#: kernel/trace/trace_probe.h MAX_ARG_NAME_LEN, with its terminating NUL.
_ARG_NAME_MAX = 31


def kprobe_definitions(debug: DebugInfo, image: Image, file: str, line: int,
                       fetch: Sequence[str]) -> list[str]:
    """What ``perf probe -D`` prints for ``file:line``: a kprobe_events definition for
    each address of the line, ``p:probe/FUNC_LN[_I] SYM+OFFS NAME=ARG:TYPE ...``, each
    argument converted from the variable's DWARF location at that address (v5.10
    tools/perf/util/probe-finder.c convert_variable_location and
    convert_variable_fields): a register, ``+OFFS(%REG)`` for a variable in memory,
    ``@ADDR`` for one at a fixed address, and one more ``+OFFS(...)`` for each
    ``->``. Each definition is checked with kisim's own kprobe_events parser.
    DwarfError where a variable has no location there, or one no fetch argument
    can express (a computed value, pieces, a member of a struct held in registers)."""
    addresses = debug.line_addresses(file, line)
    if not addresses:
        raise DwarfError(f"{file}:{line}: no code for this line")
    ops = arch_kprobes(debug.arch)
    regs = {pt: name for pt, name in zip(ops.PT_REGS, ops.REGS_OFFSET_NAMES) if pt and name}
    target = probe_target(debug.arch, image)
    out = []
    for i, la in enumerate(addresses):
        symbol, offset = image.symbol_at(la.address) or (f"{la.address:#x}", 0)
        try:
            base = debug.function_lines(la.function).decl
        except DwarfError:                  # a name defined twice: the absolute line
            base = 0
        event = f"{GROUP}/{la.function}_L{line - base}" + (f"_{i}" if i else "")
        args: dict[str, str] = {}
        for text in dict.fromkeys(fetch):   # each once, in order
            name = re.sub(r"\W+", "_", text).strip("_")[:_ARG_NAME_MAX - 3]
            if name in args:                # a.b beside a_b: the second is numbered
                name += f"_{len(args)}"
            args[name] = _fetch_arg(debug, debug.fetch(la.address, text), la.address, regs)
        definition = " ".join([f"p:{event}", f"{symbol}+{offset}",
                               *(f"{name}={arg}" for name, arg in args.items())])
        try:
            parse_kprobe_event(definition, target)
        except ProbeEventError as err:      # kisim's two halves disagree: say so
            raise DwarfError(f"{definition!r}: kprobe_events refuses it: {err}") from None
        out.append(definition)
    return out


def _fetch_arg(debug: DebugInfo, fetch: Fetch, pc: int, regs: dict[str, str]) -> str:
    """``fetch`` at ``pc`` as a kprobe_events fetch argument with its type."""
    try:
        ops = fetch.variable.expression(debug, pc)
    except Unavailable as why:
        raise DwarfError(f"fetch {fetch.text!r} at {pc:#x}: {fetch.variable.name} is {why}; "
                         "perf probe refuses such a variable") from None

    def register(number: int) -> str:
        name = regs.get(debug.regs.get(number, ""))
        if name is None:
            raise DwarfError(f"fetch {fetch.text!r}: DWARF register {number} is not in pt_regs")
        return f"%{name}"

    def located(expr: list) -> tuple[str, int, str | None]:
        """("value", 0, ARG), or ("memory", OFFS, ARG): stored at ARG + OFFS (None: at
        the absolute address OFFS)."""
        op = expr[0] if len(expr) == 1 else None
        name = op.op_name if op is not None else ""
        if name.startswith("DW_OP_reg"):
            return "value", 0, register(op.args[0] if name == "DW_OP_regx" else int(name[9:]))
        if name.startswith("DW_OP_breg"):
            number = op.args[0] if name == "DW_OP_bregx" else int(name[10:])
            return "memory", op.args[-1], register(number)
        if name == "DW_OP_addr":
            return "memory", op.args[0], None
        if name == "DW_OP_fbreg" and fetch.variable.frame_base:
            kind, at, base = located(fetch.variable.frame_base)
            if kind == "value":             # frame base {DW_OP_regN}: the register's value
                return "memory", op.args[0], base
            if base is not None:            # frame base {DW_OP_bregN off}
                return "memory", at + op.args[0], base
        raise DwarfError(f"fetch {fetch.text!r}: {fetch.variable.name}'s location here ("
                         + " ".join(o.op_name for o in expr)
                         + ") has no kprobe_events form")

    def value(where: tuple[str, int, str | None]) -> str:
        kind, at, base = where
        if kind == "value":
            return base
        if base is None:
            return f"@{at:#x}"
        return f"{'+' if at >= 0 else '-'}{abs(at)}({base})"

    where = located(ops)
    for op, n in fetch.ops:
        if op == "deref":
            where = ("memory", 0, value(where))
        elif where[0] == "memory":
            where = ("memory", where[1] + n, where[2])
        else:
            raise DwarfError(f"fetch {fetch.text!r}: {fetch.variable.name} is in a register "
                             "here; no kprobe_events argument takes a part of it")
    kind = "x" if fetch.type_name.endswith("*") else "s" if fetch.signed else "u"
    return f"{value(where)}:{kind}{8 * fetch.size}"


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
        self.fetch = list(dict.fromkeys(fetch))
        if len(self.fetch) > MAX_TRACE_ARGS:
            raise LineProbeError(f"{len(self.fetch)} variables to fetch, over the "
                                 f"{MAX_TRACE_ARGS} a kprobe event takes (MAX_TRACE_ARGS)")
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


__all__ = ["EXTRA_LINES", "GROUP", "LineHit", "LineProbe", "LineProbeError", "LineRange",
           "MECHANISM", "kprobe_definitions", "line_range", "parse_location", "resolve_location"]
