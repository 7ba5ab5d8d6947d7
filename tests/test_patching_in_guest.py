"""CONFIG_PATCHING_IN_GUEST: the kernel patches itself through v5.10's own
patching C (kernel/patching/, arches/<arch>/patching.c; sim/self_patching.py).

The features (jump labels, ftrace, kprobes with optprobes, markers) write
the same text through the guest as through the host patcher, on the same
image; the guest's primitive really runs (its calls are counted, and fail
the tests when the option does nothing); other CPUs take the IPIs it sends
in the kernel's interrupt entry while a workload runs; the self-tests and
the transparency run pass on that build. Cpu.call, which runs the
primitive, keeps a running slice's count when nested in a trap handler.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import kbuild
import kconfig
from arches import ARCHES, get_arch
from kisim.cli import main
from lab.transparency import every_instruction
from patcher.ftrace import ftrace_for
from patcher.instrument import attach
from probes.kprobes import Kprobe, Kprobes
from selftests.run import run_suite, suites_for
from sim import ConfigError, Machine
from sim.asm import assemble, disassemble
from sim.guest import Guest
from sim.machine import PAGE
from sim.self_patching import SelfPatching
from sim.snippet import SNIPPET_BASE

ON = {"PATCHING_IN_GUEST": "y"}
GUEST_ARCHES = sorted(a for a in ARCHES if "guest_patching" in get_arch(a).capabilities)
#: The IPIs each other CPU takes when one jump-label site flips: v5.10's x86
#: text_poke_bp() syncs three times (after the int3, the tail, the first byte),
#: ARM patch_text() is one stop_machine(), PowerPC patch_instruction() sends
#: none (icbi is broadcast).
IPIS_PER_FLIP = {"x86_64": 3, "arm": 1, "ppc32": 0}
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "flip_key.c"


@pytest.fixture(scope="module", params=GUEST_ARCHES)
def kernel(request: pytest.FixtureRequest) -> kbuild.Build:
    return kbuild.build(request.param, overrides=ON)


def _text(guest: Guest) -> bytes:
    start, end = guest.image.symbols["_text"], guest.image.symbols["_etext"]
    return guest.machine.read(start, end - start)


def test_every_arch_with_the_capability_has_the_option() -> None:
    assert GUEST_ARCHES == sorted(IPIS_PER_FLIP)
    for name in GUEST_ARCHES:
        build = kbuild.build(name, overrides=ON)
        assert build.config["PATCHING_IN_GUEST"] == "y"


@pytest.mark.parametrize("name,variant", [(a, None) for a in sorted(ARCHES)]
                         + [("arm", "THUMB2_KERNEL")])
def test_have_patching_in_guest_is_the_arch_capability(name, variant) -> None:
    """The arch's Kconfig selects HAVE_PATCHING_IN_GUEST exactly where its ops (of
    that variant) have the guest_patching capability."""
    kconf = kconfig.load(name)
    if variant is not None:
        kconf.syms[variant].set_value("y")
    spec = get_arch(name).for_config({variant: "y"} if variant else {})
    have = kconf.syms["HAVE_PATCHING_IN_GUEST"].str_value == "y"
    assert have == ("guest_patching" in spec.capabilities)
    assert kconf.syms["PATCHING_IN_GUEST"].str_value == "n"        # off by default


def test_the_patching_code_is_built_in_only_with_the_option(kernel) -> None:
    syms = Guest(kernel).image.symbols
    assert syms["__patching_text_start"] < syms["__patching_text_end"]
    assert syms["__patching_text_start"] <= syms["pc_patch"] < syms["__patching_text_end"]
    plain = Guest(kbuild.build(kernel.arch)).image.symbols
    assert "pc_patch" not in plain
    assert plain["__patching_text_start"] == plain["__patching_text_end"]


def test_the_patching_code_is_not_traced(kernel) -> None:
    """v5.10 builds its patching code without -pg: ftrace patches through it."""
    assert kernel.config["FUNCTION_TRACER"] == "y"
    syms = Guest(kernel).image.symbols
    sites = kbuild.mcount_call_sites(kernel.elf, get_arch(kernel.arch))
    assert sites
    assert not [s for s in sites
                if syms["__patching_text_start"] <= s < syms["__patching_text_end"]]


def _operations(guest: Guest) -> list[tuple[str, bytes, int | None]]:
    """Every feature's patching on one guest, from the host: each step's name, the
    text after it, and the kernel primitive's calls so far (None: the host patches)."""
    steps: list[tuple[str, bytes, int | None]] = []

    def step(name: str) -> None:
        sp = guest.self_patching if guest.machine.text_poke is not None else None
        steps.append((name, _text(guest), sp.calls if sp else None))

    inst = attach(guest)
    keys = sorted({e.key for e in inst.tables.jump_entries})
    for key in keys:
        inst.keys.static_key_slow_inc(key)
    step("jump labels on")
    markers = sorted({m.name for m in inst.tables.markers})[:4]
    for name in markers:
        fmt = inst.tables.markers_named(name)[0].format
        inst.markers.marker_probe_register(name, fmt, lambda _e, _p: None)
        inst.markers.marker_arm(name)
    step("markers armed")
    ftrace = ftrace_for(guest, inst.tables)
    ftrace.register_ftrace_function("function_trace_call")
    step("ftrace on")
    ftrace.unregister_ftrace_function()
    step("ftrace off")
    kprobes = Kprobes(guest, text=inst.text, tables=inst.tables)
    probes = [kprobes.register_kprobe(Kprobe(symbol_name=name,
                                             pre_handler="kprobe_empty_pre_handler"))
              for name in ("kmalloc", "kfree")]
    step("kprobes armed")
    if "optprobes" in guest.arch.capabilities:
        for kp in probes:
            kprobes.optimize_now(kp)
        step("optprobes")
    for kp in probes:
        kprobes.unregister_kprobe(kp)
    for kp in kprobes.arch_probes:          # the kernel's own (PowerPC's trampoline) go too
        kprobes.unregister_kprobe(kp)
    for name in markers:
        inst.markers.marker_disarm(name)
    for key in keys:
        inst.keys.static_key_slow_dec(key)
    step("everything off")
    return steps


