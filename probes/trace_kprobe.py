"""kprobe events on a running guest, after Linux v5.10 kernel/trace/trace_kprobe.c.

:class:`TraceKprobes` is one guest's ``kprobe_events`` file: each written
line is parsed (:mod:`probes.kprobe_events`) and registered as the kernel's
``register_trace_kprobe`` does it: a second definition of an event appends
a probe to it (multi-probe events, with DIFF_PROBE_TYPE, DIFF_ARG_TYPE and
SAME_PROBE refusals), a function with no ftrace site is refused when the
kernel has dynamic ftrace (``within_notrace_func``), ``@SYM`` arguments are
resolved (``traceprobe_update_arg``), and the probe becomes a real kprobe
or kretprobe through :class:`probes.kprobes.Kprobes`, whose refusals map
onto the kernel's errors (-EILSEQ: BAD_INSN_BNDRY, -ENOENT: BAD_PROBE_ADDR,
others: FAIL_REG_PROBE).

A hit. The probe's handler is the guest's ``kprobe_event_handler`` (or
``kretprobe_event_handler``, kernel/trace_probes.c), which asks the host,
with the HC_KPROBE_EVENT hypercall, for the record: the host runs the
argument's fetch program (``process_fetch_insn``) on the trapped
``struct pt_regs`` and guest memory, reading memory as the kernel's
``copy_from_kernel_nofault`` does (an unmapped address is a fault: 0, or
``(fault)`` for a string), lays the record out as the event's ``format``
says, applies the event's filter, and leaves it in the CPU's
``kprobe_event_record``; the guest reserves, copies and commits it (guest
instructions). A record over the largest the ring buffer takes is lost, as
``ring_buffer_lock_reserve`` refuses it, and counted (``TraceKprobe.lost``).
The fetch and the filter cost no guest instructions: the kernel's would
(docs/kprobe_events.md says what that leaves out).
"""
from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from patcher.errors import PatchError
from patcher.instrument import Instrumentation
from probes.function_tracer import Symbolizer
from probes.kprobe_events import (FetchType, KprobeEvent, ProbeArg, ProbeDeletion, ProbeEventError,
                                  ProbeTarget, TraceProbeLog, parse_kprobe_event, probe_target,
                                  split_lines, split_symbol_offset)
from probes.kprobes import FIELDS, RI_FIELDS, Kprobe, Kprobes, Kretprobe
from sim.event import STRING, Event, EventClass, FieldType, s, u
from sim.errors import ConfigError
from sim.guest import Guest
from sim.machine import Cpu
from tracing.errors import TraceError
from tracing.events import HEADER
from tracing.filter import COMM_KEY, CPU_KEY, FilterField, Predicate, compile_filter
from tracing.tracedat import buf_max_data_size

#: kernel/trace_probes.c: bytes of one CPU's kprobe_event_record, at least the
#: largest record the kernel's ring buffer takes (BUF_MAX_DATA_SIZE).
KPROBE_EVENT_RECORD = int(re.search(r"^#define\s+KPROBE_EVENT_RECORD\s+(\d+)", (
    Path(__file__).resolve().parent.parent / "kernel/trace_probes.c").read_text(), re.M).group(1))
#: ring buffer event ids of kprobe events start here (after kernel/include/linux/ring_buffer.h's).
FIRST_EVENT_ID = 64
MAX_STRING_SIZE = 4096                # kernel/trace/trace_probe.h: PATH_MAX, its NUL included
HEADER_BYTES = struct.calcsize(HEADER)  # struct rb_event_header, before each record
FAULT = "(fault)"


def entry_kprobe(probe: Kprobe | Kretprobe) -> Kprobe:
    """The kprobe a probe registers: itself, or a kretprobe's entry probe (rp->kp)."""
    return probe if isinstance(probe, Kprobe) else probe.kp


