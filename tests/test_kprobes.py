"""Kprobes executed for real: registration, the hit path, refusals (probes/kprobes.py)."""
from __future__ import annotations

import json
import random
import struct
from collections import Counter
from pathlib import Path

import capstone
import keystone
import pytest

from arches import ARCHES, NAMES, get_arch
from arches.kprobe import KprobeRefused
from kbuild import build
from patcher.errors import PatchError
from patcher.instrument import attach
from probes.kprobes import FIELDS, QUEUED_PATH, Kprobe, Kprobes, arch_kprobes
from sim import Machine
from sim.guest import Guest
from lab.transparency import count_executions, every_instruction
from patcher.ftrace import KPROBE_CALLERS

FUNCTION = "kmalloc"        # called from the kmalloc workload, with a loop and branches
ROOT = Path(__file__).resolve().parents[1]
SIZE = 300                  # kmalloc workload iterations: ~900 kmalloc calls, a fast run


@pytest.fixture(scope="module", params=NAMES)
def arch(request) -> str:
    build(request.param)            # built once per arch (cached by content)
    return request.param


def guest(arch: str, cpus: int = 1, workload: str = "kmalloc") -> Guest:
    return Guest(build(arch), cpus=cpus, workload=workload, size=SIZE)


def probed(k: Kprobes) -> list[str]:
    """kprobes/list without the probes the kernel registers itself (Kprobes.arch_probes:
    PowerPC's kretprobe_trampoline, from boot)."""
    own = {kp.addr for kp in k.arch_probes}
    return [line for line in k.list() if int(line.split()[0], 16) not in own]


def instructions(g: Guest, name: str) -> list[tuple[int, int, str]]:
    """(address, length, text) of every instruction of function ``name``."""
    start, size = next((a, s) for a, s, n in g.image.functions if n == name)
    md = capstone.Cs(*g.arch.cs_mode)
    return [(a, n, f"{m} {o}") for a, n, m, o in md.disasm_lite(g.machine.read(start, size), start)]


def probe_all(k: Kprobes, g: Guest, name: str, **handlers) -> list[Kprobe]:
    """A kprobe on every instruction of ``name`` the kernel would accept."""
    probes = []
    for addr, _, _ in instructions(g, name):
        try:
            probes.append(k.register_kprobe(Kprobe(addr=addr, **handlers)))
        except PatchError as err:
            assert err.errno in ("EBUSY", "EINVAL"), err
    return probes


def executed(arch: str, addrs: list[int], cpus: int) -> Counter[int]:
    """How often each address ran, counted by a Unicorn code hook in a separate run.

    An execution counts only when the instruction's condition passes (ARM):
    the kprobe breakpoint carries the same condition.
    """
    g = guest(arch, cpus)
    counts = count_executions(g, addrs)
    assert g.run().ok
    return counts


@pytest.mark.slow
def test_an_ftrace_based_probe_brings_in_its_caller_once_per_hit() -> None:
    """x86_64 (KPROBES_ON_FTRACE): a probe on kmalloc's mcount site calls
    ftrace_regs_caller, which the unprobed run never runs; probes on each of its
    instructions hit once per hit of the site's probe. lab.transparency counts it so."""
    g = guest("x86_64")
    k = Kprobes(g)
    entry = g.image.symbols[FUNCTION]
    mcount = k.ftrace_location_range(entry, entry + 32)
    assert mcount is not None
    site = k.register_kprobe(Kprobe(addr=mcount, pre_handler="kprobe_empty_pre_handler"))
    assert site.ftrace
    start, size = next((a, n) for a, n, name in g.image.functions
                       if name == KPROBE_CALLERS[False])
    md = capstone.Cs(*g.arch.cs_mode)
    inside = [k.register_kprobe(Kprobe(addr=a, pre_handler="kprobe_empty_pre_handler"))
              for a, _, _, _ in md.disasm_lite(g.machine.read(start, size), start)]
    assert len(inside) > 20 and g.run().ok
    assert site.hits > 0 and {kp.hits for kp in inside} == {site.hits + site.nmissed}
    assert not any(executed("x86_64", [kp.addr for kp in inside], cpus=1).values())


@pytest.mark.slow
def test_every_instruction_of_the_kernel_is_transparent_with_ftrace_based_probes() -> None:
    """The whole x86_64 kernel, mcount sites and ftrace_regs_caller included: no
    mismatch once the caller's runs for the ftrace-based probes are counted (51
    mismatches without it)."""
    found = every_instruction(build("x86_64"), workload="kmalloc", size=2)
    assert found.ok, found.failure
    assert found.probed > 1000 and found.hits == found.counted


@pytest.mark.slow
@pytest.mark.parametrize("post", [False, True], ids=["pre", "pre+post"])
def test_every_instruction_transparent(arch: str, post: bool) -> None:
    """Probes on every instruction of kmalloc, 2 CPUs: checksum unchanged, hits exact."""
    g = guest(arch, cpus=2)
    k = Kprobes(g)
    probes = probe_all(k, g, FUNCTION, pre_handler="kprobe_empty_pre_handler",
                       post_handler="kprobe_empty_post_handler" if post else None)
    assert len(probes) > 20
    result = g.run()
    assert result.ok
    counts = executed(arch, [kp.addr for kp in probes], cpus=2)
    assert {kp.addr: kp.hits for kp in probes} == {kp.addr: counts[kp.addr] for kp in probes}
    assert sum(counts.values()) > 500
    assert all(kp.nmissed == 0 for kp in probes)


@pytest.mark.slow
def test_host_handler_sees_registers(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    spec = get_arch(arch)
    seen = []

    def pre(kp: Kprobe, regs) -> int:
        seen.append((regs[spec.pc], regs[spec.args[0]], regs[spec.sp]))
        return 0

    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler=pre))
    assert g.run().ok
    assert len(seen) == kp.hits > 0
    bias = arch_kprobes(spec).BP_PC_ADVANCE
    assert {pc - bias for pc, _, _ in seen} == {kp.addr}
    assert all(0 < size <= 4096 for _, size, _ in seen)       # kmalloc(size)


@pytest.mark.slow
def test_host_pre_and_post_run_once_per_hit(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    calls = []
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler=lambda kp, r: calls.append(1),
                                  post_handler=lambda kp, r: calls.append(2)))
    assert g.run().ok
    assert calls.count(1) == calls.count(2) == kp.hits > 0
    assert calls[:4] == [1, 2, 1, 2]


def traps_per_hit(arch: str, kp_args: dict) -> tuple[float, Kprobe]:
    g = guest(arch)
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, **kp_args))
    base = guest(arch).run()
    result = g.run()
    assert result.ok
    traps = sum(c["events"].get("trap", 0) for c in result.per_cpu)
    base_traps = sum(c["events"].get("trap", 0) for c in base.per_cpu)
    return (traps - base_traps) / kp.hits, kp


@pytest.mark.slow
def test_traps_per_hit(arch: str) -> None:
    """x86: int3 + #DB, one when boosted; ARM: one (no hardware step); PPC: one when emulated."""
    pre = {"pre_handler": "kprobe_empty_pre_handler"}
    both = dict(pre, post_handler="kprobe_empty_post_handler")
    plain, kp = traps_per_hit(arch, pre)
    with_post, _ = traps_per_hit(arch, both)
    expected = {"x86_64": (1 if kp.boostable else 2, 2), "arm": (1, 1), "ppc32": (1, 1)}
    assert (plain, with_post) == expected[arch]


@pytest.mark.slow
def test_single_step_trap_on_unemulated_instruction(arch: str) -> None:
    """An instruction that is neither boosted, simulated nor emulated costs two traps."""
    g = guest(arch)
    choose = {"x86_64": lambda t: t.startswith("cmp"), "arm": lambda t: False,
              "ppc32": lambda t: t.startswith("slw")}[arch]
    site = next((a for a, _, t in instructions(g, FUNCTION) if choose(t)), None)
    if site is None:
        assert arch == "arm"            # ARM never single-steps: nothing takes two traps
        return
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(addr=site, pre_handler="kprobe_empty_pre_handler",
                                  post_handler="kprobe_empty_post_handler"))
    base = guest(arch).run()
    result = g.run()
    traps = sum(c["events"].get("trap", 0) for c in result.per_cpu)
    assert traps - sum(c["events"].get("trap", 0) for c in base.per_cpu) == 2 * kp.hits > 0


