"""CONFIG_THUMB2_KERNEL: the ARM kernel built and run as Thumb-2 (Linux v5.10).

Encodings against Capstone and Keystone, the Kconfig choice, the image
really in Thumb state, every workload on 1-4 CPUs across many turn
boundaries, and the patching mechanisms (jump labels, markers, immediate
values, tracepoints, dynamic ftrace) giving the A32 kernel's events.
"""
from __future__ import annotations

import capstone
import keystone
import pytest

from arches import NAMES, get_arch
from arches.arm import thumb2
from arches.base import EncodingError
from kbuild.image import build
from patcher.instrument import attach
from patcher.tables import load_tables
from sim.elf import read_elf
from sim.guest import Guest, reference_checksum
from probes.function_tracer import FunctionTracer

ARM = get_arch("arm")
T2 = ARM.for_config({"THUMB2_KERNEL": "y"})
T2_CONFIG = {"THUMB2_KERNEL": "y"}


def disasm(code: bytes, addr: int = 0) -> list[tuple[str, str]]:
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB)
    return [(i.mnemonic, i.op_str) for i in md.disasm(code, addr)]


def thumb_asm(text: str, addr: int = 0) -> bytes:
    return bytes(keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_THUMB).asm(text, addr)[0])


# -- encodings ----------------------------------------------------------------------

BRANCHES = [(0x1000, 0x2000), (0x2000, 0x1000), (0x1002, 0x1002), (0x1002, 0x800000),
            (0x800000, 0x1002), (0x100000, 0x100000 + 0xFFFFFE + 4),
            (0x1100000, 0x1100000 + 4 - 0x1000000)]


@pytest.mark.parametrize("src,dst", BRANCHES)
def test_branches_are_b_w_and_bl(src: int, dst: int) -> None:
    """__arm_gen_branch_thumb2: T4 b.w and T1 bl, as Keystone assembles them."""
    assert disasm(T2.encode_jump(src, dst), src) == [("b.w", f"#{dst:#x}")]
    assert disasm(T2.encode_call(src, dst), src) == [("bl", f"#{dst:#x}")]
    if abs(dst - src) < 0x800000:           # Keystone 0.9.2 fails at the ends of the reach
        assert T2.encode_jump(src, dst) == thumb_asm(f"b.w #{dst:#x}", src)
        assert T2.encode_call(src, dst) == thumb_asm(f"bl #{dst:#x}", src)


@pytest.mark.parametrize("src,dst", [(0x1000, 0x1001), (0x100000, 0x100000 + 4 + 0x1000000),
                                     (0x2000000, 0x2000000 + 4 - 0x1000002)])
def test_branches_out_of_reach_or_odd_are_refused(src: int, dst: int) -> None:
    with pytest.raises(EncodingError):
        T2.encode_jump(src, dst)


def test_the_kernels_thumb2_instructions() -> None:
    """asm/insn.h, ftrace.c, probes/kprobes/core.h: the words v5.10 writes."""
    assert T2.site_nop == thumb_asm("nop.w") == bytes.fromhex("aff30080")
    assert disasm(T2.ops.ftrace_nop_replace()) == [("ldr", "lr, [sp], #4")]  # pop.w {lr}
    assert T2.ops.ftrace_nop_replace() == bytes.fromhex("5df804eb")
    assert T2.kprobe_breakpoint(thumb_asm("adds r0, #1")) == bytes.fromhex("18de")
    assert T2.kprobe_breakpoint(thumb_asm("adds.w r0, r0, #1")) == bytes.fromhex("f0f718a0")
    assert T2.syscall_insn == thumb_asm("svc #0")
    assert T2.nop(2) == thumb_asm("nop")
    assert T2.insn_align == 2 and T2.site_len == 4


def test_thumb2_cmodx_rule_is_conservative() -> None:
    """Only 16-bit B, NOP, BKPT and SVC pairs are old-or-new; UDF and every
    32-bit pair are not."""
    b16, nop, bkpt, svc = (thumb_asm(s) for s in ("b #0x10", "nop", "bkpt #0", "svc #1"))
    assert T2.cmodx_safe(nop, b16) and T2.cmodx_safe(bkpt, svc)
    assert not T2.cmodx_safe(nop, thumb_asm("udf #0x18"))
    assert not T2.cmodx_safe(T2.site_nop, T2.encode_jump(0, 0x100))
    assert not T2.cmodx_safe(nop, thumb_asm("adds r0, #1"))


