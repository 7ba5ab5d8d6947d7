"""Generic text patching: the lock, verify-before-write, reserved text and the
per-arch protocols (x86 text_poke_bp, ARM patch_text, PowerPC patch_instruction)."""
from __future__ import annotations

import threading

import pytest

from arches import get_arch
from arches.x86_64 import poke_int3_handler
from patcher.errors import LockNotHeld, PatchError
from patcher.text import OWNERS, MachinePort, TextPatcher, text_mutex
from sim import GuestFault, Machine

BASE = 0x100000


def site_len(arch) -> int:
    assert len(arch.encode_jump(BASE, BASE + 0x100)) == arch.site_len
    return arch.site_len


def machine_with_sites(arch, n: int = 8, cpus: int = 2) -> tuple[Machine, list[int], bytes]:
    """``n`` jump-label-sized nops back to back, then a terminator."""
    size = site_len(arch)
    nop = arch.nop(size)
    m = Machine(arch, cpus)
    m.load_code(nop * n + arch.syscall_insn, BASE)
    return m, [BASE + i * size for i in range(n)], nop


class RecordingPort(MachinePort):
    """A real machine port that logs every protocol operation, in order."""

    def __init__(self, machine: Machine, cpu: int | None = None) -> None:
        super().__init__(machine, cpu)
        self.log: list[tuple] = []

    def write_text(self, addr: int, data: bytes) -> None:
        self.log.append(("write", addr, bytes(data), text_mutex.held()))
        super().write_text(addr, data)

    def sync_all(self) -> None:
        self.log.append(("sync",))
        super().sync_all()

    def stop_machine(self, fn) -> None:
        super().stop_machine(fn)
        self.log.append(("stop_machine",))

    def flush_icache(self, begin: int, end: int) -> None:
        self.log.append(("flush", begin, end))
        super().flush_icache(begin, end)

    def breakpoint_handler(self, handler):
        self.log.append(("handler",))
        return super().breakpoint_handler(handler)

    def ops(self) -> list[str]:
        return [entry[0] for entry in self.log]


# -- errors ------------------------------------------------------------------

def test_patch_error_carries_an_errno_and_one_line() -> None:
    err = PatchError("EBUSY", "kprobe: site\n  in use")
    assert err.errno == "EBUSY" and str(err) == "EBUSY: kprobe: site in use"
    with pytest.raises(ValueError, match="not one of"):
        PatchError("EFAULT", "no such errno here")


# -- verify before write -------------------------------------------------------

def test_verify_before_write_refuses_and_writes_nothing(arch) -> None:
    m, sites, nop = machine_with_sites(arch)
    p = TextPatcher(m)
    jmp = arch.encode_jump(sites[0], BASE + 0x80)
    before = m.read(BASE, len(nop) * len(sites))
    with pytest.raises(PatchError) as info:
        p.text_poke(sites[0], jmp, nop, "jump_label")     # expects a jmp, finds the nop
    assert info.value.errno == "EINVAL"
    assert f"{sites[0]:#x}" in str(info.value)
    assert f"expected {jmp.hex(' ')}, found {nop.hex(' ')}" in str(info.value)
    # A batch with one bad site writes none of its sites and syncs nothing.
    with pytest.raises(PatchError, match="expected"):
        with p.batch() as b:
            for site in sites[:-1]:
                b.queue(site, nop, arch.encode_jump(site, BASE + 0x80), "jump_label")
            b.queue(sites[-1], jmp, nop, "jump_label")
    assert m.read(BASE, len(before)) == before
    assert m.sync_rounds == 0 and not text_mutex.held()


def _ppc_arm_accept_any_word(arch) -> None:
    m, sites, nop = machine_with_sites(arch)
    word = bytes.fromhex("7c0802a6") if arch.endian == "big" else bytes.fromhex("04e02de5")
    TextPatcher(m).text_poke(sites[0], nop, word, "jump_label")
    assert m.read(sites[0], 4) == word