@pytest.mark.slow
def test_reentry_counts_missed(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    outer = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                     pre_handler="kprobe_reentry_pre_handler"))
    inner = k.register_kprobe(Kprobe(symbol_name="kprobe_reentry_target",
                                     pre_handler="kprobe_empty_pre_handler",
                                     post_handler="kprobe_empty_post_handler"))
    assert g.run().ok
    assert outer.hits > 0
    assert inner.nmissed == outer.hits
    assert inner.hits == 0


@pytest.mark.slow
def test_reentry_into_an_aggr_kprobe_counts_missed_for_each_probe(arch: str) -> None:
    """kprobes_inc_nmissed_count: a reentry into an aggr_kprobe misses for every probe."""
    g = guest(arch)
    k = Kprobes(g)
    outer = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                     pre_handler="kprobe_reentry_pre_handler"))
    inner = [k.register_kprobe(Kprobe(symbol_name="kprobe_reentry_target",
                                      pre_handler="kprobe_empty_pre_handler"))
             for _ in range(2)]
    assert g.run().ok and outer.hits > 0
    assert [kp.nmissed for kp in inner] == [outer.hits] * 2
    assert [kp.hits for kp in inner] == [0, 0]


@pytest.mark.slow
def test_disable_enable_unregister_restore_text(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    addr = g.image.symbols[FUNCTION]
    orig = g.machine.read(addr, 4)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    assert g.machine.read(addr, len(kp.breakpoint)) == kp.breakpoint != orig[:len(kp.breakpoint)]
    k.disable_kprobe(kp)
    assert g.machine.read(addr, 4) == orig
    assert probed(k)[0].endswith(f"{FUNCTION}+0x0    [DISABLED]")
    k.enable_kprobe(kp)
    # report_probe's format; arming it queued it for the optimizer again (__arm_kprobe)
    assert probed(k)[0].endswith(f"  k  {FUNCTION}+0x0    "
                                 + ("[OPTIMIZED]" if k.optprobes else ""))
    assert g.run().ok and kp.hits > 0
    k.unregister_kprobe(kp)
    assert g.machine.read(addr, 4) == orig
    assert probed(k) == []
    # v5.10: enable_kprobe and __disable_kprobe are -EINVAL for a probe not
    # registered; unregister_kprobes returns nothing and sets its addr NULL
    for call in (k.enable_kprobe, k.disable_kprobe):
        for probe in (kp, Kprobe(symbol_name=FUNCTION)):
            with pytest.raises(PatchError, match="EINVAL"):
                call(probe)
    k.unregister_kprobe(kp)
    assert kp.addr is None and g.machine.read(addr, 4) == orig


def test_disabled_probe_is_not_hit(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    k.disable_kprobe(kp)
    assert g.run().ok
    assert kp.hits == 0


# -- refusals, each one line ------------------------------------------------

def refused(k: Kprobes, kp: Kprobe, errno: str, text: str) -> str:
    with pytest.raises(PatchError) as info:
        k.register_kprobe(kp)
    message = str(info.value)
    assert info.value.errno == errno and text in message and "\n" not in message, message
    return message


def _arch_refuses(k: Kprobes, addr: int) -> bool:
    try:
        k.ops.arch_prepare_kprobe(addr, k.recover(addr, k.arch.max_insn_len), 0)
    except KprobeRefused:
        return True
    return False


def test_the_pool_is_config_kprobe_pool_and_ends_in_enomem(arch: str) -> None:
    """CONFIG_KPROBE_POOL (kisim's) sizes the guest's pool of struct kprobe. Each
    probe takes an entry and an aggr_kprobe one more (alloc_aggr_kprobe); past the
    last, registration is ENOMEM where the kernel's kzalloc or get_insn_slot fails,
    and the probes already there keep working. Outside its range the option does
    not take."""
    from kconfig import KconfigError
    g = Guest(build(arch, overrides={"KPROBE_POOL": "64"}), workload="kmalloc", size=SIZE)
    k = Kprobes(g)
    assert k.pool == 64 and Kprobes(guest(arch)).pool == 8192
    probes = []
    while len(probes) < 64:
        try:
            probes.append(k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                                   pre_handler="kprobe_empty_pre_handler")))
        except PatchError as err:
            assert err.errno == "ENOMEM" and "all 64 kprobes are in use" in str(err)
            break
    assert len(probes) == 64 - 1 - len(k.arch_probes)      # one aggr_kprobe
    # an instruction the arch refuses: x86 takes the slot first (ENOMEM), ARM and
    # PowerPC refuse it first (EINVAL)
    bad = next(a for name in ("kernel_init", "devm_add_action")
               for a, _, _ in instructions(g, name) if _arch_refuses(k, a))
    errno, text = {"x86_64": ("ENOMEM", "CONFIG_KPROBE_POOL")}.get(arch, ("EINVAL",
                                                                         "cannot probe"))
    refused(k, Kprobe(addr=bad), errno, text)
    assert g.run().ok and len({kp.hits for kp in probes}) == 1 and probes[0].hits > 0
    k.unregister_kprobe(probes.pop())
    probes.append(k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                           pre_handler="kprobe_empty_pre_handler")))
    with pytest.raises(KconfigError, match="outside its range 64..65536"):
        build(arch, overrides={"KPROBE_POOL": "63"})


def test_refuses_non_boundary(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    addr, length, _ = next(i for i in instructions(g, FUNCTION) if i[1] > 1)
    # x86 can_probe: -EILSEQ; ARM and PowerPC arch_prepare_kprobe: misaligned, -EINVAL
    errno = "EILSEQ" if g.arch.insn_align == 1 else "EINVAL"
    refused(k, Kprobe(addr=addr + 1), errno, "instruction boundary")


def test_refuses_blacklist(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    for name in ("kprobe_handler", "kprobe_debug_handler", "__switch_to_asm", "panic"):
        refused(k, Kprobe(symbol_name=name), "EINVAL", f"NOKPROBE_SYMBOL({name})")
    refused(k, Kprobe(symbol_name="kprobe_pool"), "EINVAL", "not in a kernel text function")
    refused(k, Kprobe(symbol_name="no_such_function"), "ENOENT", "no symbol")


def test_the_blacklist_is_kallsyms_sized_and_listed_as_debugfs_shows_it(arch: str,
                                                                       capsys) -> None:
    """v5.10 kprobe_add_ksym_blacklist: each NOKPROBE_SYMBOL function, in the
    section's order, from its entry to where kallsyms ends it (the next symbol), so
    the padding after it is refused too (x86 pads functions to 16 bytes with nops,
    which can_probe would take); kprobes/blacklist prints each as
    ``0x%px-0x%px\\t%ps``."""
    g = guest(arch)
    k = Kprobes(g)
    width = g.arch.bits // 4
    want = []
    for fn in k.tables.nokprobe:
        start, size, name = g.image.kallsyms_lookup(fn.address)
        assert (start, name) == (fn.address, fn.name)
        want.append(f"0x{start:0{width}x}-0x{start + size:0{width}x}\t{name}")
        for addr in {start + size - 1, start + fn.size} - {start + size}:
            refused(k, Kprobe(addr=addr), "EINVAL", f"NOKPROBE_SYMBOL({name})")
    assert k.blacklist() == want and len(want) == len(k.tables.nokprobe) > 50
    from kisim.cli import main
    assert main(["kprobe", "blacklist", "--arch", arch]) == 0
    assert capsys.readouterr().out.splitlines() == want
    if arch == "x86_64":                    # functions with padding after their code
        assert sum(e.end - e.start > fn.size
                   for e, fn in zip(k.blacklist_entries, k.tables.nokprobe)) > 40


def test_refuses_hypercall_instruction(arch: str) -> None:
    """The guest's hypercall instruction (syscall, svc, sc) is the host ABI: refused."""
    g = guest(arch)
    k = Kprobes(g)
    spec = get_arch(arch)
    blacklisted = {fn.address for fn in k.tables.nokprobe}
    site = next(a for start, size, name in g.image.functions if start not in blacklisted
                for a, n, _ in instructions(g, name)
                if g.machine.read(a, n) == spec.syscall_insn)
    refused(k, Kprobe(addr=site), "EINVAL", "hypercall")


UNPROBEABLE = {
    "x86_64": [(b"\xcc", "int3")],
    "arm": [(struct.pack("<I", 0xE121F000), "MSR"), (struct.pack("<I", 0xE8FD8000), "^"),
            (struct.pack("<I", 0xE16F0F1F), "PC"), (struct.pack("<I", 0xE7F001F8), "UNDEFINED"),
            (struct.pack("<I", 0xF57FF04F), "unconditional")],
    "ppc32": [(struct.pack(">I", 0x7C600124), "mtmsr"), (struct.pack(">I", 0x4C000064), "rfi"),
              (struct.pack(">I", 0x7FE00008), "trap")],
}


@pytest.mark.parametrize("name", NAMES)
def test_arch_refuses_unprobeable(name: str) -> None:
    ops = arch_kprobes(ARCHES[name])
    for code, reason in UNPROBEABLE[name]:
        with pytest.raises(KprobeRefused, match=reason):
            ops.arch_prepare_kprobe(0x100000, code.ljust(16, b"\0"), 0x200000)


def test_refuses_text_reserved_by_other_patchers(arch: str) -> None:
    """EINVAL, as v5.10, on a live jump-label site (jump_label_text_reserved) and,
    without KPROBES_ON_FTRACE, an mcount site (arch_check_ftrace_location);
    tests/test_kprobes_owners.py has the whole matrix."""
    g = guest(arch)
    inst = attach(g)
    k = Kprobes(g, text=inst.text, tables=inst.tables)
    entry = inst.tables.jump_entries[0]
    refused(k, Kprobe(addr=entry.code), "EINVAL", "jump_label")
    site = next(s for s in inst.tables.mcount if s.function == FUNCTION)
    if not k.ops.KPROBES_ON_FTRACE:
        refused(k, Kprobe(addr=site.address), "EINVAL", "ftrace")


def test_refuses_double_registration(arch: str) -> None:
    """The same struct kprobe twice: EINVAL (check_kprobe_rereg)."""
    g = guest(arch)
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION))
    refused(k, kp, "EINVAL", "already registered")


