"""Text owners and kprobes (docs/kprobes.md "Text owners" and "Refusals", v5.10).

Each pair of owners of kernel text either refuses the other as v5.10 does
(check_kprobe_address_safe, arch_check_ftrace_location,
copy_optimized_instructions) or both work together (kprobes on ftrace, a
kprobe inside an optimized region). Also v5.10's return codes: -EILSEQ off
an instruction boundary (x86 can_probe), -EINVAL for a kretprobe on an
unknown symbol, the kretprobe per-instance data, x86 can_boost's two-byte
table, and ARM optprobes on conditional instructions.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import capstone
import pytest

import patcher.instrument  # noqa: F401  (serves static keys from guest modules)
from arches import NAMES, get_arch
from arches.x86_64.kprobes import _is_indirect_jump, can_boost, decode
from kbuild import build
from patcher.errors import PatchError
from patcher.ftrace import ftrace_for
from patcher.instrument import attach
from probes.kprobes import Kprobe, Kprobes, Kretprobe
from sim.errors import GuestFault
from sim.guest import Guest

SIZE = 100


@pytest.fixture(scope="module", params=NAMES)
def arch(request) -> str:
    build(request.param)
    return request.param


def guest(arch: str) -> Guest:
    return Guest(build(arch), workload="kmalloc", size=SIZE)


def executed(arch: str, addrs: list[int]) -> Counter[int]:
    """How often each address ran with its condition passing, in a separate
    unprobed run (a Unicorn code hook per address)."""
    g = guest(arch)
    counts: Counter[int] = Counter()
    ops = g.arch.ops
    code = {a: g.machine.read(a, g.arch.max_insn_len) for a in addrs}
    for addr in addrs:
        g.machine.watch(addr, lambda cpu, a=addr: counts.update(
            [a] if ops.condition_passes(a, code[a], cpu) else []))
    assert g.run().ok
    return counts


def refused(k: Kprobes, kp: Kprobe, errno: str, text: str) -> None:
    with pytest.raises(PatchError) as info:
        k.register_kprobe(kp)
    assert info.value.errno == errno and text in info.value.message, info.value


def insns(g: Guest, name: str) -> list[tuple[int, int, str]]:
    start, size = next((a, s) for a, s, n in g.image.functions if n == name)
    md = capstone.Cs(*g.arch.cs_mode)
    return [(a, n, m) for a, n, m, _ in md.disasm_lite(g.machine.read(start, size), start)]


# -- kprobe x jump label ----------------------------------------------------------

KEYED = r"""
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/jump_label.h>

DEFINE_STATIC_KEY_FALSE(keyed_key);
unsigned long keyed_site;		/* written by the test: the static branch's site */

static noinline u32 keyed_branch(u32 x)
{
	if (static_branch_unlikely(&keyed_key))
		return x + 100;
	return x;
}

u32 keyed_run(u32 size)
{
	return keyed_branch(size);
}

static struct kprobe kp;

