"""Markers, immediate values, static keys and tracepoints on the real guest kernels."""
from __future__ import annotations

import pytest

from kbuild import build
from patcher.errors import PatchError
from patcher.instrument import attach
from sim.event import Event
from sim.workloads import DEFAULT_SIZES
from sim.guest import Guest

KMALLOC_FMT = ("type_id %d call_site %lu ptr %lu bytes_req %lu bytes_alloc %lu "
               "gfp_flags %lu node %d")
# .config overrides that select each marker enable mechanism (defconfig: imv).
MECHANISMS = {"imv": {}, "jump_label": {"IMMEDIATE": "n"},
              "load": {"IMMEDIATE": "n", "JUMP_LABEL": "n"}}


@pytest.fixture(scope="module")
def builds() -> dict:
    return {}


def guest_for(builds, arch, mechanism="imv", cpus=2, workload="kmalloc") -> Guest:
    key = (arch.name, mechanism)
    if key not in builds:
        builds[key] = build(arch.name, overrides=MECHANISMS[mechanism])
    return Guest(builds[key], cpus=cpus, workload=workload)


def text_snapshot(guest: Guest) -> bytes:
    text = guest.image.sections[".text"]
    return guest.machine.read(text.addr, text.size)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_kmalloc_events_decoded_and_bytes_restored(arch, builds, mechanism) -> None:
    guest = guest_for(builds, arch, mechanism)
    inst = attach(guest)
    markers = inst.markers
    assert {m.enable for m in inst.tables.markers_named("kmalloc")} == {mechanism}
    original = text_snapshot(guest)
    events = []
    markers.marker_probe_register("kmalloc", KMALLOC_FMT, lambda ev, priv: events.append(ev))
    markers.marker_arm("kmalloc")
    changed = text_snapshot(guest) != original
    assert changed == (mechanism != "load")
    result = guest.run()
    assert result.ok, "arming a marker must not change the workload's checksum"
    assert events, "the armed kmalloc marker fired"
    for ev in events:
        f = ev.fields
        assert set(f) == {"type_id", "call_site", "ptr", "bytes_req", "bytes_alloc",
                          "gfp_flags", "node"}
        assert f["bytes_alloc"] >= f["bytes_req"] > 0
        assert f["bytes_alloc"] & (f["bytes_alloc"] - 1) == 0 or f["bytes_alloc"] % 8 == 0
        assert guest.image.symbol_at(f["call_site"]) is not None
        assert f["ptr"] != 0 and ev.cpu in (0, 1)
    assert len({ev.fields["ptr"] for ev in events}) > 1
    assert all(isinstance(ev, Event) and ev.name == "kmalloc" for ev in events)
    assert {ev.comm for ev in events} == {f"{guest.workload}/{i}" for i in range(4)}
    assert all(ev.tid > 0 for ev in events)
    for c in (0, 1):                       # each CPU's modeled clock only moves forward
        stamps = [ev.timestamp for ev in events if ev.cpu == c]
        assert stamps == sorted(stamps)
    markers.marker_disarm("kmalloc")
    assert text_snapshot(guest) == original, "disarming restores the exact original bytes"


@pytest.mark.slow
def test_every_marker_armed_to_a_noop_probe_keeps_checksums(arch, builds) -> None:
    guest = guest_for(builds, arch, workload="hackbench")
    inst = attach(guest)
    empty = inst.tables.image.symbols["__mark_empty_function"]
    for name in inst.tables.marker_names():
        fmt = inst.tables.markers_named(name)[0].format
        inst.markers.marker_probe_register(name, fmt, empty)
        inst.markers.marker_arm(name)
    calls = []
    guest.machine.watch(empty, lambda cpu: calls.append(cpu.index))
    result = guest.run()
    assert result.ok
    # the guest probe really ran: once per kmalloc/kfree of hackbench and more
    messages = 2 * 4 * 4 * DEFAULT_SIZES["hackbench"]
    assert len(calls) >= 2 * messages, len(calls)


