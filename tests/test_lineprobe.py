"""Line-number probes through DWARF on every arch: addresses, values, optimized-out variables."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.dwarf.dwarf_expr import DWARFExprOp

from arches import NAMES, get_arch
from kbuild import build, compile_flags
from kisim.cli import main
from patcher.instrument import attach
from probes.dwarf import DebugInfo, DwarfError, Unavailable, _Eval
from probes.kprobes import Kprobes
from lab.lineprobe import list_lines
from probes.lineprobe import (MECHANISM, LineProbe, LineProbeError, parse_location,
                              probe_addresses, resolve_location)
from sim.elf import read_elf
from sim.guest import Guest

SLAB = Path(__file__).resolve().parent.parent / "kernel" / "slab.c"


def _line_of(text: str, after: str | None = None) -> int:
    """1-based line number of the first line containing ``text`` (after the line holding ``after``)."""
    lines = SLAB.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if after in l) if after else 0
    return next(i for i in range(start, len(lines)) if text in lines[i]) + 1


#: kmalloc()'s call of __cache_alloc: one address on every arch (the tracepoint's line
#: has two, its jump-label site among them, which no kprobe may take), and ret is not
#: live there yet at -O2.
TRACE_LINE = _line_of("ret = __cache_alloc(cachep);", after="noinline void *kmalloc(")
#: kmalloc()'s tracepoint call: ret is live there at -Os.
TRACEPOINT_LINE = _line_of("trace_kmalloc(_RET_IP_, ret, size")
#: kmalloc()'s `void *ret;`: a declaration, no code.
DECL_LINE = _line_of("void *ret;", after="noinline void *kmalloc(")
#: The line that declares kmalloc(), where perf probe's kmalloc:N counts from.
KMALLOC_LINE = _line_of("noinline void *kmalloc(")


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


def inst_owner(kprobes: Kprobes, address: int) -> str | None:
    """Who reserves the text at ``address``, whose kprobe register would refuse it."""
    owners = kprobes.text.owners(address)
    return owners[0] if owners else None


def _marked(image, size: int | None = None) -> tuple[Guest, Kprobes, list]:
    """A 1-CPU kmalloc guest whose kmalloc marker records every call (the reference
    the fetched values are checked against), and its kprobes."""
    guest = Guest(image, cpus=1, workload="kmalloc", size=size)
    inst = attach(guest)
    events: list = []
    fmt = inst.tables.markers_named("kmalloc")[0].format
    inst.markers.marker_probe_register("kmalloc", fmt, lambda e, _p: events.append(e))
    inst.markers.marker_arm("kmalloc")
    return guest, Kprobes(guest, text=inst.text, tables=inst.tables), events


@pytest.mark.slow
def test_fetched_values_equal_the_marker_at_the_same_call(image):
    """size and flags read through DWARF at every kprobe hit equal what the kmalloc marker
    reports for the same call; the probe is a real kprobe (breakpoint in text, traps)."""
    arch = get_arch(image.arch)
    guest, kprobes, events = _marked(image)
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
def test_disarm_unregisters_the_lines_kprobes_and_restores_its_text(image):
    """disarm() unregisters each kprobe of the line: the text is the unprobed bytes again,
    no kprobe of the line is left, and the line can be probed again."""
    arch = get_arch(image.arch)
    guest = Guest(image, cpus=1, workload="kmalloc")
    kprobes = Kprobes(guest)
    with DebugInfo(image.elf, arch) as debug:
        probe = LineProbe(kprobes, debug, "kernel/slab.c", TRACE_LINE, ["size"])
        (site,) = probe.addresses
        before = guest.machine.read(site.address, arch.max_insn_len)
        probe.arm()
        armed = probe.kps
        probe.disarm()
        assert guest.machine.read(site.address, arch.max_insn_len) == before
        assert probe.kps == [] and not any(kp in armed for kp in kprobes)
        probe.arm()
        assert guest.machine.read(site.address, arch.max_insn_len) != before
        assert guest.run().ok and probe.kprobe_hits == len(probe.hits) > 1000


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
    assert parse_location("kmalloc:16") == ("kmalloc", 16)
    assert parse_location("kmalloc:0") == ("kmalloc", 0)     # the function itself
    assert parse_location("kmalloc") == ("kmalloc", 0)       # perf probe's FUNC
    for bad in ("slab.c", "slab.c:", ":3", "slab.c:x", "slab.c:0", "kmalloc:-1",
                "kmalloc:99999999999"):
        with pytest.raises(DwarfError, match="expected FILE:LINE, FUNC:N or FUNC"):
            parse_location(bad)


def test_func_n_counts_from_the_declaration_line_as_perf_probe_does():
    """v5.10 probe-finder.c: FUNC:N is the line decl_line + N of FUNC's file; a whole
    path component is the unit of a file suffix."""
    image = build(NAMES[0])
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        offset = TRACE_LINE - KMALLOC_LINE
        assert resolve_location(debug, f"kmalloc:{offset}") == ("kernel/slab.c", TRACE_LINE)
        assert resolve_location(debug, f"slab.c:{TRACE_LINE}") == ("slab.c", TRACE_LINE)
        # placed, the point is named by the debug information's path, as every report prints it
        assert probe_addresses(debug, f"slab.c:{TRACE_LINE}")[:2] == ("kernel/slab.c", TRACE_LINE)
        with pytest.raises(DwarfError, match=r"^no function 'nosuch' in the debug"):
            resolve_location(debug, "nosuch:3")
        with pytest.raises(DwarfError, match=r"^no source file 'lab\.c' in the debug "
                                             r"information$"):
            debug.line_addresses("lab.c", 216)
        assert debug.line_addresses("slab.c", 232)


@pytest.mark.parametrize("text, error", [
    ("size->x", r"size is size_t: not a pointer$"),
    ("cachep.size", r"cachep is struct kmem_cache \*: a pointer: use '->'"),
    ("cachep->nosuch", r"struct kmem_cache has no member 'nosuch' \(members: name, size,"),
    ("cachep->lock", r"cachep->lock is spinlock_t: not a scalar"),
    ("size[1]", r"size is size_t: not an array or a pointer"),
    ("cachep->size->x", r"cachep->size is u32: not a pointer$"),
    ("cachep->", "expected VAR, VAR->member"), ("1x", "expected VAR"),
    ("cachep[-1]", "expected VAR"), ("nosuch->x", "no variable 'nosuch' in scope"),
    ("cachep" + "->next" * 17, "17 steps after the variable, over the 16"),
    ("x" * 300, "300 characters, over the 256-character limit"),
])
def test_a_fetch_that_does_not_fit_the_types_is_refused_at_its_step(text, error):
    image = build(NAMES[0])
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        (site,) = debug.line_addresses("kernel/slab.c", TRACE_LINE)
        with pytest.raises(DwarfError, match=error):
            debug.fetch(site.address, text)
        assert debug.fetch(site.address, "cachep->size").size == 4


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_fetched_members_equal_the_marker_at_the_same_call(name):
    """cachep->size (a pointer, then a member) and cachep[0].size (index, then '.')
    read through DWARF at each hit equal the kmalloc marker's bytes_alloc. Where the
    compiler kept no location for cachep (ARM at -O2), every hit says so."""
    image = build(name)
    guest, kprobes, events = _marked(image, 100)
    with DebugInfo(image.elf, get_arch(name)) as debug:
        probe = LineProbe(kprobes, debug, "kernel/slab.c", TRACE_LINE,
                          ["cachep->size", "cachep[0].size", "cachep->object_size",
                           "kmalloc_caches[0].size", "kmalloc_caches[1].size"])
        (site,) = probe.addresses
        try:
            debug.variable(site.address, "cachep").expression(debug, site.address)
        except Unavailable as why:
            gone = str(why)
        else:
            gone = None
        probe.arm()
        assert guest.run().ok
    want = [e.fields["bytes_alloc"] for e in events]
    smallest = {h.values["kmalloc_caches[0].size"] for h in probe.hits}   # a file static
    assert len(smallest) == 1 and smallest.pop() in (8, 16, 32)
    assert all(h.values["kmalloc_caches[1].size"] == 2 * h.values["kmalloc_caches[0].size"]
               for h in probe.hits)
    if gone is not None:
        assert len(probe.hits) == len(want) > 0
        assert all(h.unavailable["cachep->size"] == gone for h in probe.hits)
        return
    assert [h.values["cachep->size"] for h in probe.hits] == want
    assert [h.values["cachep[0].size"] for h in probe.hits] == want
    assert len(set(want)) > 3 and all(h.values["cachep->object_size"] for h in probe.hits)


RECORDS = """\
#include <linux/module.h>

