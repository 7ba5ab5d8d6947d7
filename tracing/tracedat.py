"""trace-cmd's ``trace.dat`` (file version 6), for ``trace-cmd report`` and KernelShark.

The file, as trace-cmd's ``trace-cmd.dat.v6(5)`` describes it and
``lib/trace-cmd/trace-input.c`` reads it (docs/tracing.md restates it):
magic and version, the file's byte order, ``sizeof(long)`` and the page
size; the tracefs ``events/header_page`` and ``events/header_event`` texts;
the ``format`` text of every event (the ``ftrace`` system's first, then one
block per system); the guest image's kallsyms (modules included), the
printk formats and the saved cmdlines; the CPU count, an options section
(one ``CPUSTAT`` per CPU: the tracefs ``per_cpu/cpuN/stats`` text, and
``TRACECLOCK`` with the clock, NUL-terminated); after ``flyrecord`` each
CPU's data offset and size and the clock again (``[global]``), then each
CPU's data as the kernel ring buffer's pages
(``kernel/trace/ring_buffer.c``, v5.10): a page header (``u64`` time stamp,
a ``long`` commit word), then events, each a 32-bit header (5 bits of
``type_len``, 27 bits of time delta from the previous event) and its
payload (``struct trace_entry`` then the event's fields), a
``TIME_EXTEND`` event before any delta of 2^27 ns or more. The commit word
holds the bytes used; ``RB_MISSED_EVENTS`` and ``RB_MISSED_STORED`` with
the count stored after the data mark the first page after lost events.
Every number is in the guest's byte order (a ppc32 trace is big-endian;
trace-cmd reads either on any host).

kisim's payloads are described as they are (lttng-modules' field names,
word-sized fields as ``unsigned long``); the print formats render them as
kisim's ``text`` format does, so ``trace-cmd report`` shows the same
``name=value`` pairs.
"""
from __future__ import annotations

import fnmatch
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Protocol, Sequence

import fsio
from arches import get_arch
from sim.elf import Image
from sim.event import Event, EventClass, FieldType, u
from tracing.ctf import PacketInfo
from tracing.errors import TraceError
from tracing.events import (COMM, COMM_LEN, EVENTS, FIELDS, FTRACE_EVENTS, GROUPS,
                            MARKER_EVENTS, NAME, NAME_LEN)
from tracing.outdir import OutDir
from tracing.text import task_key, timestamp

FILE = "trace.dat"
#: ``TRACECMD_MAGIC`` and the tag (lib/trace-cmd/include/private/trace-cmd-private.h).
MAGIC = b"\x17\x08\x44tracing"
VERSION = 6
#: The guest's PAGE_SIZE on every kisim arch; trace-cmd walks the data page by page.
PAGE_SIZE = 4096
#: Option ids (enum tracecmd_file_options, trace-cmd-private.h).
OPTION_DONE, OPTION_CPUSTAT, OPTION_TRACECLOCK = 0, 2, 4
#: The clock, as tracefs ``trace_clock`` shows the chosen one: kisim's modeled
#: clock, in ns and synchronized across CPUs as the kernel's ``global`` clock is.
TRACE_CLOCK = "[global]\n"
#: The TRACECLOCK option's payload. trace-cmd record has written it empty
#: (trace-record.c add_options()), but trace-cmd 3.1's reader parses the
#: payload as a string (trace-input.c handle_options() calls
#: tracecmd_parse_trace_clock() on its malloc'ed copy): empty, that copy is
#: unterminated, and strtok_r() reads whatever the heap holds there. A '[' in
#: it named a clock of garbage, not one shown in microseconds, and about one
#: report in 200 printed raw nanoseconds. The clock's own text, NUL-terminated,
#: parses as the one after the CPU data.
TRACE_CLOCK_OPTION = TRACE_CLOCK.encode() + b"\0"