def test_registry_follows_2_6_27(arch, builds) -> None:
    """Every row of the marker and tracepoint registry semantics (issue 8 §4)."""
    inst = attach(guest_for(builds, arch))
    markers, tps = inst.markers, inst.tracepoints
    probe = lambda ev, priv: None  # noqa: E731
    # register on a name no site has: a pending entry, 0
    assert markers.marker_probe_register("no_such_marker", "x %d", probe) == 0
    assert markers.pending() == ["no_such_marker"]
    # marker_arm with no probe: ENOENT
    with pytest.raises(PatchError) as e:
        markers.marker_arm("kfree")
    assert e.value.errno == "ENOENT"
    # a site whose format differs from the registered one: notice, stays disabled
    original = text_snapshot(inst.guest)
    assert markers.marker_probe_register("kmalloc", "type_id %s", probe) == 0
    markers.marker_arm("kmalloc")
    assert markers.notices == ["Format mismatch for probe kmalloc (type_id %s), "
                               f"marker ({KMALLOC_FMT})"]
    # 2.6.24 marker_arm counts the arm; set_marker leaves the site disabled
    assert text_snapshot(inst.guest) == original and markers.armed["kmalloc"] == 1
    # a registration whose format differs from the entry's: EPERM
    with pytest.raises(PatchError) as e:
        markers.marker_probe_register("kmalloc", KMALLOC_FMT, probe)
    assert e.value.errno == "EPERM"
    markers.marker_probe_unregister("kmalloc", probe)
    assert markers.marker_probe_register("kmalloc", KMALLOC_FMT, probe) == 0
    with pytest.raises(PatchError) as e:
        markers.marker_probe_register("kmalloc", KMALLOC_FMT, probe)
    assert e.value.errno == "EBUSY"
    # disarm below zero: EPERM
    with pytest.raises(PatchError) as e:
        markers.marker_disarm("kmalloc")
    assert e.value.errno == "EPERM"
    # tracepoints: duplicate probe EEXIST, unknown name pending (0)
    tp_probe = lambda ev: None  # noqa: E731
    assert tps.tracepoint_probe_register("kmalloc", tp_probe) == 0
    with pytest.raises(PatchError) as e:
        tps.tracepoint_probe_register("kmalloc", tp_probe)
    assert e.value.errno == "EEXIST"
    assert tps.tracepoint_probe_register("no_such_tracepoint", tp_probe) == 0
    assert tps.tracepoint_probe_unregister("no_such_tracepoint", tp_probe) == 0


