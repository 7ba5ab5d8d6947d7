"""Source lines and variables of a guest kernel, from its DWARF (pyelftools).

What a line-number probe needs, as SystemTap's ``statement("f@file:N")``
and ``$var`` do it (James Bottomley's "simple dprobe like markers", LKML
July 2008: "you don't need a nop ... you just need a line number"):

* :meth:`DebugInfo.line_addresses`: ``FILE:LINE`` -> the addresses where
  the compiler starts code for that line, i.e. the ``is_stmt`` rows of the
  line-number program (DWARF 4 §6.2). A line can have several (inlined or
  duplicated code) or none at all ("no code for this line").
* :meth:`DebugInfo.variables_at`: the parameters and locals in scope at an
  address, innermost scope first (subprogram, lexical blocks, inlined
  subroutines, DWARF 4 §3.3-3.5), each with its location: a single
  expression or a location list whose ranges say where the variable lives
  (§2.6.2). No range covering the PC means "optimized out at this address".
* :func:`evaluate`: a location expression (§2.5-2.6) against a CPU's
  registers and memory: register (``DW_OP_reg*``), memory
  (``DW_OP_breg*``, ``DW_OP_fbreg`` over the function's
  ``DW_AT_frame_base``, ``DW_OP_addr``), computed value
  (``DW_OP_stack_value``), and ``DW_OP_piece`` composites of those.
* :meth:`DebugInfo.fetch`: perf probe's local-variable arguments,
  ``VAR->member``, ``VAR.member`` and ``VAR[N]`` in any chain, through the
  variable's type (struct and union members, anonymous ones included,
  arrays and pointers) to a scalar; :meth:`DebugInfo.function_lines` gives
  ``FUNC:N`` its file and line.

DWARF register numbers come from ``arches/<arch>/dwarf.py``.
"""
from __future__ import annotations

import bisect
import io
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterator, Sequence

from elftools.dwarf.die import DIE
from elftools.dwarf.dwarf_expr import DWARFExprOp, DWARFExprParser
from elftools.dwarf.locationlists import BaseAddressEntry, LocationParser
from elftools.elf.elffile import ELFFile

from arches import Arch
from sim.errors import UnmappedAccess


class DwarfError(ValueError):
    """A request the debug information cannot answer (bad FILE:LINE, no such variable)."""


class Unavailable(Exception):
    """A variable has no value here; the message says why (e.g. optimized out)."""


@dataclass(frozen=True)
class LineAddress:
    """One ``is_stmt`` row of the line program for the line asked about."""

    address: int
    file: str
    line: int
    function: str


@dataclass(frozen=True)
class Variable:
    """A parameter or local in scope at an address."""

    name: str
    kind: str                        # "parameter" or "local"
    type_name: str
    size: int
    signed: bool
    scope: str                       # function (or inlined function) it belongs to
    die: DIE = field(repr=False, compare=False)
    frame_base: list[DWARFExprOp] | None = field(repr=False, compare=False)

    def expression(self, debug: DebugInfo, pc: int) -> list[DWARFExprOp]:
        """The location expression valid at ``pc``; :class:`Unavailable` if none."""
        return debug.location_at(self.die, pc)


#: One step after a fetch argument's variable, in perf probe's syntax (v5.10
#: tools/perf/util/probe-event.c, parse_perf_probe_arg): ``->m``, ``.m`` or ``[N]``.
_STEP = re.compile(r"->([A-Za-z_]\w*)|\.([A-Za-z_]\w*)|\[(\d{1,9})\]")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_AGGREGATES = ("DW_TAG_structure_type", "DW_TAG_union_type")


def is_identifier(text: str) -> bool:
    """A C name (perf probe's test of whether a probe point is a function or a file)."""
    return _IDENT.fullmatch(text) is not None


#: The longest fetch text, and the most steps after its variable (kprobe_events'
#: FETCH_INSN_MAX, 16, bounds the dereferences a definition can make).
FETCH_TEXT_MAX = 256
FETCH_STEPS_MAX = 16


def parse_fetch(text: str) -> tuple[str, list[tuple[str, str | int]]]:
    """``"c->size"`` -> ``("c", [("->", "size")])``: the variable and each step after it."""
    if len(text) > FETCH_TEXT_MAX:
        raise DwarfError(f"fetch {text[:40]!r}...: {len(text)} characters, over the "
                         f"{FETCH_TEXT_MAX}-character limit")
    head = _IDENT.match(text)
    steps: list[tuple[str, str | int]] = []
    pos = head.end() if head else 0
    while head and pos < len(text) and (step := _STEP.match(text, pos)):
        steps.append(("->", step[1]) if step[1] else (".", step[2]) if step[2]
                     else ("[]", int(step[3])))
        pos = step.end()
    if head is None or pos != len(text):
        raise DwarfError(f"fetch {text!r}: expected VAR, VAR->member, VAR.member or VAR[N] "
                         "(perf probe's local-variable syntax)")
    if len(steps) > FETCH_STEPS_MAX:
        raise DwarfError(f"fetch {text!r}: {len(steps)} steps after the variable, over the "
                         f"{FETCH_STEPS_MAX} kprobe_events can dereference")
    return head.group(), steps


@dataclass(frozen=True)
class Fetch:
    """What one fetch argument reads: its variable, then a path through it.

    ``ops`` turns the variable into the value: ``("deref", 0)`` takes the
    pointer reached so far as the address of what follows, ``("offset", n)``
    moves n bytes on. The value is ``size`` bytes there."""

    text: str
    variable: Variable
    ops: tuple[tuple[str, int], ...]
    type_name: str
    size: int
    signed: bool