# include/linux/ring_buffer.h and kernel/trace/ring_buffer.c, v5.10.
TYPE_DATA_MAX = 28               # RINGBUF_TYPE_DATA_TYPE_LEN_MAX
TYPE_TIME_EXTEND = 30            # RINGBUF_TYPE_TIME_EXTEND
TS_SHIFT = 27                    # the 27-bit time_delta
TS_MASK = (1 << TS_SHIFT) - 1
RB_ALIGNMENT = 4
RB_MAX_SMALL_DATA = RB_ALIGNMENT * TYPE_DATA_MAX
RB_MISSED_EVENTS = 1 << 31
RB_MISSED_STORED = 1 << 30

#: ``events/header_event`` (ring_buffer_print_entry_header, v5.10).
HEADER_EVENT = ("# compressed entry header\n"
                "\ttype_len    :    5 bits\n"
                "\ttime_delta  :   27 bits\n"
                "\tarray       :   32 bits\n"
                "\n"
                "\tpadding     : type == 29\n"
                "\ttime_extend : type == 30\n"
                "\ttime_stamp : type == 31\n"
                "\tdata max type_len  == 28\n")

#: The ftrace system's event ids (enum trace_type, kernel/trace/trace.h, v5.10):
#: TRACE_FN, TRACE_GRAPH_ENT, TRACE_GRAPH_RET.
FTRACE_IDS = {"function": 1, "funcgraph_entry": 11, "funcgraph_exit": 10}
#: Other events are numbered from __TRACE_LAST_TYPE (17 in v5.10), as
#: register_trace_event (kernel/trace/trace_output.c) numbers them, in kisim's order.
FIRST_DYNAMIC_ID = 17
#: The ftrace events' print formats (kernel/trace/trace_entries.h, v5.10) for
#: kisim's fields; a funcgraph_exit carries only func and depth here.
FTRACE_PRINT = {
    "function": '" %ps <-- %ps", (void *)REC->ip, (void *)REC->parent_ip',
    "funcgraph_entry": '"--> %ps (%lu)", (void *)REC->func, REC->depth',
    "funcgraph_exit": '"<-- %ps (%lu) (start: %llx  end: %llx)", (void *)REC->func, '
                      'REC->depth, REC->calltime, REC->rettime',
}
#: Fields v5.10's funcgraph_exit has and kisim's record lacks, which trace-cmd's
#: function_graph plugin (lib/trace-cmd/trace-ftrace.c) needs for durations:
#: ``rettime`` is the exit record's timestamp, ``calltime`` that of the task's
#: entry record at the same depth (0 where that entry was lost).
DERIVED_FIELDS = {"funcgraph_exit": (("calltime", u(64, 16)), ("rettime", u(64, 16)))}

#: kisim's (lttng-modules') field names -> v5.10's (include/trace/events/sched.h),
#: which trace-cmd's and KernelShark's sched plugins look up.
TRACEFS_FIELDS = {"prev_tid": "prev_pid", "next_tid": "next_pid", "tid": "pid"}


@dataclass(frozen=True)
class FieldFormat:
    """One ``field:`` line of an event's ``format`` file."""

    ctype: str           # "unsigned long", "char", "__data_loc char[]"
    name: str            # with any "[N]" suffix
    offset: int
    size: int
    signed: bool

    def line(self) -> str:
        return (f"\tfield:{self.ctype} {self.name};\toffset:{self.offset};\t"
                f"size:{self.size};\tsigned:{int(self.signed)};\n")


#: ``struct trace_entry`` (include/linux/trace_events.h), every event's first fields.
COMMON_FIELDS = (FieldFormat("unsigned short", "common_type", 0, 2, False),
                 FieldFormat("unsigned char", "common_flags", 2, 1, False),
                 FieldFormat("unsigned char", "common_preempt_count", 3, 1, False),
                 FieldFormat("int", "common_pid", 4, 4, True))
COMMON_SIZE = sum(f.size for f in COMMON_FIELDS)


