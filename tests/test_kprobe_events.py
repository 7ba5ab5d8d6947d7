"""kprobe_events definitions parsed as Linux v5.10 parses them (probes/kprobe_events.py).

Sources of the cases, cited per row:
- SE: tools/testing/selftests/ftrace/test.d/kprobe/kprobe_syntax_errors.tc
  (each ``check_error`` line: the '^' marks where error_log puts the caret);
- AS: .../kprobe/kprobe_args_syntax.tc (accepted and refused fetch arguments,
  x86 GOODREG=%ax, BADREG=%ex);
- AT: .../kprobe/kprobe_args_type.tc; DOC: Documentation/trace/kprobetrace.rst;
- the format and print fmt: kernel/trace/trace_probe.c __set_print_fmt,
  traceprobe_define_arg_fields, trace_kprobe.c kprobe_event_define_fields.
"""
from __future__ import annotations

import pytest

from arches import get_arch
from probes.kprobe_events import (ProbeDeletion, ProbeEventError, ProbeTarget, parse_kprobe_event,
                                  parse_kprobe_events)

FUNCS = {"vfs_read": (0x1000, 0x100), "kernel_clone": (0x2000, 0x80), "do_sys_open": (0x3000, 0xd6)}
DATA = {"_sdata": 0x9000}


def _target(arch: str = "x86_64", bits: int = 64) -> ProbeTarget:
    ops = get_arch(arch).ops

    def lookup(name: str) -> int | None:
        return FUNCS[name][0] if name in FUNCS else DATA.get(name)

    def symbol_at(addr: int) -> tuple[str, int] | None:
        return next(((n, addr - a) for n, (a, size) in FUNCS.items() if a <= addr < a + size), None)

    return ProbeTarget(bits, ops.REGS_OFFSET_NAMES, ops.FUNCTION_ARG_REGS, 16384, lookup, symbol_at,
                       ops.REGS_OFFSET_ALIASES)


X86 = _target()

