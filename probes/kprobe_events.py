"""tracefs ``kprobe_events`` definitions, parsed as Linux v5.10 parses them.

One line defines a kprobe event, a kretprobe event, or deletes one
(``kernel/trace/trace_kprobe.c`` ``trace_kprobe_create``)::

    p[:[GRP/]EVENT] [MOD:]SYM[+OFFS]|ADDR [FETCHARGS]
    r[MAXACTIVE][:[GRP/]EVENT] [MOD:]SYM[+0] [FETCHARGS]
    p[:[GRP/]EVENT] [MOD:]SYM[+0]%return [FETCHARGS]
    -:[GRP/]EVENT

Each fetch argument ``[NAME=]FETCHARG[:TYPE]`` compiles into the kernel's
fetch program (``kernel/trace/trace_probe.c`` ``parse_probe_arg``,
``traceprobe_parse_probe_arg_body``): at most ``FETCH_INSN_MAX`` (16)
instructions, a fetch (register, stack, ``$retval``, ``$comm``, an
immediate, a symbol's address, ``$argN``), dereferences, one store, an
optional bitfield and an optional array loop. A refusal carries the
kernel's ``error_log`` entry: the message of ``trace_probe.h``'s ``ERRORS``
and the caret at the position ``__trace_probe_log_err`` computes.

Register names are the arch's ``regs_query_register_offset`` table,
declared in ``arches/<arch>/kprobes.py`` (``REGS_OFFSET_NAMES``); ``$argN``
exists where the arch has ``HAVE_FUNCTION_ARG_ACCESS_API``
(``FUNCTION_ARG_REGS``). The event's tracefs ``format`` and ``print fmt``
and the line the ``trace`` file prints are :meth:`KprobeEvent.format` and
:func:`print_line`. See docs/kprobe_events.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from arches import Arch
from probes.kprobes import arch_kprobes
from sim.elf import Image, SymbolError
from tracing.errors import error_log_entry
from tracing.kstrtox import kstrtol, kstrtoull, simple_strtoul

#: kernel/trace/trace_probe.h ERRORS (v5.10), the kprobe entries, in order.
ERRORS = {
    "MAXACT_NO_KPROBE": "Maxactive is not for kprobe",
    "BAD_MAXACT": "Invalid maxactive number",
    "MAXACT_TOO_BIG": "Maxactive is too big",
    "BAD_PROBE_ADDR": "Invalid probed address or symbol",
    "BAD_RETPROBE": "Retprobe address must be an function entry",
    "BAD_ADDR_SUFFIX": "Invalid probed address suffix",
    "NO_GROUP_NAME": "Group name is not specified",
    "GROUP_TOO_LONG": "Group name is too long",
    "BAD_GROUP_NAME": "Group name must follow the same rules as C identifiers",
    "NO_EVENT_NAME": "Event name is not specified",
    "EVENT_TOO_LONG": "Event name is too long",
    "BAD_EVENT_NAME": "Event name must follow the same rules as C identifiers",
    "RETVAL_ON_PROBE": "$retval is not available on probe",
    "BAD_STACK_NUM": "Invalid stack number",
    "BAD_ARG_NUM": "Invalid argument number",
    "BAD_VAR": "Invalid $-valiable specified",
    "BAD_REG_NAME": "Invalid register name",
    "BAD_MEM_ADDR": "Invalid memory address",
    "BAD_IMM": "Invalid immediate value",
    "IMMSTR_NO_CLOSE": "String is not closed with '\"'",
    "FILE_ON_KPROBE": "File offset is not available with kprobe",
    "TOO_MANY_OPS": "Dereference is too much nested",
    "DEREF_NEED_BRACE": "Dereference needs a brace",
    "BAD_DEREF_OFFS": "Invalid dereference offset",
    "DEREF_OPEN_BRACE": "Dereference brace is not closed",
    "COMM_CANT_DEREF": "$comm can not be dereferenced",
    "BAD_FETCH_ARG": "Invalid fetch argument",
    "ARRAY_NO_CLOSE": "Array is not closed",
    "BAD_ARRAY_SUFFIX": "Array has wrong suffix",
    "BAD_ARRAY_NUM": "Invalid array size",
    "ARRAY_TOO_BIG": "Array number is too big",
    "BAD_TYPE": "Unknown type is specified",
    "BAD_STRING": "String accepts only memory argument",
    "BAD_BITFIELD": "Invalid bitfield",
    "ARG_NAME_TOO_LONG": "Argument name is too long",
    "NO_ARG_NAME": "Argument name is not specified",
    "BAD_ARG_NAME": "Argument name must follow the same rules as C identifiers",
    "USED_ARG_NAME": "This argument name is already used",
    "ARG_TOO_LONG": "Argument expression is too long",
    "NO_ARG_BODY": "No argument expression",
    "BAD_INSN_BNDRY": "Probe point is not an instruction boundary",
    "FAIL_REG_PROBE": "Failed to register probe event",
    "DIFF_PROBE_TYPE": "Probe type is different from existing probe",
    "DIFF_ARG_TYPE": "Argument type or name is different from existing probe",
    "SAME_PROBE": "There is already the exact same probe event",
}

KPROBE_EVENT_SYSTEM = "kprobes"     # trace_kprobe.c: the default group
MAX_EVENT_NAME_LEN = 64             # trace_probe.h
MAX_ARG_NAME_LEN = 32
MAX_ARGSTR_LEN = 63
MAX_ARRAY_LEN = 64
MAX_TRACE_ARGS = 128
FETCH_INSN_MAX = 16
KRETPROBE_MAXACTIVE_MAX = 4096      # include/linux/kprobes.h
WRITE_BUFSIZE = 4096                # trace.h: trace_parse_run_command's line limit
#: trace_probe.c reserved_field_names: no argument may take these.
RESERVED_FIELDS = ("common_type", "common_flags", "common_preempt_count", "common_pid",
                   "common_tgid", "__probe_ip", "__probe_ret_ip", "__probe_func")
#: kisim's kernel stack size (kernel/include/kisim/thread_info.h), whose
#: THREAD_SIZE / sizeof(long) bounds $stackN and $argN (PARAM_MAX_STACK).
THREAD_SIZE = int(re.search(r"^#define\s+THREAD_SIZE\s+(\d+)", (
    Path(__file__).resolve().parent.parent / "kernel/include/kisim/thread_info.h").read_text(),
    re.M).group(1))
_GOOD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")     # trace.h is_good_name


class ProbeEventError(ValueError):
    """A definition v5.10 refuses: its error_log entry (``err`` None: the write
    fails, -EINVAL or the errno ``strerror`` names, and the kernel logs nothing,
    as for ``$comm:x64``)."""

    def __init__(self, err: str | None, command: str, pos: int, why: str = "",
                 strerror: str = "Invalid argument") -> None:
        self.err, self.command, self.pos = err, command, pos
        #: kisim's reason for a registration refusal (the kernel's pr_warn or errno).
        self.reason = ""
        text = ERRORS[err] if err else f"write error: {strerror} ({why})"
        super().__init__(f"trace_kprobe: error: {text}" if err else text)

    @property
    def detail(self) -> str:
        """The lines of :meth:`error_log` after the message (command, caret, reason)."""
        return self.error_log().partition("\n")[2]

    def error_log(self) -> str:
        """The entry as ``error_log`` shows it, without its timestamp
        (trace.c tracing_err_log_seq_show: message, command, caret)."""
        if self.err is None:
            return str(self)
        entry = error_log_entry(str(self), self.command, self.pos)
        return entry + (f"\n  (kisim: {self.reason})" if self.reason else "")


# -- types (trace_probe.c probe_fetch_types) ------------------------------------
@dataclass(frozen=True)
class FetchType:
    """One fetch type: its name, bytes, sign, the format's field type and printf."""

    name: str
    size: int
    signed: bool
    fmttype: str
    fmt: str

    @property
    def is_string(self) -> bool:
        return self.name in ("string", "ustring")