@dataclass(frozen=True)
class EventFormat:
    """One event as tracefs describes it (``events/SYSTEM/NAME/format``)."""

    system: str
    name: str
    id: int
    fields: tuple[FieldFormat, ...]      # the event's own, after the common fields
    print_fmt: str

    def text(self, char_signed: bool) -> str:
        """The ``format`` file, as ``f_show`` (kernel/trace/trace_events.c) prints it."""
        common = "".join(f.line() for f in COMMON_FIELDS)
        own = "".join(f.line() if f.ctype != "char" else
                      FieldFormat(f.ctype, f.name, f.offset, f.size, char_signed).line()
                      for f in self.fields)
        return (f"name: {self.name}\nID: {self.id}\nformat:\n{common}\n{own}\n"
                f"print fmt: {self.print_fmt}\n")


def tracefs_name(cls: EventClass) -> tuple[str, str]:
    """``(system, event)`` of a kisim event: the ftrace events in ``ftrace``, a
    tracepoint event under its tracepoint's name in its group (``kmem:kmalloc``),
    ``GROUP/EVENT`` names split, anything else in ``kisim``."""
    if cls.name in FTRACE_EVENTS:
        return "ftrace", cls.name
    if cls.name in MARKER_EVENTS:
        return "markers", cls.name
    if cls.name in EVENTS:
        group = next(g for g, members in GROUPS.items() if g != "all" and cls.name in members)
        return group, EVENTS[cls.name][0]
    system, sep, name = cls.name.partition("/")
    return (system, name) if sep else ("kisim", cls.name)


def match_event(spec: str, system: str, event: str) -> bool:
    """Whether ``trace-cmd record -e SPEC`` enables the event ``system:event``:
    ``SYSTEM``, ``SYSTEM:EVENT``, ``EVENT`` or ``all``, with shell globs (tracefs
    ``set_event`` syntax, kernel/trace/trace_events.c ``ftrace_set_clr_event``)."""
    want_system, sep, want_event = spec.partition(":")
    if not sep:
        want_system, want_event = ("*", "*") if spec == "all" else (spec, "*")
    return (fnmatch.fnmatchcase(system, want_system) and fnmatch.fnmatchcase(event, want_event)) \
        or (not sep and fnmatch.fnmatchcase(event, spec))


def select_events(spec: str, classes: Iterable[EventClass]) -> list[str]:
    """The events ``-e SPEC`` enables (:func:`match_event`); the ``ftrace`` system's
    events come with ``-p``, not ``-e``. Empty if none matches."""
    return [cls.name for cls in classes if tracefs_name(cls)[0] != "ftrace"
            and match_event(spec, *tracefs_name(cls))]


def marker_spec(spec: str) -> str | None:
    """The marker-name glob of ``-e markers:NAME``: the ``marker`` event,
    recording only the markers called NAME; None for any other spec."""
    system, sep, name = spec.partition(":")
    if system != "markers" or not sep or fnmatch.fnmatchcase("marker", name):
        return None
    return name


def _int_type(ftype: FieldType, word_bits: int) -> str:
    if ftype.bits == word_bits:
        return "long" if ftype.signed else "unsigned long"
    return f"{'s' if ftype.signed else 'u'}{ftype.bits}"


def _conversion(ftype: FieldType, word_bits: int) -> str:
    """The printf conversion kisim's text uses for a field: hex or decimal. A
    signed 32-bit long prints with ``%d``: libtraceevent (1.7) does not
    sign-extend a 4-byte ``%ld`` on a 64-bit host."""
    length = "l" if ftype.bits == word_bits else ("ll" if ftype.bits == 64 else "")
    if ftype.signed and ftype.bits == 32:
        length = ""
    if ftype.base == 16:
        return f"0x%{length}x"
    return f"%{length}{'d' if ftype.signed else 'u'}"


