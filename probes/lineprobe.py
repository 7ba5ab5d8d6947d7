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
from typing import Callable, Sequence

from patcher.errors import PatchError
from probes.dwarf import (DebugInfo, DwarfError, Fetch, LineAddress, Unavailable, evaluate,
                          is_identifier, parse_fetch, register_operand)
from probes.kprobe_events import (MAX_TRACE_ARGS, ProbeEventError, parse_kprobe_event,
                                  probe_target)
from probes.kprobes import Kprobe, KprobeRegs, Kprobes, arch_kprobes
from sim.elf import Image, SymbolError

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
    ``("kmalloc", 16)``, and a bare function, perf probe's ``FUNC``, as ``FUNC:0``;
    DwarfError when malformed."""
    if is_identifier(text):
        return text, 0
    where, sep, line = text.rpartition(":")
    if (not sep or not where or not (line.isascii() and line.isdigit() and len(line) < 10)
            or int(line) < (0 if is_identifier(where) else 1)):
        raise DwarfError(f"probe point {text!r}: expected FILE:LINE, FUNC:N or FUNC, e.g. "
                         "kernel/slab.c:232, kmalloc:16 or kmalloc")
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


def probe_addresses(debug: DebugInfo, text: str) -> tuple[str, int, list[LineAddress]]:
    """The file (the debug information's path where the line has code, e.g.
    ``kernel/slab.c`` for ``slab.c:225``), line and addresses of a probe point, as
    perf probe places it:
    ``FILE:LINE`` and ``FUNC:N`` as :meth:`~probes.dwarf.DebugInfo.line_addresses`
    finds lines, refused where an address stands for another line
    (:meth:`~probes.dwarf.DebugInfo.check_representative`), and ``FUNC:0``, line 0
    being no line to perf, the function itself: the entry of each of its copies."""
    where, line = parse_location(text)
    if is_identifier(where) and line == 0:
        entries = debug.function_entries(where)
        found = debug.function_lines(where)
        return found.file, found.decl, entries
    file, line = resolve_location(debug, text)
    addresses = debug.line_addresses(file, line)
    debug.check_representative(addresses)
    return (addresses[0].file if addresses else file), line, addresses


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
    #: the lines to number: a function's own, or every line of the file with code
    code: tuple[int, ...] = ()


_RANGE = re.compile(r"(?P<where>[^:]+)(?::(?P<start>\d{1,9})"
                    r"(?:(?P<op>[+-])(?P<other>\d{1,9}))?)?")

#: Lines perf probe -L shows past a function's last line with code (its closing
#: brace, then up to two more: v5.10 __show_line_range's NR_ADDITIONAL_LINES past it).
EXTRA_LINES = 3


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
        function, file, offset, code = where, found.file, found.decl, found.lines
        first = offset + (start or 0)
        default_end: int | None = found.last + EXTRA_LINES
    else:
        if start == 0:
            raise DwarfError(f"line range {spec!r}: lines of a file count from 1")
        function, file, offset = None, debug.source_file(where), 0
        code = tuple(debug.lines_with_code(file))
        first, default_end = start or 1, None
    last = (first + other - 1 if op == "+" else offset + other if op == "-" else default_end)
    if last is not None and last < first:
        raise DwarfError(f"line range {spec!r}: the start line must not be after the end "
                         "line")
    return LineRange(function, file, first, last, offset, code)


#: The group perf probe adds its events to (tools/perf/util/probe-event.h PERFPROBE_GROUP).
GROUP = "probe"
#: kernel/trace/trace_probe.h MAX_ARG_NAME_LEN, with its terminating NUL.
_ARG_NAME_MAX = 31


def kprobe_definitions(debug: DebugInfo, image: Image, location: str,
                       fetch: Sequence[str]) -> tuple[str, int, list[str]]:
    """The source file and line of the probe point (:func:`probe_addresses`), and what
    ``perf probe -D`` prints for it: one kprobe_events definition
    per address, all of one event (v5.10 multi-probe events), ``p:probe/EVENT
    SYM+OFFS NAME=ARG[:TYPE] ...``. EVENT is ``FUNC_LN`` for ``FUNC:N``, else the
    function itself (probe-event.c). Each argument is converted from its variable's
    DWARF location at that address (probe-finder.c convert_variable_location and
    convert_variable_fields): a register, ``+OFFS(%REG)`` for a variable in
    memory, ``@SYM+OFFS`` for one at a fixed address, one more ``+OFFS(...)`` per
    ``->``; typed ``xN`` (unsigned) or ``sN``, a pointer untyped; named as
    ``NAME=`` names it, else after its last member, or its variable. Where a
    variable has no location at one address but has at another, that address
    gets perf's magic number, 0xdeade12d; where it has none at any, DwarfError,
    as perf refuses it. Each definition is checked with kisim's own
    kprobe_events parser."""
    file, line, addresses = probe_addresses(debug, location)
    if not addresses:
        raise DwarfError(f"{location}: no code for this line")
    where, relative = parse_location(location)
    event = (f"{where}_L{relative}" if is_identifier(where) and relative
             else where if is_identifier(where) else addresses[0].function)
    ops = arch_kprobes(debug.arch)
    regs = {pt: name for pt, name in zip(ops.PT_REGS, ops.REGS_OFFSET_NAMES) if pt and name}

    def objects(address: int) -> str:
        """``@SYM+OFFS`` for a fixed address, as perf writes it, where SYM names one
        object; else ``@ADDR``."""
        for sym in image.symbols.entries:
            if sym.kind == "object" and sym.addr <= address < sym.addr + max(sym.size, 1):
                try:
                    if image.symbols.get(sym.name) == sym.addr:
                        return f"@{sym.name}+{address - sym.addr}"
                except SymbolError:         # a name two modules define
                    break
        return f"@{address:#x}"

    args: dict[str, list] = {}              # name -> its argument at each address
    for text in dict.fromkeys(fetch):       # each once, in order
        given, text = split_name(text)
        name = given or _arg_name(text)
        if name in args:                    # two arguments of one name: the second numbered
            name = f"{name}_{len(args)}"
        args[name] = []
        for la in addresses:
            try:
                args[name].append(_fetch_arg(debug, debug.fetch(la.address, text),
                                             la.address, regs, objects))
            except DwarfError as err:
                args[name].append(err)
        found = [a for a in args[name] if isinstance(a, str)]
        if not found:
            raise next(a for a in args[name] if isinstance(a, DwarfError))
        magic = _MAGIC + found[0][found[0].index(":"):] if ":" in found[0] else _MAGIC
        args[name] = [a if isinstance(a, str) else magic for a in args[name]]
    target = probe_target(debug.arch, image)
    out = []
    for i, la in enumerate(addresses):
        symbol, offset = image.symbol_at(la.address) or (f"{la.address:#x}", 0)
        definition = " ".join([f"p:{GROUP}/{event}", f"{symbol}+{offset}",
                               *(f"{name}={values[i]}" for name, values in args.items())])
        try:
            parse_kprobe_event(definition, target)
        except ProbeEventError as err:      # kisim's two halves disagree: say so
            raise DwarfError(f"{definition!r}: kprobe_events refuses it: {err}") from None
        out.append(definition)
    return file, line, out


#: perf probe's value for a variable missing at one of a multi-probe event's addresses
#: (tools/perf/util/probe-event.h DEFAULT_PROBE_MAGIC_NUM). perf writes the immediate
#: as \deade12d, which v5.10's str_to_immediate refuses (it reads a number only
#: after a digit or a sign), so kisim writes \0xdeade12d.
_MAGIC = "\\0xdeade12d"


def split_name(text: str) -> tuple[str | None, str]:
    """perf probe's ``[NAME=]VAR...``: the argument's own name, if it gives one, and
    what it fetches."""
    name, sep, rest = text.partition("=")
    if not sep:
        return None, text
    if not is_identifier(name) or len(name) > _ARG_NAME_MAX:
        raise DwarfError(f"fetch {text!r}: NAME= takes a C name of at most "
                         f"{_ARG_NAME_MAX} characters")
    return name, rest


def _arg_name(text: str) -> str:
    """perf probe's name for an argument: its last member's, else its variable's
    (probe-event.c parse_perf_probe_arg: "the last field name (not array index)")."""
    _, steps = parse_fetch(text)
    members = [str(arg) for op, arg in steps if op != "[]"]
    return (members[-1] if members else text.split("[")[0])[:_ARG_NAME_MAX - 3]


def _fetch_arg(debug: DebugInfo, fetch: Fetch, pc: int, regs: dict[str, str],
               objects: Callable[[int], str]) -> str:
    """``fetch`` at ``pc`` as a kprobe_events fetch argument with its type; ``objects``
    names a fixed address."""
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
            return "value", 0, register(register_operand(op))
        if name.startswith("DW_OP_breg"):
            return "memory", op.args[-1], register(register_operand(op))
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
            return objects(at)
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
    if fetch.type_name.endswith("*"):        # a pointer: the kernel's default type
        return value(where)
    return f"{value(where)}:{'s' if fetch.signed else 'x'}{8 * fetch.size}"


class LineProbe:
    """A kprobe on every address of one source line, fetching named variables at each hit."""

    mechanism = MECHANISM

    def __init__(self, kprobes: Kprobes, debug: DebugInfo, file: str, line: int,
                 fetch: list[str] | tuple[str, ...] = (),
                 addresses: list[LineAddress] | None = None) -> None:
        self.kprobes = kprobes
        self.debug = debug
        self.file, self.line = file, line
        self.addresses: list[LineAddress] = (debug.line_addresses(file, line)
                                             if addresses is None else addresses)
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
        named = [(given or text, path) for text in self.fetch
                 for given, path in [split_name(text)]]
        self._fetches = {la.address: {key: debug.fetch(la.address, path) for key, path in named}
                         for la in self.addresses}
        self.hits: list[LineHit] = []
        self.kps: list[Kprobe] = []

    def arm(self) -> None:
        """register_kprobe on each address of the line; a refusal undoes the others."""
        try:
            self.kps = self.kprobes.register_kprobes(
                [Kprobe(addr=la.address, pre_handler=self._pre_handler)
                 for la in self.addresses])
        except PatchError as err:
            raise LineProbeError(f"{self.file}:{self.line}: "
                                 f"{err.message}") from None

    def disarm(self) -> None:
        for kp in self.kps:
            self.kprobes.unregister_kprobe(kp)
        self.kps = []

    @property
    def kprobe_hits(self) -> int:
        """Hits the guest's kprobe_hits counters saw (handlers ran)."""
        return sum(kp.hits for kp in self.kps)

    @property
    def nmissed(self) -> int:
        """Hits taken while another kprobe ran on that CPU: stepped without the
        handler (kprobes_inc_nmissed_count), so nothing was fetched for them."""
        return sum(kp.nmissed for kp in self.kps)

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
           "MECHANISM", "kprobe_definitions", "line_range", "parse_location", "probe_addresses",
           "resolve_location", "split_name"]