@dataclass
class TraceKprobe:
    """One kprobe event (struct trace_probe_event): its probes and its record class."""

    event: KprobeEvent                    # the first definition: names, types, format
    id: int
    cls: EventClass
    #: its probes, in the order defined; None: a module's not loaded (pending)
    probes: list[tuple[KprobeEvent, Kprobe | Kretprobe | None]] = field(default_factory=list)
    #: The event's filter (tracing/filter.py): fields by name -> keep.
    filter: Predicate | None = None
    filtered: int = 0                     # hits the filter kept out of the buffer
    lost: int = 0                         # hits whose record the ring buffer could not take

    def _kprobes(self) -> Iterator[Kprobe]:
        """Each registered probe's kprobe."""
        return (entry_kprobe(p) for _, p in self.probes if p is not None)

    @property
    def hits(self) -> int:
        """Hits of all its probes (a kretprobe's: its entry probe's)."""
        return sum(kp.hits for kp in self._kprobes())

    @property
    def nmissed(self) -> int:
        """Hits its probes took while another kprobe ran on the CPU (no record):
        kprobe_profile's second column (v5.10 probes_profile_seq_show)."""
        return sum(kp.nmissed for kp in self._kprobes())

    @property
    def kretprobe_nmissed(self) -> int | None:
        """A return event's entries that found no free instance, whose returns it
        did not record (struct kretprobe's nmissed, which v5.10's kprobe_profile
        leaves out); None for an entry event."""
        rps = [p for _, p in self.probes if isinstance(p, Kretprobe)]
        return sum(rp.nmissed for rp in rps) if rps else None

    def format(self) -> str:
        """The tracefs ``events/GROUP/EVENT/format`` text."""
        return self.event.format(self.id)