@dataclass(frozen=True)
class FunctionLines:
    """A function's place in its source file: the line that declares it and the last
    of its lines that has code (the declaration where it has no code of its own)."""

    file: str
    decl: int
    #: the last of ``lines``
    last: int
    #: the lines perf probe -L numbers for it (v5.10 die_walk_lines over the
    #: function's DIE, each line reversible): its own rows, its entry as its
    #: declaration line, the call lines of the copies it inlines
    lines: tuple[int, ...] = ()


#: A line that a DIE's entry pc stands for: (file, line, entry pc, DIE).
_Point = tuple[str, int, int, DIE]


def _target(t: DIE) -> DIE | None:
    """What a pointer, typedef, qualifier or array refers to (None: void)."""
    return t.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in t.attributes else None


def _real(t: DIE | None) -> DIE | None:
    """``t`` without typedefs and qualifiers (die_get_real_type in perf)."""
    while t is not None and t.tag in ("DW_TAG_typedef", "DW_TAG_const_type",
                                      "DW_TAG_volatile_type", "DW_TAG_restrict_type"):
        t = _target(t)
    return t


def register_operand(op: DWARFExprOp) -> int:
    """The DWARF register number of ``DW_OP_reg*`` / ``DW_OP_breg*`` (DWARF 4 §2.5.1.2,
    §2.6.1.1.3): in the opcode, or its first operand for the ``x`` forms."""
    name = op.op_name
    if name in ("DW_OP_regx", "DW_OP_bregx"):
        return op.args[0]
    return int(name[9:] if name.startswith("DW_OP_reg") else name[10:])


def _count(subrange: DIE) -> int | None:
    """The elements of one array dimension (None: unbounded, a flexible array)."""
    attrs = subrange.attributes
    if "DW_AT_count" in attrs:
        return attrs["DW_AT_count"].value
    return attrs["DW_AT_upper_bound"].value + 1 if "DW_AT_upper_bound" in attrs else None


#: Reads guest memory: (address, size) -> bytes.
ReadMemory = Callable[[int, int], bytes]
#: Reads a register by its Unicorn name.
ReadRegister = Callable[[str], int]


def dwarf_registers(arch: Arch) -> dict[int, str]:
    """DWARF register number -> Unicorn register name (``Arch.dwarf_regs``)."""
    if not arch.dwarf_regs:
        raise DwarfError(f"{arch.name}: no DWARF register numbering declared "
                         "(Arch.dwarf_regs), so no line-number probes")
    return dict(arch.dwarf_regs)


def _name(die: DIE) -> str | None:
    attr = die.attributes.get("DW_AT_name")
    if attr is not None:
        return attr.value.decode()
    for ref in ("DW_AT_abstract_origin", "DW_AT_specification"):
        if ref in die.attributes:
            return _name(die.get_DIE_from_attribute(ref))
    return None


def _inliner(die: DIE) -> DIE | None:
    """The function or inlined copy an inlined copy sits in (lexical blocks skipped)."""
    parent = die.get_parent()
    while parent is not None and parent.tag not in ("DW_TAG_subprogram",
                                                    "DW_TAG_inlined_subroutine"):
        parent = parent.get_parent()
    return parent


def _external(die: DIE) -> bool:
    """A definition visible to other units (DW_AT_external, here or on its declaration)."""
    if "DW_AT_external" in die.attributes:
        return True
    return ("DW_AT_specification" in die.attributes and "DW_AT_external"
            in die.get_DIE_from_attribute("DW_AT_specification").attributes)


def _attr_die(die: DIE, name: str) -> DIE | None:
    """``name`` on ``die`` or on the DIE it is an inlined/concrete copy of."""
    while die is not None:
        if name in die.attributes:
            return die
        if "DW_AT_abstract_origin" not in die.attributes:
            return None
        die = die.get_DIE_from_attribute("DW_AT_abstract_origin")
    return None