# "emulate": only x86 refuses a new instruction its int3 handler cannot
# emulate; ARM and PowerPC store any aligned word.
@pytest.mark.parametrize("case", ["length", "empty", "owner", "unmapped", "twice", "emulate"])
def test_malformed_sites_are_refused(arch, case) -> None:
    if case == "emulate" and not arch.poke_breakpoint:
        return _ppc_arm_accept_any_word(arch)
    m, sites, nop = machine_with_sites(arch)
    p = TextPatcher(m)
    jmp = arch.encode_jump(sites[0], BASE + 0x80)
    with pytest.raises(PatchError) as info:
        if case == "length":
            p.text_poke(sites[0], nop, jmp + jmp, "jump_label")
        elif case == "empty":
            p.text_poke(sites[0], b"", b"", "jump_label")
        elif case == "owner":
            p.text_poke(sites[0], nop, jmp, "livepatch")
        elif case == "unmapped":
            p.text_poke(0x7000_0000, nop, jmp, "jump_label")
        elif case == "twice":
            with p.batch() as b:
                b.queue(sites[0], nop, jmp, "jump_label")
                b.queue(sites[0], nop, jmp, "jump_label")
        else:   # mov %rax,%rbx; ud2: not one instruction the int3 handler can emulate
            p.text_poke(sites[0], nop, bytes.fromhex("4889c3 0f0b"), "jump_label")
    assert info.value.errno == "EINVAL"
    assert m.read(BASE, len(nop)) == nop and m.sync_rounds == 0


# -- the lock --------------------------------------------------------------------

def test_every_write_holds_the_text_mutex(arch) -> None:
    m, sites, nop = machine_with_sites(arch)
    port = RecordingPort(m)
    p = TextPatcher(m, port=port)
    with p.batch() as b:
        for site in sites:
            b.queue(site, nop, arch.encode_jump(site, BASE + 0x80), "jump_label")
    p.text_poke_early(sites[0], m.read(sites[0], len(nop)), nop, "jump_label")
    writes = [e for e in port.log if e[0] == "write"]
    assert writes and all(held for *_, held in writes)
    assert not text_mutex.held()


def test_a_write_without_the_lock_raises(arch) -> None:
    m, sites, nop = machine_with_sites(arch)
    port = MachinePort(m)
    with pytest.raises(LockNotHeld, match="without holding text_mutex"):
        port.write_text(sites[0], arch.encode_jump(sites[0], BASE + 0x80))
    assert m.read(sites[0], len(nop)) == nop
    with pytest.raises(LockNotHeld):
        text_mutex.release()
    with text_mutex:                               # reentrant for its holder
        TextPatcher(m, port=port).text_poke(sites[0], nop, arch.encode_jump(
            sites[0], BASE + 0x80), "jump_label")
        assert text_mutex.held()
    assert not text_mutex.held()


@pytest.mark.slow
def test_the_lock_excludes_other_threads(arch) -> None:
    m, sites, nop = machine_with_sites(arch)
    p = TextPatcher(m)
    jmp = arch.encode_jump(sites[0], BASE + 0x80)
    outcome: list[str] = []

    def other() -> None:
        try:
            p.port.write_text(sites[0], jmp)      # held by the main thread, not by this one
        except LockNotHeld:
            outcome.append("refused")
        p.text_poke(sites[1], nop, arch.encode_jump(sites[1], BASE + 0x80), "jump_label")
        outcome.append("patched")

    with text_mutex:
        t = threading.Thread(target=other)
        t.start()
        t.join(0.2)
        assert outcome == ["refused"], "the other thread must wait for text_mutex"
    t.join(5)
    assert outcome == ["refused", "patched"]


# -- text_poke_early ---------------------------------------------------------

def test_early_poke_does_no_cross_cpu_sync(arch) -> None:
    m, sites, nop = machine_with_sites(arch, cpus=3)
    jmp = arch.encode_jump(sites[0], BASE + 0x80)
    port = RecordingPort(m)
    TextPatcher(m, port=port).text_poke_early(sites[0], nop, jmp, "jump_label")
    assert m.read(sites[0], len(jmp)) == jmp
    assert m.sync_rounds == 0 and "sync" not in port.ops() and "handler" not in port.ops()
    assert all(m.stale(i) for i in range(3)), "no CPU was serialized"
    assert all(cpu.events["ipi"] == 0 for cpu in m.cpus)
    # From CPU 1: it flushes and serializes itself only (sync_core()).
    call = arch.encode_call(sites[1], BASE + 0x80)
    TextPatcher(m, cpu=1).text_poke_early(sites[1], nop, call, "ftrace")
    assert m.sync_rounds == 0 and not m.stale(1) and m.stale(0) and m.stale(2)
    # one serialization and no IPI: x86 sync_core(), the isb or isync ending ARM's and
    # PowerPC's flush
    assert [cpu.events["ipi"] for cpu in m.cpus] == [0, 0, 0]
    assert [cpu.events["serialize"] for cpu in m.cpus] == [0, 1, 0]
    if arch.cost("icache_flush"):
        assert m.cpus[1].events["icache_flush"] == 1 and m.cpus[0].events["icache_flush"] == 0