class TraceKprobes:
    """The ``kprobe_events`` file of one guest, and the host half of each hit."""

    def __init__(self, guest: Guest, kprobes: Kprobes) -> None:
        self.guest = guest
        self.machine = guest.machine
        self.kprobes = kprobes
        self.arch = guest.arch
        self.target: ProbeTarget = probe_target(guest.arch, guest.image)
        self.events: dict[tuple[str, str], TraceKprobe] = {}
        self._next_id = FIRST_EVENT_ID          # ids are not reused after a deletion
        self._by_struct: dict[int, tuple[TraceKprobe, KprobeEvent, Kprobe | Kretprobe]] = {}
        #: every probe, in the order defined (the kernel's list of dynamic events)
        self._defined: list[tuple[KprobeEvent, Kprobe | Kretprobe | None]] = []
        #: what register_trace_kprobe warned of (pr_warn), one line each
        self.warnings: list[str] = []
        self._record = guest.image.symbols["kprobe_event_record"]
        self._prefix = "<" if self.arch.endian == "little" else ">"
        self._symbols = Symbolizer(kprobes.tables)
        self._ops = kprobes.ops
        #: bytes of the largest record kept (:meth:`fit`)
        self.largest = min(KPROBE_EVENT_RECORD, buf_max_data_size(self.arch.word))
        guest.hypercalls.register("HC_KPROBE_EVENT", self._hit)

    # -- the kprobe_events file -------------------------------------------------
    def write(self, text: str) -> None:
        """Write ``text`` to kprobe_events: each line, in order (trace_parse_run_command)."""
        for line in split_lines(text):
            self.run_command(line)

    def run_command(self, line: str) -> TraceKprobe | None:
        """One definition (create_or_delete_trace_kprobe)."""
        parsed = parse_kprobe_event(line, self.target)
        if isinstance(parsed, ProbeDeletion):
            self._delete(parsed, line)
            return None
        return self._register(parsed)

    def _delete(self, d: ProbeDeletion, line: str) -> None:
        """dyn_event_release: every probe that trace_kprobe_match takes goes, in every
        group unless one is named; an event with no probe left goes too (-ENOENT: none)."""
        gone = 0
        for key, tk in list(self.events.items()):
            if key[1] != d.event or d.group not in (None, key[0]):
                continue
            for ev, probe in [p for p in tk.probes if p[0].matches(d.words)]:
                if probe is not None:
                    (self.kprobes.unregister_kretprobe if isinstance(probe, Kretprobe)
                     else self.kprobes.unregister_kprobe)(probe)
                    del self._by_struct[probe.struct]
                tk.probes.remove((ev, probe))
                self._defined.remove((ev, probe))
                gone += 1
            if not tk.probes:
                del self.events[key]
        if not gone:
            raise ProbeEventError(None, line.strip(), 0, "no probe matches it",
                                  strerror="No such file or directory")

    def listing(self) -> list[str]:
        """Reading ``kprobe_events``: each probe's line in the order it was defined
        (the dyn_event list, probes_seq_show)."""
        return [ev.show() for ev, _ in self._defined]

    def _register(self, ev: KprobeEvent) -> TraceKprobe:
        """register_trace_kprobe: append to an existing event, or a new one."""
        log = TraceProbeLog(list(ev.argv))
        old = self.events.get((ev.group, ev.event))
        if old is not None:
            if old.event.is_return != ev.is_return:
                raise log.err(0, "DIFF_PROBE_TYPE")
            differs = _compare_arg_types(ev, old.event)
            if differs:
                log.index = differs + 1
                raise log.err(0, "DIFF_ARG_TYPE")
            if any(_same_kprobe(p, ev) for p, _ in old.probes):
                raise log.err(0, "SAME_PROBE")
        probe = self._register_probe(ev, log)
        if old is None:
            old = TraceKprobe(ev, self._next_id, self._event_class(ev))
            self._next_id += 1
        tk = old
        tk.probes.append((ev, probe))
        self._defined.append((ev, probe))
        if probe is not None:
            self._by_struct[probe.struct] = (tk, self._resolve_args(ev), probe)
        self.events[(ev.group, ev.event)] = tk
        return tk

    def _resolve_args(self, ev: KprobeEvent) -> KprobeEvent:
        """The args with each ``@SYM`` turned into its address (traceprobe_update_arg)."""
        args = []
        for arg in ev.args:
            code = list(arg.code)
            for i, insn in enumerate(code):
                if insn[0] == "symbol":             # checked by _register_probe
                    name, offset = split_symbol_offset(insn[1], self.target.bits)
                    code[i + 1] = ("imm", self.target.lookup(name) + offset)
            args.append(replace(arg, code=tuple(c for c in code if c[0] != "symbol")))
        return replace(ev, args=tuple(args))

    def _register_probe(self, ev: KprobeEvent, log: TraceProbeLog) -> Kprobe | Kretprobe | None:
        """__register_trace_kprobe, and the kernel's errno -> error_log mapping;
        None where -ENOENT names a module not loaded, which register_trace_kprobe
        leaves pending (kisim loads no module later: it never fires)."""
        log.index = 1
        where = dict(symbol_name=ev.symbol, offset=ev.offset, addr=ev.addr)
        addr = (self.target.lookup(ev.symbol) if ev.symbol is not None else ev.addr)
        try:
            if addr is not None and self._within_notrace_func(addr + ev.offset):
                raise PatchError("EINVAL", "Could not probe notrace function "
                                           f"{ev.symbol or f'{addr:#x}'}")
            for insn in (c for a in ev.args for c in a.code if c[0] == "symbol"):
                name, offset = split_symbol_offset(insn[1], self.target.bits)
                if offset is None:                  # traceprobe_update_arg: -EINVAL
                    raise PatchError("EINVAL", f"@{insn[1]}: an offset kstrtol refuses")
                if self.target.lookup(name) is None:
                    raise PatchError("ENOENT", f"no symbol {name!r} for @{insn[1]}")
            for insn in (c for a in ev.args for c in a.code if c[0] == "reg"):
                if insn[1] >= len(self._ops.PT_REGS):
                    raise PatchError("EINVAL", f"%{self.target.regs[insn[1]]} names no word "
                                               "of kisim's struct pt_regs")
            if ev.is_return:
                return self.kprobes.register_kretprobe(Kretprobe(
                    **where, handler="kretprobe_event_handler", maxactive=ev.maxactive))
            return self.kprobes.register_kprobe(Kprobe(**where, pre_handler="kprobe_event_handler"))
        except PatchError as err:
            if err.errno == "ENOENT" and not self._module_exists(ev):
                self.warnings.append(f"{ev.place()}: This probe might be able to register "
                                     "after target module is loaded. Continue.")
                return None
            if err.errno == "ENOMEM":
                raise ProbeEventError(None, " ".join(ev.argv), 0, err.message) from None
            code = {"EILSEQ": "BAD_INSN_BNDRY", "ENOENT": "BAD_PROBE_ADDR"}.get(
                err.errno, "FAIL_REG_PROBE")
            refusal = log.err(0, code)
            refusal.reason = err.message
            raise refusal from None

    def _module_exists(self, ev: KprobeEvent) -> bool:
        """trace_kprobe_module_exist: a symbol with no MOD: is the kernel's."""
        if ev.symbol is None:
            return False
        module, colon, _ = ev.symbol.partition(":")
        return not colon or module in self.guest.image.symbols.modules

    def _within_notrace_func(self, addr: int) -> bool:
        """within_notrace_func (v5.10, CONFIG_DYNAMIC_FTRACE without
        KPROBE_EVENTS_ON_NOTRACE): the function holding ``addr`` has no ftrace
        site; never where the kernel has no dynamic ftrace."""
        found = self._symbols.lookup(addr)
        if not self.kprobes.dynamic_ftrace or found is None:
            return False
        _, off, size = found
        return self.kprobes.ftrace_location_range(addr - off, addr - off + size - 1) is None

    # -- filters --------------------------------------------------------------------------
    def find(self, name: str) -> TraceKprobe:
        """The event called ``GROUP/EVENT``, ``GROUP:EVENT`` or ``EVENT``."""
        group, _, event = name.replace(":", "/").rpartition("/")
        found = [tk for (g, e), tk in self.events.items() if e == event and group in ("", g)]
        if len(found) != 1:
            known = ", ".join(f"{g}/{e}" for g, e in self.events) or "none"
            raise TraceError(f"{'no' if not found else 'more than one'} kprobe event {name!r} "
                             f"(defined: {known})")
        return found[0]

    def set_filter(self, name: str, expr: str) -> None:
        """Write ``expr`` to the event's filter file (apply_event_filter: "0" clears it;
        a refused filter is :class:`tracing.filter.FilterError`)."""
        tk = self.find(name)
        if expr.strip() == "0":
            tk.filter = None
            return
        fields = [FilterField(t, n, size, signed) for t, n, _, size, signed in tk.event.fields()]
        tk.filter = compile_filter(expr, fields)

    def _filter_values(self, tk: TraceKprobe, record: bytes, cpu: Cpu) -> dict[str, int | str]:
        """What a filter reads: the record's fields, its common fields, the CPU and comm.

        An array field reads as v5.10's predicates read it at the field's offset:
        an array of strings as its first (``filter_pred_strloc``), any other as one
        integer of the whole array's size (``filter_pred_32`` on a ``u8[4]``)."""
        values = dict(self.decode(tk, record).fields)
        for arg in tk.event.args:
            if not arg.count:
                continue
            at = tk.event.head_size + arg.offset
            if arg.type.is_string:
                values[arg.name] = self._string_at(record, at)
            else:
                values[arg.name] = int.from_bytes(record[at:at + arg.size], self.arch.endian,
                                                  signed=arg.type.signed)
        common = struct.unpack_from(self._prefix + "HBBi", record)
        values.update(zip(("common_type", "common_flags", "common_preempt_count",
                           "common_pid"), common))
        values[CPU_KEY] = cpu.index
        values[COMM_KEY] = self.guest.current_task(cpu).comm
        return values

    # -- records ------------------------------------------------------------------------
    def _event_class(self, ev: KprobeEvent) -> EventClass:
        hexword = u(self.arch.bits, 16)
        heads = ("__probe_func", "__probe_ret_ip") if ev.is_return else ("__probe_ip",)
        fields = [(name, hexword) for name in heads]
        for arg in ev.args:
            fields.append((arg.name, _field_type(arg) if not arg.count else STRING))
        return EventClass(ev.event, tuple(fields), output=lambda e: self.print_line(e))

    def fit(self, payload: int) -> None:
        """The ring buffer takes records of at most ``payload`` bytes: a larger one is
        lost, as the kernel's is over BUF_MAX_DATA_SIZE (``ring_buffer_lock_reserve``)."""
        self.largest = min(self.largest, payload)

    def classes(self) -> list[EventClass]:
        return [tk.cls for tk in self.events.values()]

    def layouts(self) -> dict[int, "KprobeEventLayout"]:
        """Ring-buffer event id -> the decoder of that event's records."""
        return {tk.id: KprobeEventLayout(self, tk) for tk in self.events.values()}

    def _hit(self, cpu: Cpu, regs: int, obj: int, kind: int) -> int:
        """HC_KPROBE_EVENT: fetch the record into this CPU's kprobe_event_record."""
        cpu.charge("trap", -1)              # host work: no trap of the kernel's
        word = self.arch.word
        if kind:                            # a kretprobe_instance
            rp = self.machine.read_word(obj + RI_FIELDS.index("rp") * word)
            ret_ip = self.machine.read_word(obj + RI_FIELDS.index("ret_addr") * word)
            tk, ev, probe = self._by_struct[rp]
            heads = (probe.addr, ret_ip)
        else:
            tk, ev, _ = self._by_struct[obj]
            heads = (self.machine.read_word(obj + FIELDS.index("addr") * word),)
        record = self._fetch(tk, ev, heads, regs, cpu)
        if len(record) > self.largest:      # not reserved: the filter never sees it
            tk.lost += 1
            return 0
        if tk.filter is not None and not tk.filter(self._filter_values(tk, record, cpu)):
            tk.filtered += 1
            return 0
        self.machine.write(self._record + cpu.index * KPROBE_EVENT_RECORD, record)
        return len(record)

    def _fetch(self, tk: TraceKprobe, ev: KprobeEvent, heads: tuple[int, ...], regs: int,
               cpu: Cpu) -> bytes:
        """The record of one hit: each argument's fetch program run now."""
        return self._layout(tk, ev, heads, self.guest.current_task(cpu).pid,
                            [self._run(arg.code, regs, cpu) for arg in ev.args])

    def _layout(self, tk: TraceKprobe, ev: KprobeEvent, heads: tuple[int, ...], pid: int,
                values: list[list]) -> bytes:
        """store_trace_args: the common fields and probe address(es), each
        argument's values at its offset, then the strings after the fixed part."""
        p, word = self._prefix, self.arch.word
        rec = bytearray(ev.size)
        struct.pack_into(p + "HBBi", rec, 0, tk.id, 0, 0, pid)
        for i, value in enumerate(heads):
            rec[8 + i * word:8 + (i + 1) * word] = self.arch.from_int(value, word)
        dyn = bytearray()
        for arg, items in zip(ev.args, values):
            at = ev.head_size + arg.offset
            for k, value in enumerate(items):
                if arg.type.is_string:
                    text = b"" if value is None else value + b"\0"
                    loc = (len(text) << 16) | (len(rec) + len(dyn))
                    struct.pack_into(p + "I", rec, at + 4 * k, loc)
                    dyn += text
                else:
                    size = arg.type.size
                    raw = (value or 0) & ((1 << 8 * size) - 1)
                    rec[at + k * size:at + (k + 1) * size] = raw.to_bytes(
                        size, self.arch.endian)
        return bytes(rec + dyn)

    def encode(self, e: Event) -> bytes:
        """The record a decoded kprobe event came from, byte for byte, as the
        kernel's ring buffer holds it (its ``format``'s layout; for trace.dat
        writers). The inverse of :meth:`decode`."""
        tk = self._event_of(e.cls)
        ev = tk.event
        heads = 2 if ev.is_return else 1
        values = []
        for arg, value in zip(ev.args, e.values[heads:]):
            items = self._array_items(arg, value) if arg.count else [value]
            values.append([None if arg.type.is_string and v == FAULT else
                           v.encode("latin-1") if isinstance(v, str) else v for v in items])
        return self._layout(tk, ev, tuple(e.values[:heads]), e.tid, values)

    def _array_items(self, arg: ProbeArg, text: str) -> list[int | str]:
        """The elements of an array argument's value, from its printed form."""
        inner = text[1:-1]
        if arg.type.is_string:
            return [FAULT if m.group(0) == FAULT else m.group(1)
                    for m in re.finditer(r'\(fault\)|"(.*?)"(?=,|$)', inner)]
        items: list[int | str] = []
        for item in inner.split(","):
            if item.startswith(("0x", "-")) or item.isdigit():
                items.append(int(item, 0))
            else:                                   # %pS: SYM+0xOFF/0xSIZE
                name, off = re.match(r"(.*)\+(0x[0-9a-f]+)/", item).groups()
                items.append(self.target.lookup(name) + int(off, 16))
        return items

    def _read(self, addr: int, size: int) -> bytes | None:
        """copy_from_kernel_nofault: None where guest memory is not mapped."""
        if addr < 0 or self.machine.memory.find(addr, size) is None:
            return None
        return self.machine.read(addr, size)

    def _reg(self, regs: int, index: int) -> int:
        return self.machine.read_word(regs + index * self.arch.word)

    def _run(self, code: tuple[tuple, ...], regs: int, cpu: Cpu) -> list:
        """process_fetch_insn: the values an argument stores (one per array element;
        bytes or None for a string, an int or None for a fault otherwise)."""
        word, ops = self.arch.word, self._ops
        sp = self._reg(regs, ops.PT_REGS.index(self.arch.sp))
        op = code[0]
        if op[0] == "reg":
            val: int | bytes = self._reg(regs, op[1])
        elif op[0] in ("stack", "arg"):
            n = op[1]
            names = ops.FUNCTION_ARG_REGS
            if op[0] == "arg" and n < len(names):
                val = self._reg(regs, self.target.regs.index(names[n]))
            else:       # regs_get_kernel_stack_nth; an arg past the registers: past the
                        # return address
                n = n - len(names) + 1 if op[0] == "arg" else n
                raw = self._read(sp + n * word, word)
                val = self.arch.to_int(raw) if raw is not None else 0
        elif op[0] == "stackp":
            val = sp
        elif op[0] == "retval":
            val = self._reg(regs, ops.PT_REGS.index(self.arch.ret))
        elif op[0] == "imm":
            val = op[1]
        elif op[0] == "comm":
            val = self.guest.current_task(cpu).comm.encode()
        else:           # data: an immediate string
            val = op[1].encode()
        at, lval = 1, val
        while code[at][0] in ("deref", "uderef"):
            lval = val
            raw = self._read(val + code[at][1], word)
            if raw is None:
                return [None] * _count(code)
            val = self.arch.to_int(raw)
            at += 1
        store, mods = code[at], code[at + 1:]
        count = _count(code)
        out = []
        for k in range(count):
            if store[0] in ("st_string", "st_ustring"):
                if isinstance(val, bytes):
                    out.append(val)
                    continue
                if k:                      # the next char * of the array: the last deref again
                    raw = self._read(lval + k * word + code[at - 1][1], word)
                    if raw is None:
                        out.append(None)
                        continue
                    val = self.arch.to_int(raw)
                out.append(self._string(val + store[1]))
            elif store[0] in ("st_mem", "st_umem"):
                raw = self._read(val + store[1] + k * store[2], store[2])
                out.append(int.from_bytes(raw, self.arch.endian) if raw is not None else None)
            else:
                out.append(val & ((1 << 8 * store[1]) - 1))
        for mod in mods:
            if mod[0] == "mod_bf":
                out = [None if v is None else _bitfield(v, mod, store[-1]) for v in out]
        return out

    def _string(self, addr: int) -> bytes | None:
        """fetch_store_string: the NUL-terminated string at ``addr``, cut to
        MAX_STRING_SIZE with its NUL (fetch_store_strlen); None: a fault."""
        out = bytearray()
        while len(out) < MAX_STRING_SIZE - 1:
            c = self._read(addr + len(out), 1)
            if c is None:
                return None
            if c == b"\0":
                break
            out += c
        return bytes(out)

    # -- decoding and printing -----------------------------------------------------------
    def decode(self, tk: TraceKprobe, rec: bytes, cpu: int = 0, ts: int = 0, tid: int = 0,
               comm: str = "") -> Event:
        """The event of one record (the values in :attr:`TraceKprobe.cls` order)."""
        ev, word = tk.event, self.arch.word
        values: list[int | str] = [self.arch.to_int(rec[8 + i * word:8 + (i + 1) * word])
                                   for i in range(2 if ev.is_return else 1)]
        for arg, (_, ftype) in zip(ev.args, tk.cls.fields[len(values):]):
            at = ev.head_size + arg.offset
            items = []
            for k in range(arg.count or 1):
                if arg.type.is_string:
                    items.append(self._string_at(rec, at + 4 * k))
                else:
                    size = arg.type.size
                    items.append(int.from_bytes(rec[at + k * size:at + (k + 1) * size],
                                                self.arch.endian, signed=arg.type.signed))
            values.append("{" + ",".join(self._value(arg.type, v) for v in items) + "}"
                          if arg.count else items[0])
        return Event(tk.cls, cpu, ts, tid, comm, tuple(values))

    def _string_at(self, rec: bytes, at: int) -> str:
        """The string whose ``__data_loc`` word is at ``at`` (length << 16 | offset; a
        length of 0 is a fault). Latin-1: one character per byte, so any bytes survive."""
        loc = struct.unpack_from(self._prefix + "I", rec, at)[0]
        length, off = loc >> 16, loc & 0xFFFF
        return rec[off:off + length - 1].decode("latin-1") if length else FAULT

    def _value(self, ftype: FetchType, v: int | str) -> str:
        """One value as the type's print function shows it (trace_probe.c PRINT_TYPE_FUNC)."""
        if ftype.is_string:
            return v if v == FAULT else f'"{v}"'
        if ftype.fmt == "%pS":
            return self._symbols.offset_size(v) if v else "0x0"
        return f"{v:#x}" if ftype.fmt.startswith("0x") else str(v)

    def _event_of(self, cls: EventClass) -> TraceKprobe:
        return next(t for t in self.events.values() if t.cls is cls)

    def print_line(self, e: Event) -> str:
        """What the kernel's ``trace`` file shows after the context
        (print_kprobe_event, print_kretprobe_event): the probe as %pS, then each
        argument with its type's print function."""
        ev = self._event_of(e.cls).event
        if ev.is_return:
            head = (f"{self._symbols.offset_size(e.values[1])} <- "
                    f"{self._symbols.name(e.values[0])}")
        else:
            head = self._symbols.offset_size(e.values[0])
        heads = 2 if ev.is_return else 1
        args = "".join(f" {a.name}={v if a.count else self._value(a.type, v)}"
                       for a, v in zip(ev.args, e.values[heads:]))
        return f"{ev.event}: ({head}){args}"