def event_format(cls: EventClass, ident: int, word_bits: int) -> EventFormat:
    """The ``format`` of one kisim event: its fields laid out after ``struct
    trace_entry`` at natural alignment, as the compiler lays out a
    ``TRACE_EVENT``'s entry struct; a comm is ``char NAME[16]``, any other
    string a ``__data_loc char[]``."""
    system, name = tracefs_name(cls)
    kinds = dict(FIELDS.get(cls.name, ()))
    fields, offset = [], COMMON_SIZE
    for kisim_name, ftype in cls.fields + DERIVED_FIELDS.get(cls.name, ()):
        fname = TRACEFS_FIELDS.get(kisim_name, kisim_name)
        if ftype.kind == "string" and kinds.get(kisim_name) in (COMM, NAME):
            size = COMM_LEN if kinds[kisim_name] == COMM else NAME_LEN
            fields.append(FieldFormat("char", f"{fname}[{size}]", offset, size, False))
            offset += size
            continue
        if ftype.kind == "string":
            ctype, size, signed = "__data_loc char[]", 4, True
        else:
            ctype, size, signed = _int_type(ftype, word_bits), ftype.bits // 8, ftype.signed
        offset = (offset + size - 1) & ~(size - 1)
        fields.append(FieldFormat(ctype, fname, offset, size, signed))
        offset += size
    if cls.name in FTRACE_PRINT:
        print_fmt = FTRACE_PRINT[cls.name]
    else:
        parts, args = [], []
        for (_, ftype), f in zip(cls.fields, fields):
            fname = f.name.partition("[")[0]
            if ftype.kind == "string":
                parts.append(f"{fname}=%s")
                args.append(f"__get_str({fname})" if f.ctype.startswith("__data_loc")
                            else f"REC->{fname}")
            else:
                parts.append(f"{fname}={_conversion(ftype, word_bits)}")
                args.append(f"REC->{fname}")
        print_fmt = '"' + " ".join(parts) + '"' + "".join(", " + a for a in args)
    return EventFormat(system, name, ident, tuple(fields), print_fmt)


class ProbeEvent(Protocol):
    """What a kprobe event gives trace.dat (probes.trace_kprobe.TraceKprobe)."""

    id: int
    cls: EventClass
    event: Any           # probes.kprobe_events.KprobeEvent: group, event, fields(), print_fmt()


class ProbeEvents(Protocol):
    """Events defined at run time with their own ``format`` and record layout
    (probes.trace_kprobe.TraceKprobes)."""

    events: Mapping[tuple[str, str], ProbeEvent]

    def encode(self, e: Event) -> bytes: ...


def probe_format(tk: ProbeEvent) -> EventFormat:
    """A kprobe event's ``format``, its own (kernel/trace/trace_kprobe.c,
    kprobe_event_define_fields): ``__probe_ip`` (a kretprobe's ``__probe_func``
    and ``__probe_ret_ip``) and the arguments after ``struct trace_entry``, in
    the group it was defined in; an array's ``[N]`` goes after the name."""
    fields = []
    for ctype, name, offset, size, signed in tk.event.fields():
        base, bracket, count = ctype.partition("[")
        if bracket and not ctype.startswith("__data_loc"):
            ctype, name = base, f"{name}[{count}"
        fields.append(FieldFormat(ctype, name, offset, size, signed))
    return EventFormat(tk.event.group, tk.event.event, tk.id, tuple(fields),
                       tk.event.print_fmt())


class _ProbeEncoder:
    """A kprobe event's payload: its record as the kernel lays it out."""

    def __init__(self, owner: ProbeEvents) -> None:
        self.owner = owner

    def encode(self, e: Event, derived: tuple[int, ...] = ()) -> bytes:
        return self.owner.encode(e)


def event_formats(classes: Sequence[EventClass], word_bits: int) -> dict[str, EventFormat]:
    """Every class's format by event name, with v5.10's ids for the ftrace events."""
    out, next_id = {}, FIRST_DYNAMIC_ID
    for cls in classes:
        if cls.name in FTRACE_IDS:
            ident = FTRACE_IDS[cls.name]
        else:
            ident, next_id = next_id, next_id + 1
        out[cls.name] = event_format(cls, ident, word_bits)
    return out