def test_the_registry_edges_follow_the_kernel(arch, builds) -> None:
    """kernel/marker.c (2.6.27, arm/disarm 2.6.24) and kernel/tracepoint.c (2.6.28)
    at their edges: a NULL format takes the site's; unregistering a probe that
    is not there is ENOENT only without an entry (one probe: WARN and it goes;
    several: nothing changes); arm and disarm need an entry, not a site; the
    last unregistration disables; a refusal for room leaves the entry as it was."""
    inst = attach(guest_for(builds, arch))
    markers, tps = inst.markers, inst.tracepoints
    original = text_snapshot(inst.guest)
    a, b, c = (lambda ev, priv: None for _ in range(3))
    for call in (markers.marker_arm, markers.marker_disarm):
        with pytest.raises(PatchError) as e:
            call("kfree")                           # a site, no entry
        assert e.value.errno == "ENOENT"
    assert markers.marker_probe_register("kfree", None, a) == 0
    markers.marker_arm("kfree")
    assert markers.formats["kfree"] == inst.tables.markers_named("kfree")[0].format
    assert text_snapshot(inst.guest) != original and not markers.notices
    markers.marker_probe_unregister("kfree", b)      # one probe: WARN, a goes anyway
    assert markers.probes["kfree"] == [] and "WARNING" in markers.notices[-1]
    assert text_snapshot(inst.guest) == original and markers.armed["kfree"] == 0
    with pytest.raises(PatchError) as e:
        markers.marker_probe_unregister("kfree", a)
    assert e.value.errno == "ENOENT"
    markers.marker_probe_register("kfree", None, a)
    markers.marker_probe_register("kfree", None, b)
    markers.marker_probe_unregister("kfree", c)      # several: the same array, 0
    assert markers.probes["kfree"] == [(a, None), (b, None)]
    assert markers.marker_probe_register("no_site", "x %d", a) == 0
    markers.marker_arm("no_site")                   # an entry without a site: counted
    markers.marker_disarm("no_site")
    guest_probes = [inst.tables.image.symbols.pointer("__mark_empty_function")] * 8
    with pytest.raises(PatchError) as e:
        for i, func in enumerate(guest_probes):
            markers.marker_probe_register("kmalloc", KMALLOC_FMT, func, i)
    assert e.value.errno == "ENOMEM" and len(markers.probes["kmalloc"]) == i
    tp = lambda ev: None  # noqa: E731
    with pytest.raises(PatchError) as e:
        tps.tracepoint_probe_unregister("kfree", tp)
    assert e.value.errno == "ENOENT"
    probes = [(lambda ev: None) for _ in range(20)]
    assert tps.tracepoint_probe_register("kfree", probes[0]) == 0
    assert tps.tracepoint_probe_unregister("kfree", tp) == 0
    assert tps.probes["kfree"] == [probes[0]]
    guest_funcs = list(range(0x1000, 0x1000 + 4 * 20, 4))
    with pytest.raises(PatchError) as e:
        for func in guest_funcs:
            tps.tracepoint_probe_register("kfree", func)
    assert e.value.errno == "ENOMEM" and func not in tps.probes["kfree"]


def test_private_data_finds_and_disconnects_closures(arch, builds) -> None:
    """2.6.27's marker_get_private_data (the num-th closure of a probe, else
    ERR_PTR(-ENOENT)) and marker_probe_unregister_private_data (every closure with
    that private data goes from the first entry holding the pair, in one update)."""
    inst = attach(guest_for(builds, arch))
    markers = inst.markers
    original = text_snapshot(inst.guest)
    a, b = (lambda ev, priv: None for _ in range(2))
    for probe, private in ((a, "p1"), (b, "p1"), (a, "p2")):
        markers.marker_probe_register("kmalloc", KMALLOC_FMT, probe, private)
    markers.marker_arm("kmalloc")
    assert [markers.marker_get_private_data("kmalloc", p, n)
            for p, n in ((a, 0), (a, 1), (b, 0))] == ["p1", "p2", "p1"]
    for name, probe, num in (("kmalloc", a, 2), ("kmalloc", b, -1), ("kfree", a, 0)):
        with pytest.raises(PatchError) as e:
            markers.marker_get_private_data(name, probe, num)
        assert e.value.errno == "ENOENT"
    free = len(markers.pool.free)
    markers.marker_probe_unregister_private_data(b, "p1")      # (a, p1) goes too
    assert markers.probes["kmalloc"] == [(a, "p2")] and text_snapshot(inst.guest) != original
    assert len(markers.pool.free) == free       # one update: to the single closure, no array
    with pytest.raises(PatchError) as e:
        markers.marker_probe_unregister_private_data(b, "p1")
    assert e.value.errno == "ENOENT"
    markers.marker_probe_unregister_private_data(a, "p2")      # the last: entry, arms go
    assert not markers.probes["kmalloc"] and "kmalloc" not in markers.armed
    assert text_snapshot(inst.guest) == original


