"""The function tracer and dynamic ftrace: mcount stubs, boot nops, filters, tracers, output."""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace

import pytest

from arches import NAMES, get_arch
from kbuild import build
from kisim.cli import main
from patcher.errors import PatchError
from patcher.ftrace import arch_ftrace, ftrace_match
from patcher.tables import load_tables
from tracing.text import Header, graph_lines, header, render
from probes.function_tracer import FunctionTracer, Symbolizer
from tracing import babeltrace
from tracing.session import EventList, TraceOptions, TraceResult, TraceSession
from sim.errors import ConfigError
from sim.ftrace_init import FtraceBug, ftrace_init, ftrace_modify_code, mcount_loc
from sim.event import Event
from sim.guest import DEFAULT_QUANTUM, Guest
from sim.machine import Machine


class Traced:
    """A FunctionTracer and the trace session recording its run, as ``kisim ftrace`` pairs them."""

    def __init__(self, tracer: FunctionTracer, **options) -> None:
        self.tracer = tracer
        self.session = TraceSession(tracer.guest, TraceOptions(tracer.event_names, **options))
        self.sink = EventList()

    def __getattr__(self, name: str):
        return getattr(self.tracer, name)

    @property
    def events(self) -> list[Event]:
        """The events drained so far (the consumer drains after every turn)."""
        return self.sink.events

    def produced(self) -> int:
        """Events the guest has written so far, on every CPU (drained or not)."""
        ring = self.session.ring
        return sum(ring.state(cpu)["produced"] for cpu in range(len(self.machine.cpus)))

    def run(self, on_turn=None) -> TraceResult:
        return self.session.run(self.sink, on_turn=on_turn)


def tracer_for(name: str, *, dynamic: bool = True, cpus: int = 2, workload: str = "kmalloc",
               size: int | None = 40, tracer: str = "function", seed: int | None = None,
               quantum: int = DEFAULT_QUANTUM, **options) -> Traced:
    b = build(name, overrides={"DYNAMIC_FTRACE": "y" if dynamic else "n"})
    guest = Guest(b, cpus=cpus, workload=workload, size=size, seed=seed, quantum=quantum)
    return Traced(FunctionTracer(guest, load_tables(b.elf, b.spec), tracer=tracer), **options)


def site_bytes(t: Traced) -> dict[int, bytes]:
    size = arch_ftrace(t.guest.arch).MCOUNT_INSN_SIZE
    return {s.address: t.machine.read(s.address, size) for s in t.tables.mcount}


def watch_entries(t: Traced) -> Counter:
    """An independent call trace: a Unicorn code hook at each traced function's entry.

    Counts (function, return address), the return address read as the
    call left it: in the link register, or on top of the stack where the
    call pushes it.
    """
    arch = t.guest.arch
    calls: Counter = Counter()
    for fn in {s.function for s in t.tables.mcount}:
        def hit(cpu, fn=fn):
            ret = cpu.reg(arch.ra) if arch.ra else t.machine.read_word(cpu.reg(arch.sp))
            calls[(fn, ret)] += 1
        t.machine.watch(t.guest.image.symbols[fn], hit)
    return calls


def traced(t: Traced) -> Counter:
    """(function, return address) of each recorded call."""
    return Counter((t.symbols.name(e.values[0]), e.values[1]) for e in t.events
                   if e.name in ("function", "funcgraph_entry"))


# -- boot conversion: every site a nop, compare-then-write -----------------

@pytest.mark.parametrize("name", NAMES)
def test_every_default_boot_converts_every_site_to_the_arch_nop_and_nothing_else(name):
    b = build(name)                                   # the defconfig: DYNAMIC_FTRACE=y
    guest = Guest(b, cpus=2, workload="kmalloc", size=10)
    ops, image = arch_ftrace(guest.arch), guest.image
    tables = load_tables(b.elf, b.spec)
    sites = [s.address for s in tables.mcount]
    assert guest.mcount_sites == sites and guest.ftrace_boot.sites == len(sites) > 40
    assert guest.machine.total_instructions == 0      # done before any CPU ran
    nop, size = ops.ftrace_nop_replace(), ops.MCOUNT_INSN_SIZE
    segment = next(seg for seg in image.segments if seg.vaddr <= sites[0] < seg.vaddr + seg.memsz)
    elf = bytearray(segment.data)                     # the bytes as linked
    now = guest.machine.read(segment.vaddr, len(elf))
    mcount = image.symbols[ops.MCOUNT_ADDR]
    for ip in sites:
        off = ip - segment.vaddr
        assert bytes(elf[off:off + size]) == ops.ftrace_call_replace(ip, mcount)
        assert now[off:off + size] == nop, hex(ip)
        elf[off:off + size] = nop
    assert now == bytes(elf)                          # only the site bytes changed
    assert guest.run().ok
    bare = Guest(b.elf, workload="fib", size=5)       # an ELF path: the image decides
    assert bare.mcount_sites == sites and all(
        bare.machine.read(ip, size) == nop for ip in sites)


