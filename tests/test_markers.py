"""Markers, immediate values, static keys and tracepoints on the real guest kernels."""
from __future__ import annotations

import pytest

from kconfig.build import build
from patcher.errors import PatchError
from patcher.instrument import attach
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
    markers.marker_disarm("kmalloc")
    assert text_snapshot(guest) == original, "disarming restores the exact original bytes"


def test_every_marker_armed_to_a_noop_probe_keeps_checksums(arch, builds) -> None:
    guest = guest_for(builds, arch, workload="hackbench")
    inst = attach(guest)
    empty = inst.tables.image.symbols["__mark_empty_function"]
    for name in inst.tables.marker_names():
        fmt = inst.tables.markers_named(name)[0].format
        inst.markers.marker_probe_register(name, fmt, empty)
        inst.markers.marker_arm(name)
    result = guest.run()
    assert result.ok


def test_registry_errors_follow_2_6_24(arch, builds) -> None:
    inst = attach(guest_for(builds, arch))
    markers = inst.markers
    probe = lambda ev, priv: None  # noqa: E731
    with pytest.raises(PatchError) as e:
        markers.marker_probe_register("no_such_marker", "x %d", probe)
    assert e.value.errno == "ENOENT"
    original = text_snapshot(inst.guest)
    with pytest.raises(PatchError) as e:
        markers.marker_probe_register("kmalloc", "type_id %s", probe)
    assert e.value.errno == "EPERM" and text_snapshot(inst.guest) == original
    markers.marker_probe_register("kmalloc", KMALLOC_FMT, probe)
    with pytest.raises(PatchError) as e:
        markers.marker_probe_register("kmalloc", KMALLOC_FMT, probe)
    assert e.value.errno == "EBUSY"
    with pytest.raises(PatchError) as e:
        markers.marker_arm("nope")
    assert e.value.errno == "ENOENT"


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
    guest = guest_for(builds, arch)
    inst = attach(guest)
    imv = inst.imv
    var, sites = next(iter(imv.sites.items()))
    imv.imv_set(var, 1)
    assert all(imv.read(e) == 1 for e in sites)
    too_big = 1 << (8 * sites[0].size)
    with pytest.raises(PatchError) as e:
        imv.imv_set(var, too_big)
    assert e.value.errno == "ERANGE"
    assert all(imv.read(e) == 1 for e in sites), "a refused imv_set writes nothing"
    imv.imv_set(var, 0)
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
    with pytest.raises(PatchError):
        keys.static_key_slow_dec(key)


def guest_read(inst, addr, size):
    return inst.guest.machine.read(addr, size)


def test_tracepoint_probes_and_grace_period(arch, builds) -> None:
    guest = guest_for(builds, arch, workload="hackbench")
    inst = attach(guest)
    tps = inst.tracepoints
    name = next(tp.name for tp in inst.tables.tracepoints if "sched_switch" in tp.name)
    seen_a, seen_b = [], []
    probe_a = lambda n, cpu, args: seen_a.append(args)  # noqa: E731
    probe_b = lambda n, cpu, args: seen_b.append(args)  # noqa: E731
    tps.register_trace(name, probe_a)
    tps.register_trace(name, probe_b)           # swaps a host-only array: same contents
    with pytest.raises(PatchError) as e:
        tps.register_trace(name, probe_a)
    assert e.value.errno == "EBUSY"
    guest.run()
    assert seen_a and len(seen_a) == len(seen_b)
    assert tps.pending() == 0, "every old array is freed once all CPUs have switched"
    tps.unregister_trace(name, probe_b)
    tps.unregister_trace(name, probe_a)
    with pytest.raises(PatchError) as e:
        tps.unregister_trace(name, probe_a)
    assert e.value.errno == "ENOENT"


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
