"""Booting the guest kernel: workloads, checksums, SMP, hypercalls, live markers."""
from __future__ import annotations

import functools
import json

import pytest

from arches import NAMES
from kbuild import build
from kisim.cli import main
from patcher.tables import load_tables
from sim.errors import ConfigError, GuestFault
from sim.textlock import LockNotHeld
from sim.dwarf import struct
from sim.guest import (DEFAULT_SIZES, HYPERCALLS, WORKLOADS, Guest, WorkloadError, boot,
                       reference_checksum)

SCRATCH = 0x80000      # a page below the kernel for host-made data (probe arrays)


@functools.lru_cache(maxsize=None)
def run(arch: str, workload: str, cpus: int):
    return boot(build(arch), cpus=cpus, workload=workload)


def test_workloads_match_the_guest_table():
    assert WORKLOADS == ("fib", "getppid", "hackbench", "kmalloc", "kmem_errors")
    assert set(DEFAULT_SIZES) == set(WORKLOADS)
    assert HYPERCALLS["HC_EXIT"] == 0 and len(set(HYPERCALLS.values())) == len(HYPERCALLS)


@pytest.mark.parametrize("cpus", [1, 2])
@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("name", NAMES)
def test_every_workload_boots(name, workload, cpus):
    r = run(name, workload, cpus)
    assert r.checksum is not None and r.ok
    assert r.checksum == reference_checksum(workload)
    assert r.size == DEFAULT_SIZES[workload]
    assert len(r.per_cpu) == cpus and r.exit_status == [0] * cpus
    assert f"workload {workload} size {r.size}" in r.console
    assert f"checksum {r.checksum:08x}" in r.console
    counts = [c["instructions"] for c in r.per_cpu]
    if cpus == 2:           # both CPUs did real work, not only idling
        assert min(counts) > max(counts) // 4
    for c in r.per_cpu:
        assert c["modeled_cycles"] >= c["instructions"] > 0


@pytest.mark.parametrize("cpus", [1, 2])
@pytest.mark.parametrize("workload", WORKLOADS)
def test_checksums_are_equal_across_arches(workload, cpus):
    sums = {name: run(name, workload, cpus).checksum for name in NAMES}
    assert len(set(sums.values())) == 1, sums
    assert set(sums.values()) == {run(NAMES[0], workload, 3 - cpus).checksum}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_interleaving_changes_counts_not_checksums(name):
    b = build(name)
    runs = [boot(b, cpus=3, workload="hackbench", size=8, quantum=q, seed=s)
            for q, s in ((10_000, None), (97, 1), (97, 2))]
    assert {r.checksum for r in runs} == {reference_checksum("hackbench", 8)}
    assert len({tuple(c["instructions"] for c in r.per_cpu) for r in runs}) == 3
    again = boot(b, cpus=3, workload="hackbench", size=8, quantum=97, seed=1)
    assert again.per_cpu == runs[1].per_cpu


@pytest.mark.parametrize("workload,size", [("fib", 12), ("getppid", 100), ("kmalloc", 77),
                                           ("hackbench", 3)])
def test_size_parameter(workload, size):
    r = boot(build("ppc32"), cpus=2, workload=workload, size=size)
    assert r.size == size and r.ok
    assert r.checksum != reference_checksum(workload)


def test_default_run_is_a_few_million_instructions():
    for workload in WORKLOADS:
        assert 500_000 < run("x86_64", workload, 1).instructions < 10_000_000


def test_unknown_workload_lists_the_valid_ones():
    with pytest.raises(WorkloadError) as err:
        boot(build("arm"), workload="dbench")
    assert str(err.value) == ("unknown workload 'dbench' (valid: fib, getppid, hackbench, "
                              "kmalloc, kmem_errors, or a module's function as MODULE:FUNC)")
    with pytest.raises(WorkloadError, match="size"):
        boot(build("arm"), workload="fib", size=0)


@pytest.mark.slow
def test_more_cpus_than_nr_cpus_is_refused():
    b = build("x86_64", overrides={"SMP": "n"})
    assert b.config["NR_CPUS"] == "1"
    with pytest.raises(ConfigError, match="CONFIG_NR_CPUS=1"):
        boot(b, cpus=2, workload="fib")
    assert boot(b, cpus=1, workload="fib", size=10).ok


def test_boot_from_an_elf_path():
    r = boot(build("arm").elf, cpus=2, workload="fib", size=10)
    assert r.arch == "arm" and r.ok


@pytest.mark.parametrize("name", NAMES)
def test_guest_panic_is_a_fault(name):
    guest = Guest(build(name), workload="fib")
    guest.machine.write(guest.image.symbols["boot_params"] + 12, b"bogus\0")
    with pytest.raises(GuestFault) as err:
        guest.run()
    assert err.value.reason == "kernel panic: unknown workload 'bogus'"
    assert "panic" in guest.image.describe(err.value.pc)


def test_instruction_budget_is_a_fault():
    with pytest.raises(GuestFault, match="budget"):
        boot(build("x86_64"), workload="fib", max_instructions=100_000)