def test_a_struct_registered_again_starts_afresh(arch: str) -> None:
    """Unregistering leaves a struct KPROBE_FLAG_DISABLED, as __unregister_kprobe_top's
    __disable_kprobe does, so registering it again with its flags kept gives a
    disabled probe. Cleared, as lib/test_kprobes.c clears addr and flags, it is a
    plain probe that disables, re-enables and hits: nothing of its earlier
    registration, one of an aggr_kprobe's probes, is left in it."""
    from probes.kprobes import FLAG_DISABLED
    g = guest(arch)
    k = Kprobes(g)
    addr = g.image.symbols["kfree"]
    original = g.machine.read(addr, 4)
    kp = k.register_kprobe(Kprobe(symbol_name="kfree", pre_handler="kprobe_empty_pre_handler"))
    other = k.register_kprobe(Kprobe(symbol_name="kfree", pre_handler="kprobe_empty_pre_handler"))
    assert kp.aggr is not None and kp.aggr is other.aggr
    k.unregister_kprobe(kp)
    k.unregister_kprobe(other)
    assert k.read_field(kp, "flags") & FLAG_DISABLED
    kp.addr = None
    k.register_kprobe(kp)
    assert kp.disabled and probed(k) == [f"{addr:0{k.arch.word * 2}x}  k  kfree+0x0    [DISABLED]"]
    k.unregister_kprobe(kp)
    kp.addr, kp.disabled = None, False
    k.register_kprobe(kp)
    k.disable_kprobe(kp)
    assert g.machine.read(addr, 4) == original and probed(k)[0].endswith("[DISABLED]")
    k.enable_kprobe(kp)
    assert g.run().ok and kp.hits > 0


def test_a_probe_moved_to_an_ftrace_site_recovers_the_call() -> None:
    """x86_64: a struct once registered on a plain instruction, registered again on
    an mcount site (an ftrace-based probe, no breakpoint), keeps none of the
    instruction it saved: the site recovers as its call, and the instruction
    after it can be probed (can_probe decodes through it)."""
    g = guest("x86_64")
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(addr=g.image.symbols[FUNCTION],
                                  pre_handler="kprobe_empty_pre_handler"))
    k.unregister_kprobe(kp)
    start = g.image.symbols["kfree"]
    site = k.ftrace_location_range(start, start + 64)
    kp.addr, kp.disabled = site, False
    k.register_kprobe(kp)
    assert kp.ftrace and k.recover(site, 5) == g.machine.read(site, 5)
    k.register_kprobe(Kprobe(addr=site + 5, pre_handler="kprobe_empty_pre_handler"))


def test_kretprobe_registration_leaves_nothing_when_refused(arch: str) -> None:
    """register_kretprobe: the same struct twice is EINVAL (check_kprobe_rereg, as
    the stable series has it), and unregistering it then removes its one entry
    probe; a handler that is not a guest function is refused before anything is
    taken (v5.10 frees what it took on every error path)."""
    from probes.kprobes import Kretprobe
    g = guest(arch)
    k = Kprobes(g)
    rp = k.register_kretprobe(Kretprobe(addr=g.image.symbols[FUNCTION],
                                        handler="kretprobe_empty_handler"))
    with pytest.raises(PatchError, match="already registered") as info:
        k.register_kretprobe(rp)
    assert info.value.errno == "EINVAL" and len(probed(k)) == 1
    k.unregister_kretprobe(rp)
    assert probed(k) == []
    free = len(k._free), len(k._free_rp)
    bad = Kretprobe(symbol_name=FUNCTION, handler="no_such_handler")
    with pytest.raises(PatchError, match="no_such_handler"):
        k.register_kretprobe(bad)
    assert probed(k) == [] and bad.kp is None and (len(k._free), len(k._free_rp)) == free


def test_a_disabled_kretprobe_registers_disarmed(arch: str) -> None:
    """rp->kp.flags = KPROBE_FLAG_DISABLED (as trace_kprobe registers a disabled
    event): registered, listed [DISABLED], the text untouched and no handler run
    until it is enabled."""
    from probes.kprobes import Kretprobe
    g = guest(arch)
    k = Kprobes(g)
    addr = g.image.symbols[FUNCTION]
    original = g.machine.read(addr, 4)
    rp = k.register_kretprobe(Kretprobe(symbol_name=FUNCTION, handler="kretprobe_empty_handler",
                                        disabled=True))
    assert g.machine.read(addr, 4) == original and probed(k)[0].endswith("[DISABLED]")
    assert g.run().ok and rp.kp.hits == 0
    k.enable_kprobe(rp.kp)
    assert g.machine.read(addr, 4) != original


def test_register_kprobes_of_none_is_einval(arch: str) -> None:
    """v5.10 register_kprobes: ``num <= 0`` is -EINVAL, as the guest's own is."""
    with pytest.raises(PatchError) as info:
        Kprobes(guest(arch)).register_kprobes([])
    assert info.value.errno == "EINVAL"


# -- several probes at one address (register_aggr_kprobe) ---------------------

@pytest.mark.slow
def test_aggregated_probes_all_run(arch: str) -> None:
    """Three probes at one address (guest pre, host pre, host post): each runs on
    every hit, counted independently; the list has one line per probe."""
    g = guest(arch)
    k = Kprobes(g)
    calls: Counter[str] = Counter()
    first = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    second = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                      pre_handler=lambda kp, r: calls.update(["pre"])))
    third = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                     post_handler=lambda kp, r: calls.update(["post"])))
    assert first.aggr is second.aggr is third.aggr is not None
    assert len(probed(k)) == 3 and len({line.split()[0] for line in probed(k)}) == 1
    assert g.run().ok
    runs = executed(arch, [first.addr], 1)[first.addr]
    assert runs > 0
    assert first.hits == second.hits == third.hits == calls["pre"] == calls["post"] == runs


@pytest.mark.slow
def test_unregistering_one_aggregated_probe_keeps_the_other(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    before = g.machine.read(g.image.symbols[FUNCTION], 4)
    calls: Counter[str] = Counter()
    kept = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                    pre_handler=lambda kp, r: calls.update(["kept"])))
    gone = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                    pre_handler=lambda kp, r: calls.update(["gone"]),
                                    post_handler="kprobe_empty_post_handler"))
    post_kind = k.kind(kept)
    k.unregister_kprobe(gone)
    assert probed(k) == [probed(k)[0]] and "kmalloc+0x0" in probed(k)[0]
    # The aggr_kprobe lost its only post_handler: boosting comes back (x86).
    assert k.read_field(kept.aggr, "post_handler") == 0
    if arch == "x86_64":
        # v5.10 queues it for the optimizer again (__unregister_kprobe_top), and its
        # flag sends a hit through the detour's copy; with the sysctl off, boosted
        assert (post_kind, k.kind(kept)) == ("single-step (TF)", QUEUED_PATH)
        k.set_optimization(False)
        assert k.kind(kept) == "boosted" and not k.queued(kept)
        k.set_optimization(True)
        assert k.queued(kept)
    assert g.run().ok
    runs = executed(arch, [kept.addr], 1)[kept.addr]
    assert calls == Counter(kept=runs) and kept.hits == runs and gone.hits == 0
    k.unregister_kprobe(kept)
    assert probed(k) == [] and g.machine.read(kept.addr, 4) == before