#: (command with '^' at the error position, the v5.10 message, source)
REFUSED = [
    ("p^100 vfs_read", "Maxactive is not for kprobe", "SE MAXACT_NO_KPROBE"),
    ("r^1a111 vfs_read", "Invalid maxactive number", "SE BAD_MAXACT"),
    ("r^100000 vfs_read", "Maxactive is too big", "SE MAXACT_TOO_BIG"),
    ("p ^hoge-fuga", "Invalid probed address or symbol", "SE BAD_PROBE_ADDR (syntax)"),
    ("p ^hoge+1000-1000", "Invalid probed address or symbol", "SE BAD_PROBE_ADDR (syntax)"),
    ("r ^vfs_read+10", "Retprobe address must be an function entry", "SE BAD_RETPROBE"),
    ("p:^/bar vfs_read", "Group name is not specified", "SE NO_GROUP_NAME"),
    ("p:^" + "1234567890" * 6 + "12345/bar vfs_read", "Group name is too long",
     "SE GROUP_TOO_LONG"),
    ("p:^foo.1/bar vfs_read", "Group name must follow the same rules as C identifiers",
     "SE BAD_GROUP_NAME"),
    ("p:foo/^ vfs_read", "Event name is not specified", "SE NO_EVENT_NAME"),
    ("p:foo/^" + "1234567890" * 6 + "12345 vfs_read", "Event name is too long",
     "SE EVENT_TOO_LONG"),
    ("p:foo/^bar.1 vfs_read", "Event name must follow the same rules as C identifiers",
     "SE BAD_EVENT_NAME"),
    ("p vfs_read ^$retval", "$retval is not available on probe", "SE RETVAL_ON_PROBE"),
    ("p vfs_read ^$stack10000", "Invalid stack number", "SE BAD_STACK_NUM"),
    ("p vfs_read ^$arg10000", "Invalid argument number", "SE BAD_ARG_NUM (x86 has $arg<N>)"),
    ("p vfs_read ^$none_var", "Invalid $-valiable specified", "SE BAD_VAR"),
    ("p vfs_read ^%none_reg", "Invalid register name", "SE BAD_REG_NAME"),
    ("p vfs_read ^@12345678abcde", "Invalid memory address", "SE BAD_MEM_ADDR"),
    ("p vfs_read ^@+10", "File offset is not available with kprobe", "SE FILE_ON_KPROBE"),
    ("p vfs_read ^+0@0)", "Dereference needs a brace", "SE DEREF_NEED_BRACE"),
    ("p vfs_read ^+0ab1(@0)", "Invalid dereference offset", "SE BAD_DEREF_OFFS"),
    ("p vfs_read +0(+0(@0^)", "Dereference brace is not closed", "SE DEREF_OPEN_BRACE"),
    ("p vfs_read +0(^$comm)", "$comm can not be dereferenced", "SE COMM_CANT_DEREF"),
    ("p vfs_read ^&1", "Invalid fetch argument", "SE BAD_FETCH_ARG"),
    ("p vfs_read +0(^" + "+0(" * 13 + "@0" + ")" * 14, "Dereference is too much nested",
     "SE TOO_MANY_OPS"),
    ("p vfs_read +0(@11):u8[10^", "Array is not closed", "SE ARRAY_NO_CLOSE"),
    ("p vfs_read +0(@11):u8[10]^a", "Array has wrong suffix", "SE BAD_ARRAY_SUFFIX"),
    ("p vfs_read +0(@11):u8[^10a]", "Invalid array size", "SE BAD_ARRAY_NUM"),
    ("p vfs_read +0(@11):u8[^256]", "Array number is too big", "SE ARRAY_TOO_BIG"),
    ("p vfs_read @11:^unknown_type", "Unknown type is specified", "SE BAD_TYPE"),
    ("p vfs_read $stack0:^string", "String accepts only memory argument", "SE BAD_STRING"),
    ("p vfs_read @11:^b10@a/16", "Invalid bitfield", "SE BAD_BITFIELD"),
    ("p vfs_read ^arg123456789012345678901234567890=@11", "Argument name is too long",
     "SE ARG_NAME_TOO_LONG"),
    ("p vfs_read ^=@11", "Argument name is not specified", "SE NO_ARG_NAME"),
    ("p vfs_read ^var.1=@11", "Argument name must follow the same rules as C identifiers",
     "SE BAD_ARG_NAME"),
    ("p vfs_read var1=@11 ^var1=@12", "This argument name is already used", "SE USED_ARG_NAME"),
    ("p vfs_read ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))",
     "Argument expression is too long", "SE ARG_TOO_LONG"),
    ("p vfs_read arg1=^", "No argument expression", "SE NO_ARG_BODY"),
    ("p vfs_read arg1=\\^x", "Invalid immediate value", "SE (5.10 rows) BAD_IMM"),
    ('p vfs_read arg1=\\"abcd^', "String is not closed with '\"'",
     "SE (5.10 rows) IMMSTR_NO_CLOSE"),
    ("p vfs_read^%hoge", "Invalid probed address suffix", "SE (5.10 rows) BAD_ADDR_SUFFIX"),
    ("p ^vfs_read+10%return", "Retprobe address must be an function entry",
     "SE (5.10 rows) BAD_RETPROBE"),
    ("p vfs_read ^%ex", "Invalid register name", "AS BADREG"),
    ("p vfs_read ^%rax", "Invalid register name", "AS: v5.10 x86 names are ax, not rax"),
    ("p vfs_read ^$stackp", "Invalid $-valiable specified", "AS"),
    ("p vfs_read ^$stack0+10", "Invalid $-valiable specified", "AS"),
    ("p vfs_read ^+(%ax)", "Invalid dereference offset", "AS"),
    ("p vfs_read ^(%ax+10)", "Invalid fetch argument", "AS"),
    ("p vfs_read +10(^$comm)", "$comm can not be dereferenced", "AS"),
    ("p vfs_read varname=^varname2=%ax", "Invalid fetch argument", "AS"),
    ("p vfs_read %ax:^y16", "Unknown type is specified", "AS"),
    ("p vfs_read x16:^%ax", "Unknown type is specified", "AS"),
    ("p vfs_read $stack:^string", "String accepts only memory argument", "AS"),
    ("p vfs_read %ax:^string", "String accepts only memory argument", "AS"),
    ("p vfs_read $stack1:^x8[8]", "String accepts only memory argument",
     "DOC: arrays only on memory fetchargs"),
    ("r vfs_read ^$arg1", "Invalid $-valiable specified", "DOC: $argN only on function entry"),
    ("p vfs_read+4 ^$arg1", "Invalid $-valiable specified", "DOC: $argN only on function entry"),
    # v5.10 source: TPARG_FL_RETURN is set only where a symbol names the probe
    ("r 0x1000 ^$retval", "$retval is not available on probe", "SRC: an address kretprobe"),
    # kstrtoll negates what follows '-' with _kstrtoull, which takes no '+'
    ("p vfs_read ^-+8(%ax)", "Invalid dereference offset", "SRC: kstrtoll '-+'"),
    ("p vfs_read arg1=\\^-+5", "Invalid immediate value", "SRC: kstrtoll '-+'"),
    ("p ^vfs_read-+0", "Invalid probed address or symbol", "SRC: kstrtoll '-+'"),
    # FETCH_OP_END holds the program's last slot
    ("p vfs_read ^" + "+0(" * 13 + "@0" + ")" * 13 + ":x8[2]", "Dereference is too much nested",
     "SRC: the last slot is FETCH_OP_END (array)"),
    ("p vfs_read " + "+0(" * 13 + "@0" + ")" * 13 + ":^b1@0/8", "Invalid bitfield",
     "SRC: the last slot is FETCH_OP_END (bitfield)"),
]