# -- x86: text_poke_bp ----------------------------------------------------------

def test_x86_protocol_steps_in_kernel_order() -> None:
    arch = get_arch("x86_64")
    m, sites, nop = machine_with_sites(arch, n=3)
    port = RecordingPort(m)
    new = {s: arch.encode_jump(s, BASE + 0x80) for s in sites}
    with TextPatcher(m, port=port).batch() as b:
        for s in sites:
            b.queue(s, nop, new[s], "jump_label")
    expected = ([("handler",)] + [("write", s, b"\xcc", True) for s in sites] + [("sync",)]
                + [("write", s + 1, new[s][1:], True) for s in sites] + [("sync",)]
                + [("write", s, new[s][:1], True) for s in sites] + [("sync",)])
    assert port.log == expected
    assert m.trap_handlers == [], "the int3 handler is gone once the poke returns"


@pytest.mark.parametrize("n", [1, 7, 500])
def test_x86_batch_is_three_sync_rounds_whatever_its_size(n) -> None:
    arch = get_arch("x86_64")
    m, sites, nop = machine_with_sites(arch, n=n, cpus=4)
    with TextPatcher(m).batch() as b:
        for s in sites:
            b.queue(s, nop, arch.encode_call(s, BASE + 0x4000), "ftrace")
    assert m.sync_rounds == 3
    assert all(cpu.events["ipi"] == 3 for cpu in m.cpus)
    assert all(m.read(s, 5) == arch.encode_call(s, BASE + 0x4000) for s in sites)


def test_x86_one_byte_sites_skip_the_int3_step() -> None:
    """A kprobe's int3 is one atomic byte store and one sync, as v5.10's
    arch_arm_kprobe() writes it (text_poke(), text_poke_sync()); alone, it is one
    sync round, not text_poke_bp()'s three."""
    arch = get_arch("x86_64")
    m, sites, nop = machine_with_sites(arch, n=2)
    port = RecordingPort(m)
    p = TextPatcher(m, port=port)
    with p.batch() as b:
        b.queue(sites[0], nop[:1], b"\xcc", "kprobe")
        b.queue(sites[1], nop, arch.encode_jump(sites[1], BASE + 0x80), "jump_label")
    jmp = arch.encode_jump(sites[1], BASE + 0x80)
    assert [e[:3] for e in port.log if e[0] != "handler"] == [
        ("write", sites[0], b"\xcc"), ("sync",), ("write", sites[1], b"\xcc"), ("sync",),
        ("write", sites[1] + 1, jmp[1:]), ("sync",), ("write", sites[1], jmp[:1]), ("sync",)]
    assert m.sync_rounds == 4 and m.read(sites[0], 1) == b"\xcc"
    p.text_poke(sites[0], b"\xcc", nop[:1], "kprobe")          # arch_disarm_kprobe()
    assert m.sync_rounds == 5 and m.read(sites[0], 1) == nop[:1]


class StepAtSync(MachinePort):
    """After sync round ``at``, CPU 1 executes ``count`` instructions."""

    def __init__(self, machine: Machine, at: int, count: int = 1) -> None:
        super().__init__(machine)
        self.at, self.count, self.rounds = at, count, 0

    def sync_all(self) -> None:
        super().sync_all()
        self.rounds += 1
        if self.rounds == self.at:
            self.machine.step(1, self.count)


@pytest.mark.parametrize("kind", ["jmp", "call", "nop", "mov"])
@pytest.mark.parametrize("at", [1, 2])
def test_x86_cpu_hitting_the_temporary_int3_runs_the_new_insn(kind, at) -> None:
    """poke_int3_handler: emulate the new call or jmp, skip the nop, load the immediate."""
    arch = get_arch("x86_64")
    m = Machine(arch, 2)
    site, target = BASE, BASE + 0x40
    insns = {"jmp": (arch.nop(5), arch.encode_jump(site, target)),
             "call": (arch.nop(5), arch.encode_call(site, target)),
             "nop": (arch.encode_jump(site, target), arch.nop(5)),
             "mov": (bytes.fromhex("b8 01 00 00 00"), bytes.fromhex("b8 2a 00 00 00"))}
    old, new = insns[kind]
    m.load_code(old + arch.syscall_insn + b"\x90" * 0x40, BASE)
    cpu = m.cpus[1]
    cpu.pc, sp = site, cpu.reg("rsp")
    TextPatcher(m, port=StepAtSync(m, at)).text_poke(site, old, new, "jump_label")
    assert cpu.instructions == 1 and cpu.events["trap"] == 1, "CPU 1 hit the int3"
    if kind == "call":
        assert cpu.pc == target and cpu.reg("rsp") == sp - 8
        assert m.read_word(sp - 8) == site + 5, "return address pushed"
    else:
        assert cpu.pc == {"jmp": target, "nop": site + 5, "mov": site + 5}[kind]
        assert cpu.reg("rsp") == sp
    if kind == "mov":
        assert cpu.reg("rax") == 0x2A
    assert m.read(site, 5) == new