@pytest.mark.slow
def test_disabling_every_aggregated_probe_disarms(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    addr = g.image.symbols[FUNCTION]
    before = g.machine.read(addr, 4)
    a = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    b = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    armed = g.machine.read(addr, 4)
    k.disable_kprobe(a)                 # listed after b: add_new_kprobe puts b first
    # report_probe: the probe's [DISABLED], then its aggr_kprobe's [OPTIMIZED] (queued)
    optimized = "[OPTIMIZED]" if k.optprobes else ""
    assert g.machine.read(addr, 4) == armed
    assert probed(k)[1].endswith("[DISABLED]" + optimized)
    k.disable_kprobe(b)
    assert g.machine.read(addr, 4) == before
    k.enable_kprobe(b)
    assert g.machine.read(addr, 4) == armed
    assert g.run().ok
    assert a.hits == 0 and b.hits == executed(arch, [addr], 1)[addr] > 0
    k.unregister_kprobe(b)          # only the disabled one is left: disarmed
    assert g.machine.read(addr, 4) == before and probed(k)[0].endswith("[DISABLED]")


def test_the_newest_probe_at_an_address_is_listed_and_run_first(arch: str) -> None:
    """add_new_kprobe (kernel/kprobes.c, v5.10) adds with list_add_rcu, at the head of
    the aggr_kprobe's list: kprobes/list and aggr_pre_handler see the newest first."""
    g = guest(arch)
    k = Kprobes(g)
    probes = [k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                       pre_handler="kprobe_empty_pre_handler"))
              for _ in range(3)]
    assert [kp.index for kp in probes[0].aggr.members] == [kp.index for kp in reversed(probes)]
    heads = [k.read_field(probes[0].aggr, "list")]
    for _ in probes[1:]:
        heads.append(k.machine.read_word(heads[-1] + FIELDS.index("list") * g.arch.word))
    assert heads == [kp.struct for kp in reversed(probes)]


def test_aggregated_probes_optimized(arch: str) -> None:
    """An aggr_kprobe without post_handlers is optimized like any probe: both
    probes run from the detour, with no trap."""
    if "optprobes" not in get_arch(arch).capabilities:
        return
    g = guest(arch)
    k = Kprobes(g)
    a = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    b = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    k.optimize_now(b)
    assert a.aggr.optimized and all(line.endswith("[OPTIMIZED]") for line in probed(k))
    base = guest(arch).run()
    result = g.run()
    runs = executed(arch, [a.addr], 1)[a.addr]
    assert result.ok and a.hits == b.hits == runs > 0
    assert (sum(c["events"].get("trap", 0) for c in result.per_cpu)
            == sum(c["events"].get("trap", 0) for c in base.per_cpu))