def _split(case: str) -> tuple[str, int]:
    return case.replace("^", "", 1), case.index("^")


@pytest.mark.parametrize("case,message,source", REFUSED,
                         ids=[r[2] + ":" + r[0][:30] for r in REFUSED])
def test_refused_with_the_kernels_error_and_caret(case: str, message: str, source: str) -> None:
    command, pos = _split(case)
    with pytest.raises(ProbeEventError) as err:
        parse_kprobe_event(command, X86)
    assert str(err.value) == f"trace_kprobe: error: {message}"
    log = err.value.error_log().splitlines()
    assert log[1] == f"  Command: {command}"
    # ftrace_errlog_check: the caret line is "  Command: " wide plus pos
    assert log[2] == " " * (11 + pos) + "^"


def test_a_long_command_is_logged_as_tracing_log_err_keeps_it() -> None:
    """v5.10 tracing_log_err: '\\n  Command: CMD\\n' cut to 255 bytes (the newline
    before the caret goes with the command's end) and the caret's pos a u8."""
    args = " ".join(f"a{i}=%ax" for i in range(40))
    command = f"p:a vfs_read {args} bad=%rax"
    with pytest.raises(ProbeEventError) as err:
        parse_kprobe_event(command, X86)
    pos = command.index("%rax")
    assert pos > 256 and len(command) > 243
    message, kept = err.value.error_log().split("\n")
    assert message == "trace_kprobe: error: Invalid register name"
    assert kept == "  Command: " + command[:243] + " " * (11 + pos % 256) + "^"