@pytest.mark.slow
def test_arming_is_reference_counted_and_probes_stack(arch, builds) -> None:
    guest = guest_for(builds, arch, cpus=1)
    inst = attach(guest)
    first, second = [], []
    m = inst.markers
    m.marker_probe_register("kmalloc", KMALLOC_FMT, lambda ev, p: first.append(ev))
    m.marker_probe_register("kmalloc", KMALLOC_FMT, lambda ev, p: second.append(ev), "two")
    m.marker_arm("kmalloc")
    m.marker_arm("kmalloc")
    m.marker_disarm("kmalloc")          # still armed once
    guest.run()
    assert first and len(first) == len(second)


def test_imv_set_reaches_every_site_and_rejects_overflow(arch, builds) -> None:
    """Desnoyers' imv_set assigns the variable (C's conversion to its size), then every
    site's immediate; one that would load another value than the variable holds is
    refused (ERANGE) before anything is written."""
    guest = guest_for(builds, arch)
    inst = attach(guest)
    imv = inst.imv
    var, sites = next(iter(imv.sites.items()))
    imv.imv_set(var, 1)
    assert all(imv.read(e) == 1 for e in sites)
    imv.imv_set(var, 0x100 + 7)                         # a char: 263 is 7
    assert all(imv.read(e) == 7 for e in sites) and guest.machine.read(var, 1) == b"\x07"
    imv.imv_set(var, 1)
    wide = 1 << (8 * sites[0].size)                     # a variable wider than its immediates
    with pytest.raises(PatchError) as e:
        imv.imv_set(var, wide + 3, var_size=sites[0].size + 2)
    assert e.value.errno == "ERANGE" and "would load 0x3" in e.value.message
    assert all(imv.read(e) == 1 for e in sites), "a refused imv_set writes nothing"
    assert guest.machine.read(var, 1) == b"\x01"
    if guest.arch.imv_sign_extends:     # PowerPC li: a u16's top half comes back by the cast
        imv.imv_set(var, 0x8001, var_size=2)
        assert all(imv.read(e) == 0x8001 - 0x10000 for e in sites)
    imv.imv_set(var, 0, var_size=2 if guest.arch.imv_sign_extends else 1)
    assert all(imv.read(e) == 0 for e in sites)


def test_static_key_sites_flip_between_nop_and_jump(arch, builds) -> None:
    from sim.asm import disassemble
    inst = attach(guest_for(builds, arch, "jump_label"))
    keys = inst.keys
    key, entries = next(iter(keys.sites.items()))
    keys.static_key_slow_inc(key)
    for e in entries:
        (insn,) = disassemble(arch, guest_read(inst, e.code, len(e.insn)), e.code)
        assert int(insn.op_str.lstrip("#"), 16) == e.target
    keys.static_key_slow_dec(key)
    assert all(guest_read(inst, e.code, len(e.insn)) == e.insn for e in entries)


def test_a_static_key_below_zero_goes_on_as_v5_10s(arch, builds, caplog) -> None:
    """kernel/jump_label.c (v5.10) static_key_slow_try_dec: 0 -> -1 is silent, and
    only a count already negative WARNs; the sites stay as they are, -1 reads as
    enabled (static_key_count), static_key_enable leaves it, and an inc brings it
    back to 0 without patching."""
    inst = attach(guest_for(builds, arch, "jump_label"))
    keys = inst.keys
    key, entries = next(iter(keys.sites.items()))
    with caplog.at_level("WARNING", logger="patcher.jump_label"):
        keys.static_key_slow_dec(key)
        assert keys.count[key] == -1 and keys.enabled(key) and not keys.warnings
        keys.static_key_slow_dec(key)
        assert keys.count[key] == -2 and keys.warnings == {"static_key_slow_dec": 1}
        keys.static_key_slow_dec(key)
    assert keys.warnings == {"static_key_slow_dec": 2} and len(caplog.records) == 2
    assert "jump label: negative count!" in caplog.records[0].getMessage()
    keys.static_key_enable(key)
    assert keys.count[key] == -3
    for _ in range(3):
        keys.static_key_slow_inc(key)
    assert keys.count[key] == 0 and not keys.enabled(key)
    assert all(guest_read(inst, e.code, len(e.insn)) == e.insn for e in entries)