class DebugInfo:
    """The line table and variable scopes of one ELF image."""

    def __init__(self, elf_path: str | os.PathLike[str], arch: Arch) -> None:
        self.path = Path(elf_path)
        self.arch = arch
        self._file = io.BytesIO(self.path.read_bytes())     # held by no descriptor
        self.elf = ELFFile(self._file)
        if not self.elf.has_dwarf_info():
            raise DwarfError(f"{self.path}: no DWARF debug information (build with -g)")
        # The image is linked with --emit-relocs: its .rela.debug_* sections
        # are already applied, and pyelftools cannot redo PowerPC's.
        self.dwarf = self.elf.get_dwarf_info(relocate_dwarf_sections=False)
        self.regs = dwarf_registers(arch)
        self._exprs = DWARFExprParser(self.dwarf.structs)
        self._loclists = self.dwarf.location_lists()
        self._locparser = LocationParser(self._loclists) if self._loclists else None
        # (DIE offset, pc) -> the expression there, or why there is none: a line
        # probe asks at every hit, and the DWARF never changes under it.
        self._locations: dict[tuple[int, int], list[DWARFExprOp] | Unavailable] = {}
        # function name -> where it is in its source (a scan of every DIE, asked often)
        self._function_lines: dict[str, FunctionLines] = {}

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> DebugInfo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- functions ------------------------------------------------------------
    def function_at(self, address: int) -> str:
        """The out-of-line function (DW_TAG_subprogram) covering ``address`` ('?' if none)."""
        chain = self._scope_chain(address)
        return (_name(chain[0]) or "?") if chain else "?"

    # -- line table -------------------------------------------------------------
    @cached_property
    def _rows(self) -> list[tuple[str, int, int]]:
        """(file path as compiled, line, address) for every is_stmt row."""
        return [(f, n, a) for f, n, a, stmt in self._all_rows if stmt]

    def _cu_files(self, cu) -> tuple[list[str], int]:
        """The paths of a CU's file table as compiled, and the number of its first
        entry (DWARF 4 numbers files from 1, DWARF 5 from 0)."""
        program = self.dwarf.line_program_for_CU(cu)
        if program is None:
            return [], 0
        dirs = program["include_directory"]
        base = 1 if cu.header["version"] < 5 else 0
        names = []
        for entry in program["file_entry"]:
            name = entry.name.decode()
            d = entry.dir_index - base if cu.header["version"] < 5 else entry.dir_index
            if entry.dir_index and 0 <= d < len(dirs):
                name = f"{dirs[d].decode()}/{name}"
            names.append(name)
        return names, base

    @cached_property
    def _all_rows(self) -> list[tuple[str, int, int, bool]]:
        """(file path as compiled, line, address, is_stmt) for every row of every CU."""
        rows = []
        for cu in self.dwarf.iter_CUs():
            program = self.dwarf.line_program_for_CU(cu)
            if program is None:
                continue
            names, base = self._cu_files(cu)
            for entry in program.get_entries():
                state = entry.state
                if state is None or state.end_sequence:
                    continue
                rows.append((names[state.file - base], state.line, state.address,
                             bool(state.is_stmt)))
        return rows

    def function_lines(self, name: str) -> FunctionLines:
        """Where function ``name`` is in its source: the file and line that declare it
        (``DW_AT_decl_file``, ``DW_AT_decl_line``), where perf probe's ``FUNC:N``
        counts from (v5.10 probe-finder.c probe_point_search_cb: the line
        ``decl_line + N``), and the last of its lines that has code."""
        if name not in self._function_lines:
            self._function_lines[name] = self._find_function_lines(name)
        return self._function_lines[name]

    def _find_function_lines(self, name: str) -> FunctionLines:
        decls, code = set(), []
        for cu in self.dwarf.iter_CUs():
            names, base = self._cu_files(cu)
            for die in cu.iter_DIEs():
                attrs = die.attributes
                if (die.tag != "DW_TAG_subprogram" or "DW_AT_declaration" in attrs
                        or _name(die) != name):
                    continue
                if ("DW_AT_decl_line" in attrs
                        and 0 <= attrs["DW_AT_decl_file"].value - base < len(names)):
                    decls.add((names[attrs["DW_AT_decl_file"].value - base],
                               attrs["DW_AT_decl_line"].value))
                if "DW_AT_low_pc" in attrs or "DW_AT_ranges" in attrs:
                    code.append(die)
        if not decls:
            raise DwarfError(f"no function {name!r} in the debug information")
        if len(decls) > 1:
            raise DwarfError(f"function {name!r} is defined in several places ("
                             + ", ".join(f"{f}:{n}" for f, n in sorted(decls))
                             + "): give FILE:LINE")
        file, decl = decls.pop()
        # the copies it inlines itself (not those an inlined copy inlines)
        inlined = [(f, n, die, self._ranges(die)) for f, n, _, die in self._code_points[2]
                   if _inliner(die) in code]

        def own(line: int, address: int) -> bool:
            """die_walk_lines over a function: a row inside a copy it inlines is its own
            only on that copy's call line, or where the copy inlines the function."""
            for f, n, die, ranges in inlined:
                if any(begin <= address < end for begin, end in ranges):
                    origin = _attr_die(die, "DW_AT_decl_line")
                    return ((f, n) == (file, line) or origin is not None
                            and origin.attributes["DW_AT_decl_line"].value == decl)
            return True

        spans = [span for d in code for span in self._ranges(d)]
        rows = {(n, a) for f, n, a in self._rows if f == file
                and any(begin <= a < end for begin, end in spans) and own(n, a)}
        points = {(n, die_entry) for f, n, die, _ in inlined if f == file
                  and (die_entry := self._entry_pc(die)) is not None}
        points |= {(decl, a) for d in code if (a := self._entry_pc(d)) is not None}
        lines = {n for n, a in rows | points if self._reversible(file, n, a)}
        return FunctionLines(file, decl, max(lines, default=decl), tuple(sorted(lines)))

    def function_entries(self, name: str) -> list[LineAddress]:
        """Where perf probe puts ``FUNC`` (and ``FUNC:0``, its line 0 being no line at
        all): v5.10 probe_point_search_cb takes the first definition of FUNC in its
        unit's order. An out-of-line copy is probed at its entry; an abstract
        definition, at the entry of each of its instances, out of line or inlined
        (die_walk_instances)."""
        found = self.function_lines(name)
        first = next((die for cu in self.dwarf.iter_CUs()
                      for die in cu.get_top_DIE().iter_children()
                      if die.tag == "DW_TAG_subprogram" and _name(die) == name
                      and "DW_AT_declaration" not in die.attributes), None)
        entry = self._entry_pc(first) if first is not None else None
        if entry is not None:
            addresses = {entry}
        else:
            addresses = {p[2] for p in (*self._code_points[0], *self._code_points[1])
                         if _name(p[3]) == name}
        return [LineAddress(a, found.file, found.decl, self.function_at(a))
                for a in sorted(addresses)]

    def source_file(self, file: str) -> str:
        """The path of ``file`` (a suffix of whole components) as the debug information has it."""
        return self._match_file(file)

    def files(self) -> list[str]:
        return sorted({f for f, _, _ in self._rows})

    def _match_file(self, file: str) -> str:
        want = file.lstrip("./")
        hits = sorted({f for f in self.files() if f == want or f.endswith("/" + want)})
        if not hits:
            raise DwarfError(f"no source file {file!r} in the debug information")
        if len(hits) > 1:
            raise DwarfError(f"{file!r} is ambiguous: {', '.join(hits)}")
        return hits[0]

    def line_addresses(self, file: str, line: int) -> list[LineAddress]:
        """Every address where code for ``file:line`` starts, as v5.10 ``perf probe``
        finds them (probe-finder.c find_probe_point_by_line over die_walk_lines): its
        ``is_stmt`` rows, the entry of each function it declares, and the entry of
        each inlined copy it calls or declares; [] if there are none."""
        path = self._match_file(file)
        addrs = sorted({a for f, n, a in self._candidates() if f == path and n == line})
        return [LineAddress(a, path, line, self.function_at(a)) for a in addrs]

    def check_representative(self, addresses: Sequence[LineAddress]) -> None:
        """Refuse a line one of whose addresses reads back as another line of its file
        (a function's entry reads back as its declaration line), as perf probe's
        verify_representive_line does, naming the line to probe instead."""
        for la in addresses:
            found = self._line_info(la.address)
            if found is None or found[0] != la.file or found[1] == la.line:
                continue
            relative = ""
            try:
                relative = f" ({la.function}:{found[1] - self.function_lines(la.function).decl})"
            except DwarfError:
                pass
            raise DwarfError(f"{la.file}:{la.line} is sharing the address {la.address:#x} with "
                             f"other lines: please try to probe at {la.file}:{found[1]}"
                             f"{relative} instead")

    def line_at(self, address: int) -> tuple[str, int] | None:
        """The source line whose code holds ``address``: the last row at or before it."""
        best = max(((a, f, n) for f, n, a, _ in self._all_rows if a <= address), default=None)
        return (best[1], best[2]) if best else None

    def lines_with_code(self, file: str) -> list[int]:
        """The lines of ``file`` a probe can go on, which perf probe -L numbers for a
        file: those with an is_stmt row, the declaration line of each function with
        code and the call line of each inlined copy (v5.10 die_walk_lines over a
        unit, __die_walk_culines_cb)."""
        path = self._match_file(file)
        return sorted({n for f, n, a in self._candidates() if f == path
                       and self._reversible(f, n, a)})

    def _candidates(self) -> Iterator[tuple[str, int, int]]:
        """(file, line, address) of every is_stmt row and every place of
        :attr:`_code_points`: what perf's die_walk_lines hands its callback."""
        yield from self._rows
        for f, n, a, _ in self._points():
            yield f, n, a

    def _reversible(self, file: str, line: int, address: int) -> bool:
        """perf probe -L numbers a line only if its address reads back as it
        (line_range_walk_cb: "Make sure this line can be reversible"). Where nothing
        reads back, perf compares a line number cu_find_lineinfo never set, so what
        it prints there depends on its stack; on kisim's x86-64 kernel perf 6.1
        leaves most such lines unnumbered, and so does kisim (a probe can still go
        there: line_addresses)."""
        return self._line_info(address) == (file, line)

    def _points(self) -> Iterator[_Point]:
        """Every place of :attr:`_code_points`."""
        for points in self._code_points:
            yield from points

    def nearest_lines(self, file: str, line: int) -> tuple[int | None, int | None]:
        """The closest lines before and after ``line`` that have code."""
        lines = self.lines_with_code(file)
        before = [n for n in lines if n < line]
        after = [n for n in lines if n > line]
        return (before[-1] if before else None, after[0] if after else None)

    # -- scopes and variables -------------------------------------------------------
    def _ranges(self, die: DIE) -> list[tuple[int, int]]:
        """The [begin, end) address ranges of ``die``, in DWARF order."""
        attrs = die.attributes
        if "DW_AT_low_pc" in attrs and "DW_AT_high_pc" in attrs:
            low = attrs["DW_AT_low_pc"].value
            high = attrs["DW_AT_high_pc"]
            return [(low, high.value if high.form == "DW_FORM_addr" else low + high.value)]
        ranges = self.dwarf.range_lists() if "DW_AT_ranges" in attrs else None
        if ranges is None:
            return []
        cu_base = die.cu.get_top_DIE().attributes.get("DW_AT_low_pc")
        base = cu_base.value if cu_base else 0
        out = []
        for entry in ranges.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=die.cu):
            if not hasattr(entry, "begin_offset"):
                base = entry.base_address
                continue
            begin, end = entry.begin_offset, entry.end_offset
            if not getattr(entry, "is_absolute", False):
                begin, end = begin + base, end + base
            out.append((begin, end))
        return out

    def _covers(self, die: DIE, pc: int) -> bool:
        return any(begin <= pc < end for begin, end in self._ranges(die))

    def _entry_pc(self, die: DIE) -> int | None:
        """perf's die_entrypc: DW_AT_entry_pc or DW_AT_low_pc, else the first range."""
        for name in ("DW_AT_entry_pc", "DW_AT_low_pc"):
            attr = die.attributes.get(name)
            if attr is not None and attr.form == "DW_FORM_addr":
                return attr.value
        ranges = self._ranges(die)
        return ranges[0][0] if ranges else None

    @cached_property
    def _code_points(self) -> tuple[list[_Point], list[_Point], list[_Point]]:
        """The places the line table does not give (v5.10 perf's __die_walk_funclines
        and __die_walk_funclines_cb), each (file, line, entry pc, DIE): every function
        with code of its own at its declaration line, every inlined copy at the
        declaration line of what it inlines, and every inlined copy at its call line."""
        functions: list = []
        inlined: list = []
        calls: list = []
        for cu in self.dwarf.iter_CUs():
            names, base = self._cu_files(cu)
            for die in cu.iter_DIEs():
                if die.tag not in ("DW_TAG_subprogram", "DW_TAG_inlined_subroutine"):
                    continue
                entry = self._entry_pc(die)
                if entry is None:
                    continue
                places = [(_attr_die(die, "DW_AT_decl_line"), "DW_AT_decl_file",
                           "DW_AT_decl_line", functions if die.tag == "DW_TAG_subprogram"
                           else inlined)]
                if die.tag == "DW_TAG_inlined_subroutine":
                    places.append((die, "DW_AT_call_file", "DW_AT_call_line", calls))
                for holder, file_attr, line_attr, where in places:
                    if holder is None or line_attr not in holder.attributes:
                        continue
                    index = holder.attributes[file_attr].value - base
                    if 0 <= index < len(names):
                        where.append((names[index], holder.attributes[line_attr].value,
                                      entry, die))
        return functions, inlined, calls

    @cached_property
    def _declared_at(self) -> dict[int, tuple[str, int]]:
        """Each function's entry -> its declaration's file and line (the first function
        at an address, as the units list them)."""
        out: dict[int, tuple[str, int]] = {}
        for file, line, entry, _ in self._code_points[0]:
            out.setdefault(entry, (file, line))
        return out

    @cached_property
    def _sorted_rows(self) -> list[tuple[int, int, str, int, bool]]:
        """(address, table order, file, line, is_stmt) of every row, by address."""
        return sorted((a, i, f, n, stmt) for i, (f, n, a, stmt) in enumerate(self._all_rows))

    def _line_info(self, address: int) -> tuple[str, int] | None:
        """The line perf reads back for ``address`` (v5.10 dwarf-aux.c
        cu_find_lineinfo): a function's declaration line at its entry, else
        cu_getsrc_die's row: from the last row at or before ``address`` (the first
        of those at ``address`` itself), the first statement row, if it is not
        past ``address``. None where there is none, or it is line 0."""
        if address in self._declared_at:                        # die_find_realfunc
            return self._declared_at[address]
        rows = self._sorted_rows
        i = bisect.bisect_right(rows, (address, float("inf"))) - 1
        while i > 0 and rows[i][0] == address and rows[i - 1][0] == address:
            i -= 1
        while 0 <= i < len(rows) and rows[i][0] <= address:
            if rows[i][4]:
                return (rows[i][2], rows[i][3]) if rows[i][3] else None
            i += 1
        return None

    def _scope_chain(self, pc: int) -> list[DIE]:
        """Subprogram, then nested blocks / inlined subroutines covering ``pc``, outermost first."""
        for cu in self.dwarf.iter_CUs():
            top = cu.get_top_DIE()
            if not self._covers(top, pc):
                continue
            chain: list[DIE] = []
            parent = top
            while True:
                inner = next((c for c in parent.iter_children()
                              if c.tag in ("DW_TAG_subprogram", "DW_TAG_lexical_block",
                                           "DW_TAG_inlined_subroutine")
                              and self._covers(c, pc)), None)
                if inner is None:
                    break
                chain.append(inner)
                parent = inner
            if chain:
                return chain
        return []

    def variables_at(self, pc: int) -> list[Variable]:
        """Variables in scope at ``pc``, innermost first; an inner name hides an outer one."""
        chain = self._scope_chain(pc)
        if not chain:
            raise DwarfError(f"{pc:#x}: no function in the debug information covers it")
        frame_base = self._frame_base(chain[0])
        seen: set[str] = set()
        out: list[Variable] = []
        for scope in reversed(chain):
            owner = next((s for s in reversed(chain[:chain.index(scope) + 1])
                          if s.tag != "DW_TAG_lexical_block"), chain[0])
            owner_name = _name(owner) or "?"
            for child in scope.iter_children():
                if child.tag not in ("DW_TAG_formal_parameter", "DW_TAG_variable"):
                    continue
                name = _name(child)
                if name is None or name in seen or self._is_static(child):
                    continue
                seen.add(name)
                type_name, size, signed = self._type(child)
                out.append(Variable(name, "parameter" if child.tag == "DW_TAG_formal_parameter"
                                    else "local", type_name, size, signed, owner_name, child,
                                    frame_base))
        return out

    def variable(self, pc: int, name: str) -> Variable:
        """``name`` in scope at ``pc``, or else a variable of the file: one the
        compilation unit holding ``pc`` defines (a global or a file-level static), as
        perf probe's find_variable falls back to the unit's, or a global another unit
        defines (clang emits no DIE for an ``extern`` declaration)."""
        for var in self.variables_at(pc):
            if var.name == name:
                return var
        found = self._file_variable(pc, name)
        if found is None:
            raise DwarfError(f"no variable {name!r} in scope at {pc:#x} (in scope: "
                             f"{', '.join(v.name for v in self.variables_at(pc))}; nor is it "
                             "a variable of the file or a global)")
        type_name, size, signed = self._type(found)
        return Variable(name, "global", type_name, size, signed, "(file)", found, None)

    def _file_variable(self, pc: int, name: str) -> DIE | None:
        """The file-level variable ``name`` of the unit covering ``pc``, else another
        unit's global of that name."""
        units = sorted(((not self._covers(cu.get_top_DIE(), pc), n, cu)
                        for n, cu in enumerate(self.dwarf.iter_CUs())), key=lambda u: u[:2])
        for elsewhere, _, cu in units:
            for die in cu.get_top_DIE().iter_children():
                if (die.tag == "DW_TAG_variable" and _name(die) == name
                        and "DW_AT_location" in die.attributes
                        and (not elsewhere or _external(die))):
                    return die
        return None

    def fetch(self, pc: int, text: str) -> Fetch:
        """``text`` at ``pc``: a variable in scope, then ``->m``, ``.m`` and ``[N]``
        steps through its type to a scalar, as perf probe takes them (v5.10
        probe-finder.c convert_variable_fields): ``->`` needs a pointer to a
        struct or union, ``.`` the struct or union itself, ``[N]`` an array or
        a pointer. DwarfError names the step that does not fit."""
        name, steps = parse_fetch(text)
        var = self.variable(pc, name)
        holder = _attr_die(var.die, "DW_AT_type")
        t = _target(holder) if holder is not None else None
        ops: list[tuple[str, int]] = []
        done = name

        def refuse(why: str) -> DwarfError:
            return DwarfError(f"fetch {text!r}: {done} is {self._type_of(t)[0]}: {why}")

        for op, arg in steps:
            real = _real(t)
            pointer = real is not None and real.tag == "DW_TAG_pointer_type"
            if op == "[]":
                if real is not None and real.tag == "DW_TAG_array_type":
                    t, stride = self._element(real, int(arg), text, done)
                elif pointer:
                    ops.append(("deref", 0))
                    t = _target(real)
                    stride = self._type_of(t)[1]
                    if not stride:
                        raise refuse("what it points to has no size")
                else:
                    raise refuse("not an array or a pointer")
                ops.append(("offset", int(arg) * stride))
            else:
                if op == "->":
                    if not pointer:
                        raise refuse("not a pointer" + (" (use '.')" if real is not None and
                                                         real.tag in _AGGREGATES else ""))
                    ops.append(("deref", 0))
                    real = _real(_target(real))
                elif pointer:
                    raise refuse("a pointer: use '->'")
                if real is None or real.tag not in _AGGREGATES:
                    raise refuse(f"{'what it points to is ' if op == '->' else ''}"
                                 "not a struct or union")
                offset, t = self._member(real, str(arg), text, done)
                ops.append(("offset", offset))
            done += f"[{arg}]" if op == "[]" else f"{op}{arg}"
        type_name, size, signed = self._type_of(t)
        real = _real(t)
        if real is None or size == 0 or real.tag in (*_AGGREGATES, "DW_TAG_array_type"):
            raise refuse("not a scalar: fetch a member or an element of it")
        return Fetch(text, var, tuple(ops), type_name, size, signed)

    def _member(self, aggregate: DIE, name: str, text: str, done: str) -> tuple[int, DIE]:
        """The offset and type of member ``name``, found in anonymous members too."""
        found = self._find_member(aggregate, name)
        if found is None:
            members = [n for c in aggregate.iter_children()
                       if c.tag == "DW_TAG_member" and (n := _name(c))]
            raise DwarfError(f"fetch {text!r}: {self._type_of(aggregate)[0]} has no member "
                             f"{name!r} (members: {', '.join(members)})")
        offset, member = found
        if "DW_AT_bit_size" in member.attributes:
            raise DwarfError(f"fetch {text!r}: {done}'s {name} is a bit field, which kisim "
                             "does not fetch")
        return offset, _target(member)

    def _find_member(self, aggregate: DIE, name: str) -> tuple[int, DIE] | None:
        """The offset and DIE of member ``name``, looking into anonymous members."""
        for child in aggregate.iter_children():
            if child.tag != "DW_TAG_member":
                continue
            attr = child.attributes.get("DW_AT_data_member_location")
            if attr is None:
                offset = 0
            elif attr.form in ("DW_FORM_exprloc", "DW_FORM_block1"):
                (op,) = self._exprs.parse_expr(attr.value)     # DW_OP_plus_uconst n
                offset = op.args[0]
            else:
                offset = attr.value
            if _name(child) == name:
                return offset, child
            inner = _real(_target(child))
            if _name(child) is None and inner is not None and inner.tag in _AGGREGATES:
                deeper = self._find_member(inner, name)
                if deeper is not None:
                    return offset + deeper[0], deeper[1]
        return None

    def _element(self, array: DIE, index: int, text: str, done: str) -> tuple[DIE, int]:
        """The element type and stride of a one-dimensional array, ``index`` checked
        against its bound where it has one."""
        ranges = [c for c in array.iter_children() if c.tag == "DW_TAG_subrange_type"]
        if len(ranges) != 1:
            raise DwarfError(f"fetch {text!r}: {done} has {len(ranges)} dimensions; kisim "
                             "indexes one-dimensional arrays")
        element = _target(array)
        stride = (array.attributes["DW_AT_byte_stride"].value
                  if "DW_AT_byte_stride" in array.attributes else self._type_of(element)[1])
        count = _count(ranges[0])
        if count is not None and index >= count:
            raise DwarfError(f"fetch {text!r}: {done} has {count} elements, no [{index}]")
        return element, stride

    def _is_static(self, die: DIE) -> bool:
        """A function-local static (fixed address, e.g. a marker's struct): not a probe variable."""
        loc = die.attributes.get("DW_AT_location")
        if loc is None or loc.form != "DW_FORM_exprloc":
            return False
        ops = self._exprs.parse_expr(loc.value)
        return len(ops) == 1 and ops[0].op_name == "DW_OP_addr"

    def _frame_base(self, subprogram: DIE) -> list[DWARFExprOp] | None:
        attr = subprogram.attributes.get("DW_AT_frame_base")
        return self._exprs.parse_expr(attr.value) if attr is not None else None

    def _type(self, die: DIE) -> tuple[str, int, bool]:
        """(C spelling, byte size, signed) of a variable's type."""
        holder = _attr_die(die, "DW_AT_type")
        return self._type_of(_target(holder) if holder is not None else None)

    def _type_of(self, t: DIE | None) -> tuple[str, int, bool]:
        """(C spelling, byte size, signed) of type ``t`` (None: void)."""
        prefix = ""
        while t is not None and t.tag in ("DW_TAG_typedef", "DW_TAG_const_type",
                                          "DW_TAG_volatile_type", "DW_TAG_restrict_type"):
            if t.tag == "DW_TAG_typedef":
                _, size, signed = self._type_of(_target(t))
                return prefix + (_name(t) or "?"), size, signed
            prefix += {"DW_TAG_const_type": "const ", "DW_TAG_volatile_type": "volatile ",
                       "DW_TAG_restrict_type": ""}[t.tag]
            t = _target(t)
        if t is None:
            return prefix + "void", 0, False
        if t.tag == "DW_TAG_pointer_type":
            return f"{prefix}{self._type_of(_target(t))[0]} *", self.arch.word, False
        if t.tag == "DW_TAG_array_type":
            element, size, _ = self._type_of(_target(t))
            counts = [_count(c) for c in t.iter_children() if c.tag == "DW_TAG_subrange_type"]
            for n in counts:
                size = size * n if n is not None else 0
            return (prefix + element + "".join(f"[{'' if n is None else n}]" for n in counts),
                    size, False)
        size = t.attributes["DW_AT_byte_size"].value if "DW_AT_byte_size" in t.attributes else 0
        signed = False
        if "DW_AT_encoding" in t.attributes:
            signed = t.attributes["DW_AT_encoding"].value in (0x05, 0x06, 0x0D)  # DW_ATE_signed*
        if t.tag == "DW_TAG_enumeration_type":
            signed = True
        kind = {"DW_TAG_structure_type": "struct ", "DW_TAG_union_type": "union ",
                "DW_TAG_enumeration_type": "enum "}.get(t.tag, "")
        return prefix + kind + (_name(t) or "?"), size, signed

    def location_at(self, die: DIE, pc: int) -> list[DWARFExprOp]:
        """The location expression of ``die`` valid at ``pc``; :class:`Unavailable` if none.
        Parsed once per DIE and address."""
        key = (die.offset, pc)
        found = self._locations.get(key)
        if found is None:
            try:
                found = self._location_at(die, pc)
            except Unavailable as why:
                found = why
            self._locations[key] = found
        if isinstance(found, Unavailable):
            raise Unavailable(*found.args)
        return found

    def _location_at(self, die: DIE, pc: int) -> list[DWARFExprOp]:
        attr = die.attributes.get("DW_AT_location")
        if attr is None:
            if "DW_AT_const_value" in die.attributes:
                raise Unavailable("constant folded (DW_AT_const_value), no storage")
            raise Unavailable("optimized out (no DW_AT_location)")
        if attr.form == "DW_FORM_exprloc":
            return self._exprs.parse_expr(attr.value)
        entries = self._locparser.parse_from_attribute(attr, die.cu.header["version"], die)
        top = die.cu.get_top_DIE().attributes.get("DW_AT_low_pc")
        base = top.value if top else 0
        for entry in entries:
            if isinstance(entry, BaseAddressEntry):
                base = entry.base_address
                continue
            begin, end = entry.begin_offset, entry.end_offset
            if not entry.is_absolute:
                begin, end = begin + base, end + base
            if begin <= pc < end:
                return self._exprs.parse_expr(entry.loc_expr)
        raise Unavailable("optimized out at this address (no location-list entry covers it)")