#: (definition, what reading kprobe_events shows, print fmt, source)
ACCEPTED = [
    ("p vfs_read %ax", "p:kprobes/p_vfs_read_0 vfs_read arg1=%ax",
     '"(%lx) arg1=0x%Lx", REC->__probe_ip, REC->arg1', "AS GOODREG"),
    ("p vfs_read @_sdata", None, None, "AS"), ("p vfs_read @0x1234", None, None, "AS"),
    ("p vfs_read @_sdata+10", None, None, "AS"), ("p vfs_read @_sdata-10", None, None, "AS"),
    ('p vfs_read s=\\"', None, None, "SRC: __parse_imm_string reads the opening quote: ''"),
    ("p vfs_read $stack", None, None, "AS"), ("p vfs_read $stack0", None, None, "AS"),
    ("p vfs_read $stack1", None, None, "AS"),
    ("r vfs_read $retval", "r:kprobes/r_vfs_read_0 vfs_read arg1=$retval",
     '"(%lx <- %lx) arg1=0x%Lx", REC->__probe_func, REC->__probe_ret_ip, REC->arg1', "AS"),
    ("p vfs_read $comm", None, '"(%lx) arg1=\\"%s\\"", REC->__probe_ip, __get_str(arg1)', "AS"),
    ("p vfs_read +0(%ax)", None, None, "AS"), ("p vfs_read -0(%ax)", None, None, "AS"),
    ("p vfs_read +10($stack)", None, None, "AS"), ("p vfs_read +0($stack1)", None, None, "AS"),
    ("p vfs_read +10(@_sdata-10)", None, None, "AS"),
    ("p vfs_read +0(+10(+20($stack)))", None, None, "AS"),
    ("p vfs_read varname=%ax", "p:kprobes/p_vfs_read_0 vfs_read varname=%ax", None, "AS"),
    ("p vfs_read %ax:x16", None, '"(%lx) arg1=0x%x", REC->__probe_ip, REC->arg1', "AS"),
    ("p vfs_read $comm:string", None, None, "AS"),
    ("p vfs_read +0($stack):string", None, None, "AS"),
    ("p:testprobe kernel_clone $stack0:s64 $stack0:u64 $stack0:x64 $stack0:b4@4/64", None,
     '"(%lx) arg1=%Ld arg2=%Lu arg3=0x%Lx arg4=%Lu", REC->__probe_ip, REC->arg1, REC->arg2, '
     'REC->arg3, REC->arg4', "AT"),
    ("p:testprobe kernel_clone $stack0:s8 $stack0:u16 $stack0:x32 $stack0:b4@4/8", None,
     '"(%lx) arg1=%d arg2=%u arg3=0x%x arg4=%u", REC->__probe_ip, REC->arg1, REC->arg2, '
     'REC->arg3, REC->arg4', "AT"),
    ("p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)",
     "p:kprobes/myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)", None, "DOC"),
    ("r:myretprobe do_sys_open $retval", "r:kprobes/myretprobe do_sys_open arg1=$retval", None,
     "DOC"),
    ("p:myprobe do_sys_open +0(%si):ustring", None, None, "DOC: ustring"),
    ("p:myprobe do_sys_open +u0(%si):string", None, None, "DOC: +u dereference"),
    ("p vfs_read +8($stack):x8[8]", None,
     '"(%lx) arg1={0x%x,0x%x,0x%x,0x%x,0x%x,0x%x,0x%x,0x%x}", REC->__probe_ip, '
     + ", ".join(f"REC->arg1[{j}]" for j in range(8)), "DOC: arrays on memory"),
    ("p vfs_read +0(%di):string[1]", None,
     '"(%lx) arg1={\\"%s\\"}", REC->__probe_ip, __get_str(arg1[0])', "DOC: string[1]"),
    ("p vfs_read $arg1 $arg2", None, None, "DOC: $argN on function entry (x86)"),
    ("r16:rp vfs_read $retval:s32", "r16:kprobes/rp vfs_read arg1=$retval:s32", None,
     "README r[MAXACTIVE]"),
    ("p:grp/ev vfs_read+4", "p:grp/ev vfs_read+4", None, "README SYM+offs"),
    ("p:ev vfs_read%return $retval", "r:kprobes/ev vfs_read arg1=$retval", None,
     "README %return (5.10)"),
    ("p:ev 0x1000 %di", "p:kprobes/ev 0x0000000000001000 arg1=%di", None, "README MEMADDR"),
    ("p vfs_read arg1=\\123 arg2=\\-1 s=\\\"abc\"", None, None, "README \\IMM, immediate string"),
    ("p vfs_read s=@_sdata:symbol", None, '"(%lx) s=%pS", REC->__probe_ip, REC->s', "symbol type"),
]


@pytest.mark.parametrize("line,show,fmt,source", ACCEPTED,
                         ids=[a[3] + ":" + a[0][:30] for a in ACCEPTED])
def test_accepted(line: str, show: str | None, fmt: str | None, source: str) -> None:
    event = parse_kprobe_event(line, X86)
    if show is not None:
        assert event.show() == show
    if fmt is not None:
        assert event.print_fmt() == fmt


def test_format_file_is_the_kernels() -> None:
    """trace_events.c f_show of a 64-bit kprobe event with a u32, a string and an array."""
    event = parse_kprobe_event("p:myprobe vfs_read size=%di:u32 s=+0(%si):string "
                               "a=+8($stack):x8[3]", X86)
    assert event.format(1234) == (
        "name: myprobe\nID: 1234\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:u32 size;\toffset:16;\tsize:4;\tsigned:0;\n"
        "\tfield:__data_loc char[] s;\toffset:20;\tsize:4;\tsigned:1;\n"
        "\tfield:u8 a[3];\toffset:24;\tsize:3;\tsigned:0;\n\n"
        'print fmt: "(%lx) size=%u s=\\"%s\\" a={0x%x,0x%x,0x%x}", REC->__probe_ip, REC->size, '
        "__get_str(s), REC->a[0], REC->a[1], REC->a[2]\n")