def test_immediate_value_site_is_mov_w() -> None:
    code = thumb_asm("mov.w r3, #0")
    assert T2.ops.imv_load_of_zero(code, 0x1000, 0x1002, 1)
    assert not T2.ops.imv_load_of_zero(code, 0x1000, 0x1000, 1)          # imm8 is 2 bytes in
    assert not T2.ops.imv_load_of_zero(thumb_asm("mov.w r3, #5"), 0x1000, 0x1002, 1)
    assert not T2.ops.imv_load_of_zero(thumb_asm("movs.w r3, #0"), 0x1000, 0x1002, 1)


class _Recorder:
    """A port that records the text protocol's steps instead of running CPUs."""

    def __init__(self) -> None:                # no machine: only the calls matter
        self.steps: list[tuple] = []
        self.stopped = False

    def write_text(self, addr: int, data: bytes) -> None:
        self.steps.append(("store", addr, data, self.stopped))

    def flush_icache(self, begin: int, end: int) -> None:
        self.steps.append(("flush", begin, end, self.stopped))

    def stop_machine(self, fn) -> None:
        self.stopped = True
        fn()
        self.stopped = False
        self.steps.append(("stop_machine returned",))


def test_patch_text_splits_a_wide_instruction_at_2_mod_4() -> None:
    """patch.c __patch_text_real: two halfword stores at 2 mod 4, one word at 0
    mod 4, all inside stop_machine, then the flush."""
    port = _Recorder()
    jump = T2.encode_jump(0x1002, 0x1100)
    T2.ops.text_poke_batch(port, [(0x1002, jump), (0x1008, T2.site_nop)])
    assert port.steps[:3] == [("store", 0x1002, jump[:2], True), ("store", 0x1004, jump[2:], True),
                              ("store", 0x1008, T2.site_nop, True)]
    assert port.steps[3][0] == "flush" and port.steps[-1] == ("stop_machine returned",)
    with pytest.raises(EncodingError):
        T2.ops.text_poke_batch(port, [(0x1001, T2.site_nop)])
    with pytest.raises(EncodingError):          # a 16-bit halfword is no 32-bit instruction
        T2.ops.text_poke_batch(port, [(0x1000, T2.nop(2) * 2)])


# -- Kconfig and the build ------------------------------------------------------------

def test_the_variant_follows_the_config() -> None:
    assert ARM.for_config({}) is ARM and ARM.for_config(T2_CONFIG) is T2
    assert T2.name == "arm" and T2.variant == "THUMB2_KERNEL"
    # v5.10: HAVE_OPTPROBES if !THUMB2_KERNEL
    assert T2.capabilities == ("dynamic_ftrace", "kprobes", "guest_patching")
    assert "optprobes" in ARM.capabilities


@pytest.mark.parametrize("name", [n for n in NAMES if not get_arch(n).variants])
def test_other_arches_have_no_thumb2_option(name: str) -> None:
    from kconfig import KconfigError
    with pytest.raises(KconfigError):
        build(name, overrides=T2_CONFIG)


@pytest.fixture(scope="module")
def kernel():
    return build("arm", overrides=T2_CONFIG)


def test_the_kconfig_menu_drops_what_v5_10_drops(kernel) -> None:
    assert kernel.config["THUMB2_KERNEL"] == "y" and kernel.spec is T2
    for name in ("OPTPROBES", "FUNCTION_GRAPH_TRACER"):
        assert kernel.config.get(name, "n") != "y", name
    assert kernel.config["JUMP_LABEL"] == kernel.config["FUNCTION_TRACER"] == "y"
    assert kernel.config["KPROBES"] == kernel.config["KRETPROBES"] == "y"


def test_the_image_is_thumb_code(kernel) -> None:
    """Every C function is a Thumb function (its symbol's bit 0), kept apart from
    its address; ``_start`` alone is entered in ARM state, as head.S is."""
    image = read_elf(kernel.elf)
    funcs = [s for s in image.symbols.entries if s.kind == "func"]
    arm_state = sorted(s.name for s in funcs if not s.isa)
    assert arm_state == ["_start"]
    assert all(s.addr % 2 == 0 for s in funcs)
    assert image.symbols.pointer("schedule") == image.symbols["schedule"] | 1