def once(action):
    """An on_turn hook that runs ``action`` after the first turn, and then nothing."""
    done = []

    def on_turn(_machine) -> None:
        if not done:
            done.append(True)
            action()
    return on_turn


def guest_read(inst, addr, size):
    return inst.guest.machine.read(addr, size)


@pytest.mark.slow
def test_tracepoint_probes_and_grace_period(arch, builds) -> None:
    guest = guest_for(builds, arch, workload="hackbench")
    inst = attach(guest)
    tps = inst.tracepoints
    name = next(tp.name for tp in inst.tables.tracepoints if "sched_switch" in tp.name)
    seen_a, seen_b = [], []
    probe_a = lambda ev: seen_a.append(ev)  # noqa: E731
    probe_b = lambda ev: seen_b.append(ev)  # noqa: E731
    def register() -> None:
        """From the first turn on, once a CPU has run (one that has not is quiescent)."""
        tps.register_trace(name, probe_a)
        tps.register_trace(name, probe_b)       # swaps a host-only array: same contents
        with pytest.raises(PatchError) as e:
            tps.register_trace(name, probe_a)
        assert e.value.errno == "EEXIST"
        assert tps.pool.watching, "a grace period watches context switches"

    guest.run(on_turn=once(register))
    assert seen_a and len(seen_a) == len(seen_b)
    assert tps.pending() == 0, "every old array is freed once all CPUs have switched"
    assert not tps.pool.watching, "and stops watching: a watch slows every block"
    tps.unregister_trace(name, probe_b)
    tps.unregister_trace(name, probe_a)
    with pytest.raises(PatchError) as e:
        tps.unregister_trace(name, probe_a)
    assert e.value.errno == "ENOENT"


LTTNG_FIELDS = {
    "kmalloc": ("kmem_kmalloc", ("call_site", "ptr", "bytes_req", "bytes_alloc", "gfp_flags")),
    "kfree": ("kmem_kfree", ("call_site", "ptr")),
    "sched_switch": ("sched_switch", ("prev_comm", "prev_tid", "prev_prio", "prev_state",
                                      "next_comm", "next_tid", "next_prio")),
    "sched_wakeup": ("sched_wakeup", ("comm", "tid", "prio", "target_cpu")),
}


@pytest.mark.slow
def test_tracepoint_events_carry_lttng_fields(arch, builds) -> None:
    guest = guest_for(builds, arch, workload="hackbench")
    inst = attach(guest)
    events: dict[str, list[Event]] = {name: [] for name in LTTNG_FIELDS}
    for name in LTTNG_FIELDS:
        inst.tracepoints.register_trace(name, events[name].append)
    assert guest.run().ok
    for name, (event_name, fields) in LTTNG_FIELDS.items():
        assert events[name], f"{name} fired"
        assert all(ev.name == event_name and ev.cls.field_names() == fields
                   for ev in events[name])
    for ev in events["kmalloc"]:
        f = ev.fields
        assert f["bytes_alloc"] >= f["bytes_req"] > 0 and f["ptr"] and f["gfp_flags"] == 0xD0
        assert guest.image.symbol_at(f["call_site"]) is not None
    assert any(guest.image.describe(ev.fields["call_site"]).startswith("hb_sender+")
               for ev in events["kmalloc"])
    assert ({ev.fields["ptr"] for ev in events["kfree"]}
            <= {ev.fields["ptr"] for ev in events["kmalloc"]})
    for ev in events["sched_switch"]:
        f = ev.fields
        assert (f["prev_tid"], f["prev_comm"]) == (ev.tid, ev.comm), "prev is current"
        assert f["prev_prio"] in (20, 40) and f["next_prio"] in (20, 40)
        assert (f["prev_prio"] == 40) == f["prev_comm"].startswith("swapper/")
    for ev in events["sched_wakeup"]:
        assert ev.fields["prio"] == 20 and 0 <= ev.fields["target_cpu"] < 2
    assert {ev.fields["comm"] for ev in events["sched_wakeup"]} & {"hackbench/0", "init"}


