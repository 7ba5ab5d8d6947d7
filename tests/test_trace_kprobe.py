"""kprobe events at work in the guest (probes/trace_kprobe.py, kernel/trace_probes.c).

Each definition is a real kprobe or kretprobe; its hits record, through the
guest's ring buffer, what v5.10's __kprobe_trace_func would: the checks
compare the fetched arguments with what the guest's own kmem_kmalloc
tracepoint recorded for the same calls.
"""
from __future__ import annotations

import re

import pytest

from arches import get_arch
from kbuild import build
from patcher.instrument import attach
from probes.kprobe_events import ProbeEventError
from probes.trace_kprobe import TraceKprobes, _bitfield, kprobe_events
from sim.guest import Guest
from tracing.events import parse_probes
from tracing.session import EventList, TraceOptions, TraceSession
from tracing.text import kernel_line

#: kmalloc's first two arguments (size, flags) and its result, per arch: the
#: v5.10 regs_query_register_offset names of the arch's argument and return registers.
ARGS = {"x86_64": ("%di", "%si", "%ax"), "arm": ("%r0", "%r1", "%r0"),
        "ppc32": ("%gpr3", "%gpr4", "%gpr3")}


def _run(arch: str, lines: list[str], size: int = 30, filters=None) -> tuple[list, TraceKprobes]:
    guest = Guest(build(arch), cpus=1, workload="kmalloc", size=size)
    inst = attach(guest)
    events = kprobe_events(guest, inst, tuple(lines))
    for name, expr in (filters or {}).items():
        events.set_filter(name, expr)
    session = TraceSession(guest, TraceOptions(parse_probes("kmem")), inst, events)
    sink = EventList()
    assert session.run(sink).checksum_ok
    return sink.events, events


def test_a_return_events_missed_entries_are_counted(tmp_path, capsys) -> None:
    """A return event on schedule under kmalloc on 1 CPU: maxactive 1, and the init
    task keeps that instance in wait_for_children(), so all but one entry find none
    free and their returns record nothing. The event's hits are its records plus
    those entries (kretprobe_nmissed), and an entry event has none of them."""
    import json
    from kisim.cli import main
    out = tmp_path / "t"
    assert main(["trace", "--arch", "arm", "--workload", "kmalloc", "--size", "20",
                 "--probes", "kmem_kfree", "--kprobe-event", "r:myr schedule",
                 "--kprobe-event", "p:myk kmalloc", "--json", "--format", "text",
                 "--out", str(out)]) == 0
    counts = {c["event"]: c for c in json.loads(capsys.readouterr().out)["kprobe_event_counts"]}
    records = sum(" myr: " in line for line in (out / "trace.txt").read_text().splitlines())
    ret, entry = counts["kprobes/myr"], counts["kprobes/myk"]
    assert ret["kretprobe_nmissed"] > 0 and ret["nmissed"] == 0
    assert records + ret["kretprobe_nmissed"] == ret["hits"]
    assert entry["kretprobe_nmissed"] is None and entry["nmissed"] == 0 and entry["hits"] > 0
    assert main(["trace", "--arch", "arm", "--workload", "kmalloc", "--size", "20",
                 "--probes", "kmem_kfree", "--kprobe-event", "r:myr schedule",
                 "--out", str(out)]) == 0
    assert (f"kprobe event kprobes/myr: {ret['hits']:,} hits, 0 nmissed, "
            f"{ret['kretprobe_nmissed']:,} entries with no free kretprobe instance (returns "
            "not recorded), 0 kept out by its filter") in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("arch", sorted(ARGS))