# -- live instrumentation through the hypercall probes -------------------------

def arm_flag(guest: Guest, tables, state_addr: int, size: int) -> None:
    """Enable the sites testing a flag the way the patcher will: flag, imv or jump."""
    arch, m = guest.arch, guest.machine
    m.write(state_addr, arch.from_int(1, size))
    with m.text_mutex:                      # as text_poke_early: the text lock is held
        _arm_text(m, tables, state_addr)
    m.sync_all()


def _arm_text(m, tables, state_addr: int) -> None:
    arch = m.arch
    for e in tables.imv:
        if e.var == state_addr:
            m.write_text(e.imv, arch.from_int(1, e.size))
    for e in tables.jump_entries:
        if e.key == state_addr:
            m.write_text(e.code, arch.encode_jump(e.code, e.target))


def forward(guest: Guest, name: str, words: int | None = None):
    """Register a raw host handler for HC_MARKER/HC_TRACEPOINT; return its event list."""
    events = []
    size = words or guest.arch.word
    guest.hypercalls.register(name, lambda cpu, addr, array, count: events.append(
        (addr, guest.machine.read_words(array, count, size))))
    return events


def arm_marker(guest: Guest, tables, name: str) -> int:
    marker = tables.markers_named(name)[0]
    single = marker.address + struct(guest.image.path, "marker").offset("single")
    guest.machine.write_word(single + guest.arch.word, marker.address)   # probe_private
    guest.machine.write_word(single, guest.image.symbols["marker_probe_hc"])
    arm_flag(guest, tables, marker.state_addr, 1)
    return marker.address


VARIANTS = {"imv": {}, "jump_label": {"IMMEDIATE": "n"},
            "load": {"IMMEDIATE": "n", "JUMP_LABEL": "n"}}