def test_kretprobe_fields_on_a_32_bit_kernel() -> None:
    """kretprobe_event_define_fields: __probe_func, __probe_ret_ip, then the args
    (x32 is the default type where a long is 32 bits, DEFAULT_FETCH_TYPE)."""
    event = parse_kprobe_event("r:rp vfs_read $retval", _target("arm", 32))
    assert event.fields() == [("unsigned long", "__probe_func", 8, 4, False),
                              ("unsigned long", "__probe_ret_ip", 12, 4, False),
                              ("u32", "arg1", 16, 4, False)]
    assert event.print_fmt().startswith('"(%lx <- %lx) arg1=0x%x"')


@pytest.mark.parametrize("arch,good,bad", [
    ("x86_64", "%di", "%r0"), ("arm", "%r0", "%di"), ("arm", "%ORIG_r0", "%orig_r0"),
    ("ppc32", "%gpr3", "%R3"), ("ppc32", "%r3", "%r32"), ("ppc32", "%link", "%lr")])
def test_register_names_are_the_arch_table(arch: str, good: str, bad: str) -> None:
    """Each arch's v5.10 regs_query_register_offset names, exact strcmp (PowerPC's
    ptrace-view.c names each GPR both r<N> and gpr<N>: one word)."""
    target = _target(arch, get_arch(arch).bits)
    assert parse_kprobe_event(f"p vfs_read {good}", target).args[0].code[0][0] == "reg"
    with pytest.raises(ProbeEventError, match="Invalid register name"):
        parse_kprobe_event(f"p vfs_read {bad}", target)


def test_a_powerpc_gpr_has_two_names_for_one_word() -> None:
    target = _target("ppc32", 32)
    assert [parse_kprobe_event(f"p vfs_read %{r}3", target).args[0].code[0]
            for r in ("r", "gpr")] == [("reg", 3)] * 2


def test_arg_n_only_where_the_arch_has_the_api() -> None:
    """HAVE_FUNCTION_ARG_ACCESS_API: x86 selects it in v5.10, 32-bit ARM does not."""
    assert parse_kprobe_event("p vfs_read $arg2", X86).args[0].code[0] == ("arg", 1)
    with pytest.raises(ProbeEventError, match=r"Invalid \$-valiable"):
        parse_kprobe_event("p vfs_read $arg2", _target("arm", 32))


def test_comm_with_another_type_fails_without_a_log_entry() -> None:
    """traceprobe_parse_probe_arg_body returns -EINVAL for $comm:x64 (AS) and logs nothing."""
    with pytest.raises(ProbeEventError) as err:
        parse_kprobe_event("p vfs_read $comm:x64", X86)
    assert err.value.err is None and "Invalid argument" in str(err.value)


def test_default_names_and_deletion() -> None:
    """trace_kprobe_create's %c_%s_%ld name (':' and '.' become '_'), and -:[GRP/]EVENT."""
    assert parse_kprobe_event("p vfs_read+4", X86).event == "p_vfs_read_4"
    assert parse_kprobe_event("p mod:vfs_read.part", X86).event == "p_mod_vfs_read_part_0"
    assert parse_kprobe_event("-:grp/ev", X86) == ProbeDeletion("grp", "ev")


def test_file_lines_and_comments() -> None:
    """trace_parse_run_command: one definition a line, '#' comments, blank lines."""
    text = "# my probes\np:a vfs_read %di  # the first\n\nr:b vfs_read $retval\n"
    assert [e.event for e in parse_kprobe_events([text], X86)] == ["a", "b"]


def test_fetch_program_compiles_as_the_kernels() -> None:
    """traceprobe_parse_probe_arg_body's instructions: fetch, derefs, the store, bitfield."""
    arg = parse_kprobe_event("p vfs_read +8(+0(%di)):b4@4/32", X86).args[0]
    assert arg.code == (("reg", 14), ("deref", 0), ("st_mem", 8, 4), ("mod_bf", 24, 28))
    sym = parse_kprobe_event("p vfs_read @_sdata+4:u16", X86).args[0]
    assert sym.code == (("symbol", "_sdata+4"), ("imm", 0), ("st_mem", 0, 2))