def test_kprobe_and_kretprobe_events_record_the_calls(arch: str) -> None:
    size, flags, ret = ARGS[arch]
    got, events = _run(arch, [f"p:myprobe kmalloc size={size} gfp={flags}:x32",
                              "r:myret kmalloc ptr=$retval"])
    kmallocs = [e.fields for e in got if e.name == "kmem_kmalloc"]
    probes = [e for e in got if e.name == "myprobe"]
    rets = [e.fields for e in got if e.name == "myret"]
    assert kmallocs and len(probes) == len(rets) == len(kmallocs)
    assert [p.fields["size"] for p in probes] == [k["bytes_req"] for k in kmallocs]
    assert [p.fields["gfp"] for p in probes] == [k["gfp_flags"] for k in kmallocs]
    assert [r["ptr"] for r in rets] == [k["ptr"] for k in kmallocs]
    kp = events.events[("kprobes", "myprobe")].probes[0][1]
    assert kp.hits == len(probes)                     # one record per hit, none lost
    # the trace file's line (print_kprobe_event): %pS of the probe, then each argument
    assert re.search(r"myprobe: \(kmalloc\+0x0/0x[0-9a-f]+\) size=0x[0-9a-f]+ gfp=0x[0-9a-f]+$",
                     kernel_line(probes[0]))
    line = kernel_line(next(e for e in got if e.name == "myret"))
    assert re.search(r"myret: \(\w+\+0x[0-9a-f]+/0x[0-9a-f]+ <- kmalloc\) ptr=0x[0-9a-f]+$", line)


@pytest.mark.slow
def test_types_strings_comm_faults_and_stack() -> None:
    """u32, s64 via $arg1, $comm, a string from an unmapped address ((fault)),
    a symbol from $stack0 (the return address), an array from memory."""
    got, _ = _run("x86_64", ["p:k kmalloc size=%di:u32 a=$arg1:s64 c=$comm bad=+0(%di):string "
                             "ret=$stack0:symbol w=+0($stack):x8[2]"], size=5)
    e = next(e for e in got if e.name == "k")
    f = e.fields
    assert f["size"] == f["a"] and f["c"] == e.comm and f["bad"] == "(fault)"
    line = kernel_line(e)
    assert re.search(r' c="[^"]+" bad=\(fault\) ret=kmalloc_task\+0x[0-9a-f]+/0x[0-9a-f]+ '
                     r'w=\{0x[0-9a-f]+,0x[0-9a-f]+\}$', line), line


@pytest.mark.slow
def test_filter_keeps_events_out_of_the_buffer() -> None:
    """A rejected hit never reaches the ring buffer: not produced, counted as filtered."""
    got, events = _run("x86_64", ["p:k kmalloc size=%di"],
                       filters={"kprobes/k": 'size >= 1024 && comm ~ "kmalloc*" && cpu == 0'})
    sizes = [e.fields["size"] for e in got if e.name == "k"]
    tk = events.events[("kprobes", "k")]
    assert sizes and all(s >= 1024 for s in sizes)
    assert tk.filtered and tk.filtered + len(sizes) == tk.probes[0][1].hits


#: A stack word at kmalloc's entry that differs from call to call, per arch.
STACK_WORD = {"x86_64": 8, "arm": 4, "ppc32": 4}