static int __init keyed_init(void)
{
	int ret;

	kp.addr = (kprobe_opcode_t *)keyed_site;
	ret = register_kprobe(&kp);
	static_branch_enable(&keyed_key);
	pr_info("keyed: register_kprobe %d, branch %u\n", ret, keyed_branch(1));
	if (!ret)
		unregister_kprobe(&kp);
	return 0;
}
module_init(keyed_init);
"""


@pytest.mark.slow
def test_kprobe_on_a_static_key_site_is_refused_and_the_key_still_works(
        arch: str, tmp_path: Path) -> None:
    """A module's register_kprobe() on a static_branch_unlikely() site: -EINVAL
    (jump_label_text_reserved); static_branch_enable() then takes effect."""
    path = tmp_path / "keyed.c"
    path.write_text(KEYED)
    kernel = build(arch, modules=[path])
    g = Guest(kernel, workload="keyed:keyed_run", size=1)
    start, size = next((a, s) for a, s, n in g.image.functions if n == "keyed_branch")
    site = next(e.code for e in attach(g).tables.jump_entries if start <= e.code < start + size)
    g.machine.write_word(g.image.symbols["keyed_site"], site)
    result = g.run()
    assert "keyed: register_kprobe -22, branch 101" in "".join(result.console)
    assert result.checksum == 101
    assert any("jump_label_text_reserved" in r
               for r in g.services["KPROBE"].__self__.refusals)


def test_kprobe_on_jump_label_and_imv_sites_is_einval(arch: str) -> None:
    """Host API, with and without the patcher attached: static key and
    immediate-value sites are refused with EINVAL (never EBUSY), every byte of
    a jump label site too: check_kprobe_address_safe runs before can_probe's
    -EILSEQ (arch_prepare_kprobe)."""
    for attached in (False, True):
        g = guest(arch)
        inst = attach(g) if attached else None
        k = Kprobes(g)
        tables = k.tables
        for entry in tables.jump_entries[:3]:
            for byte in range(0, len(entry.insn), k.arch.insn_align):
                refused(k, Kprobe(addr=entry.code + byte), "EINVAL", "jump_label_text_reserved")
        for entry in tables.imv[:3]:
            refused(k, Kprobe(addr=entry.insn), "EINVAL", "immediate value")
        if inst is not None:                    # the owners still patch their sites
            inst.keys.static_key_slow_inc(tables.jump_entries[0].key & ~1)


# -- kprobe x ftrace ---------------------------------------------------------------

def _mcount_site(k: Kprobes, name: str) -> int:
    start, size = next((a, s) for a, s, n in k.guest.image.functions if n == name)
    return next(s for s in k._mcount if start <= s < start + size)


def test_kprobe_on_an_mcount_site_follows_kprobes_on_ftrace(arch: str) -> None:
    """x86 (KPROBES_ON_FTRACE): an ftrace-based kprobe, [FTRACE], hits exact and no
    trap; inside the 5-byte site -EILSEQ. ARM, PowerPC: -EINVAL."""
    g = guest(arch)
    k = Kprobes(g)
    site = _mcount_site(k, "kmalloc")
    if not k.ops.KPROBES_ON_FTRACE:
        refused(k, Kprobe(addr=site), "EINVAL", "KPROBES_ON_FTRACE")
        return
    refused(k, Kprobe(addr=site + 2), "EILSEQ", "")
    ips = []
    kp = k.register_kprobe(Kprobe(addr=site, pre_handler=lambda p, regs: ips.append(regs["rip"])))
    assert kp.ftrace and k.kind(kp) == "ftrace" and k.list()[0].endswith("[FTRACE]")
    assert k.read_field(kp, "flags") & 8                      # KPROBE_FLAG_FTRACE
    ft = k.ftrace()
    assert g.machine.read(site, 5) == g.arch.ops.ftrace_call_replace(
        site, g.image.symbols["ftrace_regs_caller"])
    base = guest(arch).run()
    result = g.run()
    assert result.ok and result.checksum == base.checksum
    assert kp.hits == len(ips) > 0 and set(ips) == {site + 1}     # as after an int3
    traps = sum(c["events"].get("trap", 0) for c in result.per_cpu)
    assert traps == sum(c["events"].get("trap", 0) for c in base.per_cpu)
    with pytest.raises(PatchError, match="ftrace-based"):
        k.optimize_now(kp)
    k.unregister_kprobe(kp)
    assert g.machine.read(site, 5) == ft.ftrace_nop()


def test_ftrace_enabled_off_silences_an_ftrace_based_kprobe(arch: str) -> None:
    """v5.10 ftrace_shutdown_sysctl disables every call site, a kprobe's too: no
    hits while the sysctl is off; on again, the site calls ftrace_regs_caller."""
    g = guest(arch)
    k = Kprobes(g)
    if not k.ops.KPROBES_ON_FTRACE:
        return
    site = _mcount_site(k, "kmalloc")
    kp = k.register_kprobe(Kprobe(addr=site, pre_handler="kprobe_empty_pre_handler"))
    ft = k.ftrace()
    ft.set_ftrace_enabled(False)
    assert g.machine.read(site, 5) == ft.ftrace_nop()
    assert g.run().ok and kp.hits == 0
    ft.set_ftrace_enabled(True)
    assert g.machine.read(site, 5) == g.arch.ops.ftrace_call_replace(
        site, g.image.symbols["ftrace_regs_caller"])


def test_ftrace_kprobe_and_the_function_tracer_share_a_site(arch: str) -> None:
    """Both work together: the site calls ftrace_regs_list_caller; the tracer
    counts every call and the kprobe hits every call; each alone afterwards."""
    g = guest(arch)
    k = Kprobes(g)
    if not k.ops.KPROBES_ON_FTRACE:
        return
    ft = ftrace_for(g, k.tables)
    assert k.ftrace() is ft
    site = _mcount_site(k, "kmalloc")
    ft.write_filter("kmalloc")
    ft.register_ftrace_function("ftrace_selftest_recursive_call")
    kp = k.register_kprobe(Kprobe(addr=site, pre_handler="kprobe_empty_pre_handler"))
    sym = g.image.symbols
    assert g.machine.read(site, 5) == g.arch.ops.ftrace_call_replace(
        site, sym["ftrace_regs_list_caller"])
    assert g.run().ok
    assert kp.hits > 0 and g.machine.read_word(sym["ftrace_selftest_sink"]) != 0
    k.unregister_kprobe(kp)
    assert g.machine.read(site, 5) == g.arch.ops.ftrace_call_replace(site, sym["ftrace_caller"])


# -- kprobe x optprobe, optprobe x other owners -----------------------------------

def test_a_kprobe_inside_an_optimized_region_unoptimizes_it(arch: str) -> None:
    """__arm_kprobe: the optimized probe falls back to its breakpoint; both hit.
    __disarm_kprobe: when the inner probe goes, the outer is optimized again."""
    if arch != "x86_64":
        return                     # ARM's region is the probed word alone
    g = guest(arch)
    k = Kprobes(g)
    for addr, length, _ in insns(g, "kmalloc"):
        if length >= 5:
            continue
        outer = k.register_kprobe(Kprobe(addr=addr, pre_handler="kprobe_empty_pre_handler"))
        try:
            k.optimize_now(outer)
        except PatchError:
            k.unregister_kprobe(outer)
            continue
        break
    assert outer.top.optimized
    inner = k.register_kprobe(Kprobe(addr=outer.addr + length,
                                     pre_handler="kprobe_empty_pre_handler"))
    assert not outer.top.optimized and g.machine.read(outer.addr, 1) == outer.breakpoint
    assert g.run().ok and outer.hits > 0 and inner.hits > 0
    # __disarm_kprobe(reopt): once the inner probe is disabled, or goes, the outer
    # is queued again (arch_check_optimized_kprobe passes a disabled probe)
    for leave in ("disable_kprobe", "unregister_kprobe"):
        if leave == "unregister_kprobe":
            k.enable_kprobe(inner)              # __arm_kprobe: blocked again
        assert not outer.top.optimized
        getattr(k, leave)(inner)
        assert not outer.top.optimized
        k.wait_for_kprobe_optimizer()
        assert outer.top.optimized
        assert g.machine.read(outer.addr, len(outer.top.opt_jump)) == outer.top.opt_jump
    assert k.list()[0].endswith("[OPTIMIZED]")


@pytest.mark.parametrize("reach", [None, 1])
def test_the_regions_last_instruction_is_within_reach(reach: int | None) -> None:
    """get_optimized_kprobe() looks back MAX_OPTIMIZED_LENGTH bytes (kernel/kprobes.c,
    v5.10): a probe on the last instruction of a detoured region, the farthest from
    its start, unoptimizes it too. The negative control looks back one breakpoint
    only: the new int3 lands in the jump's displacement, and the guest jumps to
    nowhere."""
    g = guest("x86_64")
    k = Kprobes(g)
    start = g.image.symbols["kmalloc"]
    starts = insns(g, "kmalloc")
    first = k.register_kprobe(Kprobe(addr=start, pre_handler="kprobe_empty_pre_handler"))
    k.optimize_now(first)
    region = first.top.opt_region
    last = max(a for a, _, _ in starts if start < a < start + region)
    if reach is not None:
        k.reach = reach
    second = k.register_kprobe(Kprobe(addr=last, pre_handler="kprobe_empty_pre_handler"))
    if reach is not None:
        with pytest.raises(GuestFault):
            g.run()
        return
    assert not first.top.optimized and g.machine.read(start, 1) == b"\xcc"
    assert g.machine.read(last, 1) == b"\xcc"
    assert g.run().ok and first.hits == second.hits > 0


def test_optimizing_over_another_owners_site_is_ebusy(arch: str) -> None:
    """copy_optimized_instructions: a detoured region holding an ftrace, jump label
    or immediate-value site is -EBUSY (the probe stays a breakpoint probe)."""
    if arch != "x86_64":
        return                     # ARM's region is the probed word, checked at registration
    g = guest(arch)
    k = Kprobes(g)
    t = k.tables
    owned = ([(s, "mcount") for s in k._mcount] + [(e.code, "jump label") for e in t.jump_entries]
             + [(e.insn, "immediate value") for e in t.imv])
    seen = set()
    for site, what in owned:
        start, size, _ = k._function(site)
        before = [a for a, _, _ in insns(g, k._function(site)[2]) if site - 5 < a < site]
        for addr in before:
            try:
                kp = k.register_kprobe(Kprobe(addr=addr, pre_handler="kprobe_empty_pre_handler"))
            except PatchError:
                continue
            with pytest.raises(PatchError) as info:
                k.optimize_now(kp)
            if info.value.errno == "EBUSY":
                seen.add(what)
            k.unregister_kprobe(kp)
    assert seen >= {"mcount", "jump label"}


# -- the other owners: one machine, one set of reservations --------------------------

def test_every_patcher_of_a_machine_sees_every_owner(arch: str) -> None:
    """Static keys, immediate values, ftrace and the kprobe manager each have a
    patcher; their reservations are the machine's, so each refuses the others'
    sites (EBUSY) whichever patcher asks."""
    g = guest(arch)
    inst = attach(g)
    ft = ftrace_for(g, inst.tables)
    k = Kprobes(g)
    t = inst.tables
    sites = {"jump_label": (t.jump_entries[0].code, len(t.jump_entries[0].insn)),
             "imv": (t.imv[0].insn, t.imv[0].length),
             "ftrace": (t.mcount[0].address, g.arch.ops.MCOUNT_INSN_SIZE)}
    for patcher in (inst.text, ft.patcher, k.text):
        for owner, (addr, length) in sites.items():
            assert owner in patcher.owners(addr, length)
            for other in ("jump_label", "imv", "ftrace", "kprobe", "marker"):
                if other != owner:
                    with pytest.raises(PatchError) as info:
                        patcher.reserve(addr, length, other)
                    assert info.value.errno == "EBUSY"


# -- item 4: return codes and API ----------------------------------------------------

def test_not_an_instruction_boundary_is_eilseq_on_x86(arch: str) -> None:
    g = guest(arch)
    k = Kprobes(g)
    addr, length, _ = next(i for i in insns(g, "kmalloc") if i[1] > 1)
    if get_arch(arch).insn_align == 1:
        refused(k, Kprobe(addr=addr + 1), "EILSEQ", "can_probe")
    else:
        refused(k, Kprobe(addr=addr + 1), "EINVAL", "misaligned")


def test_kretprobe_on_an_unknown_symbol_is_einval(arch: str) -> None:
    """v5.10 kprobe_on_func_entry() is a bool: register_kretprobe returns -EINVAL
    (a kprobe on the same symbol is -ENOENT, from _kprobe_addr)."""
    k = Kprobes(guest(arch))
    with pytest.raises(PatchError) as info:
        k.register_kretprobe(Kretprobe(symbol_name="no_such_function"))
    assert info.value.errno == "EINVAL"
    refused(k, Kprobe(symbol_name="no_such_function"), "ENOENT", "no symbol")


@pytest.mark.parametrize("code,boost", [
    ("662e0f1f840000000000", True),     # nopw %cs:0(%rax,%rax): two-byte table first
    ("0fc8", True), ("480fcf", True),   # bswap
    ("0f1f4000", True), ("0f44c1", True), ("0fafc1", True),
    ("2e90", False), ("67488b00", False),       # CS override, address size on one-byte
    ("0f8400000000", False), ("0f0b", False), ("0f01d0", False), ("660f3a0fc108", False),
    ("e800000000", False), ("7400", False), ("4889c7", True),
    # prefixes as insn.c reads them, where Capstone's list leaves them out: a repeated
    # one, and tzcnt's mandatory f3 (the two-byte 0f bc, boostable)
    ("66662e0f1f840000000000", True), ("f3480fbcc0", True), ("2e2e90", False)])
def test_x86_can_boost_follows_v5_10(code: str, boost: bool) -> None:
    insn = decode(bytes.fromhex(code), 0x1000)
    assert can_boost(insn) is boost


@pytest.mark.parametrize("code,jump", [
    ("ffe0", True), ("41ffe0", True), ("ff24c500000000", True), ("42ff24c500000000", True),
    ("ff28", True), ("41ff20", True), ("ffd0", False), ("41ffd0", False), ("ff30", False)])
def test_x86_indirect_jumps_are_found_past_their_prefixes(code: str, jump: bool) -> None:
    """opt.c __insn_is_indirect_jump reads the opcode after the prefixes, so
    ``41 ff e0`` (jmp r8) keeps its function from being optimized; ff /5 is a far
    jump, ff /2 a
    call and ff /6 a push."""
    assert _is_indirect_jump(decode(bytes.fromhex(code), 0x1000)) is jump


KRET = r"""
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/slab.h>