def test_guest_and_host_patchers_write_the_same_text(kernel) -> None:
    """One image, patched once by the kernel's own code and once by the host's
    Python protocol (``machine.text_poke`` cleared): the same text after every
    step, and every step ran the kernel's primitive."""
    guest, host = Guest(kernel, cpus=2), Guest(kernel, cpus=2)
    host.machine.text_poke = None
    before = _text(guest)
    mine, theirs = _operations(guest), _operations(host)
    assert [m[0] for m in mine] == [t[0] for t in theirs]
    for (name, text, _), (_, expected, _) in zip(mine, theirs):
        assert text == expected, name
    assert mine[0][1] != before and mine[-1][1] == before
    calls = [0] + [m[2] for m in mine]
    assert all(b > a for a, b in zip(calls, calls[1:])), calls
    assert all(t[2] is None for t in theirs)
    # the host's calls ran on CPU 0 at no CPU's cost, as the host patcher's; no CPU
    # is online before boot, so none was interrupted
    assert guest.self_patching.host_instructions > 0
    assert guest.machine.cpus[1].instructions == 0
    assert not guest.self_patching.ipis.taken


def test_patching_mid_run_interrupts_the_other_cpus(kernel) -> None:
    """4 CPUs run a workload; from the host, every static key goes on after a few
    turns and off later. The other CPUs take the IPIs in the kernel's entry
    (not on PowerPC, whose primitive sends none) and the workload's checksum
    is right."""
    guest = Guest(kernel, cpus=4, workload="hackbench", seed=1)
    inst = attach(guest)
    keys = sorted({e.key for e in inst.tables.jump_entries})
    turns = [0]

    def on_turn(_machine) -> None:
        turns[0] += 1
        if turns[0] == 7:
            for key in keys:
                inst.keys.static_key_slow_inc(key)
        if turns[0] == 15:
            for key in keys:
                inst.keys.static_key_slow_dec(key)

    result = guest.run(on_turn=on_turn)
    assert result.ok
    sp = guest.self_patching
    assert sp.calls >= 2 * len(keys) > 0
    taken = [sp.ipis.taken[i] for i in range(1, 4)]
    if IPIS_PER_FLIP[kernel.arch]:
        assert all(n > 0 for n in taken), taken
        assert all(guest.machine.cpus[i].events["ipi"] == taken[i - 1] for i in range(1, 4))
    else:
        assert taken == [0, 0, 0]
    assert not sp.returns and not any(sp.ipis.pending)