@pytest.mark.slow
@pytest.mark.parametrize("enable", VARIANTS)
@pytest.mark.parametrize("name", NAMES)
def test_syscall_markers_fire_through_each_enable_mechanism(name, enable):
    b = build(name, overrides=VARIANTS[enable] or None)
    tables = load_tables(b.elf)
    guest = Guest(b, cpus=2, workload="getppid", size=100)
    assert {m.enable for m in tables.markers} == {enable}
    entry = arm_marker(guest, tables, "syscall_entry")
    exit_ = arm_marker(guest, tables, "syscall_exit")
    events = forward(guest, "HC_MARKER", 8)
    r = guest.run()
    assert r.ok
    entries = [v for m, v in events if m == entry]
    exits = [v for m, v in events if m == exit_]
    calls = 4 * (100 + 100 // 64)           # getppid calls plus sched_yield calls
    assert len(entries) == len(exits) == calls == r.hypercalls["HC_MARKER"] // 2
    assert sorted(v[0] for v in entries) == [1] * 400 + [2] * 4    # __NR_getppid, yield
    assert all(guest.image.describe(v[1]).startswith("getppid_task+") for v in entries)
    assert sorted(v[0] for v in exits) == [0] * 4 + [1] * 400      # yield 0, ppid = init


@pytest.mark.parametrize("name", NAMES)
def test_kmemtrace_markers_report_allocations(name):
    b = build(name)
    tables = load_tables(b.elf)
    guest = Guest(b, cpus=2, workload="hackbench", size=5)
    alloc, free = arm_marker(guest, tables, "kmalloc"), arm_marker(guest, tables, "kfree")
    raw = forward(guest, "HC_MARKER", 8)
    assert guest.run().ok
    events = {alloc: [v for a, v in raw if a == alloc], free: [v for a, v in raw if a == free]}
    messages = 2 * 4 * 4 * 5
    assert len(events[alloc]) == len(events[free]) == messages
    for type_id, call_site, ptr, req, size, gfp, node in events[alloc]:
        assert type_id == 0 and gfp == 0xD0 and node == (1 << 64) - 1
        assert req <= size and size & (size - 1) == 0 and size >= 8
        assert guest.image.describe(call_site).startswith("hb_sender+")
    for type_id, call_site, ptr in events[free]:
        assert guest.image.describe(call_site).startswith("hb_receiver+")
    assert sorted(v[2] for v in events[alloc]) == sorted(v[2] for v in events[free])


@pytest.mark.parametrize("name", NAMES)
def test_sched_switch_marker_and_tracepoint_agree(name):
    b = build(name)
    tables = load_tables(b.elf)
    guest = Guest(b, cpus=1, workload="fib", size=10)
    arch, m = guest.arch, guest.machine
    arm_marker(guest, tables, "sched_switch")
    tp = tables.tracepoint("sched_switch")
    m.map(SCRATCH, 0x1000, "rw")
    m.write(SCRATCH, arch.from_int(tp.hc_probe, arch.word) + bytes(arch.word))
    m.write_word(tp.address + 2 * arch.word, SCRATCH)          # funcs = {hc_probe, NULL}
    arm_flag(guest, tables, tp.state_addr, 4)
    marks = forward(guest, "HC_MARKER", 8)
    points = forward(guest, "HC_TRACEPOINT")
    assert guest.run().ok
    marks = [values for _marker, values in marks]
    assert marks and len(marks) == len(points)
    pid_offset = 2 * arch.word                # struct task_struct: sp, state, pid
    for (prev_pid, next_pid, _state), (point, (prev, nxt)) in zip(marks, points):
        assert point == tp.address
        assert m.read_word(prev + pid_offset, 4) == prev_pid
        assert m.read_word(nxt + pid_offset, 4) == next_pid


@pytest.mark.parametrize("name", NAMES)
def test_text_writes_without_the_text_lock_are_refused(name):
    guest = Guest(build(name), workload="fib")
    tables = load_tables(guest.elf)
    site = tables.jump_entries[0] if tables.jump_entries else tables.imv[0]
    addr = getattr(site, "code", None) or site.imv
    before = guest.machine.read(addr, 4)
    with pytest.raises(LockNotHeld, match="without holding text_mutex"):
        guest.machine.write_text(addr, b"\0\0\0\0")
    assert guest.machine.read(addr, 4) == before, "a refused write changes nothing"


@pytest.mark.parametrize("name", NAMES)
def test_unserved_hypercall_faults_and_base_table_is_the_boot_protocol(name):
    guest = Guest(build(name), workload="fib", size=5)
    assert sorted(guest.hypercalls.handlers) == sorted(
        HYPERCALLS[n] for n in ("HC_EXIT", "HC_WRITE", "HC_CHECKSUM", "HC_PANIC", "HC_IDLE",
                                "HC_WORKLOAD", "HC_MODULE"))
    with pytest.raises(ConfigError, match="already has a handler"):
        guest.hypercalls.register("HC_EXIT", lambda *a: None)
    r = guest.run()
    assert r.ok and r.hypercalls["HC_EXIT"] == 1 and r.hypercalls["HC_CHECKSUM"] == 1


@pytest.mark.parametrize("name", NAMES)
def test_current_task_is_read_from_guest_memory(name):
    """At each sched_switch marker hit, the CPU's current task is the one switching out."""
    b = build(name)
    tables = load_tables(b.elf)
    guest = Guest(b, cpus=2, workload="fib", size=10)
    arm_marker(guest, tables, "sched_switch")
    seen = []
    guest.hypercalls.register("HC_MARKER", lambda cpu, addr, array, count: seen.append(
        (guest.current_task(cpu), guest.machine.read_words(array, count, 8))))
    assert guest.run().ok and seen
    for task, (prev_pid, _next_pid, _state) in seen:
        assert task.pid == prev_pid
        assert guest.machine.read_word(task.address + 2 * guest.arch.word, 4) == task.pid
    comms = {task.comm for task, _ in seen}
    assert comms and all(c and c.isprintable() for c in comms), comms


# -- the command line -----------------------------------------------------------

def test_boot_command(capsys):
    assert main(["boot", "--arch", "arm", "--cpus", "2", "--workload", "kmalloc",
                 "--size", "200"]) == 0
    out = capsys.readouterr().out
    assert "workload kmalloc size 200" in out
    assert f"checksum {reference_checksum('kmalloc', 200):#010x} (matches the reference)" in out
    assert out.count("\n   0 ") == 1 and "\n   1 " in out and "\n all " in out
    assert "markers 10" in out and "jump_label" in out and "imv" in out and "mcount" in out


def test_boot_command_json(capsys):
    assert main(["boot", "--arch", "ppc32", "--workload", "fib", "--size", "9",
                 "--seed", "3", "--quantum", "500", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["checksum"] == reference_checksum("fib", 9)
    assert out["seed"] == 3 and out["quantum"] == 500 and len(out["per_cpu"]) == 1
    assert out["sites"]["mcount"] > 0


def test_boot_command_unknown_workload(capsys):
    assert main(["boot", "--arch", "x86_64", "--workload", "dbench"]) == 2
    err = capsys.readouterr().err
    assert err == ("kisim: error: unknown workload 'dbench' (valid: fib, getppid, "
                   "hackbench, kmalloc, kmem_errors, or a module's function as "
                   "MODULE:FUNC)\n")


def test_console_output_past_its_limit_is_dropped_and_counted(monkeypatch) -> None:
    """A module's printk loop cannot fill the host's memory: past MAX_CONSOLE_BYTES
    the output is dropped, and the console's end says how many bytes."""
    import sim.guest
    full = Guest(build("arm"), workload="getppid", size=2).run().console
    monkeypatch.setattr(sim.guest, "MAX_CONSOLE_BYTES", 64)
    guest = Guest(build("arm"), workload="getppid", size=2)
    result = guest.run()
    assert len(full.encode()) > 64 and guest.console_kept == 64
    assert result.console.startswith(full.encode()[:64].decode("utf-8", "replace"))
    assert result.console.endswith(f"[kisim: {len(full.encode()) - 64} bytes of console output "
                                   "past the 64-byte limit were dropped]\n")