struct kret_data {
	unsigned long size;
	unsigned long magic;
};

static u32 entries, returns, skipped, bad;

static int kret_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kret_data *d = (struct kret_data *)ri->data;

	entries++;
	if (entries % 3 == 0) {
		skipped++;
		return 1;		/* no return probe for this call */
	}
	d->size = regs_return_value(regs);
	d->magic = 0x5a5a + entries;
	return 0;
}

static int kret_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kret_data *d = (struct kret_data *)ri->data;

	returns++;
	if ((d->magic & ~0xffffUL) != 0 || d->magic < 0x5a5a)
		bad++;
	return 0;
}

static struct kretprobe rp = {
	.handler = kret_ret,
	.entry_handler = kret_entry,
	.data_size = sizeof(struct kret_data),
	.kp.symbol_name = "kmalloc",
};

u32 kret_run(u32 size)
{
	u32 i;

	for (i = 0; i < size; i++)
		kfree(kmalloc(32, GFP_KERNEL));
	return 0;
}

static int __init kret_init(void)
{
	int ret = register_kretprobe(&rp);

	pr_info("kret: register %d maxactive %ld data_size %lu\n", ret, (long)rp.maxactive,
		(unsigned long)rp.data_size);
	return ret;
}

static void __exit kret_exit(void)
{
	unregister_kretprobe(&rp);
	pr_info("kret: entries %u returns %u skipped %u bad %u missed %lu\n", entries, returns,
		skipped, bad, (unsigned long)rp.nmissed);
}
module_init(kret_init);
module_exit(kret_exit);
"""


@pytest.mark.slow
def test_kretprobe_data_entry_handler_and_default_maxactive(arch: str, tmp_path: Path) -> None:
    """A v5.10 module using data_size, ri->data[] and an entry_handler compiles
    and runs: a non-zero entry_handler skips the instance; maxactive 0 becomes
    num_possible_cpus()."""
    path = tmp_path / "kret.c"
    path.write_text(KRET)
    g = Guest(build(arch, modules=[path]), cpus=2, workload="kret:kret_run", size=30)
    result = g.run()
    console = "".join(result.console)
    assert f"kret: register 0 maxactive 2 data_size {2 * g.arch.word}" in console
    line = next(ln for ln in console.splitlines() if ln.startswith("kret: entries"))
    entries, returns, skipped, bad = (int(w) for w in line.split()[2:9:2])
    assert entries >= 30 and skipped == entries // 3 and bad == 0
    assert returns == entries - skipped


def test_arm_optprobes_on_conditional_instructions(arch: str) -> None:
    """opt-arm.c: the branch into the detour takes the instruction's condition;
    each conditional instruction of kmalloc optimized hits exactly when its
    condition passes (counted by a code hook in a separate run)."""
    if arch != "arm":
        return
    g = guest(arch)
    k = Kprobes(g)
    probes = []
    for addr, _, _ in insns(g, "kmalloc"):
        word = int.from_bytes(g.machine.read(addr, 4), "little")
        if word >> 28 >= 0xE:
            continue
        try:
            kp = k.register_kprobe(Kprobe(addr=addr, pre_handler="kprobe_empty_pre_handler"))
        except PatchError:
            continue
        k.optimize_now(kp)
        assert kp.top.optimized and g.machine.read(addr, 4)[3] >> 4 == word >> 28
        probes.append(kp)
    assert probes
    assert g.run().ok
    counts = executed(arch, [kp.addr for kp in probes])
    assert {kp.addr: kp.hits for kp in probes} == {kp.addr: counts[kp.addr] for kp in probes}