class _Encoder:
    """Payloads in the guest's byte order: ``struct trace_entry`` then the fields."""

    def __init__(self, fmt: EventFormat, prefix: str) -> None:
        self.fmt = fmt
        self.prefix = prefix
        self.common = struct.Struct(prefix + "HBBi")
        self.fixed = max((f.offset + f.size for f in fmt.fields), default=COMMON_SIZE)

    def encode(self, e: Event, derived: tuple[int, ...] = ()) -> bytes:
        buf = bytearray(self.fixed)
        self.common.pack_into(buf, 0, self.fmt.id, 0, 0, e.tid)
        for f, value in zip(self.fmt.fields, e.values + derived):
            if f.ctype == "char":
                raw = str(value).encode()[:f.size - 1]
                buf[f.offset:f.offset + len(raw)] = raw
            elif f.ctype.startswith("__data_loc"):
                raw = str(value).encode() + b"\0"
                struct.pack_into(self.prefix + "I", buf, f.offset,
                                 (len(raw) << 16) | len(buf))
                buf += raw
            else:
                code = {1: "b", 2: "h", 4: "i", 8: "q"}[f.size]
                struct.pack_into(self.prefix + (code if f.signed else code.upper()),
                                 buf, f.offset, value)
        return bytes(buf)


def buf_max_data_size(long_size: int) -> int:
    """The largest event a ring-buffer page takes (ring_buffer.c BUF_MAX_DATA_SIZE:
    the page less its header, a u64 time stamp and a local_t commit, less the 8
    bytes of an event's header and length); ``ring_buffer_lock_reserve`` refuses more."""
    return PAGE_SIZE - (8 + long_size) - 8


class CpuPages:
    """One CPU's data as ring-buffer pages (kernel/trace/ring_buffer.c, v5.10)."""

    def __init__(self, prefix: str, long_size: int) -> None:
        self.prefix = prefix
        self.long_size = long_size
        self.head = struct.Struct(prefix + ("QQ" if long_size == 8 else "QI"))
        self.data_size = PAGE_SIZE - self.head.size
        self.word = struct.Struct(prefix + "I")
        self.big = prefix == ">"
        self.pages: list[bytes] = []
        self._data = bytearray()
        self._page_ts = 0
        self._last_ts = 0
        self._missed = 0           # lost events to mark on the next page
        self._page_missed = 0      # ... on the open page
        self.open = False

    def _header(self, type_len: int, delta: int) -> bytes:
        """The 32-bit event header: C bitfields ``type_len:5, time_delta:27``, which
        an LE compiler puts in the low bits and a BE one in the high bits."""
        word = (type_len << 27) | delta if self.big else (delta << 5) | type_len
        return self.word.pack(word)

    def lost(self, count: int) -> None:
        """``count`` events were lost here: the next page says so (the open one is closed)."""
        if count <= 0:
            return
        self.close_page()
        self._missed += count

    def add(self, ts: int, payload: bytes) -> None:
        """Append one event at ``ts`` (ns), opening a new page where it does not fit
        (``rb_calculate_event_length``: a zero-length payload counts as one byte;
        over ``RB_MAX_SMALL_DATA`` the length goes in ``array[0]``)."""
        length = (max(len(payload), 1) + RB_ALIGNMENT - 1) & ~(RB_ALIGNMENT - 1)
        body = payload.ljust(length, b"\0")
        if length <= RB_MAX_SMALL_DATA:
            type_len = length // RB_ALIGNMENT
        else:
            type_len, body = 0, self.word.pack(length + 4) + body
        if ts < self._last_ts:
            raise TraceError(f"trace.dat: a CPU's timestamps go backwards ({self._last_ts} "
                             f"then {ts} ns)")
        if self.open:
            chunk = self._event(type_len, body, ts - self._last_ts)
            if len(self._data) + len(chunk) > self._room():
                self.close_page()
        if not self.open:
            self._open_page(ts)
            chunk = self._event(type_len, body, 0)
            if len(chunk) > self.data_size:
                raise TraceError(f"trace.dat: an event of {len(payload)} bytes does not "
                                 f"fit a {PAGE_SIZE}-byte page")
        self._data += chunk
        self._last_ts = ts

    def _event(self, type_len: int, body: bytes, delta: int) -> bytes:
        """An event ``delta`` ns after the previous one, behind a TIME_EXTEND
        where the delta needs more than 27 bits (``rb_add_time_stamp``)."""
        if delta > TS_MASK:
            return (self._header(TYPE_TIME_EXTEND, delta & TS_MASK)
                    + self.word.pack(delta >> TS_SHIFT) + self._header(type_len, 0) + body)
        return self._header(type_len, delta) + body

    def _room(self) -> int:
        """Data bytes a page holds, less the stored lost-event count on a marked page
        (unless its first event needs them: :meth:`close_page`)."""
        return self.data_size - (self.long_size if self._page_missed else 0)

    def _open_page(self, ts: int) -> None:
        self._data = bytearray()
        self._page_ts = self._last_ts = ts
        self._page_missed, self._missed = self._missed, 0
        self.open = True

    def close_page(self) -> None:
        if not self.open:
            return
        commit = len(self._data)
        data = bytes(self._data)
        if self._page_missed:           # the count where the page has room for it
            commit |= RB_MISSED_EVENTS      # (ring_buffer_read_page)
            if self.data_size - len(data) >= self.long_size:
                commit |= RB_MISSED_STORED
                data += self._page_missed.to_bytes(self.long_size,
                                                   "big" if self.big else "little")
        self.pages.append(self.head.pack(self._page_ts, commit) + data.ljust(self.data_size, b"\0"))
        self.open = False

    def finish(self) -> int:
        """Close the open page; the lost events no page could carry (none follows them)."""
        self.close_page()
        return self._missed