def test_a_bare_elf_runs_as_the_variant_it_was_built_for(kernel) -> None:
    """No build, no .config: the kernel's code pointers say Thumb-2."""
    guest = Guest(kernel.elf, workload="fib", size=8)
    assert guest.arch is T2
    assert guest.run().ok
    assert Guest(build("arm").elf, workload="fib", size=2).arch is ARM


def test_every_site_holds_its_thumb2_encoding(kernel) -> None:
    tables = load_tables(kernel.elf, kernel.spec)
    guest = Guest(kernel, workload="fib", size=3)
    assert tables.jump_entries and tables.imv and tables.mcount
    for entry in tables.jump_entries:
        assert guest.machine.read(entry.code, 4) == T2.site_nop
    for entry in tables.imv:
        assert disasm(guest.machine.read(entry.insn, 4))[0][0] == "mov.w"
        assert entry.imv == entry.insn + 2
    for site in tables.mcount:              # converted at boot (ftrace_init)
        assert guest.machine.read(site.address, 4) == T2.ops.ftrace_nop_replace()
        assert guest.machine.read(site.address - 2, 2) in thumb2.PUSH_LR


# -- running it --------------------------------------------------------------------

@pytest.mark.parametrize("workload", ["kmalloc", "hackbench", "getppid", "fib"])
@pytest.mark.parametrize("cpus,quantum", [(1, 10_000), (2, 997), (4, 101)])
def test_every_workload_runs_on_thumb2(kernel, workload: str, cpus: int, quantum: int) -> None:
    """Thousands of turn boundaries and context switches: the Thumb state holds."""
    size = {"kmalloc": 40, "hackbench": 2, "getppid": 40, "fib": 12}[workload]
    guest = Guest(kernel, cpus=cpus, workload=workload, size=size, quantum=quantum, seed=7)
    guest.run()
    assert guest.checksum == reference_checksum(workload, size)


def _events(config: dict[str, str]) -> dict[str, int]:
    """Every marker armed to a counting probe, hackbench on 1 CPU: hits per marker."""
    guest = Guest(build("arm", overrides=config), workload="hackbench", size=2)
    inst = attach(guest)
    hits: dict[str, int] = {}
    for name in inst.tables.marker_names():
        fmt = inst.tables.markers_named(name)[0].format
        inst.markers.marker_probe_register(
            name, fmt, lambda *_a, n=name: hits.__setitem__(n, hits.get(n, 0) + 1))
        inst.markers.marker_arm(name)
    guest.run()
    return hits


def test_markers_on_thumb2_fire_as_on_a32() -> None:
    """Markers armed through their jump-label and immediate-value sites fire the
    same events, as often, on both builds."""
    a32, t2 = _events({}), _events(T2_CONFIG)
    assert t2 and t2 == a32


def test_the_function_tracer_on_thumb2() -> None:
    """Dynamic ftrace: bl ftrace_caller written over pop.w {lr}; each recorded call
    is one a code hook at the function's entry saw, with the same return address."""
    from test_ftrace import Traced, traced, watch_entries
    kernel = build("arm", overrides=T2_CONFIG)
    guest = Guest(kernel, cpus=2, workload="kmalloc", size=20)
    t = Traced(FunctionTracer(guest, load_tables(kernel.elf, kernel.spec)))
    expected = watch_entries(t)
    t.start()
    t.run()
    got = traced(t)
    assert got and got == expected