@dataclass(frozen=True)
class KprobeEventLayout:
    """The ring consumer's decoder of one kprobe event's records
    (the same call as :class:`tracing.events.RecordLayout`)."""

    owner: TraceKprobes
    tk: TraceKprobe

    def decode(self, cpu: int, header: tuple, body: bytes, offset: int) -> Event:
        ts, _id, size, tid, comm = header
        rec = body[offset:offset + size - HEADER_BYTES]
        return self.owner.decode(self.tk, rec, cpu, ts, tid,
                                 comm.split(b"\0", 1)[0].decode("utf-8", "replace"))


def _count(code: tuple[tuple, ...]) -> int:
    return code[-1][1] if code[-1][0] == "lp_array" else 1


def _bitfield(value: int, mod: tuple, size: int) -> int:
    """FETCH_OP_MOD_BF as v5.10 computes it: ``(x << lshift) >> rshift`` in C,
    where a u8 or u16 is promoted to int first (so its high bits are not
    shifted out before the right shift), then stored back in ``size`` bytes."""
    _, lshift, rshift = mod
    width = 32 if size < 4 else 8 * size
    return (((value << lshift) & ((1 << width) - 1)) >> rshift) & ((1 << 8 * size) - 1)


def _field_type(arg: ProbeArg) -> FieldType:
    t = arg.type
    if t.is_string:
        return STRING
    if t.signed:
        return s(8 * t.size)
    return u(8 * t.size, 16 if t.fmt.startswith("0x") or t.fmt == "%pS" else 10)


