"""Event filters as Linux v5.10 compiles and runs them (tracing/filter.py).

Sources: kernel/trace/trace_events_filter.c (calc_stack, predicate_parse,
parse_pred, filter_parse_regex, regex_match_*, select_comparison_fn, the
ERRORS texts) and Documentation/trace/events.rst section 5 (the examples).
"""
from __future__ import annotations

import pytest

from tracing.filter import (COMM_KEY, CPU_KEY, FilterError, FilterField, compile_filter,
                            glob_match)

#: sched_signal_send-like fields (events.rst's examples), a dynamic string, a u8.
FIELDS = [FilterField("int", "sig", 4, True), FilterField("u64", "size", 8, False),
          FilterField("char[16]", "prev_comm", 16, True),
          FilterField("__data_loc char[]", "path", 4, True), FilterField("u8", "b", 1, False),
          FilterField("u8[4]", "arr", 4, False), FilterField("s8[2]", "pair", 2, True),
          FilterField("u8[3]", "odd", 3, False)]


def _values(**kw: int | str) -> dict[str, int | str]:
    values: dict[str, int | str] = {"sig": 0, "size": 0, "prev_comm": "", "path": "", "b": 0,
                                    "arr": 0, "pair": 0, "odd": 0, "common_type": 1,
                                    "common_flags": 0, "common_preempt_count": 0,
                                    "common_pid": 7, CPU_KEY: 1, COMM_KEY: "bash"}
    values.update(kw)
    return values


SH = {COMM_KEY: "sh"}
#: (filter, values, kept?, source)
MATCHES = [
    ("common_preempt_count > 4", _values(), False, "events.rst 5.1"),
    ("common_preempt_count > 4", _values(common_preempt_count=5), True, "events.rst 5.1"),
    ('((sig >= 10 && sig < 15) || sig == 17) && comm != "bash"', _values(sig=12), False,
     "events.rst 5.2 (quoted: 5.10 rejects the doc's bare bash)"),
    ('((sig >= 10 && sig < 15) || sig == 17) && comm != "bash"', _values(sig=17, **SH),
     True, "events.rst 5.2"),
    ('((sig >= 10 && sig < 15) || sig == 17) && comm != "bash"', _values(sig=16, **SH),
     False, "events.rst 5.2"),
    ('prev_comm ~ "sh*"', _values(prev_comm="shell"), True, "events.rst: front match"),
    ('prev_comm ~ "*sh*"', _values(prev_comm="bash2"), True, "events.rst: middle match"),
    ('prev_comm ~ "ba*sh"', _values(prev_comm="bazsh"), True, "events.rst: glob"),
    ('prev_comm ~ "ba*sh"', _values(prev_comm="bazs"), False, "events.rst: glob"),
    ('path ~ "*sh"', _values(path="/bin/bash"), True, "regex_match_end on a dynamic string"),
    ('prev_comm ~ "*sh"', _values(prev_comm="bash"), False,
     "regex_match_end on char[16]: v5.10 compares the buffer's last bytes (padding)"),
    ('comm ~ "!ba*"', _values(), False, "filter_parse_regex: a leading '!' inverts"),
    ('comm == "bash"', _values(), True, "COMM: current->comm"),
    ("cpu == 1", _values(), True, "CPU: the current CPU"),
    ("CPU != 1", _values(), False, "CPU"),
    ("!(size & 0x1)", _values(size=2), True, "& is a bit test; ! inverts a group"),
    ("!(size & 0x1)", _values(size=3), False, "&"),
    ("sig < 0", _values(sig=-3), True, "signed comparison at the field's sign"),
    ("b == 257", _values(b=1), True, "the value is cast to the field's width (u8)"),
    ("size > 1 || sig == 2 && b == 3", _values(size=0, sig=2, b=3), True, "&& before ||"),
    ("size > 1 || sig == 2 && b == 3", _values(size=0, sig=2, b=4), False, "&& before ||"),
    ("!size == 0 && !(sig == 1 || b == 1)", _values(size=1, sig=0, b=0), True, "! on one pred"),
    ("common_pid == 7", _values(), True, "common fields"),
    ("size == 1 &&", _values(size=1), True, "a trailing && is accepted by predicate_parse"),
    # an array field is one integer of its size (kprobe events' u8[4]: filter_pred_32)
    ("arr == 0x04030201", _values(arr=0x04030201), True, "u8[4] as a u32"),
    ("arr > 0xffff", _values(arr=0x10000), True, "u8[4] as a u32"),
    ("arr & 0x100", _values(arr=0x0200), False, "u8[4] as a u32"),
    ("pair < 0", _values(pair=-2), True, "s8[2] as an s16: signed as its element"),
]