def test_register_kprobes_is_all_or_nothing(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    addr = g.image.symbols[FUNCTION]
    before = g.machine.read(addr, 4)
    with pytest.raises(PatchError):
        k.register_kprobes([Kprobe(symbol_name=FUNCTION), Kprobe(symbol_name="panic")])
    assert probed(k) == [] and g.machine.read(addr, 4) == before


def test_arm_breakpoint_with_false_condition_is_a_nop() -> None:
    """RESEARCH §6: e7f001f8 with the probed insn's failing condition runs as a no-op."""
    spec = get_arch("arm")
    orig_ne = struct.pack("<I", 0x13A00001)            # movne r0, #1
    bp = spec.kprobe_breakpoint(orig_ne)
    assert bp == struct.pack("<I", 0x17F001F8)
    code = struct.pack("<I", 0xE3B00000) + bp + struct.pack("<I", 0xE3A01002)   # movs r0,#0 (Z=1)
    m = Machine(spec)
    end = m.load_code(code + spec.syscall_insn, 0x10000)
    hits = []
    m.on_trap = lambda cpu, trap: (hits.append(trap.kind.value), cpu.halt())[1]
    m.run(max_instructions=100)
    assert hits == ["syscall"] and m.cpus[0].reg("r1") == 2    # no undefined-instruction trap
    code = struct.pack("<I", 0xE3B00001) + bp + struct.pack("<I", 0xE3A01002)   # movs r0,#1 (Z=0)
    m = Machine(spec)
    m.load_code(code + spec.syscall_insn, 0x10000)
    m.on_trap = lambda cpu, trap: (hits.append(trap.kind.value), cpu.halt())[1]
    m.run(max_instructions=100)
    assert hits[-1] == "undefined"
    assert end


@pytest.mark.slow
def test_cli_kprobe_json(arch: str, capsys) -> None:
    from kisim.cli import main
    assert main(["kprobe", "--arch", arch, "--at", f"{FUNCTION}+0", "--size", str(SIZE),
                 "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert out["hits"] > 0 and out["checksum_ok"] and out["traps_per_hit"] >= 1
    assert out["instructions_per_hit"] > 20


@pytest.mark.slow
@pytest.mark.parametrize("args, text", [
    (["--at", "kmalloc+0x2"], "instruction boundary"),
    (["--at", "kprobe_handler"], "NOKPROBE_SYMBOL"),
    (["--at", "bad name"], "SYMBOL[+OFFSET]"),
    (["--at", "kmalloc", "--workload", "nope"], "workload"),
])
def test_cli_kprobe_refusals(args: list[str], text: str, capsys) -> None:
    from kisim.cli import main
    assert main(["kprobe", "--arch", "arm", *args]) == 2
    err = capsys.readouterr().err
    assert text in err and err.count("\n") == 1


@pytest.mark.parametrize("args, text", [
    (["--at", "kmalloc", "--layout", "3"], "unrecognized arguments: --layout"),
    (["--at", "kmalloc", "show"], "unknown view 'show' (views: run, list, blacklist)"),
    ([], "one of the arguments --at --every-instruction is required"),
    (["list"], "one of the arguments --at --every-instruction is required"),
    (["blacklist", "--every-instruction", "m"], "it takes no --every-instruction"),
    (["blacklist", "--post"], "it takes no --post"),
])
def test_cli_kprobe_names_what_is_wrong_in_its_arguments(args: list[str], text: str,
                                                         capsys) -> None:
    """An option kisim kprobe does not take is named, not its value taken for a view."""
    from kisim.cli import main
    assert main(["kprobe", "--arch", "arm", *args]) == 2
    err = capsys.readouterr().err
    assert text in err and err.count("\n") == 1



@pytest.mark.slow
def test_cli_kprobe_with_kprobe_shares_the_kretprobe_entry(arch: str, capsys) -> None:
    """``--ret --with-kprobe`` (kprobes.rst's kr): both probes at one entry, both
    listed, each hit taking the kretprobe's traps at least; without --ret, and with
    --every-instruction (one probe a place), refused."""
    import json
    from kisim.cli import main
    runs = {}
    for extra in ([], ["--with-kprobe"]):
        assert main(["kprobe", "--arch", arch, "--at", FUNCTION, "--size", str(SIZE),
                     "--ret", *extra, "--json"]) == 0
        runs[bool(extra)] = json.loads(capsys.readouterr().out)
    alone, both = runs[False], runs[True]
    assert both["handlers"] == "kretprobe and a kprobe" and both["checksum_ok"]
    # the kprobe, registered after the kretprobe, first (add_new_kprobe's list_add_rcu)
    assert [line.split()[1] for line in both["list_lines"]] == ["k", "r"]
    assert [line.split()[1] for line in alone["list_lines"]] == ["r"]
    assert both["hits"] == alone["hits"] > 0
    assert both["traps_per_hit"] >= alone["traps_per_hit"]
    assert both["instructions_per_hit"] > alone["instructions_per_hit"]
    assert main(["kprobe", "--arch", arch, "--at", FUNCTION, "--with-kprobe"]) == 2
    assert "needs --ret" in capsys.readouterr().err
    assert main(["kprobe", "--arch", arch, "--every-instruction", FUNCTION, "--ret",
                 "--with-kprobe"]) == 2
    assert "--with-kprobe" in capsys.readouterr().err

# -- kretprobes -------------------------------------------------------------

@pytest.mark.slow
def test_kretprobe_sees_every_return_value(arch: str) -> None:
    from probes.kprobes import Kretprobe
    g = guest(arch, cpus=2)
    k = Kprobes(g)
    values = []
    rp = k.register_kretprobe(Kretprobe(symbol_name=FUNCTION, handler=lambda rp, regs:
                                        values.append(regs[get_arch(arch).ret])))
    assert rp.maxactive == 2                        # default: one per possible CPU
    assert any(line.split()[1:3] == ["r", f"{FUNCTION}+0x0"] for line in probed(k))
    assert g.run().ok
    calls = executed(arch, [rp.addr], cpus=2)[rp.addr]
    assert len(values) == rp.kp.hits == calls > 0 and rp.nmissed == 0
    assert all(values)                              # kmalloc never returned NULL here


@pytest.mark.slow
def test_kretprobe_maxactive_and_nmissed(arch: str) -> None:
    """fib recurses: with one instance, every nested entry misses."""
    from probes.kprobes import Kretprobe
    g = Guest(build(arch), cpus=1, workload="fib", size=8)
    k = Kprobes(g)
    returns = []
    rp = k.register_kretprobe(Kretprobe(symbol_name="fib", maxactive=1,
                                        handler=lambda rp, regs: returns.append(1)))
    assert g.run().ok
    assert rp.nmissed > 0 and len(returns) > 0
    assert len(returns) + rp.nmissed == rp.kp.hits


@pytest.mark.slow
def test_a_kretprobes_own_nmissed_is_reported(arch: str, tmp_path, capsys) -> None:
    """``kisim kprobe --ret``, ``--every-instruction --ret`` and compare's kretprobe
    row report the kretprobe's own nmissed, not only its entry probe's: on
    ``schedule`` under kmalloc on 1 CPU, maxactive is 1 and the init task keeps
    that instance in wait_for_children() for the whole run, so the other entries
    find none free (v5.10 pre_handler_kretprobe: rp->nmissed++) and their returns
    go unprobed, which a host handler counting the returns of the same run shows."""
    import json
    from kisim.cli import main
    from probes.kprobes import Kretprobe
    g = guest(arch)
    returns: list[int] = []
    rp = Kprobes(g).register_kretprobe(Kretprobe(symbol_name="schedule",
                                                 handler=lambda rp, regs: returns.append(1)))
    assert g.run().ok
    missed = rp.kp.hits - len(returns)
    assert missed > 0 and rp.maxactive == 1
    assert main(["kprobe", "--arch", arch, "--at", "schedule", "--ret", "--size", str(SIZE),
                 "--cycles", "count", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hits"] == rp.kp.hits and doc["nmissed"] == 0
    assert (doc["kretprobe_nmissed"], doc["maxactive"]) == (missed, 1)
    assert main(["kprobe", "--arch", arch, "--at", "schedule", "--ret", "--size", str(SIZE),
                 "--maxactive", "8", "--cycles", "count", "--json"]) == 0
    more = json.loads(capsys.readouterr().out)          # enough instances: none missed
    assert (more["hits"], more["kretprobe_nmissed"], more["maxactive"]) == (doc["hits"], 0, 8)
    assert more["instructions_per_hit"] > doc["instructions_per_hit"]
    assert main(["kprobe", "--arch", arch, "--at", "schedule", "--ret", "--size", str(SIZE),
                 "--cycles", "count"]) == 0
    assert f"kretprobe     nmissed {missed:,}: entries that found none of its 1" in \
        capsys.readouterr().out
    found = every_instruction(build(arch), "schedule", workload="kmalloc", size=SIZE, mode="ret")
    assert found.ok and found.kretprobe_nmissed == missed
    assert main(["compare", "--arch", arch, "--mechanism", "kretprobe", "--size", str(SIZE),
                 "--cycles", "count", "--json", "--out", str(tmp_path)]) == 0
    (row,) = [r for r in json.loads(capsys.readouterr().out)["arches"][0]["rows"]
              if r["mechanism"] == "kretprobe"]
    assert f"; {missed:,} of {row['hits']:,} entries found no free instance" in row["detail"]
    assert main(["kprobe", "--arch", arch, "--at", FUNCTION, "--ret", "--size", str(SIZE),
                 "--cycles", "count", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kretprobe_nmissed"] == 0
    assert main(["kprobe", "--arch", arch, "--at", FUNCTION, "--size", str(SIZE),
                 "--cycles", "count", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kretprobe_nmissed"] is None


def test_a_dead_tasks_kretprobe_instances_come_back(arch: str) -> None:
    """A task that dies inside schedule() (do_exit()'s last call) never returns
    through the trampoline; finish_task_switch() gives its instance back
    (v5.10 kprobe_flush_task). With 8 instances on schedule under hackbench,
    every task gone, all 8 are free again and none is left in
    kretprobe_inst_table; without the flush, dead tasks hold them for good."""
    from probes.kprobes import KPROBE_HASH_BITS, Kretprobe
    g = guest(arch, workload="hackbench")
    k = Kprobes(g)
    returns: list[int] = []
    rp = k.register_kretprobe(Kretprobe(symbol_name="schedule", maxactive=8,
                                        handler=lambda rp, regs: returns.append(1)))
    assert g.run().ok
    read, table = g.machine.read_word, g.image.symbols["kretprobe_inst_table"]
    word = get_arch(arch).word

    def chain(node: int) -> list[int]:
        nodes = []
        while node:
            nodes.append(node)
            node = read(node)
        return nodes

    flying = [ri for b in range(1 << KPROBE_HASH_BITS) for ri in chain(read(table + b * word))]
    free = chain(read(k._rp_addr(rp.struct, "free_instances")))
    assert flying == [] and len(free) == 8
    missed = read(k._rp_addr(rp.struct, "nmissed"))
    assert 0 < len(returns) < rp.kp.hits - missed     # some probed calls died unreturned


def test_kretprobe_refusals(arch: str) -> None:
    """The context switch: x86's kretprobe_blacklist[]; other arches have none in
    v5.10 (kretprobe_blacklist_size 0), and refuse it as NOKPROBE_SYMBOL."""
    from probes.kprobes import Kretprobe
    g = guest(arch)
    k = Kprobes(g)
    switch = ("kretprobe_blacklist" if arch == "x86_64"
              else "is blacklisted (NOKPROBE_SYMBOL(__switch_to_asm))")
    for rp, text in ((Kretprobe(symbol_name="__switch_to_asm"), switch),
                     (Kretprobe(symbol_name="kretprobe_trampoline"), "trampoline"),
                     (Kretprobe(symbol_name=FUNCTION, offset=get_arch(arch).insn_align * 4),
                      "function entry")):
        with pytest.raises(PatchError) as info:
            k.register_kretprobe(rp)
        assert info.value.errno == "EINVAL" and text in str(info.value)


def test_kretprobe_memory_comes_back_after_a_grace_period(arch: str) -> None:
    """unregister_kretprobe frees the struct's pool slot and its instances once
    every CPU has been quiescent (v5.10 synchronize_rcu, free_rp_inst): before
    that the memory is still taken, after it any number of cycles fit."""
    from probes.kprobes import KRETPROBE_INSTANCE_BYTES, KRETPROBE_POOL, RP_FIELDS, Kretprobe
    g = guest(arch)
    k = Kprobes(g)
    big = dict(symbol_name=FUNCTION, maxactive=1, data_size=KRETPROBE_INSTANCE_BYTES * 3 // 5)
    refused = []

    def after_the_first_turn(_machine) -> None:
        """Once the CPU has run, outside its idle loop (before, it is quiescent)."""
        if refused:
            return
        k.unregister_kretprobe(k.register_kretprobe(Kretprobe(**big)))
        with pytest.raises(PatchError) as info:
            k.register_kretprobe(Kretprobe(**big))  # the CPU has not switched since
        refused.append(info.value)

    assert g.run(on_turn=after_the_first_turn).ok   # every CPU halts: quiescent
    assert refused[0].errno == "ENOMEM" and "grace period" in str(refused[0])
    for _ in range(KRETPROBE_POOL + 10):            # each cycle's slot and instances reused
        k.unregister_kretprobe(k.register_kretprobe(Kretprobe(**big)))
    rp = k.register_kretprobe(Kretprobe(**big))
    # a freed slot is reused last: slot 0 came back after the run, behind 1..255
    index = (1 + KRETPROBE_POOL + 10) % KRETPROBE_POOL
    assert rp.struct == g.image.symbols["kretprobe_pool"] + (
        index * (len(FIELDS) + len(RP_FIELDS)) * get_arch(arch).word)


@pytest.mark.slow
def test_a_kretprobe_instance_in_flight_keeps_its_memory(arch: str) -> None:
    """A kretprobe on schedule() unregistered while a task sleeps in it: its
    instances stay taken until that call has returned (v5.10 frees it in the
    trampoline), then a kretprobe as large fits again, in the same run."""
    from probes.kprobes import KPROBE_HASH_BITS, KRETPROBE_INSTANCE_BYTES, RI_FIELDS, Kretprobe
    g = guest(arch, cpus=2, workload="hackbench")
    k = Kprobes(g)
    word = get_arch(arch).word
    data = KRETPROBE_INSTANCE_BYTES * 2 // 5 - len(RI_FIELDS) * word    # two take 4/5
    first = k.register_kretprobe(Kretprobe(symbol_name="schedule", data_size=data))
    area = g.image.symbols["kretprobe_instance_area"]
    table = g.image.symbols["kretprobe_inst_table"]

    def first_in_flight() -> bool:
        """An instance of ``first`` in kretprobe_inst_table: a schedule() not returned."""
        for bucket in range(1 << KPROBE_HASH_BITS):
            ri = g.machine.read_word(table + bucket * word)
            while ri:
                if area <= ri < area + KRETPROBE_INSTANCE_BYTES * 4 // 5:
                    return True
                ri = g.machine.read_word(ri)
        return False

    seen: list[tuple[str, bool]] = []

    def on_turn(_machine) -> None:
        if not seen and first.kp is not None and first_in_flight():
            k.unregister_kretprobe(first)
            seen.append(("unregistered", True))
        elif seen and seen[-1][0] != "fits":
            flying = first_in_flight()
            try:
                k.register_kretprobe(Kretprobe(symbol_name=FUNCTION, data_size=data))
                seen.append(("fits", flying))
            except PatchError as err:
                assert err.errno == "ENOMEM", err
                seen.append(("ENOMEM", flying))

    assert g.run(on_turn=on_turn).ok
    assert ("ENOMEM", True) in seen, seen
    assert seen[-1] == ("fits", False), seen


# -- optprobes ----------------------------------------------------------------

@pytest.mark.slow
def test_optprobe_hits_without_traps(arch: str) -> None:
    """x86 jmp / ARM b into a detour replaces the breakpoint: same hits, no trap. PPC: refused."""
    g = guest(arch)
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    if "optprobes" not in get_arch(arch).capabilities:
        with pytest.raises(PatchError, match="no optprobes"):
            k.optimize_now(kp)
        return
    armed = g.machine.read(kp.addr, 8)
    k.optimize_now(kp)
    assert g.machine.read(kp.addr, len(kp.top.opt_jump)) == kp.top.opt_jump != armed[:len(kp.top.opt_jump)]
    assert probed(k)[0].endswith("[OPTIMIZED]")
    base = guest(arch).run()
    result = g.run()
    assert result.ok and kp.hits == executed(arch, [kp.addr], 1)[kp.addr] > 0
    traps = sum(c["events"].get("trap", 0) for c in result.per_cpu)
    assert traps == sum(c["events"].get("trap", 0) for c in base.per_cpu)
    k.unoptimize_kprobe(kp.top)
    assert g.machine.read(kp.addr, 8) == armed


@pytest.mark.slow
def test_optprobes_on_every_instruction_transparent(arch: str) -> None:
    """Every instruction of kmalloc probed, each optimized where can_optimize allows:
    checksum unchanged, each probe's hits equal its instruction's executions. On
    ARM this runs both detours: the direct-exec one (the copied instruction runs
    in the detour, kprobe_direct_exec) and the one whose callback steps it."""
    if "optprobes" not in get_arch(arch).capabilities:
        return
    g = guest(arch)
    k = Kprobes(g)
    probes = probe_all(k, g, FUNCTION, pre_handler="kprobe_empty_pre_handler")
    optimized = []
    for kp in probes:
        try:
            k.optimize_now(kp)
            optimized.append(kp)
        except PatchError as err:
            assert err.errno in ("EINVAL", "EBUSY"), err
    assert optimized
    if arch == "arm":
        # ainsn word 2: kprobe_direct_exec (no PC in register_usage_flags)
        direct = [kp for kp in optimized if k.read_field(kp, "ainsn2")]
        stepped = [kp for kp in optimized if not k.read_field(kp, "ainsn2")]
        assert direct and stepped
        buffer = g.image.symbols["optprobe_buffers"] + direct[0].top.index * k.ops.OPTPROBE_BUFFER_BYTES
        detour = g.machine.read(buffer, k.ops.OPTPROBE_BUFFER_BYTES)
        assert direct[0].orig and g.machine.read(direct[0].addr, 4) != direct[0].orig
        assert struct.pack("<I", 0xE89D7FFF) + k.recover(direct[0].addr, 4) in detour
    assert g.run().ok
    counts = executed(arch, [kp.addr for kp in probes], 1)
    assert {kp.addr: kp.hits for kp in probes} == {kp.addr: counts[kp.addr] for kp in probes}
    assert sum(kp.hits for kp in optimized) > 100


@pytest.mark.slow
def test_optimizer_runs_after_its_modeled_delay(arch: str) -> None:
    """register_kprobe queues the probe; the optimizer runs once the modeled clock
    passes the delay. Queued, the probe is flagged (debugfs shows [OPTIMIZED]) and
    its hits take one breakpoint trap each; optimized, none."""
    from probes.kprobes import OPTIMIZE_DELAY, TICK_NSEC
    if "optprobes" not in get_arch(arch).capabilities:
        return
    base = guest(arch)
    base_result = base.run()
    half = max(cpu.clock_ns for cpu in base.machine.cpus) // 2
    g = guest(arch)
    assert Kprobes(guest(arch)).optimize_delay_ns == OPTIMIZE_DELAY * TICK_NSEC == 20_000_000
    k = Kprobes(g, optimize_delay_ns=half)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    assert k.queued(kp) and not kp.top.optimized and probed(k)[0].endswith("[OPTIMIZED]")
    assert g.machine.read(kp.addr, len(kp.breakpoint)) == kp.breakpoint
    seen = []

    def on_turn(machine) -> None:
        k.kprobe_optimizer(machine)
        if kp.top.optimized and not seen:
            seen.append((k.now_ns(), kp.hits))

    result = g.run(on_turn=on_turn)
    assert result.ok and seen and not k.queued(kp)
    at, hits_before = seen[0]
    assert at >= half
    assert 0 < hits_before < kp.hits == executed(arch, [kp.addr], 1)[kp.addr]
    traps = sum(c["events"].get("trap", 0) for c in result.per_cpu)
    base_traps = sum(c["events"].get("trap", 0) for c in base_result.per_cpu)
    assert traps - base_traps == hits_before        # one breakpoint trap per early hit


def test_a_queued_probe_runs_from_its_detour_on_x86() -> None:
    """setup_detour_execution (v5.10 arch/x86/kernel/kprobes/opt.c): a hit of a probe
    queued for the optimizer, flagged KPROBE_FLAG_OPTIMIZED, runs the displaced
    instructions from its detour buffer, past the template (TMPL_END_IDX), not
    from its boost slot; with debug.kprobes-optimization=0, from the slot."""
    from arches.x86_64 import kprobes as x86
    from sim.errors import GuestFault
    header = (ROOT / "arches/x86_64/include/asm/kprobes-core.h").read_text()
    assert f"#define TMPL_END_IDX\t\t{x86.OPTPROBE_TRAP_RESUME}\n" in header
    for allow in (True, False):
        g = guest("x86_64")
        k = Kprobes(g)
        k.set_optimization(allow)
        kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                      pre_handler="kprobe_empty_pre_handler"))
        assert k.kind(kp) == (QUEUED_PATH if allow else "boosted")
        with g.machine.text_mutex:          # ud2 in the boost slot: a hit that runs it faults
            g.machine.write_text(kp.top.slot, b"\x0f\x0b")
        if allow:
            assert g.run().ok and kp.hits == executed("x86_64", [kp.addr], 1)[kp.addr] > 0
        else:
            with pytest.raises(GuestFault):
                g.run()


def test_register_kprobe_makes_an_optimized_kprobe_and_queues_it(arch: str) -> None:
    """try_to_optimize_kprobe, as v5.10's register_kprobe ends with CONFIG_OPTPROBES:
    the probe joins an optimized_kprobe (an aggr_kprobe, its detour already in its
    buffer) that is flagged and queued for the optimizer. A post_handler aggregates
    it but does not queue it; debug.kprobes-optimization=0 unqueues (or unoptimizes)
    every probe and 1 queues them again. A kernel without optprobes has no such
    sysctl and keeps the probe plain."""
    from probes.kprobes import FLAG_OPTIMIZED
    g = guest(arch)
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    if "optprobes" not in get_arch(arch).capabilities:
        assert kp.aggr is None and not k.queued(kp) and not k.optprobes
        with pytest.raises(PatchError, match="no optprobes"):
            k.set_optimization(False)
        return
    ap = kp.aggr
    assert ap is not None and ap.members == [kp] and ap.opt_region > 0
    assert k.read_field(ap, "pre_handler") == k.fn["aggr_pre_handler"]
    assert k.read_field(ap, "flags") & FLAG_OPTIMIZED and k.queued(kp) and not ap.optimized
    buffer = g.image.symbols["optprobe_buffers"] + ap.index * k.ops.OPTPROBE_BUFFER_BYTES
    assert g.machine.read(buffer, 16) != bytes(16)
    k.set_optimization(False)
    assert not k.queued(kp) and not k.read_field(ap, "flags") & FLAG_OPTIMIZED
    with pytest.raises(PatchError, match="debug.kprobes-optimization = 0"):
        k.optimize_now(kp)
    k.set_optimization(True)
    assert k.queued(kp)
    k.optimize_now(kp)
    assert ap.optimized and k.read_field(ap, "flags") & FLAG_OPTIMIZED
    k.set_optimization(False)
    assert not ap.optimized and g.machine.read(kp.addr, len(kp.breakpoint)) == kp.breakpoint
    other = Kprobes(guest(arch))
    post = other.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                        pre_handler="kprobe_empty_pre_handler",
                                        post_handler="kprobe_empty_post_handler"))
    assert post.aggr is not None and not other.queued(post)
    assert other.read_field(post.aggr, "post_handler") == other.fn["aggr_post_handler"]
    off = Kprobes(Guest(build(arch, overrides={"OPTPROBES": "n"}), workload="kmalloc",
                        size=SIZE))
    assert off.register_kprobe(Kprobe(symbol_name=FUNCTION,
                                      pre_handler="kprobe_empty_pre_handler")).aggr is None


def test_the_optimizer_takes_the_newest_probe_first(arch: str, monkeypatch) -> None:
    """optimize_kprobe queues with list_add(), at the head of optimizing_list, and
    arch_optimize_kprobes walks the list from its head: the newest probe's jump is
    written first."""
    k = Kprobes(guest(arch))
    probes = [k.register_kprobe(Kprobe(symbol_name=name, pre_handler="kprobe_empty_pre_handler"))
              for name in (FUNCTION, "kfree")]
    if not k.optprobes:
        assert not any(k.queued(kp) for kp in probes)
        return
    poked = []
    poke = k.text.text_poke
    monkeypatch.setattr(k.text, "text_poke",
                        lambda addr, *args: poked.append(addr) or poke(addr, *args))
    k.wait_for_kprobe_optimizer()
    assert poked == [kp.addr for kp in reversed(probes)]
    assert all(kp.top.optimized for kp in probes)


def test_optprobes_off_in_kconfig_are_off(arch: str) -> None:
    """CONFIG_OPTPROBES=n builds no detour buffers, and a probe is not optimized:
    the Kconfig option decides, not only the arch's HAVE_OPTPROBES."""
    if "optprobes" not in get_arch(arch).capabilities:
        return
    g = Guest(build(arch, overrides={"OPTPROBES": "n"}), workload="kmalloc", size=SIZE)
    assert "optprobe_buffers" not in g.image.symbols
    assert "optimized_callback" not in g.image.symbols
    k = Kprobes(g)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    with pytest.raises(PatchError, match=r"CONFIG_OPTPROBES is not set"):
        k.optimize_now(kp)


@pytest.mark.slow
def test_cli_kprobe_says_what_the_optimizer_did(arch: str, capsys) -> None:
    """kisim kprobe names the sysctl and where the probe stood with the optimizer;
    --kprobes-optimization 0 keeps the breakpoint path, and is refused where the
    kernel has no such sysctl."""
    from kisim.cli import main
    has = "optprobes" in get_arch(arch).capabilities
    run = ["kprobe", "--arch", arch, "--at", FUNCTION, "--size", str(SIZE)]
    assert main(run) == 0
    out = capsys.readouterr().out
    assert ("debug.kprobes-optimization=1; queued at registration" in out) is has
    if not has:
        assert "optimizer" not in out
        assert main(run + ["--kprobes-optimization", "0"]) != 0
        assert "no optprobes on ppc32" in capsys.readouterr().err
        return
    for flags, optimization, optimizer in ((["--post"], True, ""),
                                           (["--opt"], True, "optimized"),
                                           (["--kprobes-optimization", "0"], False, "")):
        assert main(run + flags + ["--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert (doc["optimization"], doc["optimizer"]) == (optimization, optimizer)
        # the site as it was, and as the probe left it: a breakpoint, or the jump
        assert isinstance(doc["site_before"], str) and doc["site_before"] != doc["site_after"]


def test_optprobe_refusals(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    if "optprobes" not in get_arch(arch).capabilities:
        return
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler",
                                  post_handler="kprobe_empty_post_handler"))
    with pytest.raises(PatchError, match="post_handler"):
        k.optimize_now(kp)
    # x86: a conditional jump in the region cannot be relocated. ARM: a
    # conditional branch is optimized (opt-arm.c: the branch into the detour
    # takes its condition; tests/test_kprobes_owners.py).
    jcc = next(a for a, _, t in instructions(g, FUNCTION)
               if t.startswith(("jb", "jne", "je"))) if arch == "x86_64" else None
    if jcc is not None:
        kp2 = k.register_kprobe(Kprobe(addr=jcc, pre_handler="kprobe_empty_pre_handler"))
        with pytest.raises(PatchError, match="cannot optimize"):
            k.optimize_now(kp2)


def test_the_reach_back_is_max_optimized_length(arch: str, monkeypatch) -> None:
    """A probe's saved text starts at most one instruction, or MAX_OPTIMIZED_LENGTH
    bytes (asm/kprobes.h, v5.10: x86 MAX_INSN_SIZE + DISP32_SIZE, ARM the probed
    word), before an address it holds; an arch's detour past its bound is refused
    loudly, as the bug it is."""
    g = guest(arch)
    k = Kprobes(g)
    optprobes = "optprobes" in get_arch(arch).capabilities
    assert k.reach == {"x86_64": 20, "arm": 4, "ppc32": 4}[arch]
    if not optprobes:
        return
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    assert 0 < kp.top.opt_region <= k.ops.MAX_OPTIMIZED_LENGTH
    k.unregister_kprobe(kp)
    monkeypatch.setattr(k.ops, "MAX_OPTIMIZED_LENGTH", kp.top.opt_region - 1)
    with pytest.raises(ValueError, match="past MAX_OPTIMIZED_LENGTH"):
        k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))


def test_function_padding_is_the_functions_as_kallsyms_sizes_it(arch: str) -> None:
    """v5.10's can_probe() and can_optimize() size a function by
    kallsyms_lookup_size_offset(): to the next symbol. x86 pads functions to 16
    bytes with nops, some with an int3: a probe on a padding nop registers and is
    never hit, a detour may lie in the padding, and a padding int3 is refused as
    another debugger's. With the ELF sizes, the nop was "not in a kernel text
    function". ARM and PowerPC functions have no padding between them; only the
    last one may end in KPROBES_TEXT's 8-byte alignment, up to
    __kprobes_text_start (kernel/kernel.lds)."""
    g = guest(arch)
    padded = [(elf, kall) for elf, kall in zip(g.image.functions, g.image.kallsyms)
              if kall[1] > elf[1]]
    if arch != "x86_64":
        start = g.image.symbols["__kprobes_text_start"]
        assert start % 8 == 0 and all(
            kall[0] + kall[1] == start and elf[0] + elf[1] > start - 8 for elf, kall in padded)
        return
    assert all(elf[0] == kall[0] and elf[2] == kall[2] for elf, kall in padded)
    md = capstone.Cs(*g.arch.cs_mode)
    k = Kprobes(g)
    int3 = None
    for (start, size, name), (_, grown, _) in padded:
        tail = list(md.disasm(g.machine.read(start + size, grown - size), start + size))
        int3 = int3 or next((i.address for i in tail if i.mnemonic == "int3"), None)
        if name == FUNCTION:
            nop = next(i.address for i in tail
                       if i.mnemonic == "nop" and start + grown - i.address >= 5)
            offset = nop - start
    kp = k.register_kprobe(Kprobe(addr=nop, pre_handler="kprobe_empty_pre_handler"))
    assert f"{FUNCTION}+{offset:#x}" in probed(k)[-1]
    k.optimize_now(kp)                   # can_optimize: the jmp fits before the next symbol
    assert probed(k)[-1].endswith("[OPTIMIZED]")
    assert g.run().ok and kp.hits == 0
    refused(k, Kprobe(addr=int3), "EINVAL", "int3")


def test_refuses_data_in_text(arch: str) -> None:
    """A literal pool ($d mapping symbol) inside a function is data: EINVAL."""
    g = guest(arch)
    k = Kprobes(g)
    black = {fn.name for fn in k.tables.nokprobe}
    inside = [a for a, _ in k._data
              if any(s <= a < s + n and name not in black for s, n, name in g.image.functions)]
    if not inside:
        assert arch != "arm"                 # only ARM code embeds literal pools here
        return
    refused(k, Kprobe(addr=inside[0]), "EINVAL", "literal pool")


@pytest.mark.slow
def test_hc_kprobe_is_served_by_the_hypercall_table(arch: str) -> None:
    """HC_KPROBE is registered in the guest's hypercall table; its exception
    return resumes at the interrupted PC (hypercall.Resume): one per trap."""
    from sim.errors import ConfigError
    from sim.hypercall import HYPERCALLS
    g = guest(arch)
    k = Kprobes(g)
    assert HYPERCALLS["HC_KPROBE"] in g.hypercalls.handlers
    with pytest.raises(ConfigError, match="HC_KPROBE already has a handler"):
        Kprobes(g)
    kp = k.register_kprobe(Kprobe(symbol_name=FUNCTION, pre_handler="kprobe_empty_pre_handler"))
    result = g.run()
    traps = sum(c["events"].get("trap", 0) for c in result.per_cpu)
    base = guest(arch).run()
    assert result.ok and kp.hits > 0
    assert result.hypercalls["HC_KPROBE"] == traps - sum(
        c["events"].get("trap", 0) for c in base.per_cpu) == kp.hits


@pytest.mark.slow
def test_cli_kprobe_list_view_checks_the_run_behind_it(capsys) -> None:
    """``kisim kprobe --at X list`` prints the kprobes/list lines of a real run, whose
    checksum ``--expect`` checks as in the run view: a wrong one exits 1."""
    from kisim.cli import main
    assert main(["kprobe", "--arch", "x86_64", "--at", "kmalloc", "list"]) == 0
    assert capsys.readouterr().out.split()[1:3] == ["k", "kmalloc+0x0"]
    assert main(["kprobe", "--arch", "x86_64", "--at", "kmalloc", "list", "--workload", "fib",
                 "--expect", "0x1"]) == 1


def _assembled(arch: str, text: str, address: int) -> bytes:
    """The test's oracle: Keystone, which kisim itself no longer runs for a detour."""
    encoding, _ = keystone.Ks(*get_arch(arch).ks_mode).asm(text, address)
    return bytes(encoding)


def _template_text(arch: str, struct_addr: int, callback: int) -> str:
    """The detour's template as assembly, in the order the arch writes it."""
    if arch == "arm":
        return ("sub sp, sp, #136; stm sp, {r0-r12, sp, lr}; add r3, sp, #136; "
                "str r3, [sp, #52]; mrs r4, apsr; str r4, [sp, #64]; mov r1, sp; "
                f"movw r0, #{struct_addr & 0xFFFF}; movt r0, #{struct_addr >> 16}; "
                f"and r4, sp, #4; sub sp, sp, r4; bl {callback:#x}; add sp, sp, r4; "
                "ldr r1, [sp, #64]; msr APSR_nzcvq, r1")
    regs = ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi").split()
    save = "; ".join(f"mov qword ptr [rsp + {8 * i}], {r}" for i, r in enumerate(regs))
    load = "; ".join(f"mov {r}, qword ptr [rsp + {8 * i}]" for i, r in enumerate(regs))
    return (f"lea rsp, [rsp - 168]; {save}; pushfq; pop rax; mov qword ptr [rsp + 144], rax; "
            f"lea rax, [rsp + 168]; mov qword ptr [rsp + 152], rax; "
            f"movabs rdi, {struct_addr:#x}; mov rsi, rsp; call {callback:#x}; "
            f"push qword ptr [rsp + 144]; popfq; {load}; lea rsp, [rsp + 168]")


@pytest.mark.parametrize("arch", [a for a in NAMES if "optprobes" in get_arch(a).capabilities])
def test_the_optprobe_template_is_the_bytes_an_assembler_writes(arch: str) -> None:
    """The detour's template is written from its encoding bits (opt.c and opt-arm.c
    copy an assembled template): it equals an assembler's bytes for buffers,
    callbacks and struct addresses across their range."""
    ops = arch_kprobes(get_arch(arch))
    nop = get_arch(arch).nop(4 if arch == "arm" else 1)
    rng = random.Random(0x0B7)
    for _ in range(50):
        addr = 0xC0000000 + 4 * rng.randrange(1 << 20)
        buffer = addr + 4 * rng.randrange(1 << 18)
        callback = buffer + 4 * rng.randrange(-(1 << 18), 1 << 18)
        struct_addr = rng.randrange(1 << 32)
        detour, _ = ops.arch_prepare_optimized_kprobe(addr, (addr, nop * 16), buffer,
                                                      callback, struct_addr)
        want = _assembled(arch, _template_text(arch, struct_addr, callback), buffer)
        assert detour[:len(want)] == want


def test_the_list_walks_kprobe_table(arch: str) -> None:
    """debugfs kprobes/list (show_kprobe_addr) walks kprobe_table bucket by bucket,
    each chain from its head: the newest probe of a bucket first, not by address."""
    from probes.kprobes import KPROBE_HASH_BITS, hash_ptr
    g = guest(arch)
    k = Kprobes(g)
    names = ("kfree", "kmalloc", "schedule", "ksize", "kmem_cache_alloc", "kmem_cache_free")
    probes = [k.register_kprobe(Kprobe(symbol_name=n, pre_handler="kprobe_empty_pre_handler"))
              for n in names]
    order = sorted(range(len(probes)), key=lambda i: (hash_ptr(probes[i].addr, g.arch.bits), -i))
    assert [line.split()[2] for line in probed(k)] == [f"{names[i]}+0x0" for i in order]
    assert 1 < len({hash_ptr(p.addr, g.arch.bits) for p in probes}) <= 1 << KPROBE_HASH_BITS


def test_refusal_reasons_group_without_the_place() -> None:
    """--every-instruction's summary counts each reason once per kind, whichever
    way the kernel's message names the address ("X is ...", "cannot probe X: ...")."""
    from lab.transparency import Refusal, Transparency
    swp = "SWP/SWPB (ARMv7 kernel), LDREX/STREX{,D,B,H}: not decoded (decode-arm.c)"
    refused = [Refusal(f"schedule+{off:#x}", 0x1000 + off, "EINVAL",
                       f"kprobe: cannot probe schedule+{off:#x}: {swp}") for off in (0x30, 0x34)]
    refused.append(Refusal("schedule+0x10", 0x1010, "EINVAL", "kprobe: schedule+0x10 is an "
                           "ftrace (mcount) site and arm has no KPROBES_ON_FTRACE"))
    found = Transparency(arch="arm", workload="kmalloc", size=1, mode="pre", functions=1,
                         probed=1, optimized=0, batches=1, hits=0, counted=0, nmissed=0,
                         checksum=None, checksum_ok=True, refused=refused)
    assert found.refusal_reasons() == {
        f"EINVAL: {swp}": 2,
        "EINVAL: an ftrace (mcount) site and arm has no KPROBES_ON_FTRACE": 1}