@pytest.mark.parametrize("hooked", [True, False])
def test_the_primitives_synchronizations_reach_the_fetch_model(kernel, hooked) -> None:
    """A key flipped mid-run on 3 CPUs: the text the primitive stored is stale on
    every CPU until that CPU executes what synchronizes its fetch (x86 IRETQ in
    sync_core(), ARM the IPI's exception return and isb; PowerPC the patcher's
    isync, and the others miss on the line after the broadcast icbi). Negative
    control: with those instructions not observed, the stores stay stale."""
    guest = Guest(kernel, cpus=3, workload="hackbench", seed=1)
    sp = guest.self_patching
    if not hooked:
        sp.events = {}
    inst = attach(guest)
    key = inst.tables.jump_entries[0].key
    site = next(e.code for e in inst.tables.jump_entries if e.key == key)
    stale: list[list[bool]] = []
    turns = [0]

    def on_turn(machine) -> None:
        turns[0] += 1
        if turns[0] == 7:
            inst.keys.static_key_slow_inc(key)
            stale.append([any(b <= site < e for b, e in machine.stale(i)) for i in range(3)])

    assert guest.run(on_turn=on_turn).ok
    patcher_only = not IPIS_PER_FLIP[kernel.arch]      # PowerPC: the others are invalidated
    if hooked:
        assert stale == [[False, patcher_only, patcher_only]]
    else:
        assert stale == [[True, True, True]]


@pytest.mark.slow
def test_a_module_flipping_a_key_interrupts_each_cpu_as_v5_10_does(kernel) -> None:
    """examples/flip_key.c on 4 CPUs: each flip is the kernel's primitive on the
    CPU running the workload, which pays for it; every other CPU takes the
    primitive's IPIs for every flip (after it comes online)."""
    build = kbuild.build(kernel.arch, overrides=ON, modules=[EXAMPLE])
    guest = Guest(build, cpus=4, workload="flip_key:run", size=20, quantum=1000, expect=20)
    result = guest.run()
    assert result.ok
    assert result.patching["calls"] == 40 and result.patching["host_instructions"] == 0
    assert result.patching["ipis_taken"] == [0] + [40 * IPIS_PER_FLIP[kernel.arch]] * 3
    assert result.to_json()["patching"] == result.patching


def test_nested_calls_count_the_same_in_both_turn_ends(kernel) -> None:
    """The calls nested in hypercalls keep the running slice's count: ending turns
    with Unicorn's counter or in the reference counting loop (docs/machine.md,
    "Ending a turn") gives the same instructions on every CPU."""
    build = kbuild.build(kernel.arch, overrides=ON, modules=[EXAMPLE])
    runs = []
    for turn_end in ("counter", "spin"):
        guest = Guest(build, cpus=4, workload="flip_key:run", size=6, quantum=700, expect=6)
        guest.machine.turn_end = turn_end
        result = guest.run()
        assert result.ok
        runs.append(([c["instructions"] for c in result.per_cpu], result.patching))
    assert runs[0] == runs[1]


def test_patching_mid_run_is_deterministic(kernel) -> None:
    def run() -> tuple:
        guest = Guest(kernel, cpus=3, workload="hackbench", seed=5)
        inst = attach(guest)
        key = inst.tables.jump_entries[0].key
        turns = [0]

        def on_turn(_machine) -> None:
            turns[0] += 1
            if turns[0] == 5:
                inst.keys.static_key_slow_inc(key)

        result = guest.run(on_turn=on_turn)
        return (result.checksum, [c.instructions for c in guest.machine.cpus],
                dict(guest.self_patching.ipis.taken), _text(guest))

    assert run() == run()


def test_without_the_option_nothing_runs_in_the_guest() -> None:
    guest = Guest(kbuild.build(GUEST_ARCHES[0]))
    assert guest.self_patching is None and guest.machine.text_poke is None


@pytest.mark.slow
@pytest.mark.parametrize("arch_name", GUEST_ARCHES)
def test_selftests_pass_with_the_option(arch_name, monkeypatch) -> None:
    """Every suite of the arch (lib/test_kprobes.c, test_static_keys.c, ARM
    test-arm.c, PowerPC test_emulate_step.c), its patching through the guest."""
    calls = []
    real = SelfPatching._patch

    def counted(self, index, sites):
        calls.append(len(sites))
        return real(self, index, sites)

    monkeypatch.setattr(SelfPatching, "_patch", counted)
    for suite in suites_for(arch_name, overrides=ON):
        result = run_suite(suite, arch_name, overrides=ON)
        failed = [c for c in result.cases if c.status.name == "FAILED"]
        assert not failed, (suite.name, failed[:3])
        assert result.cases
    assert calls