_PRINT = {8: ("%u", "%d", "0x%x"), 16: ("%u", "%d", "0x%x"), 32: ("%u", "%d", "0x%x"),
          64: ("%Lu", "%Ld", "0x%Lx")}


def fetch_types(bits: int) -> dict[str, FetchType]:
    """The v5.10 types for a ``bits``-bit kernel (``symbol`` is as wide as a long)."""
    types = {"string": FetchType("string", 4, True, "__data_loc char[]", '\\"%s\\"'),
             "ustring": FetchType("ustring", 4, True, "__data_loc char[]", '\\"%s\\"')}
    for width, (ufmt, sfmt, xfmt) in _PRINT.items():
        types[f"u{width}"] = FetchType(f"u{width}", width // 8, False, f"u{width}", ufmt)
        types[f"s{width}"] = FetchType(f"s{width}", width // 8, True, f"s{width}", sfmt)
        types[f"x{width}"] = FetchType(f"x{width}", width // 8, False, f"u{width}", xfmt)
    types["symbol"] = FetchType("symbol", bits // 8, False, f"u{bits}", "%pS")
    return types


def find_fetch_type(name: str | None, bits: int) -> FetchType | None:
    """trace_probe.c find_fetch_type: None is the default (x64 or x32); a
    ``b...`` bitfield is the unsigned type of its container ``/SIZE``."""
    types = fetch_types(bits)
    if name is None:
        name = f"x{bits}"
    if name.startswith("b"):
        slash = name.find("/")
        size = kstrtoull(name[slash + 1:]) if slash >= 0 else None
        return types.get(f"u{size}") if size in (8, 16, 32, 64) else None
    return types.get(name)


# -- what the parser needs to know about the kernel -----------------------------
@dataclass(frozen=True)
class ProbeTarget:
    """The facts of one kernel that a definition is checked against.

    ``regs``: ``regs_query_register_offset``'s names in ``struct pt_regs``
    word order (the arch's ``REGS_OFFSET_NAMES``), ``aliases`` the other
    names it takes (``REGS_OFFSET_ALIASES``); ``arg_regs``: the
    registers ``regs_get_kernel_argument`` reads (empty: no
    HAVE_FUNCTION_ARG_ACCESS_API); ``thread_size``: bytes of a kernel stack
    (``$stackN`` up to THREAD_SIZE / sizeof(long)); ``lookup``:
    kallsyms_lookup_name (None if unknown); ``symbol_at``: the function and
    offset holding an address (kallsyms_lookup_size_offset).
    """

    bits: int
    regs: tuple[str, ...]
    arg_regs: tuple[str, ...]
    thread_size: int
    lookup: Callable[[str], int | None] = lambda name: None
    symbol_at: Callable[[int], tuple[str, int] | None] = lambda addr: None
    aliases: Mapping[str, str] = field(default_factory=dict)

    def reg_index(self, name: str) -> int | None:
        """regs_query_register_offset, in words: None for a name it does not know."""
        name = self.aliases.get(name, name)
        return self.regs.index(name) if name and name in self.regs else None

    @property
    def max_stack(self) -> int:
        """PARAM_MAX_STACK."""
        return self.thread_size // (self.bits // 8)

    def on_func_entry(self, symbol: str, offset: int) -> bool:
        """kprobe_on_func_entry: the symbol resolves and symbol+offset starts a function."""
        addr = self.lookup(symbol)
        where = self.symbol_at(addr + offset) if addr is not None else None
        return where is not None and where[1] == 0


# -- definitions -------------------------------------------------------------------
@dataclass(frozen=True)
class ProbeArg:
    """One fetch argument: name, its text (``comm``), type, array count, the
    compiled program, its offset in the record, and its field's type text."""

    name: str
    comm: str
    type: FetchType
    count: int
    code: tuple[tuple, ...]
    offset: int

    @property
    def fieldtype(self) -> str:
        return f"{self.type.fmttype}[{self.count}]" if self.count else self.type.fmttype

    @property
    def size(self) -> int:
        return self.type.size * (self.count or 1)


@dataclass(frozen=True)
class KprobeEvent:
    """A parsed kprobe or kretprobe event (struct trace_kprobe)."""

    group: str
    event: str
    is_return: bool
    symbol: str | None
    offset: int
    addr: int | None
    maxactive: int
    args: tuple[ProbeArg, ...]
    bits: int
    argv: tuple[str, ...] = field(repr=False)

    @property
    def head_size(self) -> int:
        """sizeof(struct k(ret)probe_trace_entry_head): common fields, ip (func, ret_ip)."""
        return 8 + (2 if self.is_return else 1) * self.bits // 8

    @property
    def size(self) -> int:
        """The fixed part of a record (head and arguments), before any string."""
        return self.head_size + sum(a.size for a in self.args)

    def place(self) -> str:
        """Where it probes, as trace_kprobe_show prints it (the raw address: v5.10's
        ``%p`` would hash it)."""
        if self.symbol is None:
            return f"0x{self.addr:0{self.bits // 4}x}"
        return f"{self.symbol}+{self.offset}" if self.offset else self.symbol

    def show(self) -> str:
        """The line reading ``kprobe_events`` prints (trace_kprobe_show)."""
        head = ("r" + (str(self.maxactive) if self.maxactive else "") if self.is_return
                else "p") + f":{self.group}/{self.event}"
        return " ".join([head, self.place()] + [f"{a.name}={a.comm}" for a in self.args])

    def matches(self, words: Sequence[str]) -> bool:
        """trace_kprobe_match_command_head: no words, or the place and then the
        first arguments as ``NAME=FETCHARG`` (trace_probe_match_command_args)."""
        if not words:
            return True
        args = words[1:]
        return words[0] == self.place() and len(args) <= len(self.args) and all(
            word == f"{a.name}={a.comm}" for word, a in zip(args, self.args))

    def print_fmt(self) -> str:
        """traceprobe_set_print_fmt (__set_print_fmt)."""
        fmt, rec = (("(%lx <- %lx)", "REC->__probe_func, REC->__probe_ret_ip") if self.is_return
                    else ("(%lx)", "REC->__probe_ip"))
        parts = [f'"{fmt}']
        for a in self.args:
            value = "{" + ",".join([a.type.fmt] * a.count) + "}" if a.count else a.type.fmt
            parts.append(f" {a.name}={value}")
        parts.append(f'", {rec}')
        for a in self.args:
            ref = "__get_str({})" if a.type.is_string else "REC->{}"
            names = [f"{a.name}[{j}]" for j in range(a.count)] if a.count else [a.name]
            parts.extend(", " + ref.format(n) for n in names)
        return "".join(parts)

    def fields(self) -> list[tuple[str, str, int, int, bool]]:
        """(type, name, offset, size, signed) of the event's own fields
        (kprobe_event_define_fields, kretprobe_event_define_fields)."""
        word = self.bits // 8
        heads = (("__probe_func", 8), ("__probe_ret_ip", 8 + word)) if self.is_return \
            else (("__probe_ip", 8),)
        out = [("unsigned long", name, off, word, False) for name, off in heads]
        out += [(a.fieldtype, a.name, self.head_size + a.offset, a.size, a.type.signed)
                for a in self.args]
        return out

    def format(self, event_id: int) -> str:
        """The event's tracefs ``format`` file (trace_events.c f_show)."""
        common = [("unsigned short", "common_type", 0, 2, False),
                  ("unsigned char", "common_flags", 2, 1, False),
                  ("unsigned char", "common_preempt_count", 3, 1, False),
                  ("int", "common_pid", 4, 4, True)]
        lines = [f"name: {self.event}", f"ID: {event_id}", "format:"]
        lines += [_field_line(f) for f in common] + [""]
        lines += [_field_line(f) for f in self.fields()]
        return "\n".join(lines) + f"\n\nprint fmt: {self.print_fmt()}\n"


def _field_line(f: tuple[str, str, int, int, bool]) -> str:
    ftype, name, offset, size, signed = f
    cut = ftype.find("[") if not ftype.startswith("__data_loc") else -1
    decl = f"{ftype[:cut]} {name}{ftype[cut:]}" if cut >= 0 else f"{ftype} {name}"
    return f"\tfield:{decl};\toffset:{offset};\tsize:{size};\tsigned:{int(signed)};"


@dataclass(frozen=True)
class ProbeDeletion:
    """``-:[GRP/]EVENT [PLACE [NAME=FETCHARG]...]``: delete the probes of the event
    that match the words given, every probe of it without (dyn_event_release)."""

    group: str | None
    event: str
    words: tuple[str, ...] = ()


# -- the parser ---------------------------------------------------------------------
class TraceProbeLog:
    """struct trace_probe_log: the command's argv and the index errors point into."""

    def __init__(self, argv: list[str]) -> None:
        self.argv, self.index = argv, 0

    def err(self, offset: int, err: str) -> ProbeEventError:
        """__trace_probe_log_err: the caret at argv[index]'s start + offset."""
        pos = sum(len(a) + 1 for a in self.argv[:self.index])
        if self.index >= len(self.argv):
            pos, offset = sum(len(a) + 1 for a in self.argv), 0
        return ProbeEventError(err, " ".join(self.argv), pos + offset)


def split_lines(text: str) -> Iterator[str]:
    """trace_parse_run_command: one definition per line, '#' to the end of a line
    is a comment, blank lines are skipped."""
    for line in text.split("\n"):
        line = line.split("#", 1)[0]
        if line.strip():
            if len(line) >= WRITE_BUFSIZE - 1:
                raise ProbeEventError(None, line[:40], 0,
                                      f"line length is too long: should be less than "
                                      f"{WRITE_BUFSIZE}")
            yield line


def split_symbol_offset(symbol: str, bits: int) -> tuple[str, int | None]:
    """traceprobe_split_symbol_offset: ``SYM[+|-OFFS]`` as (SYM, OFFS), cut at the
    first '+' or '-'; OFFS is None where kstrtol refuses it (-EINVAL)."""
    cut = min((i for i in (symbol.find("+"), symbol.find("-")) if i >= 0), default=-1)
    if cut < 0:
        return symbol, 0
    return symbol[:cut], kstrtol(symbol[cut:], 0, bits)


def parse_kprobe_event(line: str, target: ProbeTarget) -> KprobeEvent | ProbeDeletion:
    """One kprobe_events line (trace_kprobe_create, create_or_delete_trace_kprobe)."""
    argv = line.split()
    if not argv:
        raise ProbeEventError(None, line, 0, "empty definition")
    if argv[0].startswith("-"):
        return _parse_deletion(argv)
    log = TraceProbeLog(argv)
    head = argv[0]
    if head[0] not in "pr" or len(argv) < 2:       # -ECANCELED, then -EINVAL
        raise ProbeEventError(None, line.strip(), 0,
                              "not p, r or -" if head[0] not in "pr" else "no probe point")
    is_return = head[0] == "r"
    colon = head.find(":", 1)
    event = head[colon + 1:] if colon >= 0 else None
    maxactive = 0
    if head[1:2].isdigit():
        if not is_return:
            raise log.err(1, "MAXACT_NO_KPROBE")
        digits = head[1:colon] if colon >= 0 else head[1:]
        value = kstrtoull(digits, 0, 32) if len(digits) <= MAX_EVENT_NAME_LEN - 1 else None
        if not value:
            raise log.err(1, "BAD_MAXACT")
        if value > KRETPROBE_MAXACTIVE_MAX:
            raise log.err(1, "MAXACT_TOO_BIG")
        maxactive = value
    symbol, offset, fentry = None, 0, False
    addr = kstrtoull(argv[1], 0, target.bits)
    if addr is None:
        log.index = 1
        if "/" in argv[1] and ":" in argv[1]:          # a uprobe: -ECANCELED
            raise ProbeEventError(None, line.strip(), 0, "a uprobe, not a kprobe")
        symbol = argv[1]
        pct = symbol.find("%")
        if pct >= 0:
            if symbol[pct:] != "%return":
                raise log.err(pct, "BAD_ADDR_SUFFIX")
            symbol, is_return = symbol[:pct], True
        symbol, value = split_symbol_offset(symbol, target.bits)
        if value is None or value < 0 or value > 0xFFFFFFFF:
            raise log.err(0, "BAD_PROBE_ADDR")
        offset = value
        fentry = target.on_func_entry(symbol, offset)
        if offset and is_return and not fentry:
            raise log.err(0, "BAD_RETPROBE")
    log.index = 0
    if event is not None:
        group, event = _parse_event_name(event, log, colon + 1)
    else:
        group = KPROBE_EVENT_SYSTEM
        name = (f"{'r' if is_return else 'p'}_{symbol}_{offset}" if symbol is not None
                else f"{'r' if is_return else 'p'}_0x{addr:0{target.bits // 4}x}")
        event = name[:1] + re.sub(r"[:.]", "_", name[1:MAX_EVENT_NAME_LEN - 1])
    # TPARG_FL_RETURN is set only where a symbol names the probe: an address
    # kretprobe has no $retval (v5.10 __trace_kprobe_create)
    flags = _Flags(is_return and symbol is not None, fentry)
    args: list[ProbeArg] = []
    size = 0
    for i, text in enumerate(argv[2:2 + MAX_TRACE_ARGS]):
        log.index = i + 2
        arg = _parse_probe_arg(text, i, args, size, flags, target, log)
        args.append(arg)
        size += arg.size
    return KprobeEvent(group, event, is_return, symbol, offset,
                       addr if symbol is None else None, maxactive, tuple(args),
                       target.bits, tuple(argv))


def _parse_deletion(argv: list[str]) -> ProbeDeletion:
    """dyn_event_release: ``-:[GRP/]EVENT`` (anything else: -EINVAL, no log); the
    group is up to the first '/'."""
    head = argv[0]
    group, slash, event = head[2:].partition("/")
    if not slash:
        group, event = "", group
    if head[1:2] != ":" or not event:
        raise ProbeEventError(None, " ".join(argv), 0, "deletion is -:[GRP/]EVENT")
    return ProbeDeletion(group if slash else None, event, tuple(argv[1:]))


def _parse_event_name(text: str, log: TraceProbeLog, offset: int) -> tuple[str, str]:
    """traceprobe_parse_event_name."""
    group = KPROBE_EVENT_SYSTEM
    slash = text.find("/")
    if slash >= 0:
        if slash == 0:
            raise log.err(offset, "NO_GROUP_NAME")
        if slash + 1 > MAX_EVENT_NAME_LEN:
            raise log.err(offset, "GROUP_TOO_LONG")
        group = text[:slash]
        if not _GOOD_NAME.match(group):
            raise log.err(offset, "BAD_GROUP_NAME")
        offset += slash + 1
        text = text[slash + 1:]
    if not text:
        raise log.err(offset, "NO_EVENT_NAME")
    if len(text) > MAX_EVENT_NAME_LEN:
        raise log.err(offset, "EVENT_TOO_LONG")
    if not _GOOD_NAME.match(text):
        raise log.err(offset, "BAD_EVENT_NAME")
    return group, text


@dataclass(frozen=True)
class _Flags:
    """TPARG_FL_RETURN and TPARG_FL_FENTRY (TPARG_FL_KERNEL is always set here)."""

    is_return: bool
    fentry: bool


def _parse_probe_arg(text: str, i: int, done: list[ProbeArg], size: int, flags: _Flags,
                     target: ProbeTarget, log: TraceProbeLog) -> ProbeArg:
    """traceprobe_parse_probe_arg: the name, then the body."""
    eq = text.find("=")
    if eq >= 0:
        if eq > MAX_ARG_NAME_LEN:
            raise log.err(0, "ARG_NAME_TOO_LONG")
        if eq == 0:
            raise log.err(0, "NO_ARG_NAME")
        name, body = text[:eq], text[eq + 1:]
    else:
        name, body = f"arg{i + 1}", text
    if not _GOOD_NAME.match(name):
        raise log.err(0, "BAD_ARG_NAME")
    if name in RESERVED_FIELDS or any(a.name == name for a in done):
        raise log.err(0, "USED_ARG_NAME")
    return _parse_arg_body(name, body, size, flags, target, log, eq + 1)


def _parse_arg_body(name: str, arg: str, size: int, flags: _Flags, target: ProbeTarget,
                    log: TraceProbeLog, offset: int) -> ProbeArg:
    """traceprobe_parse_probe_arg_body: type and array suffix, the fetch
    program, then the store, bitfield and array instructions."""
    if len(arg) > MAX_ARGSTR_LEN:
        raise log.err(offset, "ARG_TOO_LONG")
    if not arg:
        raise log.err(offset, "NO_ARG_BODY")
    comm, count = arg, 0
    colon = arg.find(":")
    tname = None                     # the type's text, at arg[colon + 1:]
    if colon >= 0:
        tname, arg = arg[colon + 1:], arg[:colon]
        lb = tname.find("[")
        if lb >= 0:
            t2 = colon + 1 + lb + 1                  # where the count starts in comm
            inner = tname[lb + 1:]
            tname = tname[:lb]
            rb = inner.find("]")
            if rb < 0:
                raise log.err(offset + len(comm), "ARRAY_NO_CLOSE")
            if rb + 1 != len(inner):
                raise log.err(offset + t2 + rb + 1, "BAD_ARRAY_SUFFIX")
            number = kstrtoull(inner[:rb], 0, 32)
            if not number:
                raise log.err(offset + t2, "BAD_ARRAY_NUM")
            if number > MAX_ARRAY_LEN:
                raise log.err(offset + t2, "ARRAY_TOO_BIG")
            count = number
    tpos = offset + (colon + 1 if colon >= 0 else 0)
    if arg == "$comm" or arg.startswith('\\"'):
        if count or (tname is not None and tname != "string"):
            raise ProbeEventError(None, " ".join(log.argv), 0,
                                  "$comm and an immediate string take only :string")
        ftype = find_fetch_type("string", target.bits)
    else:
        ftype = find_fetch_type(tname, target.bits)
    if ftype is None:
        raise log.err(tpos, "BAD_TYPE")
    code: list[tuple] = [("nop",)] * (FETCH_INSN_MAX - 1) + [("end",)]   # FETCH_OP_END
    at = _parse_fetch(arg, ftype, code, 0, flags, target, log, offset)
    op = code[at][0]
    if ftype.is_string:
        if op not in ("deref", "uderef", "imm", "comm", "data"):
            raise log.err(tpos, "BAD_STRING")
        deref = 0 if op in ("imm", "comm", "data") else code[at][1]
        if op in ("imm", "comm", "data") or count:
            at, deref = at + 1, 0
            if code[at][0] != "nop":
                raise log.err(offset, "TOO_MANY_OPS")
        user = ftype.name == "ustring" or op == "uderef"
        # the dereference becomes the store and keeps its offset
        code[at] = ("st_ustring" if user else "st_string", deref, ftype.size)
    elif op in ("deref", "uderef"):
        code[at] = ("st_mem" if op == "deref" else "st_umem", code[at][1], ftype.size)
    else:
        at += 1
        if code[at][0] != "nop":
            raise log.err(offset, "TOO_MANY_OPS")
        code[at] = ("st_raw", ftype.size)
    store = code[at][0]
    if tname is not None and tname.startswith("b"):
        at = _parse_bitfield(tname, ftype, code, at, log, tpos)
    if count:
        if store not in ("st_mem", "st_string", "st_ustring"):
            raise log.err(tpos, "BAD_STRING")
        at += 1
        if code[at][0] != "nop":
            raise log.err(offset, "TOO_MANY_OPS")
        code[at] = ("lp_array", count)
    return ProbeArg(name, comm, ftype, count, tuple(code[:at + 1]), size)


def _parse_bitfield(tname: str, ftype: FetchType, code: list[tuple], at: int, log: TraceProbeLog,
                    tpos: int) -> int:
    """__parse_bitfield_probe_arg: ``b<width>@<offset>/<size>``."""
    width, tail = simple_strtoul(tname[1:])
    if width == 0 or not tail.startswith("@"):
        raise log.err(tpos, "BAD_BITFIELD")
    bf = tail[1:]
    bitoff, tail = simple_strtoul(bf)
    if tail == bf or not tail.startswith("/"):
        raise log.err(tpos, "BAD_BITFIELD")
    at += 1
    if code[at][0] != "nop":
        raise log.err(tpos, "BAD_BITFIELD")
    bits = ftype.size * 8
    if bits < width + bitoff:
        raise log.err(tpos, "BAD_BITFIELD")
    code[at] = ("mod_bf", bits - (width + bitoff), bits - width)
    return at


def _parse_fetch(arg: str, ftype: FetchType, code: list[tuple], at: int, flags: _Flags,
                 target: ProbeTarget, log: TraceProbeLog, offs: int) -> int:
    """parse_probe_arg (recursive): fill ``code`` from ``at``; the index of the
    last instruction written. Raises the kernel's error."""
    end = FETCH_INSN_MAX - 1
    first = arg[:1]
    if first == "$":
        code[at] = _parse_var(arg[1:], flags, target, log, offs)
    elif first == "%":
        index = target.reg_index(arg[1:])
        if index is None:
            raise log.err(offs, "BAD_REG_NAME")
        code[at] = ("reg", index)
    elif first == "@":
        if arg[1:2].isdigit():
            value = kstrtoull(arg[1:], 0, target.bits)
            if value is None:
                raise log.err(offs, "BAD_MEM_ADDR")
            code[at] = ("imm", value)
        elif arg[1:2] == "+":
            raise log.err(offs, "FILE_ON_KPROBE")
        else:
            code[at] = ("symbol", arg[1:])           # FETCH_NOP_SYMBOL, then IMM
            at += 1
            if at == end:
                raise log.err(offs, "TOO_MANY_OPS")
            code[at] = ("imm", 0)
        at += 1
        if at == end:
            raise log.err(offs, "TOO_MANY_OPS")
        code[at] = ("deref", 0)
    elif first in ("+", "-"):
        op = "deref"
        if arg[1:2] == "u":
            op, arg = "uderef", arg[0] + arg[2:]
        if arg[0] == "+":
            arg = arg[1:]
        brace = arg.find("(")
        if brace < 0:
            raise log.err(offs, "DEREF_NEED_BRACE")
        value = kstrtol(arg[:brace], 0, target.bits)
        if value is None:
            raise log.err(offs, "BAD_DEREF_OFFS")
        offs += brace + 1 + (1 if arg[0] != "-" else 0)
        inner = arg[brace + 1:]
        close = inner.rfind(")")
        if close < 0:
            raise log.err(offs + len(inner), "DEREF_OPEN_BRACE")
        default = find_fetch_type(None, target.bits)
        at = _parse_fetch(inner[:close], default, code, at, flags, target, log, offs)
        if code[at][0] in ("comm", "data"):
            raise log.err(offs, "COMM_CANT_DEREF")
        at += 1
        if at == end:
            raise log.err(offs, "TOO_MANY_OPS")
        code[at] = (op, value)
    elif first == "\\":
        if arg[1:2] == '"':
            body = arg[2:]
            # __parse_imm_string checks str[len - 1]: of an empty body, the opening
            # quote, so '\"' is the empty string
            if body and not body.endswith('"'):
                raise log.err(offs + 2 + len(body), "IMMSTR_NO_CLOSE")
            code[at] = ("data", body[:-1])
        else:
            value = _str_to_immediate(arg[1:], target.bits)
            if value is None:
                raise log.err(offs + 1, "BAD_IMM")
            code[at] = ("imm", value)
    if code[at][0] == "nop":
        raise log.err(offs, "BAD_FETCH_ARG")
    return at


def _str_to_immediate(text: str, bits: int) -> int | None:
    """str_to_immediate: digits (kstrtoul), or a signed value (kstrtol), as an unsigned long."""
    if text[:1].isdigit():
        return kstrtoull(text, 0, bits)
    if text[:1] in ("-", "+"):
        value = kstrtol(text if text[0] == "-" else text[1:], 0, bits)
        return None if value is None else value & ((1 << bits) - 1)
    return None


def _parse_var(var: str, flags: _Flags, target: ProbeTarget, log: TraceProbeLog,
               offs: int) -> tuple:
    """parse_probe_vars: $retval, $stack, $stackN, $comm, $argN."""
    if var == "retval":
        if not flags.is_return:
            raise log.err(offs, "RETVAL_ON_PROBE")
        return ("retval",)
    if var.startswith("stack"):
        rest = var[5:]
        if not rest:
            return ("stackp",)
        if rest[0].isdigit():
            n = kstrtoull(rest, 10)
            if n is None:
                raise log.err(offs, "BAD_VAR")
            if n > target.max_stack:
                raise log.err(offs, "BAD_STACK_NUM")
            return ("stack", n)
        raise log.err(offs, "BAD_VAR")
    if var == "comm":
        return ("comm",)
    if target.arg_regs and flags.fentry and not flags.is_return and var.startswith("arg"):
        n = kstrtoull(var[3:], 10)
        if n is None:
            raise log.err(offs, "BAD_VAR")
        if not n or n > target.max_stack:
            raise log.err(offs, "BAD_ARG_NUM")
        return ("arg", n - 1)
    raise log.err(offs, "BAD_VAR")


def probe_target(arch: Arch, image: Image) -> ProbeTarget:
    """The parser's facts for a kisim kernel: the arch's register table and
    argument registers, kisim's THREAD_SIZE, and the image's symbols."""
    ops = arch_kprobes(arch)

    def lookup(name: str) -> int | None:
        try:
            return image.symbols.get(name)
        except SymbolError:                 # a name several modules define
            return None

    return ProbeTarget(arch.bits, ops.REGS_OFFSET_NAMES, ops.FUNCTION_ARG_REGS, THREAD_SIZE,
                       lookup, image.symbol_at, ops.REGS_OFFSET_ALIASES)


def parse_kprobe_events(lines: Iterable[str],
                        target: ProbeTarget) -> list[KprobeEvent | ProbeDeletion]:
    """Every definition of a kprobe_events text (see :func:`split_lines`)."""
    return [parse_kprobe_event(line, target) for text in lines for line in split_lines(text)]


__all__ = ["ERRORS", "FetchType", "KprobeEvent", "ProbeArg", "ProbeDeletion", "ProbeEventError",
           "ProbeTarget", "TraceProbeLog", "find_fetch_type", "parse_kprobe_event",
           "parse_kprobe_events", "probe_target", "split_lines", "split_symbol_offset"]