def test_x86_int3_handler_leaves_other_breakpoints_alone() -> None:
    arch = get_arch("x86_64")
    sites = {BASE: arch.encode_jump(BASE, BASE + 0x40), BASE + 8: b"\xcc"}
    assert poke_int3_handler(None, sites, None, BASE + 0x20) is None      # not a site
    assert poke_int3_handler(None, sites, None, BASE + 8) is None         # a kprobe's own
    # On a machine, a foreign int3 during the poke still reaches the guest's handler.
    m = Machine(arch, 2)
    m.load_code(arch.nop(5) + b"\xcc" + arch.syscall_insn, BASE)
    m.cpus[1].pc = BASE + 5
    with pytest.raises(GuestFault, match="unhandled breakpoint"):
        TextPatcher(m, port=StepAtSync(m, 1)).text_poke(
            BASE, arch.nop(5), arch.encode_jump(BASE, BASE + 0x40), "jump_label")
    assert m.trap_handlers == [] and not text_mutex.held()


# -- ARM and PowerPC: one aligned word ------------------------------------------

@pytest.mark.parametrize("name", ["arm", "ppc32"])
def test_word_protocol_is_store_flush_sync(name) -> None:
    arch = get_arch(name)
    m, sites, nop = machine_with_sites(arch, n=3)
    port = RecordingPort(m, cpu=0)
    new = {s: arch.encode_jump(s, BASE + 0x80) for s in sites}
    with TextPatcher(m, cpu=0, port=port).batch() as b:
        for s in sites:
            b.queue(s, nop, new[s], "jump_label")
    # ARM patch_text() runs under stop_machine(); PowerPC patch_instruction() does not
    last = "stop_machine" if name == "arm" else "sync"
    assert port.log == ([("write", s, new[s], True) for s in sites]
                        + [("flush", BASE, BASE + 32), (last,)])
    assert m.sync_rounds == 1 and m.cpus[0].events["icache_flush"] == 1
    assert m.cpus[1].events["icache_flush"] == 0, "the patching CPU pays for the flush"
    TextPatcher(m, cpu=1).text_poke(sites[0], new[sites[0]], nop, "jump_label")
    assert m.sync_rounds == 2 and m.cpus[1].events["icache_flush"] == 1


@pytest.mark.parametrize("name", ["arm", "ppc32"])
def test_word_protocol_refuses_misaligned_text(name) -> None:
    arch = get_arch(name)
    m, sites, nop = machine_with_sites(arch, n=3)
    odd = sites[1] + 2
    with pytest.raises(PatchError, match="aligned 32-bit word") as info:
        with TextPatcher(m).batch() as b:
            b.queue(sites[0], nop, arch.encode_jump(sites[0], BASE + 0x80), "jump_label")
            b.queue(odd, m.read(odd, 4), nop, "jump_label")
    assert info.value.errno == "EINVAL"
    assert m.read(BASE, 12) == nop * 3 and m.sync_rounds == 0


# -- cycles, coherence, reserved text -------------------------------------------

def test_enable_disable_cycles_restore_the_original_bytes(arch) -> None:
    m, sites, nop = machine_with_sites(arch, n=16)
    original = m.read(BASE, 16 * len(nop))
    p = TextPatcher(m)
    for cycle in range(3):
        new = {s: (arch.encode_call if i % 2 else arch.encode_jump)(s, BASE + 0x400 + 4 * cycle)
               for i, s in enumerate(sites)}
        with p.batch() as b:
            for s in sites:
                b.queue(s, nop, new[s], "ftrace")
        assert all(m.read(s, len(nop)) == new[s] for s in sites)
        with p.batch() as b:
            for s in sites:
                b.queue(s, new[s], nop, "ftrace")
        assert m.read(BASE, len(original)) == original
    rounds = 3 if arch.poke_breakpoint else 1
    assert m.sync_rounds == 6 * rounds


