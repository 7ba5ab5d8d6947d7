"""Line-number probes through DWARF on every arch: addresses, values, optimized-out variables."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from elftools.dwarf.dwarf_expr import DWARFExprOp

from arches import NAMES, get_arch
from kbuild import build, compile_flags
from kisim.cli import main
from patcher.instrument import attach
from probes.dwarf import DebugInfo, DwarfError, Unavailable, _Eval
from probes.kprobes import Kprobes
from probes.lineprobe import MECHANISM, LineProbe, LineProbeError, parse_location
from sim.guest import Guest

SLAB = Path(__file__).resolve().parent.parent / "kernel" / "slab.c"


def _line_of(text: str, after: str | None = None) -> int:
    """1-based line number of the first line containing ``text`` (after the line holding ``after``)."""
    lines = SLAB.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if after in l) if after else 0
    return next(i for i in range(start, len(lines)) if text in lines[i]) + 1


#: kmalloc()'s tracepoint call: after the kmemtrace marker, ret is dead there at -O2.
TRACE_LINE = _line_of("trace_kmalloc(_RET_IP_, ret, size")
#: kmalloc()'s `void *ret;`: a declaration, no code.
DECL_LINE = _line_of("void *ret;", after="noinline void *kmalloc(")


@pytest.fixture(scope="module", params=NAMES)
def image(request):
    return build(request.param)


@pytest.mark.slow
def test_line_resolves_to_kmalloc(image):
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        addrs = debug.line_addresses("kernel/slab.c", TRACE_LINE)
        assert [a.function for a in addrs] == ["kmalloc"]
        assert addrs[0].file == "kernel/slab.c"
        # the same line by a shorter path suffix
        assert debug.line_addresses("slab.c", TRACE_LINE) == addrs


@pytest.mark.slow
def test_line_without_code(image):
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        assert debug.line_addresses("kernel/slab.c", DECL_LINE) == []
        guest = Guest(image, workload="fib")
        with pytest.raises(LineProbeError, match="no code for this line"):
            LineProbe(Kprobes(guest), debug, "kernel/slab.c", DECL_LINE, ["size"])


@pytest.mark.slow
def test_fetched_values_equal_the_marker_at_the_same_call(image):
    """size and flags read through DWARF at every kprobe hit equal what the kmalloc marker
    reports for the same call; the probe is a real kprobe (breakpoint in text, traps)."""
    arch = get_arch(image.arch)
    guest = Guest(image, cpus=1, workload="kmalloc")
    inst = attach(guest)
    events = []
    fmt = inst.tables.markers_named("kmalloc")[0].format
    inst.markers.marker_probe_register("kmalloc", fmt, lambda e, _p: events.append(e))
    inst.markers.marker_arm("kmalloc")
    kprobes = Kprobes(guest, text=inst.text, tables=inst.tables)
    with DebugInfo(image.elf, arch) as debug:
        probe = LineProbe(kprobes, debug, "kernel/slab.c", TRACE_LINE,
                          ["size", "flags", "ret"])
        (site,) = probe.addresses
        before = guest.machine.read(site.address, arch.max_insn_len)
        probe.arm()
        after = guest.machine.read(site.address, arch.max_insn_len)
        assert after != before and [kp.addr for kp in kprobes
                                    if kp not in kprobes.arch_probes] == [site.address]
        result = guest.run()
        assert result.ok
    assert len(probe.hits) == len(events) == probe.kprobe_hits > 1000
    assert all(h.cpu == 0 and h.address == site.address for h in probe.hits)
    # the trap path ran once per hit (plus what the arch's single-step adds)
    assert sum(c["events"].get("trap", 0) for c in result.per_cpu) >= len(probe.hits)
    assert all("optimized out at this address" in h.unavailable["ret"] for h in probe.hits)
    got = [(h.values["size"], h.values["flags"]) for h in probe.hits]
    want = [(e.fields["bytes_req"], e.fields["gfp_flags"]) for e in events]
    assert got == want
    assert len({size for size, _ in got}) > 5          # real, varying values


@pytest.mark.slow
def test_known_optimized_out_variable(image):
    """At -O2, `ret` has no location at the tracepoint line: reported, not invented."""
    arch = get_arch(image.arch)
    with DebugInfo(image.elf, arch) as debug:
        (site,) = debug.line_addresses("kernel/slab.c", TRACE_LINE)
        ret = debug.variable(site.address, "ret")
        with pytest.raises(Unavailable, match="optimized out at this address"):
            ret.expression(debug, site.address)
        # one line earlier (the marker) it is live: the location list is what decides
        marker_line = _line_of("trace_mark(kmalloc,")
        first = debug.line_addresses("kernel/slab.c", marker_line)[-1].address
        assert debug.variable(first, "ret").expression(debug, first)


def test_scope_lists_parameters_and_locals(image):
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        (site,) = debug.line_addresses("kernel/slab.c", TRACE_LINE)
        scope = {v.name: v for v in debug.variables_at(site.address)}
        assert {"size", "flags", "cachep", "ret"} <= set(scope)
        assert scope["size"].kind == "parameter" and scope["ret"].kind == "local"
        assert scope["size"].type_name == "size_t"
        assert not any(n.startswith("__mark") for n in scope)   # statics are not probe vars
        with pytest.raises(DwarfError, match="no variable"):
            debug.variable(site.address, "nosuch")


def _op(name: str, *args: int) -> DWARFExprOp:
    return DWARFExprOp(0, name, list(args), 0)


@pytest.mark.parametrize("name", NAMES)
def test_expression_evaluator(name):
    """fbreg over a register frame base, breg, stack_value and pieces, on a fake CPU."""
    arch = get_arch(name)
    from probes.dwarf import dwarf_registers
    regs = dwarf_registers(arch)
    fp_num, fp_name = next((n, r) for n, r in regs.items() if n > 2)
    memory = {0x1000 + 16: arch.from_int(0x1234, arch.word)}
    ev = _Eval(arch, regs, lambda r: 0x1000 if r == fp_name else 7,
               lambda a, n: memory.get(a, bytes(n))[:n], [_op(f"DW_OP_reg{fp_num}")])
    (piece,) = ev.run([_op("DW_OP_fbreg", 16)])
    assert (piece.kind, piece.where) == ("mem", 0x1010)
    (piece,) = ev.run([_op(f"DW_OP_breg{fp_num}", 8), _op("DW_OP_stack_value")])
    assert (piece.kind, piece.where) == ("value", 0x1008)
    pieces = ev.run([_op("DW_OP_reg0"), _op("DW_OP_piece", 4),
                     _op("DW_OP_lit5"), _op("DW_OP_stack_value"), _op("DW_OP_piece", 4)])
    assert [(p.kind, p.where, p.size) for p in pieces] == [("reg", 0, 4), ("value", 5, 4)]
    with pytest.raises(Unavailable, match="entry_value"):
        ev.run([_op("DW_OP_entry_value")])


def test_optimization_level_follows_kconfig():
    arch = get_arch(NAMES[0])
    assert "-O2" in compile_flags(arch, {"CC_OPTIMIZE_FOR_PERFORMANCE": "y"})
    flags = compile_flags(arch, {"CC_OPTIMIZE_FOR_SIZE": "y"})
    assert "-Os" in flags and "-O2" not in flags
    assert build(NAMES[0]).config.get("CC_OPTIMIZE_FOR_PERFORMANCE") == "y"   # the default


def test_parse_location():
    assert parse_location("kernel/slab.c:225") == ("kernel/slab.c", 225)
    for bad in ("slab.c", "slab.c:", ":3", "slab.c:x", "slab.c:0"):
        with pytest.raises(DwarfError):
            parse_location(bad)


def test_a_file_that_is_not_there_says_what_the_tools_accept():
    """FUNC:N (perf probe's form) is not a file: the error says FILE:LINE is asked,
    and that a whole path component is the unit of a suffix."""
    image = build(NAMES[0])
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        with pytest.raises(DwarfError, match=r"perf probe's FUNC:N form, kmalloc:N"):
            debug.line_addresses("kmalloc", 16)
        with pytest.raises(DwarfError, match=r"^no source file 'lab\.c' in the debug "
                                             r"information$"):
            debug.line_addresses("lab.c", 216)
        assert debug.line_addresses("slab.c", 232)


@pytest.mark.slow
def test_cli_probe(capsys):
    arch = NAMES[0]
    assert main(["probe", "--arch", arch, f"kernel/slab.c:{TRACE_LINE}", "--fetch",
                 "size,ret", "--workload", "kmalloc", "--size", "50", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hits"] == len(doc["events"]) > 0 and doc["optimization"] == "-O2"
    assert all("ret" in e["unavailable"] and "size" in e["values"] for e in doc["events"])
    assert doc["mechanism"] == MECHANISM and doc["kprobe_hits"] == doc["hits"]
    assert doc["cost_per_hit"]["traps"] >= 1 and doc["cost_per_hit"]["modeled_cycles"] > 0
    assert len(doc["kprobes"]) == len(doc["sites"])
    assert main(["probe", "--arch", arch, f"kernel/slab.c:{DECL_LINE}",
                 "--workload", "kmalloc"]) == 2
    assert "no code for this line" in capsys.readouterr().err
    assert main(["probe", "--arch", arch, "nosuch.c:3", "--workload", "kmalloc"]) == 2


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_size_optimized_build_keeps_ret(name):
    """-Os (CONFIG_CC_OPTIMIZE_FOR_SIZE) keeps `ret` live on the line where -O2 drops it;
    its value there is the pointer the kmalloc marker reports for the same call."""
    image = build(name, overrides={"CC_OPTIMIZE_FOR_SIZE": "y"})
    assert "-Os" in image.info["cflags"]
    guest = Guest(image, cpus=1, workload="kmalloc", size=200)
    inst = attach(guest)
    events = []
    fmt = inst.tables.markers_named("kmalloc")[0].format
    inst.markers.marker_probe_register("kmalloc", fmt, lambda e, _p: events.append(e))
    inst.markers.marker_arm("kmalloc")
    with DebugInfo(image.elf, get_arch(name)) as debug:
        probe = LineProbe(Kprobes(guest, text=inst.text, tables=inst.tables), debug,
                          "kernel/slab.c", TRACE_LINE, ["ret", "size"])
        probe.arm()
        assert guest.run().ok
    assert [(h.values["ret"], h.values["size"]) for h in probe.hits] == \
        [(e.fields["ptr"], e.fields["bytes_req"]) for e in events]
    assert not any(h.unavailable for h in probe.hits)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_blacklisted_line_is_refused(name, capsys):
    """A line of start_kernel (NOKPROBE_SYMBOL) has code, but register_kprobe refuses it:
    one line on stderr, exit 2 (negative control: a kmalloc line is accepted above)."""
    image = build(name)
    with DebugInfo(image.elf, get_arch(name)) as debug:
        line = next(n for n in debug.lines_with_code("kernel/init.c")
                    if any(a.function == "start_kernel"
                           for a in debug.line_addresses("kernel/init.c", n)))
        guest = Guest(image, workload="fib")
        probe = LineProbe(Kprobes(guest), debug, "kernel/init.c", line)
        with pytest.raises(LineProbeError, match="blacklisted"):
            probe.arm()
        assert list(probe.kprobes) == list(probe.kprobes.arch_probes)  # none of its own
    assert main(["probe", "--arch", name, f"kernel/init.c:{line}", "--workload", "fib"]) == 2
    err = capsys.readouterr().err
    assert "blacklisted" in err and len(err.strip().splitlines()) == 1


def test_arch_without_dwarf_registers_is_refused_in_one_line():
    """An arch that declares no DWARF numbering gets a clear error, not a lookup crash."""
    import dataclasses

    from probes.dwarf import dwarf_registers
    bare = dataclasses.replace(get_arch(NAMES[0]), name="bare", dwarf_regs={})
    with pytest.raises(DwarfError, match=r"^bare: no DWARF register numbering"):
        dwarf_registers(bare)