def test_site_view_shows_dormant_and_armed(arch, capsys) -> None:
    import json

    from kisim.cli import main
    assert main(["site", "--arch", arch.name, "--marker", "kmalloc", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (site,) = data["sites"]
    assert site["record"]["section"] == "__imv"
    assert site["dormant"]["bytes"] != site["armed"]["bytes"]
    assert site["dormant"]["address"] == site["record"]["insn"]
    assert main(["site", "--arch", arch.name, "no_such_site"]) == 2
    assert "known: kfree" in capsys.readouterr().err


def test_one_enable_helper_flips_each_mechanism(arch, builds) -> None:
    """patcher.enable.set_enabled: the state word, plus the imv sites or the static key."""
    from patcher.enable import set_enabled
    for mechanism in ("imv", "jump_label", "load"):
        guest = guest_for(builds, arch, mechanism)
        inst = attach(guest)
        (site,) = inst.tables.markers_named("kfree")
        assert site.enable == mechanism
        original = text_snapshot(guest)
        set_enabled(guest.machine, mechanism, site.state_addr, 1, True, inst.imv, inst.keys)
        assert guest.machine.read_word(site.state_addr, 1) == 1
        assert (text_snapshot(guest) != original) == (mechanism != "load")
        set_enabled(guest.machine, mechanism, site.state_addr, 1, False, inst.imv, inst.keys)
        assert guest.machine.read_word(site.state_addr, 1) == 0
        assert text_snapshot(guest) == original
    with pytest.raises(PatchError, match="unknown enable mechanism"):
        set_enabled(guest.machine, "bogus", site.state_addr, 1, True, None, None)


def test_static_key_enable_disable_follow_v5_10(arch, builds, caplog) -> None:
    """kernel/jump_label.c (v5.10): static_key_enable/disable act only on a
    count of 0/1; on a count of 2 both WARN_ON_ONCE and leave the key (and
    its text) as it is; disabling a key already at 0 is silent."""
    guest = guest_for(builds, arch, "jump_label")
    inst = attach(guest)
    keys = inst.keys
    (site,) = inst.tables.markers_named("kfree")
    key = site.state_addr
    original = text_snapshot(guest)
    keys.static_key_slow_inc(key)
    keys.static_key_slow_inc(key)
    armed = text_snapshot(guest)
    assert armed != original and keys.count[key] == 2
    with caplog.at_level("WARNING", logger="patcher.jump_label"):
        keys.static_key_enable(key)
        assert keys.count[key] == 2 and text_snapshot(guest) == armed
        keys.static_key_disable(key)
        keys.static_key_disable(key)
    assert keys.count[key] == 2 and text_snapshot(guest) == armed
    assert keys.warnings == {"static_key_enable": 1, "static_key_disable": 2}
    assert [r.getMessage() for r in caplog.records] == [     # once per WARN_ON_ONCE site
        f"WARNING: static_key_enable: static key {key:#x} has count 2",
        f"WARNING: static_key_disable: static key {key:#x} has count 2"]
    keys.static_key_slow_dec(key)
    keys.static_key_disable(key)                             # count 1: off, unpatched
    assert keys.count[key] == 0 and text_snapshot(guest) == original
    keys.static_key_disable(key)                             # count 0: nothing, no WARN
    assert text_snapshot(guest) == original and keys.warnings["static_key_disable"] == 2
    keys.static_key_enable(key)
    assert keys.count[key] == 1 and text_snapshot(guest) == armed
    keys.static_key_enable(key)                              # count 1: nothing, no WARN
    assert keys.warnings["static_key_enable"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("drop", [False, True])
def test_two_guest_probes_share_a_marker_through_multi(arch, builds, drop) -> None:
    """2.6.27 marker_probe_cb: two guest closures (the empty probe with two
    private words) and the host forwarder all run on every hit through the
    ``multi`` array; unregistering one leaves the others, through ``single``
    once one closure remains, and the old array is freed after a grace period."""
    guest = guest_for(builds, arch)
    inst = attach(guest)
    m = inst.markers
    empty = inst.tables.image.symbols["__mark_empty_function"]
    events: list[Event] = []
    host = lambda ev, p: events.append(ev)  # noqa: E731
    site = inst.tables.markers_named("kmalloc")[0].address
    sites = len(inst.tables.markers_named("kmalloc"))
    ptype = lambda: guest.machine.read(site + m.ptype_offset, 1)[0]  # noqa: E731
    calls: list[int] = []

    def register() -> None:
        """From the first turn on, once the CPU has run (one that has not is quiescent)."""
        m.marker_probe_register("kmalloc", KMALLOC_FMT, empty, 1)
        m.marker_probe_register("kmalloc", KMALLOC_FMT, empty, 2)
        m.marker_probe_register("kmalloc", KMALLOC_FMT, host)
        assert ptype() == 1 and m.pool.pending() == sites  # the two-closure array, swapped out
        if drop:
            m.marker_probe_unregister("kmalloc", empty, 2)
            assert ptype() == 1 and m.pool.pending() == 2 * sites
            m.marker_probe_unregister("kmalloc", host)
            assert ptype() == 0                 # one closure left: the single slot
        m.marker_arm("kmalloc")
        guest.machine.watch(empty, lambda cpu: calls.append(cpu.index))

    expect = 1 if drop else 2
    result = guest.run(on_turn=once(register))
    assert result.ok                        # the checksum stays right
    assert m.pool.pending() == 0 and m.pool.freed == (1 + 2 * drop) * sites  # grace period over
    if drop:
        assert events == [] and len(calls) > 0
    else:
        assert len(events) > 0 and len(calls) == expect * len(events)


DUP = r"""
#include <linux/module.h>
#include <linux/marker.h>

static const char hello[] = "hello";

noinline unsigned long dup_a(unsigned long n)
{
	trace_mark(dup_ev, "a %d", (int)n);
	trace_mark(prec_ev, "v %.2d w %d", (int)n, (int)(n + 7));
	return n + 1;
}

noinline unsigned long dup_b(unsigned long n)
{
	trace_mark(dup_ev, "s %s", hello);
	return n + 2;
}

unsigned long dup_run(unsigned long size)
{
	unsigned long i, sum = 0;

	for (i = 0; i < size; i++)
		sum += dup_a(i) + dup_b(i);
	return sum;
}
"""


def test_markers_are_checked_site_by_site_and_parsed_as_the_guest_parses(tmp_path) -> None:
    """set_marker (2.6.27) checks each site's format: of two sites of one name, the
    one whose format differs stays disabled with a notice, the other fires. The
    host reads a format as the guest's marker_args() does, stopping at a
    conversion it does not know (``%.2d``): no field after it."""
    from kbuild import build
    from patcher.instrument import attach
    from sim.guest import Guest
    (tmp_path / "dup.c").write_text(DUP)
    guest = Guest(build("x86_64", modules=[tmp_path / "dup.c"]), workload="dup:dup_run", size=3)
    markers = attach(guest).markers
    seen = []
    for name, fmt in (("dup_ev", "a %d"), ("prec_ev", None)):
        markers.marker_probe_register(name, fmt, lambda ev, _p: seen.append((ev.name, ev.values)))
        markers.marker_arm(name)
    assert markers.notices == ["Format mismatch for probe dup_ev (a %d), marker (s %s)"]
    assert guest.run().ok
    assert seen == [(name, values) for i in range(3)
                    for name, values in (("dup_ev", (i,)), ("prec_ev", ()))]