# -- location expressions -------------------------------------------------------------

@dataclass(frozen=True)
class _Piece:
    kind: str        # "reg", "mem", "value"
    where: int       # register number, address or the value itself
    size: int | None


class _Eval:
    """One evaluation of a DWARF location expression (DWARF 4 §2.5-2.6)."""

    def __init__(self, arch: Arch, regs: dict[int, str], reg: ReadRegister,
                 mem: ReadMemory, frame_base: list[DWARFExprOp] | None) -> None:
        self.arch, self.regs, self.reg, self.mem = arch, regs, reg, mem
        self.frame_base = frame_base

    def register(self, number: int) -> int:
        try:
            return self.reg(self.regs[number])
        except KeyError:
            raise Unavailable(f"DWARF register {number} has no {self.arch.name} mapping") from None

    def run(self, ops: list[DWARFExprOp]) -> list[_Piece]:
        mask = (1 << self.arch.bits) - 1
        stack: list[int] = []
        pieces: list[_Piece] = []
        pending: _Piece | None = None       # a register or implicit value awaiting DW_OP_piece
        for op in ops:
            name, args = op.op_name, op.args
            if name.startswith("DW_OP_lit"):
                stack.append(int(name[9:]))
            elif name.startswith("DW_OP_const") and name != "DW_OP_const_type":
                stack.append(args[0] & mask)
            elif name == "DW_OP_addr":
                stack.append(args[0])
            elif name.startswith("DW_OP_reg"):
                pending = _Piece("reg", register_operand(op), None)
            elif name.startswith("DW_OP_breg"):
                number, offset = register_operand(op), args[-1]
                stack.append((self.register(number) + offset) & mask)
            elif name == "DW_OP_fbreg":
                stack.append((self.frame_base_value() + args[0]) & mask)
            elif name == "DW_OP_plus_uconst":
                stack.append((stack.pop() + args[0]) & mask)
            elif name in ("DW_OP_plus", "DW_OP_minus", "DW_OP_and", "DW_OP_or", "DW_OP_xor",
                          "DW_OP_mul", "DW_OP_shl", "DW_OP_shr"):
                b, a = stack.pop(), stack.pop()
                stack.append({"DW_OP_plus": a + b, "DW_OP_minus": a - b, "DW_OP_and": a & b,
                              "DW_OP_or": a | b, "DW_OP_xor": a ^ b, "DW_OP_mul": a * b,
                              "DW_OP_shl": a << b, "DW_OP_shr": a >> b}[name] & mask)
            elif name == "DW_OP_neg":
                stack.append(-stack.pop() & mask)
            elif name == "DW_OP_not":
                stack.append(~stack.pop() & mask)
            elif name == "DW_OP_deref":
                stack.append(self.arch.to_int(self.mem(stack.pop(), self.arch.word)))
            elif name == "DW_OP_dup":
                stack.append(stack[-1])
            elif name == "DW_OP_stack_value":
                pending = _Piece("value", stack.pop(), None)
            elif name == "DW_OP_piece":
                piece = pending or _Piece("mem", stack.pop(), None)
                pieces.append(_Piece(piece.kind, piece.where, args[0]))
                pending = None
            elif name in ("DW_OP_entry_value", "DW_OP_GNU_entry_value"):
                raise Unavailable("optimized out: only its value at function entry is described "
                                  "(DW_OP_entry_value)")
            elif name == "DW_OP_call_frame_cfa":
                raise Unavailable("needs the call frame information (DW_OP_call_frame_cfa)")
            else:
                raise Unavailable(f"location uses {name}, which kisim does not evaluate")
        if pending is not None:
            pieces.append(pending)
        elif stack:
            pieces.append(_Piece("mem", stack.pop(), None))
        elif not pieces:
            raise Unavailable("optimized out (empty location)")
        return pieces

    def frame_base_value(self) -> int:
        if not self.frame_base:
            raise Unavailable("DW_OP_fbreg in a function without DW_AT_frame_base")
        (base,) = self.run(self.frame_base)
        if base.kind == "reg":          # DW_AT_frame_base {DW_OP_reg6}: the register's value
            return self.register(base.where)
        return base.where