@pytest.mark.slow
@pytest.mark.parametrize("arch", sorted(STACK_WORD))
def test_an_array_field_filters_as_one_integer_in_the_arch_byte_order(arch: str) -> None:
    """v5.10 compares a ``u8[4]`` field as the u32 at its offset (filter_pred_32):
    its bytes in the arch's order, big-endian on ppc32. A filter at the median of
    an unfiltered run keeps exactly the calls above it."""
    definition = f"p:k kmalloc w=+{STACK_WORD[arch]}($stack):u8[4]"
    order = get_arch(arch).endian

    def words(events: list) -> list[int]:
        return [int.from_bytes(bytes(int(b) for b in e.fields["w"].strip("{}").split(",")),
                               order) for e in events if e.name == "k"]

    every = words(_run(arch, [definition])[0])
    median = sorted(every)[len(every) // 2]
    got, events = _run(arch, [definition], filters={"kprobes/k": f"w > {median:#x}"})
    kept = words(got)
    assert kept == [w for w in every if w > median] and 0 < len(kept) < len(every)
    assert events.events[("kprobes", "k")].filtered == len(every) - len(kept)


@pytest.mark.slow
def test_a_string_array_filters_on_its_first_string() -> None:
    """A ``string[2]`` field is a ``__data_loc char[][2]``: filter_pred_strloc reads
    the first ``__data_loc`` word at its offset, so a filter sees the first string."""
    definition = "p:k kmalloc s=+4($stack):string[2]"     # ppc32: strings from text
    every = [e.fields["s"] for e in _run("ppc32", [definition])[0] if e.name == "k"]
    got, events = _run("ppc32", [definition], filters={"kprobes/k": 's ~ "H*"'})
    kept = [e.fields["s"] for e in got if e.name == "k"]
    assert kept == [s for s in every if s.startswith('{"H')] and 0 < len(kept) < len(every)
    assert events.events[("kprobes", "k")].filtered == len(every) - len(kept)


@pytest.mark.slow
def test_a_record_the_ring_buffer_cannot_take_is_lost_and_counted() -> None:
    """Records up to the largest a sub-buffer holds are kept whole (1,552 bytes here:
    three 64-element arrays); a larger one is lost and counted, as
    ring_buffer_lock_reserve refuses one over BUF_MAX_DATA_SIZE, and the guest
    runs on (it had written past its CPU's record slot)."""
    array = "=+0(%sp):x64[64]"
    fits = " ".join(f"a{i}{array}" for i in range(3))
    over = " ".join(f"b{i}{array}" for i in range(8))      # 4,112 bytes: over 4,024
    got, events = _run("x86_64", [f"p:fits kmalloc {fits}", f"p:over kfree {over}"], size=5)
    kept = [e for e in got if e.name == "fits"]
    tk_fits, tk_over = events.events[("kprobes", "fits")], events.events[("kprobes", "over")]
    assert kept and len(kept) == tk_fits.hits and tk_fits.lost == 0
    assert all(e.fields[f"a{i}"].count(",") == 63 for e in kept for i in range(3))
    assert tk_over.hits and tk_over.lost == tk_over.hits
    assert not [e for e in got if e.name == "over"]
    assert events.largest == 4096 - 40 - 32      # the default sub-buffer, less both headers


def test_a_string_is_cut_at_max_string_size() -> None:
    """fetch_store_strlen reads at most MAX_STRING_SIZE bytes, its NUL included."""
    guest = Guest(build("x86_64"), cpus=1, workload="kmalloc", size=5)
    events = kprobe_events(guest, attach(guest), ("p:a kmalloc",))
    heap = guest.image.symbols["heap"]
    guest.machine.write(heap, b"k" * 5000 + b"\0")
    assert events._string(heap) == b"k" * 4095
    guest.machine.write(heap + 2000, b"\0")
    assert events._string(heap) == b"k" * 2000


def test_registration_refusals_are_the_kernels() -> None:
    guest = Guest(build("x86_64"), cpus=1, workload="kmalloc", size=5)
    events = kprobe_events(guest, attach(guest), ("p:a kmalloc size=%di",))
    cases = [  # (definition, error, caret position) -- trace_kprobe.c register_trace_kprobe
        ("r:a kmalloc", "Probe type is different from existing probe", 0),
        ("p:a kfree x=%di", "Argument type or name is different from existing probe", 10),
        ("p:a kmalloc size=%di", "There is already the exact same probe event", 0),
        ("p no_such_function", "Invalid probed address or symbol", 2),
        ("p kmalloc v=@no_such_symbol", "Invalid probed address or symbol", 2),
        # NOKPROBE and notrace: within_notrace_func (dynamic ftrace is on)
        ("p ring_buffer_reserve", "Failed to register probe event", 2),
        # traceprobe_update_arg: kstrtol refuses the offset (-EINVAL), before the lookup
        ("p kmalloc v=@kfree+foo", "Failed to register probe event", 2),
        ("p kmalloc v=@kfree+0b1", "Failed to register probe event", 2),
        ("p kmalloc v=@kfree+1_0", "Failed to register probe event", 2),
        ("p kmalloc v=@no_such_symbol+foo", "Failed to register probe event", 2),
    ]
    for line, message, pos in cases:
        with pytest.raises(ProbeEventError) as err:
            events.write(line)
        assert str(err.value) == f"trace_kprobe: error: {message}", line
        assert err.value.pos == pos, line
    events.write("p:b kmalloc v=@kfree+010")      # kstrtol, base 0: octal
    assert events._by_struct[events.events[("kprobes", "b")].probes[0][1].struct][1].args[0] \
        .code[0] == ("imm", guest.image.symbols["kfree"] + 8)
    events.write("-:b")
    events.write("p:a kfree size=%di")            # multi-probe: a second place, same args
    assert [p.symbol for p, _ in events.events[("kprobes", "a")].probes] == ["kmalloc", "kfree"]
    events.write("-:a")
    assert not events.events and not events.kprobes.probes


def test_a_deletion_takes_what_dyn_event_release_matches() -> None:
    """-:[GRP/]EVENT [PLACE [ARGS]] deletes each probe trace_kprobe_match takes, in
    every group unless one is named, and nothing that does not match (-ENOENT);
    reading kprobe_events lists the probes in the order they were defined."""
    guest = Guest(build("x86_64"), cpus=1, workload="kmalloc", size=5)
    events = kprobe_events(guest, attach(guest), ("p:a kmalloc size=%di", "p:b kfree",
                                                  "p:a kmalloc+4 size=%di", "p:g/a kfree"))
    a, b, a4, ga = ("p:kprobes/a kmalloc size=%di", "p:kprobes/b kfree",
                    "p:kprobes/a kmalloc+4 size=%di", "p:g/a kfree")
    assert events.listing() == [a, b, a4, ga]
    for line in ("-:kprobes/a kfree", "-:a kmalloc size=%si", "-:a kmalloc size=%di more=%ax",
                 "-:nosuch", "-:/a", "-:g/b"):
        with pytest.raises(ProbeEventError, match="No such file or directory"):
            events.write(line)
    assert events.listing() == [a, b, a4, ga]
    events.write("-:a kmalloc size=%di")           # one probe of the two of kprobes/a
    assert events.listing() == [b, a4, ga]
    events.write("-:a")                            # the rest of it, and g/a
    assert events.listing() == [b] and len(events.kprobes.probes) == 1
    events.write("p:a kmalloc")                    # defined again: listed last
    assert events.listing() == [b, "p:kprobes/a kmalloc"]


@pytest.mark.slow
def test_a_probe_on_a_module_not_loaded_is_pending() -> None:
    """register_trace_kprobe: -ENOENT where MOD: names no loaded module is not an
    error; the event stays defined, with the kernel's warning, and never fires;
    a function the kernel lacks is still refused."""
    got, events = _run("x86_64", ["p:m nosuchmod:foo", "p:k kmalloc"], size=5)
    assert events.listing() == ["p:kprobes/m nosuchmod:foo", "p:kprobes/k kmalloc"]
    assert events.warnings == ["nosuchmod:foo: This probe might be able to register after "
                               "target module is loaded. Continue."]
    assert events.events[("kprobes", "m")].hits == 0 and not [e for e in got if e.name == "m"]
    assert [e for e in got if e.name == "k"]
    with pytest.raises(ProbeEventError, match="Invalid probed address or symbol"):
        events.write("p nosuchfunc")
    events.write("-:m")
    assert events.listing() == ["p:kprobes/k kmalloc"]


def test_cli_takes_a_deletion_as_a_definition(capsys) -> None:
    """'-:EVENT' is a definition, not an option of kisim's."""
    from kisim.cli import main
    assert main(["kprobe-events", "--arch", "x86_64", "p:a kmalloc", "p:b kfree", "-:a"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "p:kprobes/b kfree"


def test_cli_json_gives_each_events_probes_and_fields_as_its_format_does(capsys) -> None:
    """--json: the listing, and each event's id, type, probes (at the address it
    is registered at; none for a module not loaded) and fields, at the offsets and
    sizes its format file gives."""
    import json
    import re
    from kisim.cli import main
    from sim.elf import read_elf
    assert main(["kprobe-events", "--arch", "x86_64", "--json", "p:km kmalloc size=%di:u32 "
                 "flags=%si:x16", "r:kmr kmalloc ret=$retval"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kprobe_events"] == ["p:kprobes/km kmalloc size=%di:u32 flags=%si:x16",
                                    "r:kprobes/kmr kmalloc ret=$retval"]
    kmalloc = read_elf(build("x86_64").elf).symbols["kmalloc"]
    assert [(e["event"], e["type"], [p["address"] for p in e["probes"]]) for e in doc["events"]] \
        == [("kprobes/km", "kprobe", [kmalloc]), ("kprobes/kmr", "kretprobe", [kmalloc])]
    for e in doc["events"]:
        assert e["format"].startswith(f"name: {e['event'].split('/')[1]}\nID: {e['id']}\n")
        fields = [(f["type"], f["name"], f["offset"], f["size"]) for f in e["fields"]]
        assert fields == [(t, n, int(o), int(z)) for t, n, o, z in re.findall(
            r"field:(\S+) (\w+);\toffset:(\d+);\tsize:(\d+);", e["format"])
            if not n.startswith(("common_", "__probe"))]
    assert [f["offset"] for f in doc["events"][0]["fields"]] == [16, 20]
    assert main(["kprobe-events", "--arch", "x86_64", "--json", "p:m nomod:func"]) == 0
    later = json.loads(capsys.readouterr().out)             # registers once it is loaded
    (pending,) = later["events"]
    assert [w.split(": ", 1)[1] for w in later["trace_kprobe_warnings"]] == [
        "This probe might be able to register after target module is loaded. Continue."]
    assert pending["probes"] == [{"definition": "p:kprobes/m nomod:func", "place": "nomod:func",
                                  "address": None}]


def test_bitfield_keeps_v510s_integer_promotion() -> None:
    """FETCH_OP_MOD_BF on a u8: C promotes to int before the shifts, so b4@0/8
    of 0xff is 0xff in v5.10 (the high bits are not shifted out); a u32 is exact."""
    assert _bitfield(0xFF, ("mod_bf", 4, 4), 1) == 0xFF
    assert _bitfield(0xFF, ("mod_bf", 28, 28), 4) == 0xF
    assert _bitfield(0xF0, ("mod_bf", 0, 4), 1) == 0xF


@pytest.mark.slow
def test_cli_refusal_is_the_error_log_and_exit_2(tmp_path, capsys) -> None:
    """kisim trace --kprobe-events FILE: a bad line is the kernel's error_log entry,
    exit 2, and no trace is written."""
    from kisim.cli import main
    defs = tmp_path / "kprobe_events"
    defs.write_text("# comment\np:ok kmalloc %di\np:bad kmalloc size=%rdi\n")
    out = tmp_path / "trace"
    assert main(["trace", "--arch", "x86_64", "--workload", "kmalloc", "--size", "5",
                 "--kprobe-events", str(defs), "--format", "text", "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["kisim: error: trace_kprobe: error: Invalid register name",
                   "  Command: p:bad kmalloc size=%rdi",
                   " " * (11 + len("p:bad kmalloc size=")) + "^"]
    assert not out.exists()


@pytest.mark.slow
def test_cli_records_kprobe_events_as_text(tmp_path, capsys) -> None:
    from kisim.cli import main
    out = tmp_path / "trace"
    assert main(["trace", "--arch", "x86_64", "--workload", "kmalloc", "--size", "5",
                 "--probes", "kmem", "--kprobe-event", "p:myprobe kmalloc size=%di",
                 "--format", "text", "--out", str(out)]) == 0
    lines = (out / "trace.txt").read_text().splitlines()
    assert any(re.search(r"myprobe: \(kmalloc\+0x0/0x[0-9a-f]+\) size=0x[0-9a-f]+$", line)
               for line in lines)


def test_cli_bad_filter_is_the_kernels_error(tmp_path, capsys) -> None:
    from kisim.cli import main
    out = tmp_path / "trace"
    assert main(["trace", "--arch", "x86_64", "--workload", "kmalloc", "--size", "5",
                 "--kprobe-event", "p:myprobe kmalloc size=%di", "--filter",
                 "myprobe:size >= big", "--format", "text", "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("kisim: error: event filter parse error: error: Invalid value "
                      "(did you forget quotes)?")
    assert err[1:] == ["  Command: size >= big", " " * (11 + 9) + "^"]
    assert not out.exists()


def test_tracepoint_event_filter_keeps_records_out_of_the_buffer() -> None:
    """kmem/kmalloc's filter (its twin probe commits through HC_EVENT_FILTER):
    the recorded sizes are exactly the calls the filter keeps, as an unfiltered
    kprobe event on kmalloc in the same run sees them, and the rejected ones are
    counted neither as produced nor as recorded."""
    guest = Guest(build("x86_64"), cpus=1, workload="kmalloc", size=30)
    inst = attach(guest)
    events = kprobe_events(guest, inst, ("p:k kmalloc size=%di",))
    session = TraceSession(guest, TraceOptions(parse_probes("kmem"), filters=(
        ("kmem/kmalloc", "bytes_req > 64 && bytes_req != 1024"),)), inst, events)
    sink = EventList()
    result = session.run(sink)
    calls = [e.fields["size"] for e in sink.events if e.name == "k"]
    kept = [e.fields["bytes_req"] for e in sink.events if e.name == "kmem_kmalloc"]
    assert kept == [s for s in calls if s > 64 and s != 1024] and len(kept) < len(calls)
    assert result.filtered == {"kmem_kmalloc": len(calls) - len(kept)}
    assert result.total.produced == result.total.recorded == len(sink.events)


@pytest.mark.slow
def test_kprobe_events_command_shows_line_and_format(capsys) -> None:
    """kisim kprobe-events: trace_kprobe_show's line, then the format file."""
    from kisim.cli import main
    assert main(["kprobe-events", "--arch", "arm", "r4:myret kmalloc ptr=$retval:x32"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("r4:kprobes/myret kmalloc ptr=$retval:x32\n\n"
                          "# events/kprobes/myret/format\nname: myret\nID: 64\nformat:\n")
    assert "\tfield:unsigned long __probe_ret_ip;\toffset:12;\tsize:4;\tsigned:0;\n" in out
    assert out.endswith('print fmt: "(%lx <- %lx) ptr=0x%x", REC->__probe_func, '
                        "REC->__probe_ret_ip, REC->ptr\n")


def test_json_counts_kprobe_event_hits(tmp_path, capsys) -> None:
    import json
    from kisim.cli import main
    assert main(["trace", "--arch", "x86_64", "--workload", "kmalloc", "--size", "5",
                 "--probes", "kmem", "--kprobe-event", "p:k kmalloc size=%di",
                 "--filter", "k:size > 64", "--filter", "kmem/kmalloc:bytes_req > 64",
                 "--json", "--format", "ctf", "--out", str(tmp_path / "t")]) == 0
    data = json.loads(capsys.readouterr().out)
    counts = data["kprobe_event_counts"][0]
    assert counts["event"] == "kprobes/k" and counts["hits"] > counts["filtered"] > 0
    assert data["filtered"]["kmem_kmalloc"] == counts["filtered"]
    assert data["filters"] == ["k:size > 64", "kmem/kmalloc:bytes_req > 64"]


@pytest.mark.slow
@pytest.mark.parametrize("arch", sorted(ARGS))
def test_encode_gives_back_the_recorded_bytes(arch: str) -> None:
    """TraceKprobes.encode (for trace.dat writers) rebuilds each record as the ring
    buffer held it: strings and their __data_loc, faults, arrays, symbols, signs."""
    size = ARGS[arch][0]
    guest = Guest(build(arch), cpus=1, workload="kmalloc", size=5)
    inst = attach(guest)
    events = kprobe_events(guest, inst, (
        f"p:k kmalloc n={size}:s16 c=$comm bad=+0({size}):string w=+0($stack):x8[3] "
        f"ret=+0($stack):symbol[1] u=+0($stack):u16[2] ws=+0($stack):string[1]",
        "r:r kmalloc $retval"))
    seen = []
    decode = events.decode

    def keep(tk, rec, *args):
        event = decode(tk, rec, *args)
        seen.append((rec, event))
        return event

    events.decode = keep
    session = TraceSession(guest, TraceOptions(parse_probes("kmem")), inst, events)
    assert session.run(EventList()).checksum_ok
    assert {e.name for _, e in seen} == {"k", "r"}
    for rec, event in seen:
        encoded = events.encode(event)
        assert rec[:len(encoded)] == encoded and not any(rec[len(encoded):])


def test_event_ids_are_not_reused_after_a_deletion() -> None:
    guest = Guest(build("x86_64"), cpus=1, workload="kmalloc", size=5)
    events = kprobe_events(guest, attach(guest), ("p:a kmalloc", "p:b kfree"))
    events.write("-:a\np:c kmalloc\n")
    assert sorted(tk.id for tk in events.events.values()) == [65, 66]


def test_an_address_past_the_text_is_no_function(capsys) -> None:
    """kallsyms names no function past ``_etext`` (is_kernel_text): ``p 0xdeadbeef``
    is register_kprobe's refusal, not a notrace function called None."""
    from kisim.cli import main
    assert main(["kprobe-events", "--arch", "arm", "p 0xdeadbeef"]) == 2
    err = capsys.readouterr().err
    assert "0xdeadbeef is not in a kernel text function" in err and "None" not in err