@pytest.mark.slow
def test_test_static_keys_passes_on_thumb2(capsys) -> None:
    """lib/test_static_keys.c, whose keys flip nop.w and b.w sites. The Thumb-2
    kernel's kprobes suites are test_kprobes.c and test-thumb.c, not test-arm.c
    (Linux builds test-arm.c only without CONFIG_THUMB2_KERNEL)."""
    from kisim.cli import main
    from selftests.run import suites_for
    assert [s.name for s in suites_for("arm", overrides=T2_CONFIG)] == [
        "kprobes", "static_keys", "test-thumb"]
    assert "test-arm" in [s.name for s in suites_for("arm")]
    assert main(["selftest", "--arch", "arm", "--set", "THUMB2_KERNEL=y", "--suite",
                 "static_keys", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    (suite,) = out["suites"]
    assert suite["suite"] == "static_keys" and out["ok"] and suite["passed"] == 54


# -- kprobes (core.c, decode-thumb.c, actions-thumb.c) ---------------------------------

def test_a_breakpoint_is_as_wide_as_its_instruction(kernel) -> None:
    """0xde18 over a 16-bit instruction, 0xf7f0a018 over a 32-bit one (two halfword
    stores where it sits at 2 mod 4); both restored on unregister."""
    from probes.kprobes import Kprobe, Kprobes
    from lab.transparency import instructions
    guest = Guest(kernel, workload="kmalloc", size=10)
    k = Kprobes(guest)
    start, size, _ = next(f for f in guest.image.functions if f[2] == "kmalloc")
    before = guest.machine.read(start, size)
    widths = set()
    for addr in instructions(guest, [(start, size, "kmalloc")]):
        _, length = thumb2.opcode(guest.machine.read(addr, 4))
        try:
            kp = k.register_kprobe(Kprobe(addr=addr))
        except Exception:
            continue
        want = thumb2.thumb16(0xDE18) if length == 2 else thumb2.thumb32(0xF7F0A018)
        assert guest.machine.read(addr, length) == want
        widths.add((length, addr % 4))
        k.unregister_kprobe(kp)
    assert {(2, 0), (2, 2), (4, 0), (4, 2)} <= widths
    assert guest.machine.read(start, size) == before


def test_a_function_pointer_probes_its_function(kernel) -> None:
    """A Thumb function pointer has bit 0 set: core.c clears it (``addr &= ~1``)."""
    from probes.kprobes import Kprobe, Kprobes
    hits = []
    for how in ({"addr": "pointer"}, {"symbol_name": "kmalloc"}):
        guest = Guest(kernel, workload="kmalloc", size=10)
        k = Kprobes(guest)
        if "addr" in how:
            how = {"addr": guest.image.symbols.pointer("kmalloc")}
            assert how["addr"] & 1
        kp = k.register_kprobe(Kprobe(**how))
        assert kp.addr == guest.image.symbols["kmalloc"]
        assert guest.run().ok
        hits.append(kp.hits)
    assert hits[0] == hits[1] > 10


@pytest.mark.parametrize("mode", ["pre", pytest.param("post", marks=pytest.mark.slow),
                                  pytest.param("ret", marks=pytest.mark.slow)])
@pytest.mark.parametrize("workload,size", [("kmalloc", 20),
                                           pytest.param("hackbench", 2, marks=pytest.mark.slow)])
def test_kprobes_on_every_instruction_are_transparent(kernel, mode: str, workload: str,
                                                      size: int) -> None:
    """A kprobe on every instruction of the kernel's slab and scheduler paths: each
    probe's hits equal an unprobed run's count of that instruction, nothing is
    missed, the checksum holds (what ``kisim kprobe --every-instruction`` does)."""
    from lab.transparency import every_instruction
    for target in ("kmalloc", "kfree", "kmem_cache_alloc", "schedule"):
        found = every_instruction(kernel, target, workload=workload, size=size, mode=mode)
        assert found.ok, (target, found.mismatches[:3], found.checksum_ok)
        assert found.probed > 10 and found.hits == found.counted and found.nmissed == 0


def test_kisim_kprobe_on_a_thumb2_kernel(capsys) -> None:
    """``kisim kprobe --set THUMB2_KERNEL=y``: the 16-bit breakpoint over kmalloc's
    first instruction, every hit run by the Thumb handler; no optprobes there."""
    import json
    from kisim.cli import main
    assert main(["kprobe", "--arch", "arm", "--set", "THUMB2_KERNEL=y", "--at", "kmalloc",
                 "--size", "10", "--cycles", "count", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["site_after"].startswith("udf #0x18") and out["hits"] > 10
    assert out["kind"].startswith("t16_") and out["checksum_ok"]
    assert main(["kprobe", "--arch", "arm", "--set", "THUMB2_KERNEL=y", "--at", "kmalloc",
                 "--opt"]) == 2
    assert capsys.readouterr().err.strip() == (
        "kisim: error: EINVAL: kprobe: no optprobes on arm (THUMB2_KERNEL=y)")