def _compare_arg_types(a: KprobeEvent, b: KprobeEvent) -> int:
    """trace_probe_compare_arg_type: the first differing argument, 1-based; 0 if none."""
    if len(a.args) != len(b.args):
        return min(len(a.args), len(b.args)) + 1
    for i, (x, y) in enumerate(zip(a.args, b.args)):
        if (x.type, x.count, x.name) != (y.type, y.count, y.name):
            return i + 1
    return 0


def _same_kprobe(orig: KprobeEvent, comp: KprobeEvent) -> bool:
    """trace_kprobe_has_same_kprobe: same symbol ("unknown" for an address) and
    offset, and the same argument texts."""
    return ((orig.symbol or "unknown", orig.offset) == (comp.symbol or "unknown", comp.offset)
            and [a.comm for a in orig.args] == [a.comm for a in comp.args])


def kprobe_events(guest: Guest, inst: Instrumentation,
                  lines: tuple[str, ...]) -> TraceKprobes | None:
    """The guest's kprobe_events file with ``lines`` written to it, sharing the
    session's text patcher and tables; None for no lines (no kprobes set up)."""
    if not lines:
        return None
    try:
        kprobes = Kprobes(guest, text=inst.text, tables=inst.tables)
    except ConfigError as err:
        raise PatchError("EINVAL", f"kprobe events: {err}") from None
    events = TraceKprobes(guest, kprobes)
    for text in lines:
        events.write(text)
    return events


__all__ = ["FIRST_EVENT_ID", "KPROBE_EVENT_RECORD", "KprobeEventLayout", "TraceKprobe",
           "TraceKprobes", "entry_kprobe", "kprobe_events"]