def header_page(long_size: int, char_signed: bool) -> str:
    """``events/header_page`` (ring_buffer_print_page_header, v5.10): the page's
    time stamp, its ``local_t`` commit word (whose size is the kernel's long,
    which trace-cmd takes from here) and the data."""
    data = 8 + long_size
    return (f"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
            f"\tfield: local_t commit;\toffset:8;\tsize:{long_size};\tsigned:1;\n"
            f"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
            f"\tfield: char data;\toffset:{data};\tsize:{PAGE_SIZE - data};"
            f"\tsigned:{int(char_signed)};\n")


@dataclass
class CpuStats:
    """What ``per_cpu/cpuN/stats`` says at the end of a recording."""

    overrun: int = 0           # events overwritten (kisim: overwritten)
    dropped: int = 0           # events the full buffer refused (kisim: discarded)
    read: int = 0              # events read out (kisim: recorded)
    oldest_ns: int = 0
    now_ns: int = 0

    def text(self, cpu: int) -> str:
        """The CPUSTAT option: ``CPU: N`` and tracing_stats_read's lines (kernel/trace/trace.c);
        nothing is left unread in the buffer (entries, bytes 0), as after ``trace-cmd record``."""
        return (f"CPU: {cpu}\nentries: 0\noverrun: {self.overrun}\ncommit overrun: 0\n"
                f"bytes: 0\noldest event ts: {timestamp(self.oldest_ns)}\n"
                f"now ts: {timestamp(self.now_ns)}\ndropped events: {self.dropped}\n"
                f"read events: {self.read}\n")


def _kallsyms_type(image, sym) -> str:
    """The ``nm`` letter of a symbol: text, read-only data, data or bss by its section,
    lower case for a local symbol."""
    letter = "T" if sym.kind == "func" else "D"
    for name, sec in image.sections.items():
        if sec.addr and sec.addr <= sym.addr < sec.addr + sec.size:
            letter = ("T" if name.startswith(".text") else "R" if name.startswith(".rodata")
                      else "B" if name.startswith(".bss") else "D")
            break
    return letter.lower() if sym.unit is not None else letter


def kallsyms(image: Image) -> str:
    """``/proc/kallsyms`` of a guest image: ``ADDR TYPE NAME`` and ``\t[MODULE]`` for a
    module's symbols (kernel/kallsyms.c ``s_show``), by address. One name per
    address, a function's where there is one: libtraceevent picks an arbitrary
    one of several names at an address, and kisim's linker-script markers
    (``__patching_text_start``...) sit at the first function of a section."""
    table = image.symbols
    entries = getattr(table, "entries", None)
    if entries is None:
        return ""
    chosen: dict[int, object] = {}
    for sym in entries:
        if sym.addr not in chosen or (sym.kind == "func" and chosen[sym.addr].kind != "func"):
            chosen[sym.addr] = sym
    width = 16 if max(chosen, default=0) >> 32 else 8
    lines = []
    for addr, sym in sorted(chosen.items()):
        module = table.module_of(sym)
        lines.append(f"{addr:0{width}x} {_kallsyms_type(image, sym)} {sym.name}"
                     + (f"\t[{module}]" if module else "") + "\n")
    return "".join(lines)