@pytest.mark.transparency
@pytest.mark.parametrize("mode", ["pre", "opt"])
def test_transparency_run_passes_with_the_option(kernel, mode) -> None:
    if mode == "opt" and "optprobes" not in get_arch(kernel.arch).capabilities:
        pytest.skip("no optprobes on this arch (Linux: PowerPC only if PPC64)")
    result = every_instruction(kernel, "kmalloc", workload="kmalloc", size=200, mode=mode)
    assert result.ok and result.probed > 20 and not result.mismatches
    assert mode != "opt" or result.optimized > 0


# -- Cpu.call: the host's call into the guest ----------------------------------------
FUNC = {"x86_64": "mov rax, {data}; mov qword ptr [rax], 7; ret",
        "arm": "movw r0, #{lo}; movt r0, #{hi}; mov r1, #7; str r1, [r0]; bx lr",
        "ppc32": "lis 3, {hi}; ori 3, 3, {lo}; li 4, 7; stw 4, 0(3); blr"}
FUNC_BASE, DATA = 0x40000, 0x50000


def _call_machine(arch, quantum: int) -> tuple[Machine, int, int]:
    m = Machine(arch, 1, quantum=quantum)
    body = arch.nop(arch.insn_align) * 9
    m.load_code(arch.syscall_insn + body + arch.syscall_insn, SNIPPET_BASE)
    func = assemble(arch, FUNC[arch.name].format(data=DATA, lo=DATA & 0xFFFF,
                                                 hi=DATA >> 16), FUNC_BASE)
    m.map(FUNC_BASE, PAGE, "rwx")
    m.write(FUNC_BASE, func + arch.nop(arch.insn_align))
    m.map(DATA, PAGE, "rw")
    return m, len(disassemble(arch, func, FUNC_BASE)), FUNC_BASE + len(func)


@pytest.mark.parametrize("quantum", [1, 3, 10_000])
def test_call_between_turns_and_nested_in_a_trap_keeps_counts(arch, quantum) -> None:
    m, length, ret = _call_machine(arch, quantum)
    cpu = m.cpus[0]
    seen = []

    def on_trap(c, trap):
        if trap.address == SNIPPET_BASE:          # the first: call the function nested
            m.write_word(DATA, 0, 4)
            regs = c.registers()
            assert c.call(FUNC_BASE, (), ret, 100)
            seen.append((m.read_word(DATA, 4), c.registers() == regs))
            return None
        c.halt()

    m.on_trap = on_trap
    regs = cpu.registers()
    assert cpu.call(FUNC_BASE, (), ret, 100)          # between turns
    assert m.read_word(DATA, 4) == 7 and cpu.registers() == regs
    assert cpu.instructions == length
    m.run(max_instructions=1000)
    assert seen == [(7, True)]
    assert cpu.instructions == 2 * length + 11        # syscall, 9 nops, syscall


def test_call_that_does_not_return_in_budget_says_so(arch) -> None:
    m, length, ret = _call_machine(arch, 10_000)
    assert not m.cpus[0].call(FUNC_BASE, (), ret, length - 1)
    assert m.cpus[0].instructions == length - 1


def test_bad_alias_is_refused(arch) -> None:
    m = Machine(arch, 1)
    m.map(0x10000, PAGE)
    m.map(0x20000, PAGE)
    with pytest.raises(ConfigError, match="over a mapping"):
        m.map_alias(0x20000, 0x10000)
    with pytest.raises(ConfigError, match="not mapped"):
        m.map_alias(0x80000, 0x30000)
    with pytest.raises(ConfigError, match="page-aligned"):
        m.map_alias(0x80010, 0x10000)


# -- the command line -------------------------------------------------------------------
def test_boot_prints_what_the_kernel_patched(capsys) -> None:
    argv = ["boot", "--arch", "x86_64", "--cpus", "4", "--quantum", "1000", "--set",
            "PATCHING_IN_GUEST=y", "--module", str(EXAMPLE), "--workload", "flip_key:run",
            "--size", "20", "--expect", "0x14"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "patching: the kernel's own code (PATCHING_IN_GUEST), 40 calls; IPIs taken " \
           "per CPU: 0, 120, 120, 120" in out
    assert main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["patching"]["ipis_taken"] == [0, 120, 120, 120]


@pytest.mark.parametrize("argv", [
    ["patchcheck", "--arch", "x86_64", "--kernel", "--seeds", "1", "--set", "PATCHING_IN_GUEST=y"],
])
def test_what_is_not_supported_is_one_line(argv, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("kisim: error: ") and err.count("\n") == 1
