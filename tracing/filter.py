"""Event filters, compiled as Linux v5.10 compiles ``events/<sys>/<event>/filter``.

kernel/trace/trace_events_filter.c: a filter is predicates
``FIELD OP VALUE`` joined by ``&&`` and ``||`` (``&&`` binds tighter), with
``!`` and parentheses. ``calc_stack`` first checks quotes and parentheses,
``predicate_parse`` then reads the expression into a branch program (each
predicate, when to branch, where to), and ``filter_match_preds`` runs it on
a record. A predicate (``parse_pred``) names a field of the event, then of
the generic ``CPU``/``cpu``/``COMM``/``comm``, then a common field
(``common_type``, ``common_flags``, ``common_preempt_count``,
``common_pid``); its operator is the first of ``~ != == <= < >= > &`` that
matches; a quoted value needs a string field (``== != ~``, ``~`` a glob as
``filter_parse_regex`` classifies it), a number a numeric one (compared at
the field's width and sign, ``&`` a bit test). A refusal carries the
kernel's message and its ``lasterr_pos`` (see :class:`FilterError`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from sim.event import EventClass
from tracing.errors import MAX_FILTER_STR_VAL, TraceError, error_log_entry
from tracing.kstrtox import kstrtol, kstrtoull

#: trace_events_filter.c OPS, in match order.
OPS = ("~", "!=", "==", "<=", "<", ">=", ">", "&")
#: err_text[] (v5.10).
ERRORS = {
    "INVALID_OP": "Invalid operator", "TOO_MANY_OPEN": "Too many '('",
    "TOO_MANY_CLOSE": "Too few '('", "MISSING_QUOTE": "Missing matching quote",
    "OPERAND_TOO_LONG": "Operand too long", "EXPECT_STRING": "Expecting string field",
    "EXPECT_DIGIT": "Expecting numeric field",
    "ILLEGAL_FIELD_OP": "Illegal operation for field type",
    "FIELD_NOT_FOUND": "Field not found", "ILLEGAL_INTVAL": "Illegal integer value",
    "TOO_MANY_PREDS": "Too many terms in predicate expression",
    "INVALID_VALUE": "Invalid value (did you forget quotes)?", "ERRNO": "Error",
    "NO_FILTER": "No filter found",
}
#: v5.10 trace_events_filter.c event_filter_write (and the system filter's): a
#: write of PAGE_SIZE bytes or more is -EINVAL; echo adds a newline to the expression.
FILTER_WRITE_LIMIT = 4096
NUM_BUF = 24                         # parse_pred's num_buf
TASK_COMM_LEN = 16
LOC = "event filter parse error"     # tracing_log_err's location for filters

#: Keys of the values a predicate reads besides the event's own fields.
CPU_KEY, COMM_KEY = "__cpu__", "__comm__"


class FilterError(ValueError):
    """A filter v5.10 refuses: its message and position (``lasterr_pos``)."""

    def __init__(self, err: str, command: str, pos: int) -> None:
        self.err, self.command, self.pos = err, command, pos
        super().__init__(f"{LOC}: error: {ERRORS[err]}")

    @property
    def detail(self) -> str:
        """The error_log entry's command and caret lines."""
        return error_log_entry(str(self), self.command, self.pos).partition("\n")[2]


@dataclass(frozen=True)
class FilterField:
    """A field as the filter sees it (struct ftrace_event_field): its type text,
    name, size and sign; ``key``: where the value is (default: the name)."""

    type: str
    name: str
    size: int
    signed: bool
    key: str = ""

    @property
    def kind(self) -> str:
        """filter_assign_type, plus the generic CPU and COMM fields."""
        if self.key == CPU_KEY:
            return "cpu"
        if self.key == COMM_KEY:
            return "comm"
        if "__data_loc" in self.type and "char" in self.type:
            return "dyn_string"
        if "[" in self.type and "char" in self.type:
            return "static_string"
        if self.type in ("char *", "const char *"):
            return "ptr_string"
        return "other"

    @property
    def is_string(self) -> bool:
        return self.kind in ("dyn_string", "static_string", "ptr_string", "comm")