def output_file(path: str | os.PathLike[str]) -> Path:
    """``path`` if a trace.dat may be written there (:func:`fsio.check_writable`, in
    a directory that exists), else :class:`TraceError`."""
    parent = Path(path).parent
    if not parent.is_dir():
        raise TraceError(f"{path}: {parent} "
                         f"{'is not a directory' if parent.exists() else 'does not exist'}")
    try:
        return fsio.check_writable(path)        # check_output's checks, then a test write
    except fsio.UnsafePath as err:
        raise TraceError(str(err)) from None


class TraceDatSink:
    """A :class:`tracing.sinks.Sink` writing ``DIR/trace.dat``, packet by packet."""

    def __init__(self, out: OutDir | Path, arch_name: str, classes: Sequence[EventClass],
                 image=None, dynamic: ProbeEvents | None = None) -> None:
        """``out``: a trace directory (``DIR/trace.dat``) or the file itself, refused
        now if kisim may not write it. ``dynamic``: the kprobe events, whose
        ``format`` and records are their own (:func:`probe_format`)."""
        arch = get_arch(arch_name)
        if isinstance(out, OutDir):
            self.out: OutDir | None = out
            self.path = out.target(FILE)
        else:
            self.out, self.path = None, output_file(out)
        self.long_size = arch.bits // 8
        self.char_signed = arch.char_signed
        self.prefix = "<" if arch.endian == "little" else ">"
        probes = list(dynamic.events.values()) if dynamic is not None else []
        own = {id(tk.cls) for tk in probes}
        self.formats = event_formats([c for c in classes if id(c) not in own], arch.bits)
        self.encoders: dict[str | int, _Encoder | _ProbeEncoder] = {
            name: _Encoder(f, self.prefix) for name, f in self.formats.items()}
        for tk in probes:        # keyed apart: kprobes/a and mygroup/a may both exist
            self.formats[f"{tk.event.group}/{tk.event.event}"] = probe_format(tk)
            self.encoders[id(tk.cls)] = _ProbeEncoder(dynamic)
        self.image = image
        self.cpus: dict[int, CpuPages] = {}
        self.stats: dict[int, CpuStats] = {}
        self.cmdlines: dict[int, str] = {}
        self._calls: dict[tuple[tuple[int, int], int], int] = {}   # (task, depth) -> entry time
        self.unmarked: dict[int, int] = {}

    def _cpu(self, cpu: int) -> CpuPages:
        if cpu not in self.cpus:
            self.cpus[cpu] = CpuPages(self.prefix, self.long_size)
            self.stats[cpu] = CpuStats()
        return self.cpus[cpu]

    def write_packet(self, packet: PacketInfo, events: Iterable[Event]) -> int:
        pages = self._cpu(packet.cpu)
        st = self.stats[packet.cpu]
        lost = packet.events_discarded - st.dropped
        lost += packet.events_overwritten - st.overrun
        st.dropped, st.overrun = packet.events_discarded, packet.events_overwritten
        pages.lost(lost)
        n = 0
        for e in events:
            if not st.read and not n:
                st.oldest_ns = e.timestamp
            encoder = self.encoders.get(id(e.cls)) or self.encoders[e.cls.name]
            pages.add(e.timestamp, encoder.encode(e, self._derived(e)))
            if e.tid:
                self.cmdlines[e.tid] = e.comm
            n += 1
        st.read += n
        st.now_ns = max(st.now_ns, packet.timestamp_end)
        return n

    def _derived(self, e: Event) -> tuple[int, ...]:
        """The values of :data:`DERIVED_FIELDS` for one event."""
        if e.cls.name == "funcgraph_entry":
            self._calls[(task_key(e), e.values[1])] = e.timestamp
        elif e.cls.name == "funcgraph_exit":
            return self._calls.pop((task_key(e), e.values[1]), 0), e.timestamp
        return ()

    def _body(self) -> tuple[bytes, list[list[bytes]]]:
        """Everything up to the CPU data offsets, and each CPU's pages."""
        word = struct.Struct(self.prefix + "I")
        quad = struct.Struct(self.prefix + "Q")

        def blob(data: str | bytes, size: struct.Struct = quad) -> bytes:
            raw = data.encode() if isinstance(data, str) else data
            return size.pack(len(raw)) + raw

        ftrace = [f for f in self.formats.values() if f.system == "ftrace"]
        systems: dict[str, list[EventFormat]] = {}
        for f in self.formats.values():
            if f.system != "ftrace":
                systems.setdefault(f.system, []).append(f)
        ncpus = max(self.cpus, default=-1) + 1
        out = [MAGIC, f"{VERSION}\0".encode(), bytes([self.prefix == ">", self.long_size]),
               word.pack(PAGE_SIZE),
               b"header_page\0", blob(header_page(self.long_size, self.char_signed)),
               b"header_event\0", blob(HEADER_EVENT),
               word.pack(len(ftrace)), *(blob(f.text(self.char_signed)) for f in ftrace),
               word.pack(len(systems))]
        for system, fmts in systems.items():
            out += [system.encode() + b"\0", word.pack(len(fmts)),
                    *(blob(f.text(self.char_signed)) for f in fmts)]
        out += [blob(kallsyms(self.image) if self.image is not None else "", word),
                blob("", word),                          # printk formats: kisim has no bprint
                blob("".join(f"{pid} {comm}\n" for pid, comm in sorted(self.cmdlines.items()))),
                word.pack(ncpus), b"options  \0"]
        for cpu in range(ncpus):
            stats = (self.stats.get(cpu) or CpuStats()).text(cpu).encode() + b"\0"
            out += [struct.pack(self.prefix + "HI", OPTION_CPUSTAT, len(stats)), stats]
        out += [struct.pack(self.prefix + "HI", OPTION_TRACECLOCK, len(TRACE_CLOCK_OPTION)),
                TRACE_CLOCK_OPTION,
                struct.pack(self.prefix + "H", OPTION_DONE), b"flyrecord\0"]
        pages = [self.cpus[cpu].pages if cpu in self.cpus else [] for cpu in range(ncpus)]
        return b"".join(out), pages

    def close(self) -> list[Path]:
        """Write the file. Events lost after a CPU's last event have no page to
        mark (as in the kernel): they are in its stats only (:attr:`unmarked`)."""
        self.unmarked = {cpu: pages.finish() for cpu, pages in self.cpus.items()}
        head, per_cpu = self._body()
        pair = struct.Struct(self.prefix + "QQ")
        clock = struct.pack(self.prefix + "Q", len(TRACE_CLOCK)) + TRACE_CLOCK.encode()
        offset = len(head) + pair.size * len(per_cpu) + len(clock)
        offset = (offset + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1)
        index = []
        for pages in per_cpu:
            index.append(pair.pack(offset, PAGE_SIZE * len(pages)))
            offset += PAGE_SIZE * len(pages)
        head += b"".join(index) + clock        # the clock follows the CPU data's index (v6)
        with fsio.atomic_open(self.path, "wb") as f:
            f.write(head.ljust((len(head) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1), b"\0"))
            for pages in per_cpu:
                for page in pages:
                    f.write(page)
        if self.out is not None:
            self.out.commit([self.path])
        return [self.path]

    def abort(self) -> None:
        self.cpus.clear()
        if self.out is not None:
            self.out.release()


__all__ = ["CpuPages", "CpuStats", "EventFormat", "FILE", "FieldFormat", "TraceDatSink",
           "event_format", "event_formats", "header_page", "kallsyms", "match_event", "output_file",
           "probe_format", "select_events", "tracefs_name"]