@pytest.mark.parametrize("expr,values,kept,source", MATCHES,
                         ids=[f"{m[3][:20]}:{m[0][:25]}:{m[2]}" for m in MATCHES])
def test_filter_matches_as_the_kernel(expr: str, values: dict, kept: bool, source: str) -> None:
    assert compile_filter(expr, FIELDS)(values) is kept


#: (filter, message, lasterr_pos). Inside a predicate the kernel counts from one
#: past the predicate's first character (predicate_parse passes ptr - str), so
#: those positions are one more than the offending character's index.
REFUSED = [
    ("sig == bash", "Invalid value (did you forget quotes)?", 8),
    ("nosuch == 1", "Field not found", 7),
    ("sig = 1", "Invalid operator", 5),
    ("(sig == 1", "Too many '('", 0),             # calc_stack never looks at index 0
    ("sig == 1)", "Too few '('", 8),
    ('prev_comm == "bash', "Missing matching quote", 13),
    ('sig == "1"', "Expecting numeric field", 8),
    ("prev_comm == 1", "Expecting string field", 14),
    ("sig ~ 1", "Illegal operation for field type", 7),
    ('prev_comm < "a"', "Illegal operation for field type", 13),
    ("sig == 0xzz", "Illegal integer value", 8),
    ("size == -1", "Illegal integer value", 9),   # kstrtoull on an unsigned field
    ("sig == 1 sig == 2", "Too many terms in predicate expression", 9),
    ("sig == 1 & sig == 2", "Too many terms in predicate expression", 9),
    ("sig == 123456789012345678901234", "Operand too long", 32),
    ("!", "No filter found", 1),
    ("", "Error", 0),
    # select_comparison_fn has no function for 3 bytes: v5.10 installs a NULL one
    ("odd == 1", "Illegal operation for field type", 8),
]


@pytest.mark.parametrize("expr,message,pos", REFUSED, ids=[r[0] or "empty" for r in REFUSED])
def test_refused_with_the_kernels_message_and_position(expr: str, message: str, pos: int) -> None:
    with pytest.raises(FilterError) as err:
        compile_filter(expr, FIELDS)
    assert str(err.value) == f"event filter parse error: error: {message}"
    assert err.value.pos == pos
    assert err.value.detail.splitlines()[1] == " " * (11 + pos) + "^"


def test_glob_match_is_lib_glob() -> None:
    """lib/glob.c: * ? [a-c] [!x] and a backslash escape."""
    assert glob_match("b[a-c]?h*", "bash4") and not glob_match("b[!a]sh", "bash")
    assert glob_match("a\\*b", "a*b") and not glob_match("a\\*b", "axb")


def test_filter_event_names_tracefs_and_kisim() -> None:
    """--filter's EVENT: kisim's name or tracefs' GROUP/EVENT (GROUP:EVENT, trace-cmd's -e);
    another group's event (a kprobe event) is not a recorded tracepoint event."""
    from tracing.events import builtin_event
    assert [builtin_event(n) for n in ("kmem_kmalloc", "kmem/kmalloc", "kmem:kmalloc",
                                       "sched/sched_switch")] == \
        ["kmem_kmalloc", "kmem_kmalloc", "kmem_kmalloc", "sched_switch"]
    assert builtin_event("kprobes/sched_switch") is None and builtin_event("myprobe") is None


def test_a_filter_the_filter_file_would_not_take_is_refused() -> None:
    """event_filter_write: a write of PAGE_SIZE bytes or more (the expression and
    echo's newline) is -EINVAL; one byte less is parsed."""
    from tracing.errors import TraceError
    from tracing.filter import FILTER_WRITE_LIMIT
    bangs = FILTER_WRITE_LIMIT - 2 - len("size > 1")
    fits = "!" * bangs + "size > 1"                 # size is 0: true where the '!' are odd
    assert compile_filter(fits, FIELDS)(_values()) is bool(bangs % 2)
    with pytest.raises(TraceError, match="under 4,096 with its newline"):
        compile_filter("!" + fits, FIELDS)