#: The common fields of every event (trace_events.c trace_define_common_fields).
COMMON_FIELDS = (FilterField("unsigned short", "common_type", 2, False),
                 FilterField("unsigned char", "common_flags", 1, False),
                 FilterField("unsigned char", "common_preempt_count", 1, False),
                 FilterField("int", "common_pid", 4, True))
#: The generic fields (trace_events.c ftrace_generic_fields): the CPU and current->comm.
GENERIC_FIELDS = (FilterField("int", "CPU", 4, True, CPU_KEY),
                  FilterField("int", "cpu", 4, True, CPU_KEY),
                  FilterField("char *", "COMM", 8, False, COMM_KEY),
                  FilterField("char *", "comm", 8, False, COMM_KEY))

Values = Mapping[str, "int | str"]
Predicate = Callable[[Values], bool]


def filter_fields(cls: EventClass) -> list[FilterField]:
    """A recorded event's fields as the filter sees them: an integer as wide and
    signed as recorded, a string as a ``char[16]`` (a task's comm)."""
    return [FilterField(f"char[{TASK_COMM_LEN}]", name, TASK_COMM_LEN, True)
            if t.kind == "string" else
            FilterField(f"{'s' if t.signed else 'u'}{t.bits}", name, t.bits // 8, t.signed)
            for name, t in cls.fields]


def _find_field(fields: Sequence[FilterField], name: str) -> FilterField | None:
    """trace_find_event_field: the event's fields, then the generic, then the common ones."""
    for group in (fields, GENERIC_FIELDS, COMMON_FIELDS):
        for f in group:
            if f.name == name:
                return f
    return None


# -- string matching (filter_parse_regex and the regex_match_* functions) -------------
def glob_match(pat: str, s: str) -> bool:
    """lib/glob.c glob_match: ``*``, ``?``, ``[...]`` with ranges and ``[!...]``, ``\\`` escapes."""
    if not pat:
        return not s
    c = pat[0]
    if c == "*":
        return any(glob_match(pat[1:], s[i:]) for i in range(len(s) + 1))
    if not s:
        return False
    if c == "?":
        return glob_match(pat[1:], s[1:])
    if c == "[":
        end, inverted = 1, pat[1:2] == "!"
        end += inverted
        matched, first = False, True
        while end < len(pat) and (first or pat[end] != "]"):
            lo = pat[end]
            hi = lo
            if end + 2 < len(pat) and pat[end + 1] == "-" and pat[end + 2] != "]":
                hi, end = pat[end + 2], end + 2
            matched |= lo <= s[0] <= hi
            end, first = end + 1, False
        if end >= len(pat):                 # no closing ']': a literal '['
            return s[0] == "[" and glob_match(pat[1:], s[1:])
        return matched != inverted and glob_match(pat[end + 1:], s[1:])
    if c == "\\" and len(pat) > 1:
        c, pat = pat[1], pat[1:]
    return s[0] == c and glob_match(pat[1:], s[1:])


def _regex(pattern: str, op: str) -> tuple[str, str, bool]:
    """filter_build_regex: (match type, search text, inverted) of a ``~`` pattern;
    ``==`` and ``!=`` are full matches."""
    if op != "~":
        return "full", pattern, False
    inverted = pattern.startswith("!")
    buff = pattern[1:] if inverted else pattern
    kind = "full"
    if buff[:1].isdigit():
        return "full", buff, inverted          # MATCH_INDEX is a full match here
    for i, c in enumerate(buff):
        if c == "*":
            if i == 0:
                kind = "end"
            elif i == len(buff) - 1:
                kind = "middle" if kind == "end" else "front"
                buff = buff[:i]
                break
            else:
                return "glob", buff, inverted
        elif c in "[?\\":
            return "glob", buff, inverted
    return kind, buff[1:] if buff.startswith("*") else buff, inverted


def _string_match(kind: str, pattern: str, value: str, length: int) -> bool:
    """regex_match_full/front/middle/end/glob on a string whose buffer is ``length``
    bytes with its NUL (a static or comm field: the field's size, as v5.10 passes it)."""
    if kind == "full":
        return value == pattern
    if kind == "front":
        return not (length and length < len(pattern)) and value.startswith(pattern)
    if kind == "middle":
        return pattern in value
    if kind == "end":
        # regex_match_end looks at the last bytes before the buffer's end: for a
        # fixed-size field that is its padding, not the string's end (v5.10).
        buf = value.encode().ljust(length, b"\0")[:length - 1]
        return len(buf) >= len(pattern) and buf.endswith(pattern.encode())
    return glob_match(pattern, value)


# -- the expression ----------------------------------------------------------------------
@dataclass
class _Entry:
    """A prog_entry: the predicate, when to branch, where to."""

    pred: Predicate | None
    target: int
    when: int = 0


def compile_filter(expr: str, fields: Sequence[FilterField]) -> Predicate:
    """The event's filter as a predicate on its values (FilterError if refused).

    ``fields``: the event's own fields. The predicate reads its values by
    field name, the common fields by theirs, the generic CPU and comm at
    :data:`CPU_KEY` and :data:`COMM_KEY`.
    """
    written = len(expr.encode())
    if written + 1 >= FILTER_WRITE_LIMIT:
        raise TraceError(f"a filter of {written:,} bytes: the filter file takes "
                         f"under {FILTER_WRITE_LIMIT:,} with its newline (write error: "
                         "Invalid argument)")
    parens, preds = _calc_stack(expr)
    if not preds:
        raise FilterError("ERRNO", expr, 0)
    prog, inverts = _predicate_parse(expr, parens, preds, fields)
    n = len(inverts)
    prog[n - 1].target, prog[n - 1].when = n, 0
    prog += [_Entry(None, 1), _Entry(None, 0)]
    for i in range(n - 2, -1, -1):                # second pass: jump past same-condition labels
        t = prog[i].target
        if prog[i].when == prog[t].when:
            prog[i].target = prog[t].target
    for i in range(n):                            # third pass: fold the inverts in
        prog[i].when ^= inverts[i]

    def match(values: Values) -> bool:
        """filter_match_preds."""
        i = 0
        while prog[i].pred is not None:
            if int(prog[i].pred(values)) == prog[i].when:
                i = prog[i].target
            i += 1
        return bool(prog[i].target)

    return match


def system_filter(expr: str, events: Mapping[str, Sequence[FilterField]]
                  ) -> tuple[dict[str, Predicate], dict[str, FilterError]]:
    """``expr`` written to a system's ``filter`` file, as v5.10's
    ``process_system_preds`` takes it: compiled for each of the system's
    ``events`` (name -> fields) it parses on; each other one's error
    (``filter_disable``: it records unfiltered, and the error goes to
    error_log). The write succeeds even where it parses on none: the loop
    clears ``fail`` on every event it visits."""
    compiled: dict[str, Predicate] = {}
    failed: dict[str, FilterError] = {}
    for name, fields in events.items():
        try:
            compiled[name] = compile_filter(expr, fields)
        except FilterError as err:
            failed[name] = err
    return compiled, failed


def _calc_stack(s: str) -> tuple[int, int]:
    """calc_stack: parentheses depth and predicates, or the quote/paren error."""
    is_pred, nr_preds, depth, max_depth, quote, last_quote = False, 0, 1, 1, "", 0
    for i, c in enumerate(s):
        if c.isspace():
            continue
        if quote:
            quote = "" if c == quote else quote
            continue
        if c in "'\"":
            quote, last_quote = c, i
        elif c in "|&" and s[i + 1:i + 2] == c:
            is_pred = False
            continue
        elif c == "(":
            is_pred, depth = False, depth + 1
            max_depth = max(max_depth, depth)
            continue
        elif c == ")":
            is_pred = False
            if depth == 1:
                raise FilterError("TOO_MANY_CLOSE", s, i)
            depth -= 1
            continue
        if not is_pred:
            nr_preds, is_pred = nr_preds + 1, True
    if quote:
        raise FilterError("MISSING_QUOTE", s, last_quote)
    if depth != 1:
        level, quote = depth, ""
        for i in range(len(s) - 1, 0, -1):         # find the bad '(' (never index 0)
            c = s[i]
            if quote:
                quote = "" if c == quote else quote
            elif c == "(":
                if level == depth:
                    raise FilterError("TOO_MANY_OPEN", s, i)
                level -= 1
            elif c == ")":
                level += 1
            elif c in "'\"":
                quote = c
        raise FilterError("TOO_MANY_OPEN", s, 0)
    return max_depth, nr_preds


INVERT, PROCESS_AND, PROCESS_OR = 1, 2, 4


def _predicate_parse(s: str, parens: int, preds: int,
                     fields: Sequence[FilterField]) -> tuple[list[_Entry], list[int]]:
    """predicate_parse's first pass: the program and each predicate's invert."""
    prog: list[_Entry] = []
    inverts: list[int] = []
    stack, invert, ptr = [0], 0, 0
    end = len(s)
    while ptr < end:
        nxt, ptr = ptr, ptr + 1
        c = s[nxt]
        if c.isspace():
            continue
        if c == "(":
            stack.append(invert)
            continue
        if c == "!" and s[nxt + 1:nxt + 2] not in ("=", "~"):
            invert ^= 1
            continue
        if len(prog) >= preds + 2:
            raise FilterError("TOO_MANY_PREDS", s, nxt)
        inverts.append(invert)
        pred, length = _parse_pred(s, nxt, ptr, fields)
        prog.append(_Entry(pred, len(prog) - 1))
        ptr = nxt + length
        n = len(prog)
        while True:
            nxt, ptr = ptr, ptr + 1
            c = s[nxt] if nxt < end else ""
            if c.isspace():
                continue
            if c in ("&", "|"):
                if s[nxt + 1:nxt + 2] != c:
                    raise FilterError("TOO_MANY_PREDS", s, nxt)
                ptr += 1
            elif c not in (")", ""):
                raise FilterError("TOO_MANY_PREDS", s, nxt)
            invert = stack[-1] & INVERT
            if stack[-1] & PROCESS_AND:
                _update_preds(prog, n - 1, invert)
                stack[-1] &= ~PROCESS_AND
            if c == "&":
                stack[-1] |= PROCESS_AND
                break
            if stack[-1] & PROCESS_OR:
                _update_preds(prog, n - 1, 1 - invert)
                stack[-1] &= ~PROCESS_OR
            if c == "|":
                stack[-1] |= PROCESS_OR
                break
            if not c:
                ptr = end
                break
            if len(stack) == 1:
                raise FilterError("TOO_MANY_CLOSE", s, ptr)
            stack.pop()
    if len(stack) != 1:
        raise FilterError("TOO_MANY_OPEN", s, ptr)
    if not prog:
        raise FilterError("NO_FILTER", s, ptr)
    return prog, inverts


def _update_preds(prog: list[_Entry], n: int, invert: int) -> None:
    """update_preds: the entry ``n`` points at gets ``n`` as its label."""
    t = prog[n].target
    s = prog[t].target
    prog[t].when, prog[t].target = invert, n
    prog[n].target = s


def _parse_pred(s: str, start: int, pos: int,
                fields: Sequence[FilterField]) -> tuple[Predicate, int]:
    """parse_pred on ``s[start:]``; ``pos`` is where the kernel counts error
    positions from (one past the predicate's first character). Returns the
    predicate and the characters it took."""
    text = s[start:]
    m = re.match(r"\s*", text)
    i = m.end()
    name_start = i
    while i < len(text) and (text[i].isalnum() or text[i] == "_"):
        i += 1
    if i == name_start:
        raise FilterError("ERRNO", s, 0)          # parse_pred returns -1: no message
    field = _find_field(fields, text[name_start:i])
    if field is None:
        raise FilterError("FIELD_NOT_FOUND", s, pos + i)
    while i < len(text) and text[i].isspace():
        i += 1
    op = next((o for o in OPS if text.startswith(o, i)), None)
    if op is None:
        raise FilterError("INVALID_OP", s, pos + i)
    i += len(op)
    while i < len(text) and text[i].isspace():
        i += 1
    vstart = i
    c = text[i:i + 1]
    if c in ("'", '"'):
        if op not in ("!=", "~", "=="):
            raise FilterError("ILLEGAL_FIELD_OP", s, pos + i)
        if not field.is_string:
            raise FilterError("EXPECT_DIGIT", s, pos + i)
        close = text.find(c, i + 1)
        if close < 0:
            raise FilterError("MISSING_QUOTE", s, pos + len(text))
        pattern = text[vstart + 1:close]
        if len(pattern) >= MAX_FILTER_STR_VAL:
            raise FilterError("OPERAND_TOO_LONG", s, pos + close)
        return _string_pred(field, op, pattern), close + 1
    if c.isdigit() or c == "-":
        if field.is_string:
            raise FilterError("EXPECT_STRING", s, pos + i)
        if op == "~":
            raise FilterError("ILLEGAL_FIELD_OP", s, pos + i)
        i += c == "-"
        while i < len(text) and text[i].isalnum():
            i += 1
        number = text[vstart:i]
        if len(number) >= NUM_BUF:
            raise FilterError("OPERAND_TOO_LONG", s, pos + i)
        value = kstrtol(number) if field.signed else kstrtoull(number)
        if value is None:
            raise FilterError("ILLEGAL_INTVAL", s, pos + vstart)
        return _number_pred(field, op, value, s, pos + vstart), i
    raise FilterError("INVALID_VALUE", s, pos + i)


def _string_pred(field: FilterField, op: str, pattern: str) -> Predicate:
    kind, search, inverted = _regex(pattern, op)
    negate = inverted if op == "~" else op == "!="
    key = field.key or field.name
    # the buffer length regex_match_* get: a fixed field's size, a dynamic string's own
    fixed = TASK_COMM_LEN if field.kind == "comm" else (
        field.size if field.kind == "static_string" else 0)

    def pred(values: Values) -> bool:
        value = str(values[key])
        length = fixed or len(value.encode()) + 1
        return _string_match(kind, search, value, length) != negate

    return pred


def _number_pred(field: FilterField, op: str, value: int, s: str, pos: int) -> Predicate:
    """select_comparison_fn (or filter_pred_cpu): compare at the field's width and sign.
    An array field (``u8[4]``) is compared as v5.10 does, as one integer of its size:
    its value here is that integer (the record's bytes in the arch's order)."""
    key = field.key or field.name
    if field.kind == "cpu":
        compare = _COMPARE.get(op)
        return (lambda values: compare(values[key], value)) if compare else (lambda values: False)
    if field.size not in (1, 2, 4, 8):
        # select_comparison_fn has no function for this size (an array of three
        # bytes, say): v5.10 installs none, and the first event calls through NULL
        raise FilterError("ILLEGAL_FIELD_OP", s, pos)
    bits = 8 * field.size
    mask = (1 << bits) - 1

    def typed(v: int) -> int:
        v &= mask
        return v - (1 << bits) if field.signed and v >> (bits - 1) else v

    want = typed(value)
    if op in ("==", "!="):
        eq = op == "=="
        return lambda values: ((int(values[key]) & mask) == (value & mask)) == eq
    if op == "&":
        return lambda values: bool(int(values[key]) & value & mask)
    compare = _COMPARE[op]
    return lambda values: compare(typed(int(values[key])), want)


_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


__all__ = ["COMMON_FIELDS", "CPU_KEY", "COMM_KEY", "FilterError", "FilterField", "Predicate",
           "compile_filter", "filter_fields", "glob_match", "system_filter"]