def test_every_cpu_runs_the_new_text_after_the_poke(arch) -> None:
    """A CPU that cached the old site runs the new one once the protocol returns."""
    size = site_len(arch)
    m = Machine(arch, 3)
    target = BASE + 0x40
    m.load_code(arch.nop(size) + arch.syscall_insn + b"\0" * (0x40 - size - len(
        arch.syscall_insn)) + arch.syscall_insn, BASE)
    halts: list[tuple[int, int]] = []
    m.on_trap = lambda cpu, trap: halts.append((cpu.index, trap.address)) or cpu.halt()
    m.run()                                       # every CPU caches the nop and halts after it
    assert sorted(halts) == [(i, BASE + size) for i in range(3)]
    TextPatcher(m).text_poke(BASE, arch.nop(size), arch.encode_jump(BASE, target), "jump_label")
    halts.clear()
    for cpu in m.cpus:
        cpu.halted, cpu.pc = False, BASE
    m.run()
    assert sorted(halts) == [(i, target) for i in range(3)]


def test_reserved_text_belongs_to_one_owner(arch) -> None:
    m, sites, nop = machine_with_sites(arch)
    size = len(nop)
    p = TextPatcher(m)
    p.reserve(sites[1], size, "jump_label")
    p.reserve(sites[1], size, "jump_label")       # the same owner may stack reservations
    jmp = arch.encode_jump(sites[1], BASE + 0x80)
    for attempt in (lambda: p.text_poke(sites[1], nop, jmp, "kprobe"),
                    lambda: p.text_poke_early(sites[1] - 1, m.read(sites[1] - 1, 2),
                                              b"\0\0", "ftrace"),
                    lambda: p.reserve(sites[1] + size - 1, 4, "marker")):
        with pytest.raises(PatchError, match="jump_label's site") as info:
            attempt()
        assert info.value.errno == "EBUSY"
    assert m.read(BASE, size * 3) == nop * 3
    p.text_poke(sites[1], nop, jmp, "jump_label")  # the owner itself may write
    p.text_poke(sites[2], nop, arch.encode_jump(sites[2], BASE + 0x80), "kprobe")   # next door
    assert p.owners(sites[1]) == ["jump_label", "jump_label"]
    p.release(sites[1], "jump_label")
    p.release(sites[1], "jump_label")
    with pytest.raises(PatchError) as info:
        p.release(sites[1], "jump_label")
    assert info.value.errno == "ENOENT"
    p.reserve(sites[1], size, "imv")
    assert p.owners(sites[0], 3 * size) == ["imv"] and set(OWNERS) >= {"imv", "marker"}


def test_coalesced_stores_reach_cpus_across_adjacent_mappings(arch) -> None:
    """Sites at the end of one mapping and the start of the next, synced in one round."""
    size = site_len(arch)
    nop = arch.nop(size)
    m = Machine(arch, 2)
    m.map(BASE, 0x1000, "rwx")
    m.map(BASE + 0x1000, 0x1000, "rwx")
    m.map(BASE + 0x10000, 0x4000, "rw")
    lo, hi = BASE + 0x1000 - 2 * size, BASE + 0x1000
    m.write(lo, nop * 2)
    m.write(hi, nop + arch.syscall_insn)
    m.on_trap = lambda cpu, trap: cpu.halt()

    def run_all() -> list[int]:
        for cpu in m.cpus:
            cpu.halted, cpu.pc, cpu.instructions = False, lo, 0
            cpu.set_reg(arch.sp, BASE + 0x12000 + 0x1000 * cpu.index)
        m.run(max_instructions=100)
        return [cpu.instructions for cpu in m.cpus]

    assert run_all() == [4, 4]          # nop, nop | nop, syscall: both pages translated
    p = TextPatcher(m)
    with p.batch() as b:
        b.queue(lo, nop, arch.encode_jump(lo, hi), "jump_label")
        b.queue(hi, nop, arch.encode_jump(hi, hi + size), "jump_label")
    assert run_all() == [3, 3]          # jmp | jmp, syscall: both CPUs see both stores
    p.text_poke_sync()
    assert m.sync_rounds == (4 if arch.poke_breakpoint else 2)