@pytest.mark.parametrize("name", NAMES)
def test_without_dynamic_ftrace_the_boot_leaves_the_calls(name):
    guest = Guest(build(name, overrides={"DYNAMIC_FTRACE": "n"}), workload="fib", size=5)
    assert guest.ftrace_boot is None and guest.mcount_sites == []
    assert "ftrace_caller" not in guest.image.symbols   # assembled only for dynamic ftrace


def test_cli_boot_reports_the_conversion(capsys):
    assert main(["boot", "--arch", "ppc32", "--workload", "fib", "--size", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ftrace_init"]["sites"] == out["sites"]["mcount"] > 40
    assert main(["boot", "--arch", "ppc32", "--workload", "fib", "--size", "5",
                 "--set", "DYNAMIC_FTRACE=n", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ftrace_init"] is None


def test_the_nops_are_the_kernels():
    assert arch_ftrace(get_arch("x86_64")).ftrace_nop_replace() == bytes.fromhex("0f1f440000")
    assert arch_ftrace(get_arch("arm")).ftrace_nop_replace() == bytes.fromhex("0040bde8")
    assert arch_ftrace(get_arch("ppc32")).ftrace_nop_replace() == bytes.fromhex("60000000")


def _unbooted(name: str) -> tuple[Machine, list[int], int]:
    b = build(name)
    machine = Machine(get_arch(name), 2)
    image = machine.load_elf(str(b.elf))
    return (machine, mcount_loc(machine, image),
            image.symbols[arch_ftrace(machine.arch).MCOUNT_ADDR])


@pytest.mark.parametrize("name", NAMES)
def test_a_site_that_is_not_the_expected_call_kills_ftrace_at_boot(name):
    """2.6.28 ftrace_code_disable: ftrace_bug warns and kills ftrace, ftrace_update_code
    converts nothing after it, and the kernel boots on with every ftrace call ENODEV."""
    machine, sites, mcount = _unbooted(name)
    ops = arch_ftrace(machine.arch)
    nop = ops.ftrace_nop_replace()
    machine.write(sites[3], nop)                          # someone else changed it
    stats = ftrace_init(machine, sites, mcount)
    assert stats.sites == 3 and "actual: " + nop.hex(":") in stats.bug
    assert [machine.read(ip, len(nop)) for ip in sites[:4]] == [nop] * 4
    assert all(machine.read(ip, len(nop)) == ops.ftrace_call_replace(ip, mcount)
               for ip in sites[4:])                       # still calls to mcount
    with pytest.raises(FtraceBug, match="actual"):
        ftrace_modify_code(machine, sites[3], ops.ftrace_call_replace(sites[3], mcount), nop)
    machine2, sites2, mcount2 = _unbooted(name)           # the control: untouched, accepted
    stats2 = ftrace_init(machine2, sites2, mcount2)
    assert stats2.sites == len(sites2) and stats2.bug is None


@pytest.mark.parametrize("name", NAMES)
def test_after_an_ftrace_bug_every_ftrace_call_is_enodev(name):
    t = tracer_for(name)
    ft, ops = t.ftrace, arch_ftrace(t.guest.arch)
    assert ft.disabled is None
    ft.booted(replace(ft.init_stats, bug="ftrace failed to modify 0x0"))
    assert t.machine.read_word(ft.func_ptr) == ft.stub and not ft.ftrace_enabled
    for call in (t.start, lambda: ft.write_filter("kmalloc"),
                 lambda: ft.set_ftrace_enabled(True),
                 lambda: ft.ftrace_set_kprobe(ft.sites[0], True)):
        with pytest.raises(PatchError, match="ENODEV: ftrace is disabled since ftrace failed"):
            call()
    before = site_bytes(t)
    t.stop()                                              # the pointer alone, no text
    assert site_bytes(t) == before and set(before.values()) == {ops.ftrace_nop_replace()}


@pytest.mark.parametrize("name", NAMES)
def test_a_changed_site_is_ftrace_bug_the_others_are_patched_and_ftrace_dies(name):
    """2.6.28 ftrace_replace_code: the record is flagged failed and left alone, the
    loop goes on, and ftrace_bug kills ftrace: the pointer is ftrace_stub again."""
    for tamper in (True, False):                          # False: the control
        t = tracer_for(name, size=20)
        ft, ops = t.ftrace, arch_ftrace(t.guest.arch)
        nop, victim = ops.ftrace_nop_replace(), ft.records[5]
        other = bytes(b ^ 0xFF for b in nop)
        if tamper:
            t.machine.write(victim.ip, other)
        t.start()
        calls = {ip for ip, b in site_bytes(t).items()
                 if b == ops.ftrace_call_replace(ip, ft.ftrace_addr)}
        if not tamper:
            assert ft.disabled is None and len(calls) == len(ft.records)
            assert t.machine.read_word(ft.func_ptr) != ft.stub
            continue
        assert victim.failed and t.machine.read(victim.ip, len(nop)) == other
        assert calls == {r.ip for r in ft.records} - {victim.ip}
        assert victim.function in ft.disabled and "actual: " + other.hex(":") in ft.disabled
        assert t.machine.read_word(ft.func_ptr) == ft.stub
        t.machine.write(victim.ip, nop)                   # the guest can run through it
        assert t.run().ok and not t.events                # the calls reach ftrace_stub
        with pytest.raises(PatchError, match="ENODEV"):
            ft.register_ftrace_function("ftrace_selftest_recursive_call")


@pytest.mark.parametrize("name", NAMES)
def test_boot_conversion_only_before_the_cpus_run(name):
    machine, sites, mcount = _unbooted(name)
    machine.cpus[0].pc = machine.image.entry
    machine.step(0, 10)
    with pytest.raises(ConfigError, match="before the CPUs start"):
        ftrace_init(machine, sites, mcount)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_dormant_boot_is_within_2_percent_of_function_tracer_n(name):
    """The issue's goal: nops cost what FUNCTION_TRACER=n costs, within 2 % of instructions."""
    def count(**overrides: str) -> int:
        r = Guest(build(name, overrides=overrides), workload="hackbench").run()
        assert r.ok
        return r.instructions
    plain, dormant, live = count(FUNCTION_TRACER="n"), count(), count(DYNAMIC_FTRACE="n")
    assert plain < dormant <= plain * 1.02 < live


# -- the seed's mcount: live calls, one function, either switch -----------

@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_without_dynamic_ftrace_the_calls_stay_live(name):
    t = tracer_for(name, dynamic=False)
    ops = arch_ftrace(t.guest.arch)
    with pytest.raises(PatchError, match="EPERM"):
        t.ftrace.ftrace_init()
    t.start()
    r = t.run()
    assert r.ok and t.events
    for ip, insn in site_bytes(t).items():
        assert insn == ops.ftrace_call_replace(ip, t.ftrace.mcount_addr)


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_tracing_needs_both_the_function_and_the_switch_in_either_order(name, dynamic):
    t = tracer_for(name, dynamic=dynamic)
    ft = t.ftrace
    ptr = lambda: t.machine.read_word(ft.func_ptr)      # noqa: E731
    ft.set_ftrace_enabled(False)
    t.start()
    assert ptr() == ft.stub and not ft.enabled_sites()
    ft.set_ftrace_enabled(True)
    assert ptr() == t.guest.image.symbols["function_trace_call"]
    # stop by clearing the function, then by the switch (and the other way round)
    ft.unregister_ftrace_function()
    assert ptr() == ft.stub and not ft.enabled_sites()
    t.start()
    ft.set_ftrace_enabled(False)
    assert ptr() == ft.stub and not ft.enabled_sites()
    r = t.run()
    assert r.ok and t.events == []


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_starting_and_stopping_mid_run_by_either_switch(name, dynamic):
    """Live patching while both CPUs run through the sites; the checksum holds."""
    for stop in ("unregister", "sysctl"):
        t = tracer_for(name, dynamic=dynamic)
        marks: list[int] = []

        def on_turn(machine, t=t, stop=stop):
            if not marks and machine.total_instructions > 20_000:
                marks.append(t.produced())
                t.start()
            elif len(marks) == 1 and t.produced() >= 50:
                marks.append(t.produced())
                (t.stop() if stop == "unregister" else t.ftrace.set_ftrace_enabled(False))

        r = t.run(on_turn=on_turn)
        assert r.ok and marks[0] == 0 and len(marks) == 2
        # a CPU may be inside the tracer when it is stopped (its turn ended at the
        # clock read, before the record): that call still records, as in the kernel
        assert marks[1] <= len(t.events) <= marks[1] + len(t.machine.cpus)
        if dynamic:
            assert all(insn == t.ftrace.ftrace_nop() for insn in site_bytes(t).values())


@pytest.mark.parametrize("name", NAMES)
def test_one_batch_is_one_protocol_run_whatever_the_number_of_sites(name):
    rounds = []
    for words in ("kmalloc", ""):                       # one site, then every site
        t = tracer_for(name)
        t.ftrace.write_filter(words)
        before = t.machine.sync_rounds
        t.start()
        assert len(t.ftrace.enabled_sites()) == (1 if words else len(t.tables.mcount))
        rounds.append(t.machine.sync_rounds - before)
    assert rounds[0] == rounds[1] >= 1


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_trace(name):
    runs = []
    for _ in range(2):
        t = tracer_for(name, size=30, seed=7, quantum=500)
        t.start()
        assert t.run().ok
        runs.append(t.events)
    assert runs[0] == runs[1] and runs[0]


@pytest.mark.parametrize("name", NAMES)
def test_registering_replaces_the_function(name):
    t = tracer_for(name, dynamic=False)
    t.start()
    t.ftrace.register_ftrace_function("ftrace_selftest_recursive_call")
    assert t.machine.read_word(t.ftrace.func_ptr) == \
        t.guest.image.symbols["ftrace_selftest_recursive_call"]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_disabled_counter_stops_a_tracer_that_calls_a_traced_function(name):
    t = tracer_for(name, tracer="selftest")
    t.start()
    r = t.run()
    assert r.ok and t.events
    caught = t.recursion_caught()
    # every recorded call re-entered once through ftrace_selftest_traced's mcount
    assert sum(caught) == len(t.events)
    assert "ftrace_selftest_traced" not in {t.symbols.name(e.values[0]) for e in t.events}
    plain = tracer_for(name)                              # negative control
    plain.start()
    assert plain.run().ok and sum(plain.recursion_caught()) == 0


# -- filters ------------------------------------------------------------------

def test_2628_glob_rules():
    assert ftrace_match("kmalloc", "kmalloc") and not ftrace_match("kmalloc", "kmalloc2")
    assert ftrace_match("km*", "kmalloc") and not ftrace_match("km*", "xkmalloc")
    assert ftrace_match("*alloc", "kmalloc") and not ftrace_match("*alloc", "alloc_x")
    assert ftrace_match("*cache*", "kmem_cache_alloc")
    # "<match>*<match> will not work": a*b is a*
    assert ftrace_match("k*c", "kfree") and not ftrace_match("k*c", "kfree", "full")
    assert ftrace_match("k*c", "kmalloc_c", "full") and ftrace_match("k?ree", "kfree", "full")
    assert not ftrace_match("k?ree", "kfree")


@pytest.mark.parametrize("name", NAMES)
def test_filters_replace_append_and_notrace_wins(name):
    t = tracer_for(name)
    ft = t.ftrace
    ft.write_filter("kmalloc")
    ft.write_filter("kfree", append=True)
    assert ft.filtered_functions() == ["kfree", "kmalloc"]
    ft.write_filter("*cache_alloc")
    assert ft.filtered_functions() == ["__cache_alloc", "kmem_cache_alloc"]
    ft.write_filter("kmem*", notrace=True)
    assert ft.filtered_functions() == ["__cache_alloc"]
    ft.write_filter("", notrace=True)
    ft.write_filter("")
    assert len(ft.filtered_functions()) == len({s.function for s in t.tables.mcount})
    with pytest.raises(PatchError):
        ft.write_filter("no_such_function")


@pytest.mark.parametrize("name", NAMES)
def test_cli_list_prints_available_filter_functions_as_the_filters_leave_them(name, capsys):
    """``kisim ftrace --list``: one line per record in address order, as reading
    available_filter_functions lists them; the filters take out what they would
    from a run; no run, so no run's options."""
    from kisim.cli import main
    sites = sorted(tracer_for(name).tables.mcount, key=lambda s: s.address)
    assert main(["ftrace", "--arch", name, "--list"]) == 0
    assert capsys.readouterr().out.splitlines() == [s.function for s in sites]
    assert main(["ftrace", "--arch", name, "--list", "--filter", "kmem*", "--notrace",
                 "*free", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["functions"] == [s.function for s in sites if s.function.startswith("kmem")
                                and not s.function.endswith("free")]
    assert "kmem_cache_alloc" in doc["functions"]
    # nothing left: an empty file, not an empty line
    assert main(["ftrace", "--arch", name, "--list", "--filter", "kmalloc", "--notrace",
                 "kmalloc"]) == 0
    assert capsys.readouterr().out == ""
    for extra, text in ((["--format", "ctf"], "takes no --format"),
                        (["--set", "DYNAMIC_FTRACE=n"], "needs CONFIG_DYNAMIC_FTRACE=y"),
                        (["--filter", "nosuch"], "matches no traceable function")):
        assert main(["ftrace", "--arch", name, "--list", *extra]) == 2
        err = capsys.readouterr().err
        assert text in err and err.count("\n") == 1


@pytest.mark.parametrize("name", NAMES)
def test_a_failed_filter_write_keeps_what_went_in_before_it(name):
    """v5.10: `>` empties the filter at open, words go in one by one, and the hash is
    committed at close: `echo "kfree nosuch kmalloc" > set_ftrace_filter` fails
    with kfree alone in the filter, and `echo nosuch >` leaves it empty (every
    function traced)."""
    t = tracer_for(name)
    ft = t.ftrace
    ft.write_filter("kmalloc")
    with pytest.raises(PatchError, match="'nosuch' matches no traceable function"):
        ft.write_filter("kfree nosuch kmalloc")
    assert ft.filtered_functions() == ["kfree"]
    with pytest.raises(PatchError):
        ft.write_filter("kmalloc nosuch", append=True)
    assert ft.filtered_functions() == ["kfree", "kmalloc"]
    with pytest.raises(PatchError):
        ft.write_filter("nosuch")
    assert len(ft.filtered_functions()) == len({s.function for s in t.tables.mcount})


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_filter_patches_only_its_sites_records_exactly_their_calls_and_disabling_restores(
        name):
    t = tracer_for(name)
    ft, ops = t.ftrace, arch_ftrace(t.guest.arch)
    ft.write_filter("k*")
    ft.write_filter("kfree", notrace=True)
    t.start()
    want = {s.address for s in t.tables.mcount if s.function in ft.filtered_functions()}
    assert set(ft.enabled_sites()) == want and want
    for ip, insn in site_bytes(t).items():
        expect = ops.ftrace_call_replace(ip, ft.ftrace_addr) if ip in want \
            else ops.ftrace_nop_replace()
        assert insn == expect, hex(ip)
    independent = watch_entries(t)
    r = t.run()
    assert r.ok
    got = traced(t)
    assert got and set(fn for fn, _ in got) <= set(ft.filtered_functions())
    assert got == Counter({k: v for k, v in independent.items()
                           if k[0] in ft.filtered_functions()})
    t.stop()
    assert all(insn == ops.ftrace_nop_replace() for insn in site_bytes(t).values())


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_function_traced_equals_a_separate_untraced_run(name):
    t = tracer_for(name, cpus=1)
    t.start()
    assert t.run().ok
    plain = tracer_for(name, cpus=1)
    counted = watch_entries(plain)
    assert plain.guest.run().ok
    assert traced(t) == counted


# -- output -------------------------------------------------------------------

SEED_LINE = re.compile(r"^CPU (\d+): (\S+):(\d+) (\w+)\+0x([0-9a-f]+)/0x([0-9a-f]+) "
                       r"<-- (\w+)\+0x([0-9a-f]+)/0x([0-9a-f]+)$")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_seed_format_names_real_functions_with_kallsyms_offsets_and_sizes(name):
    """Each line's function, site offset, size and parent, read back from the text alone,
    equal the kallsyms symbols (sizes to the next symbol) and a call trace taken
    independently (code hooks at entries)."""
    t = tracer_for(name, dynamic=False)
    independent = watch_entries(t)
    t.start()
    assert t.run().ok
    image = t.guest.image
    sizes = {n: (a, sz) for a, sz, n in (image.kallsyms or image.functions)}
    site_fn = {s.address: s.function for s in t.tables.mcount}
    lines = list(render("seed", t.events, t.symbols))
    assert len(lines) == len(t.events)
    from_text: Counter = Counter()
    for e, line in zip(sorted(t.events, key=lambda e: (e.timestamp, e.cpu)), lines):
        m = SEED_LINE.match(line)
        assert m, line
        func, off, size = m.group(4), int(m.group(5), 16), int(m.group(6), 16)
        start = sizes[func][0]
        assert sizes[func] == (e.values[0] - off, size) and site_fn[start + off] == func
        parent, poff, psize = m.group(7), int(m.group(8), 16), int(m.group(9), 16)
        assert sizes[parent] == (e.values[1] - poff, psize) and poff >= 0   # kallsyms: padding too
        assert int(m.group(1)) == e.cpu and int(m.group(3)) == e.tid
        from_text[(func, sizes[parent][0] + poff)] += 1
    assert from_text == independent and len(from_text) > 10


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_2628_ftrace_text(name):
    t = tracer_for(name, dynamic=False)
    t.start()
    assert t.run().ok
    lines = list(render("text", t.events, t.symbols, Header("function")))
    assert "\n".join(lines[:6]) + "\n" == header(Header("function"), len(t.events))
    # trace_print_context (kernel/trace/trace_output.c): "%16s-%-5d [%03d]  %5lu.%06lu: "
    row = re.compile(r"^ {0,15}\S{1,16}-\d+ +\[\d{3}\]  +\d+\.\d{6}: \w+ <-\w+$")
    assert all(row.match(line) for line in lines[6:]), lines[6:8]
    assert lines[6].startswith("          <idle>-0     [000]  ")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_function_graph_pairs_entries_and_returns_with_modeled_durations(name):
    t = tracer_for(name, tracer="function_graph")
    t.start()
    assert t.run().ok
    entries = Counter(e.values[0] for e in t.events if e.name == "funcgraph_entry")
    exits = Counter(e.values[0] for e in t.events if e.name == "funcgraph_exit")
    kmalloc = t.guest.image.symbols["kmalloc"]
    site = next(s.address for s in t.tables.mcount if s.function == "kmalloc")
    assert entries[site] == exits[site] > 0 and kmalloc
    lines = list(graph_lines(sorted(t.events, key=lambda e: (e.timestamp, e.cpu)),
                             t.symbols))
    leaf = [ln for ln in lines if ln.endswith("__cache_alloc();")]
    assert leaf and all(re.match(r"^ ?\d\) [ +!] +\d+\.\d{3} us +\|", ln) for ln in leaf)
    assert all(len(ln.split("|")[0]) == 18 for ln in lines[4:] if "|" in ln and "=>" not in ln)


def test_graph_overhead_marks():
    from tracing.text import _duration
    assert _duration(804) == "   0.804 us    "
    assert _duration(14_237) == " + 14.237 us   "
    assert _duration(140_000) == " ! 140.000 us  "


# -- CLI ----------------------------------------------------------------------

def test_cli_ftrace_json(capsys):
    assert main(["ftrace", "--arch", "arm", "--cpus", "2", "--workload", "kmalloc",
                 "--size", "20", "--filter", "kmalloc", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["checksum_ok"] and out["functions_traced"] == ["kmalloc"]
    assert out["sites_enabled"] == 1 and set(out["calls"]) == {"kmalloc"}
    assert out["trace"][0].startswith("CPU ")


@pytest.mark.parametrize("fmt", ["ftrace", "graph", "seed"])
def test_cli_ftrace_limit_counts_trace_lines_after_the_header(fmt, capsys):
    """--limit N prints the format's whole '#' header and then N lines of the trace."""
    argv = ["ftrace", "--arch", "arm", "--size", "2", "--format", fmt,
            *(["--tracer", "function_graph"] if fmt == "graph" else [])]
    assert main(argv) == 0
    whole = capsys.readouterr().out.splitlines()[:-1]          # less the summary line
    header = [line for line in whole if line.startswith("#")]
    assert main([*argv, "--limit", "2"]) == 0
    limited = capsys.readouterr().out.splitlines()[:-1]
    assert limited == whole[:len(header) + 2] and len(whole) > len(header) + 2


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_function_events_go_through_the_ring_buffers_with_exact_loss_accounting(name):
    """Small buffers drained rarely: events are discarded, and every one is accounted for."""
    roomy = tracer_for(name)
    roomy.start()
    full = roomy.run()
    assert full.ok and full.total.discarded == 0 and full.total.produced == len(roomy.events)
    t = tracer_for(name, subbuf_size=256, subbufs=2, drain_every=1_000_000)
    t.start()
    r = t.run()
    total = r.total
    assert r.ok and total.discarded > 0 and total.recorded == len(t.events) > 0
    assert total.produced == total.recorded + total.discarded == full.total.produced
    assert all(c.produced == c.recorded + c.discarded for c in r.per_cpu)
    # the records kept are the first ones each CPU wrote, in order
    first = {cpu: [e.values for e in roomy.events if e.cpu == cpu] for cpu in (0, 1)}
    for cpu in (0, 1):
        kept = [e.values for e in t.events if e.cpu == cpu]
        assert kept == first[cpu][:len(kept)]


@pytest.mark.slow
@pytest.mark.parametrize("tracer", ["function", "function_graph"])
@pytest.mark.parametrize("name", NAMES)
def test_cli_ftrace_ctf_is_read_by_babeltrace2(tmp_path, capsys, name, tracer):
    out = tmp_path / "trace"
    assert main(["ftrace", "--arch", name, "--cpus", "2", "--workload", "kmalloc", "--size",
                 "10", "--tracer", tracer, "--filter", "k*", "--format", "ctf",
                 "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["checksum_ok"] and summary["events"] > 0
    assert summary["buffers"]["produced"] == summary["buffers"]["recorded"] == summary["events"]
    if not babeltrace.available():
        pytest.skip("babeltrace2 is not installed")
    bt = babeltrace.read(out)
    assert bt.stderr == "" or "warn" not in bt.stderr.lower()
    assert len(bt.events) == summary["events"]
    names = {"function"} if tracer == "function" else {"funcgraph_entry", "funcgraph_exit"}
    assert {e.name for e in bt.events} == names
    b = build(name)
    image = load_tables(b.elf, b.spec)
    sym = Symbolizer(image)
    key = "ip" if tracer == "function" else "func"
    calls = Counter(sym.name(e.fields[key]) for e in bt.events
                    if e.name in ("function", "funcgraph_entry"))
    assert dict(calls) == summary["calls"]
    assert all(fn.startswith("k") for fn in calls)
    assert [e.timestamp for e in bt.events] == sorted(e.timestamp for e in bt.events)


def test_cli_ftrace_chrome_json(tmp_path, capsys):
    out = tmp_path / "chrome"
    assert main(["ftrace", "--arch", "ppc32", "--workload", "kmalloc", "--size", "5",
                 "--filter", "kmalloc", "--format", "chrome", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    data = json.loads((out / "trace.json").read_text())
    functions = [e for e in data["traceEvents"] if e.get("name") == "function"]
    assert len(functions) == summary["events"] == summary["calls"]["kmalloc"] > 0
    site = next(s.address for s in load_tables(build("ppc32").elf, get_arch("ppc32")).mcount
                if s.function == "kmalloc")
    assert {int(e["args"]["ip"], 16) for e in functions} == {site}


def test_cli_ftrace_chrome_graph_calls_are_nested_slices(tmp_path, capsys):
    out = tmp_path / "graph"
    assert main(["ftrace", "--arch", "arm", "--cpus", "2", "--workload", "kmalloc", "--size",
                 "5", "--tracer", "function_graph", "--format", "chrome", "--out", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    records = [e for e in json.loads((out / "trace.json").read_text())["traceEvents"]
               if e.get("cat") == "funcgraph"]
    begins = [e for e in records if e["ph"] == "B"]
    assert len(begins) == sum(summary["calls"].values()) > 0
    assert Counter(e["name"] for e in begins) == Counter(summary["calls"])
    stacks: dict[int, list[str]] = {}
    for e in records:                      # per task, every E closes the innermost B
        stack = stacks.setdefault(e["tid"], [])
        if e["ph"] == "B":
            stack.append(e["name"])
        elif e["ph"] == "E":
            assert stack.pop() == e["name"]


@pytest.mark.parametrize("argv", [
    ["--format", "ctf"], ["--out", "x"], ["--drain-every", "0"],
    ["--filter", "no_such_fn"], ["--format", "graph"],
    ["--set", "DYNAMIC_FTRACE=n", "--filter", "k*"], ["--limit", "-1"],
])
def test_cli_ftrace_bad_input_is_one_line_exit_2(capsys, argv):
    assert main(["ftrace", "--arch", "x86_64", "--workload", "kmalloc", "--size", "5",
                 *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kisim: error:") and err.count("\n") == 1


MOD_FILTER_C = """#include <linux/kernel.h>
#include <linux/module.h>

static noinline unsigned long kmalloc_like(unsigned long x)
{
	return x * 3 + 1;
}

noinline unsigned long modf_helper(unsigned long x)
{
	return kmalloc_like(x) ^ 5;
}

unsigned long modf_run(unsigned long n)
{
	unsigned long acc = 0, i;

	for (i = 0; i < n; i++)
		acc += modf_helper(i);
	return acc;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_filter_by_module_is_v5_10_mod_command(name, tmp_path) -> None:
    """set_ftrace_filter's ``GLOB:mod:MODULE`` (v5.10 ftrace_mod_callback): the functions
    GLOB matches among those the module defines; ``:mod:MODULE`` all of them; a plain glob
    still matches the kernel's functions too; an unknown module matches nothing (EINVAL)."""
    from patcher.ftrace import ftrace_for
    path = tmp_path / "modf.c"
    path.write_text(MOD_FILTER_C)
    b = build(name, modules=[path])
    ft = ftrace_for(Guest(b, workload="modf:modf_run", size=3), load_tables(b.elf, b.spec))
    ft.write_filter(":mod:modf")
    assert ft.filtered_functions() == ["kmalloc_like", "modf_helper", "modf_run"]
    ft.write_filter("kmalloc*:mod:modf")
    assert ft.filtered_functions() == ["kmalloc_like"]
    ft.write_filter("kmalloc*")
    assert {"kmalloc", "kmalloc_like"} <= set(ft.filtered_functions())
    with pytest.raises(PatchError, match="matches no traceable function"):
        ft.write_filter(":mod:nosuch")


def _graph(events: list[tuple[int, int, str, int, str, int]]) -> list[str]:
    """graph_lines of (cpu, ns, comm, pid, entry|exit, depth) events of function 0x10,
    named ``f``, body lines only (the guest's depth counts from 1)."""
    from sim.event import EventClass, u
    from tracing.text import GRAPH_HEADER, graph_lines
    cls = {kind: EventClass(f"funcgraph_{kind}", (("func", u(64, 16)), ("depth", u(32))))
           for kind in ("entry", "exit")}
    evs = [Event(cls[kind], cpu, ns, pid, comm, (0x10, depth))
           for cpu, ns, comm, pid, kind, depth in events]

    class Names:
        def name(self, addr: int) -> str:
            return "f"
    return list(graph_lines(evs, Names()))[len(GRAPH_HEADER.splitlines()):]


def test_the_graph_text_is_v5_10s() -> None:
    """trace_functions_graph.c (v5.10): a leaf is an entry whose CPU's next event is
    its return, whatever other CPUs record between (get_return_for_leaf); a
    switch of task is verif_pid's block (print_graph_proc: the comm cut to 7,
    centred in 14 columns, pid 0 as <idle>), a blank line after it; a return
    whose entry was lost names its function."""
    lines = _graph([(0, 1000, "kworker-thread", 7, "entry", 1), (1, 1500, "init", 1, "entry", 1),
                    (0, 3000, "kworker-thread", 7, "exit", 1), (0, 4000, "", 0, "exit", 2)])
    assert lines == [" 0)   2.000 us    |  f();",
                     " 1)               |  f() {",
                     " ------------------------------------------",
                     " 0)   kworker-7    =>    <idle>-0   ",
                     " ------------------------------------------",
                     "",
                     " 0)               |    } /* f */"]