extern int nr_cpus;		/* the kernel's (kernel/sched.c) */

struct lp_inner {
	u32 x;
	union {
		u32 word;
		u8 bytes[4];
	};
};

struct lp_rec {
	u32 a;
	u16 arr[3];
	struct lp_inner in;
};

noinline unsigned long lp_touch(volatile struct lp_rec *r)
{
	return r->a + r->arr[1] + r->in.x;	/* probed through r */
}

unsigned long lp_run(unsigned long size)
{
	volatile struct lp_rec rec = { .a = 0, .arr = { 10, 20, 30 },
				       .in = { .x = 9, .word = 0x01020304 } };
	unsigned long sum = 0, i;

	for (i = 0; i < size; i++) {
		rec.a = i;
		sum += lp_touch(&rec);	/* probed */
	}
	return sum + nr_cpus;
}
"""


REENTRY = """\
#include <linux/module.h>
#include <linux/kprobes.h>

noinline unsigned long lr_helper(unsigned long x)
{
	return x * 3 + 1;	/* probed */
}

static volatile unsigned long lr_sink;

int lr_pre(struct kprobe *p, struct pt_regs *regs)
{
	lr_sink = lr_helper((unsigned long)p);
	return 0;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_line_hit_inside_another_kprobes_handler_is_nmissed(name, tmp_path, capsys):
    """A line whose code runs only inside a kprobe's pre_handler: each of its hits
    finds that kprobe running on the CPU, is stepped without the handler
    (v5.10 reenter: kprobes_inc_nmissed_count) and fetches nothing, which the line
    probe reports as nmissed, one per hit of the outer probe; the CLI prints
    nmissed for every line probe."""
    from probes.kprobes import Kprobe
    source = tmp_path / "lr.c"
    source.write_text(REENTRY)
    line = REENTRY.splitlines().index("\treturn x * 3 + 1;\t/* probed */") + 1
    image = build(name, modules=[source])
    guest = Guest(image, cpus=1, workload="kmalloc", size=20)
    kprobes = Kprobes(guest)
    outer = kprobes.register_kprobe(Kprobe(symbol_name="kmalloc", pre_handler="lr_pre"))
    with DebugInfo(image.elf, get_arch(name)) as debug:
        probe = LineProbe(kprobes, debug, "lr.c", line, ["x"])
        probe.arm()
        assert guest.run().ok
    assert outer.hits > 0 and outer.nmissed == 0
    assert probe.nmissed == outer.hits and probe.hits == [] and probe.kprobe_hits == 0
    assert main(["probe", "--arch", name, "kmalloc:0", "--workload", "kmalloc", "--size", "20",
                 "--cycles", "count", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nmissed"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_members_of_a_struct_in_memory_arrays_and_anonymous_unions(name, tmp_path):
    """'.' on a struct variable that lives in memory, [N] on its array (bounded by
    the array's DWARF count), and a member of an anonymous union inside it."""
    source = tmp_path / "lp.c"
    source.write_text(RECORDS)
    line = RECORDS.splitlines().index("\t\tsum += lp_touch(&rec);\t/* probed */") + 1
    image = build(name, modules=[source])
    guest = Guest(image, cpus=1, workload="lp:lp_run", size=5)
    with DebugInfo(image.elf, get_arch(name)) as debug:
        (site, *_) = debug.line_addresses("lp.c", line)
        with pytest.raises(DwarfError, match=r"rec\.arr has 3 elements, no \[3\]"):
            debug.fetch(site.address, "rec.arr[3]")
        with pytest.raises(DwarfError, match="nor is it a variable of the file or a global"):
            debug.fetch(site.address, "mem_map")   # kernel/slab.c's static, not this file's
        probe = LineProbe(Kprobes(guest), debug, "lp.c", line,
                          ["rec.a", "rec.arr[2]", "rec.in.x", "rec.in.word", "rec.in.bytes[0]",
                           "nr_cpus"])
        probe.arm()
        inner = RECORDS.splitlines().index("\treturn r->a + r->arr[1] + r->in.x;"
                                           "\t/* probed through r */") + 1
        through = LineProbe(probe.kprobes, debug, "lp.c", inner,
                            ["r->a", "r->arr[1]", "r->in.bytes[3]", "r[0].in.x"])
        through.arm()
        assert guest.run().ok
    first = {h.values["rec.a"]: h.values for h in probe.hits}
    assert sorted(first) == [0, 1, 2, 3, 4]
    big = get_arch(name).endian == "big"
    assert all(v["rec.arr[2]"] == 30 and v["rec.in.x"] == 9 and v["rec.in.word"] == 0x01020304
               and v["rec.in.bytes[0]"] == (1 if big else 4) and v["nr_cpus"] == 1
               for v in first.values())          # nr_cpus: the kernel's, found from extern
    seen = sorted((h.values["r->a"], h.values["r->arr[1]"], h.values["r->in.bytes[3]"],
                   h.values["r[0].in.x"]) for h in through.hits if h.values)
    assert seen == [(i, 20, 4 if big else 1, 9) for i in range(5)]


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
    # the line's kprobe is one v5.10's ARM optimizer takes (NAMES[0] is arm): queued
    # at registration, and not yet optimized when so short a run ends
    assert doc["optimizer"] == {"queued": len(doc["sites"]), "optimized": 0}
    assert main(["probe", "--arch", "ppc32", f"kernel/slab.c:{TRACE_LINE}", "--fetch", "size",
                 "--workload", "kmalloc", "--size", "50"]) == 0
    assert "optimizer" not in capsys.readouterr().out          # no optprobes on PowerPC
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
    guest, kprobes, events = _marked(image, 200)
    with DebugInfo(image.elf, get_arch(name)) as debug:
        (first, jump_label) = debug.line_addresses("kernel/slab.c", TRACEPOINT_LINE)
        assert inst_owner(kprobes, jump_label.address) == "jump_label"   # no kprobe there
        probe = LineProbe(kprobes, debug, "kernel/slab.c", TRACEPOINT_LINE, ["ret", "size"],
                          [first])
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


def test_line_ranges_are_perf_probe_ls():
    """v5.10 parse_line_range_desc: FUNC[:RLN[+NUM|-RLN2]] relative to the declaration
    (to two lines past the last with code), FILE[:ALN[+NUM|-ALN2]] absolute."""
    from probes.lineprobe import EXTRA_LINES, line_range
    image = build(NAMES[0])
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        last = max(n for n in debug.lines_with_code("kernel/slab.c")
                   if debug.line_addresses("kernel/slab.c", n)[0].function == "kmalloc")
        whole = line_range(debug, "kmalloc")
        assert (whole.function, whole.file, whole.start, whole.end, whole.offset) == (
            "kmalloc", "kernel/slab.c", KMALLOC_LINE, last + EXTRA_LINES, KMALLOC_LINE)
        assert (line_range(debug, "kmalloc:5+6").start, line_range(debug, "kmalloc:5+6").end) \
            == (KMALLOC_LINE + 5, KMALLOC_LINE + 10)
        assert line_range(debug, "kmalloc:5-10").end == KMALLOC_LINE + 10
        plain = line_range(debug, "slab.c:216")
        assert (plain.function, plain.start, plain.end, plain.offset) == (None, 216, None, 0)
        for bad, why in (("kmalloc:9-3", "start line must not be after"),
                         ("slab.c:0", "count from 1"), ("kmalloc:x", "expected FUNC"),
                         ("nosuch", "no function 'nosuch'"), ("nosuch.c:3", "no source file")):
            with pytest.raises(DwarfError, match=why):
                line_range(debug, bad)


def test_cli_lists_lines_and_variables_as_perf_probe_does(capsys):
    """-L numbers exactly the lines a probe can go on (relative to the declaration);
    -V lists the variables at each address, and those with no location there."""
    arch = NAMES[0]
    assert main(["probe", "--arch", arch, "-L", "kmalloc"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "<kmalloc@kernel/slab.c:0>"
    source = SLAB.read_text().splitlines()
    image = build(arch)
    with DebugInfo(image.elf, get_arch(arch)) as debug:
        for i, text in enumerate(out[1:]):
            line = KMALLOC_LINE + i
            numbered = text[:9] != " " * 9
            assert text[9:] == source[line - 1]
            # a numbered line has addresses; one unnumbered may too (an address that
            # reads back as another line: -L leaves it out, a probe refuses it)
            assert not numbered or debug.line_addresses("kernel/slab.c", line)
            assert not numbered or int(text[:7]) == i
    assert out[1 + TRACE_LINE - KMALLOC_LINE].startswith(f"{TRACE_LINE - KMALLOC_LINE:7d}  ")
    assert out[1 + DECL_LINE - KMALLOC_LINE].startswith(" " * 9)
    assert main(["probe", "--arch", arch, "-V", f"kmalloc:{TRACE_LINE - KMALLOC_LINE}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Available variables at kmalloc:{TRACE_LINE - KMALLOC_LINE}"
    assert out[1].startswith("\t@<kmalloc+") and "\t\tsize_t\tsize" in out
    assert any(v.startswith("\t\t(void *\tret: optimized out") for v in out)
    assert main(["probe", "--arch", arch, "-L", "kmalloc:9-3"]) == 2
    assert main(["probe", "--arch", arch]) == 2
    assert "give a probe point" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_definitions_record_what_the_tracepoint_records(name):
    """perf probe -D's kprobe_events definitions of a line probe, made from DWARF
    locations (a register, +OFFS(%REG) through a pointer, @SYM+OFFS for a file
    static), recorded through the ring buffer as kprobe events: each hit's arguments
    equal the kmem_kmalloc tracepoint's fields for the same call."""
    from probes.lineprobe import kprobe_definitions
    from probes.trace_kprobe import kprobe_events
    from sim.elf import read_elf
    from tracing.events import parse_probes
    from tracing.session import EventList, TraceOptions, TraceSession
    image = build(name)
    location = f"kmalloc:{TRACE_LINE - KMALLOC_LINE}"
    fetch = ["size", "flags", "kmalloc_caches[1].size", "cachep->size"]
    with DebugInfo(image.elf, get_arch(name)) as debug:
        (site,) = debug.line_addresses("kernel/slab.c", TRACE_LINE)
        try:
            debug.variable(site.address, "cachep").expression(debug, site.address)
        except Unavailable:                 # ARM: perf probe refuses it, and so does -D
            with pytest.raises(DwarfError, match="cachep is optimized out"):
                kprobe_definitions(debug, read_elf(image.elf), location, fetch)
            fetch.pop()
        *_, (line,) = kprobe_definitions(debug, read_elf(image.elf), location, fetch)
    # perf names an argument after its last member: the second and third "size" are
    # numbered here, where perf would repeat the name and the kernel refuse it
    assert re.match(rf"p:probe/kmalloc_L{TRACE_LINE - KMALLOC_LINE} kmalloc\+\d+ size=\S+:x"
                    r"\d+ flags=\S+:x32 size_2=@kmalloc_caches\+\d+:x32", line)
    guest = Guest(image, cpus=1, workload="kmalloc", size=40)
    inst = attach(guest)
    events = kprobe_events(guest, inst, (line,))
    session = TraceSession(guest, TraceOptions(parse_probes("kmem_kmalloc")), inst, events)
    sink = EventList()
    assert session.run(sink).checksum_ok
    calls = [e.fields for e in sink.events if e.name == "kmem_kmalloc"]
    hits = [e.fields for e in sink.events if e.name.startswith("kmalloc_L")]
    assert len(hits) == len(calls) > 10
    assert [(h["size"], h["flags"]) for h in hits] == [(c["bytes_req"], c["gfp_flags"])
                                                       for c in calls]
    assert len({h["size_2"] for h in hits}) == 1
    if "cachep->size" in fetch:
        assert [h["size_3"] for h in hits] == [c["bytes_alloc"] for c in calls]


def test_cli_prints_the_definitions(capsys):
    arch = NAMES[0]
    rel = TRACE_LINE - KMALLOC_LINE
    assert main(["probe", "--arch", arch, "-D", f"kmalloc:{rel}", "--fetch", "size"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert re.fullmatch(rf"p:probe/kmalloc_L{rel} kmalloc\+\d+ size=%\w+:x(32|64)", line)
    assert main(["probe", "--arch", arch, "-D", f"kmalloc:{rel}", "--fetch",
                 "sz=size,n=kmalloc_caches[1].size"]) == 0     # perf's NAME=VAR
    (line,) = capsys.readouterr().out.splitlines()
    assert re.search(r" sz=%\w+:x(32|64) n=@kmalloc_caches\+\d+:x32$", line)
    # the file as -V and a probe run name it: the debug information's path, not as typed
    assert main(["probe", "--arch", arch, "-D", f"slab.c:{TRACE_LINE}", "--fetch", "size",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["file"], doc["line"]) == ("kernel/slab.c", TRACE_LINE)
    assert main(["probe", "--arch", arch, "-D", f"kmalloc:{rel}", "--fetch", "1x=size"]) == 2
    assert "NAME= takes a C name" in capsys.readouterr().err
    assert main(["probe", "--arch", arch, "-D", f"kmalloc:{rel}", "--fetch", "ret"]) == 2
    assert "ret is optimized out at this address" in capsys.readouterr().err


def test_a_line_probe_fetches_at_most_what_a_kprobe_event_takes():
    image = build(NAMES[0])
    with DebugInfo(image.elf, get_arch(image.arch)) as debug:
        with pytest.raises(LineProbeError, match="129 variables to fetch, over the 128"):
            LineProbe(Kprobes(Guest(image, workload="fib")), debug, "kernel/slab.c",
                      TRACE_LINE, [f"v{i}" for i in range(129)] + ["v0"])


def test_lines_sharing_an_address_and_func_0_follow_perf_probe():
    """v5.10 perf probe: a line whose address reads back as another line is refused,
    naming the one to probe (verify_representive_line: kmalloc's entry is its
    declaration line); FUNC:0 is the function itself, at the entry of each of its
    copies when perf finds its abstract definition first (an inlined copy too)."""
    image = build("x86_64")
    with DebugInfo(image.elf, get_arch("x86_64")) as debug:
        with pytest.raises(DwarfError, match=r"kernel/slab\.c:\d+ is sharing the address "
                                             r"0x[0-9a-f]+ with other lines: please try to "
                                             r"probe at kernel/slab\.c:\d+ \(kmalloc:0\)"):
            probe_addresses(debug, "kmalloc:1")
        file, line, (entry,) = probe_addresses(debug, "kmalloc:0")
        assert (file, line) == ("kernel/slab.c", KMALLOC_LINE)
        assert entry.address == read_elf(image.elf).symbols["kmalloc"]
        *_, copies = probe_addresses(debug, "finish_task_switch:0")
        assert [c.function for c in copies] == ["schedule", "finish_task_switch"]
        assert debug.line_addresses("kernel/slab.c", KMALLOC_LINE + 1)   # it has code


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf (linux-perf)")
def test_listing_and_placement_equal_real_perf_probe():
    """The oracle: real perf probe (-k vmlinux, offline) on kisim's x86-64 kernel.
    For every function of two files, -L prints the same lines and numbers, and
    every numbered line, probed as FUNC:N, gets the same addresses as perf -D."""
    image = build("x86_64")
    elf, symbols = str(image.elf), read_elf(image.elf).symbols
    with DebugInfo(image.elf, get_arch("x86_64")) as debug:
        functions = sorted({debug.function_at(a) for f, _, a in debug._rows
                            if f in ("kernel/slab.c", "kernel/sched.c")})
        assert len(functions) > 15
        for function in functions:
            perf = subprocess.run(["perf", "probe", "-k", elf, "-L", function],
                                  capture_output=True, text=True, timeout=60).stdout
            listing = list_lines(get_arch("x86_64"), function)
            mine = [(f"{ln['shown']:7d}  " if ln["code"] else " " * 9) + ln["text"]
                    for ln in listing["lines"]]
            assert perf.splitlines()[1:] == mine, function
            for ln in listing["lines"]:
                if not ln["code"]:
                    continue
                spec = f"{function}:{ln['shown']}"
                defs = subprocess.run(["perf", "probe", "-k", elf, "-D", spec],
                                      capture_output=True, text=True, timeout=60).stdout
                theirs = sorted({symbols[s] + int(o) for s, o in
                                 re.findall(r"^p:\S+ (\w+)\+(\d+)", defs, re.M)})
                try:
                    mine_at = [a.address for a in probe_addresses(debug, spec)[2]]
                except DwarfError:          # sharing its address: perf prints nothing
                    mine_at = []
                assert theirs == mine_at, spec