def evaluate(debug: DebugInfo, var: Variable, pc: int, reg: ReadRegister,
             mem: ReadMemory, fetch: Fetch | None = None) -> int:
    """The value of ``var`` at ``pc`` (stopped there, before that instruction runs),
    or of what ``fetch`` reaches through it.

    :class:`Unavailable` when DWARF gives no location here, or a step reads
    memory that is not there. Values wider than a register are assembled
    from their pieces in the guest's byte order.
    """
    arch = debug.arch
    pieces = _Eval(arch, debug.regs, reg, mem, var.frame_base).run(var.expression(debug, pc))
    where: int | bytes        # the object: at an address, or its bytes (registers, values)
    if len(pieces) == 1 and pieces[0].kind == "mem" and pieces[0].size is None:
        where = pieces[0].where
    else:
        where = b""
        for piece in pieces:
            n = piece.size if piece.size is not None else (var.size or arch.word)
            if piece.kind == "mem":
                where += _read(mem, piece.where, n)
                continue
            value = piece.where
            if piece.kind == "reg":
                value = _Eval(arch, debug.regs, reg, mem, None).register(piece.where)
            raw = (value & ((1 << (8 * max(n, arch.word))) - 1)).to_bytes(
                max(n, arch.word), arch.endian)
            where += raw[-n:] if arch.endian == "big" else raw[:n]
    for op, n in fetch.ops if fetch else ():
        if op == "deref":
            where = arch.to_int(_read(mem, where, arch.word))
        else:
            where = where + n if isinstance(where, int) else where[n:]
    size, signed = (fetch.size, fetch.signed) if fetch else (var.size or arch.word, var.signed)
    value = int.from_bytes(_read(mem, where, size), arch.endian)
    if signed and value >> (8 * size - 1):
        value -= 1 << (8 * size)
    return value


def _read(mem: ReadMemory, where: int | bytes, size: int) -> bytes:
    """``size`` bytes at an address in guest memory, or the first of an object's bytes."""
    if isinstance(where, bytes):
        if len(where) < size:
            raise Unavailable(f"{size} bytes past the {len(where)} the location describes")
        return where[:size]
    try:
        return mem(where, size)
    except UnmappedAccess:
        raise Unavailable(f"no memory at {where:#x}") from None


__all__ = ["DebugInfo", "DwarfError", "Fetch", "FunctionLines", "LineAddress", "Unavailable",
           "Variable", "dwarf_registers", "evaluate", "is_identifier", "parse_fetch",
           "register_operand"]
