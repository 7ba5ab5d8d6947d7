"""The machine core: exact counts, determinism, coherence, traps and faults."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
import unicorn

from arches import ARCHES, TrapKind
from sim import ConfigError, GuestFault, Machine, UNHANDLED
from sim.machine import SPIN_BASE as SPIN_BASE_FOR_TEST, TrapPriority
from sim.errors import REPLAY_LIMIT
from sim.native import new_engine, use_virtual_tlb
from sim.textlock import LockNotHeld
from sim.asm import assemble, disassemble
from sim.snippet import SNIPPET_BASE, load_snippet, run_snippet
from sim.timing import TimingModel

# A counted loop with a breakpoint in its body, per arch: (setup, body, counter reg).
LOOP = {
    "x86_64": ("mov rcx, {n}", "l: int3; add rax, rcx; dec rcx; jnz l", "rax"),
    "arm": ("mov r1, #{n}", "l: bkpt #0; add r0, r0, r1; subs r1, r1, #1; bne l", "r0"),
    "ppc32": ("li 4, {n}", "l: tw 31, 0, 0; add 3, 3, 4; addi 4, 4, -1; cmpwi 4, 0; bne l", "r3"),
}
# Load from an unmapped address.
UNMAPPED = {"x86_64": "mov rax, 0x12345678; mov rbx, [rax]",
            "arm": "movw r0, #0x5678; movt r0, #0x1234; ldr r1, [r0]",
            "ppc32": "lis 3, 0x1234; ori 3, 3, 0x5678; lwz 4, 0(3)"}
# A branch to itself, per arch.
LOOP_SELF = {"x86_64": "ebfe", "arm": "feffffea", "ppc32": "48000000"}
# Set the return register to 1, with the same length when changed to 2.
SET = {"x86_64": ("mov eax, {v}", "rax"), "arm": ("mov r0, #{v}", "r0"), "ppc32": ("li 3, {v}", "r3")}


def loop_text(arch, n: int) -> str:
    setup, body, _ = LOOP[arch.name]
    return f"{setup.format(n=n)}; {body}"


def body_len(arch) -> int:
    return len(disassemble(arch, assemble(arch, LOOP[arch.name][1], SNIPPET_BASE)))


@pytest.mark.parametrize("quantum,seed", [(1, None), (3, None), (10_000, None), (50, 7)])
def test_counts_are_exact_whatever_the_turns(arch, quantum, seed) -> None:
    n = 25
    run = run_snippet(arch, loop_text(arch, n), cpus=2, quantum=quantum, seed=seed)
    expected = 1 + n * body_len(arch)
    for row in run.per_cpu():
        assert row["instructions"] == expected
        assert row["registers"][LOOP[arch.name][2]] == n * (n + 1) // 2
    assert len(run.traps) == 2 * n


def test_modeled_cycles_are_instructions_plus_charged_traps(arch) -> None:
    run = run_snippet(arch, loop_text(arch, 10))
    row = run.per_cpu()[0]
    assert row["events"] == {"trap": 10}
    assert row["modeled_cycles"] == row["instructions"] * arch.cost("insn") + 10 * arch.cost("trap")


@pytest.mark.slow
def test_same_seed_same_run_bit_for_bit(arch) -> None:
    def race(seed: int) -> tuple:
        # Two CPUs do an unlocked read-modify-write on one shared word.
        run = load_snippet(arch, _racy_increment(arch), cpus=2, quantum=5, seed=seed)
        run.machine.map(0x80000, 0x1000)
        run.machine.run(max_instructions=1_000_000)
        return (run.machine.read(0x80000, 4),
                tuple((c.instructions, c.modeled_cycles) for c in run.machine.cpus))
    assert race(1) == race(1)
    outcomes = {race(seed)[0] for seed in range(8)}
    assert len(outcomes) > 1, "different seeds should interleave differently"


def _racy_increment(arch) -> str:
    return {
        "x86_64": "mov rcx, 200; l: mov eax, [0x80000]; inc eax; mov [0x80000], eax; dec rcx; jnz l",
        "arm": "mov r1, #200; mov r2, #0x80000; l: ldr r0, [r2]; add r0, r0, #1; str r0, [r2]; "
               "subs r1, r1, #1; bne l",
        "ppc32": "li 4, 200; lis 5, 8; l: lwz 3, 0(5); addi 3, 3, 1; stw 3, 0(5); "
                 "addi 4, 4, -1; cmpwi 4, 0; bne l",
    }[arch.name]


def test_cpus_share_one_memory(arch) -> None:
    run = load_snippet(arch, _racy_increment(arch), cpus=3, quantum=100_000)
    run.machine.map(0x80000, 0x1000)
    run.machine.run()
    # Whole-turn quanta never split the loop: no update is lost.
    assert run.machine.read_word(0x80000, 4) == 3 * 200


@pytest.mark.parametrize("bad", [0, 9])
def test_cpu_count_out_of_range(bad) -> None:
    with pytest.raises(ConfigError, match="out of range 1..8"):
        Machine("arm", bad)


def test_seeded_quanta_stay_in_range() -> None:
    m = Machine("arm", quantum=20, seed=3)
    draws = [m.next_quantum() for _ in range(500)]
    assert min(draws) >= 1 and max(draws) <= 20 and len(set(draws)) > 10
    assert draws == [Machine("arm", quantum=20, seed=3).next_quantum() for _ in range(1)] + draws[1:]


def test_text_write_is_stale_until_sync(arch) -> None:
    text, reg = SET[arch.name]
    run = load_snippet(arch, text.format(v=1), cpus=2)
    m = run.machine

    def rerun(index: int) -> int:
        cpu = m.cpus[index]
        cpu.halted, cpu.pc = False, run.base
        m.step(index, 100)
        return cpu.reg(reg)

    assert [rerun(0), rerun(1)] == [1, 1]
    new = assemble(arch, text.format(v=2), run.base)
    assert len(new) == len(run.code)
    with m.text_mutex:
        m.write_text(run.base, new)
    assert [rerun(0), rerun(1)] == [1, 1], "no CPU may fetch new text before a sync"
    m.sync_cpu(0)
    assert [rerun(0), rerun(1)] == [2, 1], "only the synced CPU sees the new text"
    m.sync_all()
    assert [rerun(0), rerun(1)] == [2, 2]
    # CPU 0 synced itself, then the host's round synced both as other CPUs
    sync, charged = arch.text_sync, ("ipi", "serialize")
    events = [Counter({e: cpu.events[e] for e in charged if cpu.events[e]}) for cpu in m.cpus]
    assert events == [Counter(sync.round_local) + Counter(sync.round_remote),
                      Counter(sync.round_remote)]
    assert m.sync_rounds == 1 and m.stale(0) == m.stale(1) == []


def test_icache_flush_charges_lines_to_the_patching_cpu(arch) -> None:
    """100 bytes are ceil(100 / line) lines of the reference core's L1I (32 or 64 bytes)."""
    m = Machine(arch, 2)
    m.flush_icache(0x1000, 0x1000 + 100, cpu=1)
    lines = -(-100 // arch.icache_line)
    assert m.cpus[1].events["icache_flush"] == lines and m.cpus[0].events["icache_flush"] == 0
    # and the context synchronization the flush ends with (ARM isb, PowerPC isync)
    assert m.cpus[1].event_cycles == (lines * arch.cost("icache_flush")
                                      + sum(arch.cost(e) for e in arch.text_sync.flush))


def test_traps_reach_one_dispatcher_with_normalized_addresses(arch) -> None:
    kprobe = arch.kprobe_breakpoint(arch.nop(arch.insn_align))
    nop = arch.nop(arch.insn_align)
    code = nop + kprobe + nop + arch.syscall_insn + nop + arch.syscall_insn
    m = Machine(arch)
    base = SNIPPET_BASE
    m.load_code(code, base)
    seen = []

    def on_trap(cpu, trap):
        seen.append((trap.kind, trap.address - base))
        if len(seen) == 2:
            return base + len(code) - len(arch.syscall_insn) - len(nop)  # redirect
        if len(seen) == 3:
            cpu.halt()
        return None

    m.on_trap = on_trap
    m.run()
    bp_kind = TrapKind.UNDEFINED if arch.name == "arm" else TrapKind.BREAKPOINT
    sys_at = 2 * len(nop) + len(kprobe)
    end_at = len(code) - len(arch.syscall_insn)
    assert seen == [(bp_kind, len(nop)), (TrapKind.SYSCALL, sys_at), (TrapKind.SYSCALL, end_at)]
    # nop, breakpoint, nop, syscall, (redirected) nop, syscall
    assert m.cpus[0].instructions == 6


def test_arm_bkpt_resumes_past_itself() -> None:
    run = run_snippet(load_arch("arm"), "bkpt #1; mov r0, #7")
    assert run.per_cpu()[0]["registers"]["r0"] == 7 and len(run.traps) == 1


def load_arch(name):
    from arches import get_arch
    return get_arch(name)


def test_unmapped_access_faults_with_a_full_report(arch) -> None:
    with pytest.raises(GuestFault) as info:
        run_snippet(arch, UNMAPPED[arch.name], cpus=2)
    fault = info.value
    last = disassemble(arch, assemble(arch, UNMAPPED[arch.name], SNIPPET_BASE), SNIPPET_BASE)[-1]
    assert fault.arch == arch.name and fault.cpu == 0
    assert fault.reason == "unmapped memory read"
    assert fault.pc == last.address and last.mnemonic in fault.insn
    assert 0x12345678 in fault.registers.values() or 0x12340000 in fault.registers.values()
    assert fault.last_blocks and fault.last_blocks[0] == SNIPPET_BASE
    report = fault.report()
    assert f"CPU 0, PC {fault.pc:#x}" in report and "registers:" in report


def test_a_machine_without_the_trail_faults_with_no_last_blocks(arch) -> None:
    """``Machine(trail=False)`` (the patch checker's, which replays by seed) saves no
    turn start, so a fault names no blocks; the rest of the report is as with it."""
    run = load_snippet(arch, UNMAPPED[arch.name], 2)
    run.machine.trail = False
    with pytest.raises(GuestFault) as info:
        run.machine.run(max_instructions=10_000)
    assert info.value.last_blocks == [] and info.value.reason == "unmapped memory read"
    assert all(cpu._turn_start is None for cpu in run.machine.cpus)


def test_a_turn_too_long_to_replay_faults_without_its_last_blocks(arch) -> None:
    """A fault report replays its turn for the last blocks only up to REPLAY_LIMIT
    instructions (a --quantum of 10**9 took minutes, deaf to Ctrl-C), and says so."""
    run = load_snippet(arch, UNMAPPED[arch.name], 1, quantum=REPLAY_LIMIT + 1)
    with pytest.raises(GuestFault) as info:
        run.machine.run(max_instructions=REPLAY_LIMIT * 2)
    assert info.value.last_blocks is None
    assert "not replayed: the turn ran over 10,000,000 instructions" in info.value.report()
    run = load_snippet(arch, UNMAPPED[arch.name], 1, quantum=REPLAY_LIMIT)
    with pytest.raises(GuestFault) as info:
        run.machine.run(max_instructions=REPLAY_LIMIT * 2)
    assert info.value.last_blocks and info.value.last_blocks[0] == SNIPPET_BASE


def test_unicorn_gets_64_bit_addresses_counts_and_registers_whole() -> None:
    """The machine calls ``uc_emu_start`` and ``uc_reg_*`` without the binding's
    prototypes (``sim/machine.py``, ``_unprototyped``): an address above 4 GiB, a
    count above 2**32 and a 64-bit register value reach Unicorn whole. Cut to 32
    bits, the code would be unmapped and the slice would end after 5 instructions,
    before the ``ud2``."""
    machine = Machine("x86_64")
    base = 0x1_2345_0000
    machine.load_code(bytes.fromhex("90" * 10 + "0f0b"), base)      # ten nops, ud2
    cpu = machine.cpus[0]
    cpu.set_reg("rax", (1 << 64) - 2)
    cpu.set_regs(("rbx", "rcx"), (1 << 63, (1 << 32) + 7))
    with pytest.raises(GuestFault, match="invalid instruction") as info:
        machine.step(0, (1 << 32) + 5)
    assert info.value.pc == base + 10
    assert cpu.reg("rax") == (1 << 64) - 2 and cpu.regs(("rbx", "rcx")) == [1 << 63,
                                                                          (1 << 32) + 7]


def test_a_hooks_exception_comes_out_of_the_slice(arch) -> None:
    """``sim.machine.emu_start`` raises what a hook left in ``uc._hook_exception``,
    as the binding's ``emu_start`` does (:mod:`sim.uchook`)."""
    machine = Machine(arch.name)
    machine.load_code(bytes.fromhex(LOOP_SELF[arch.name]), 0x10000)

    def hook(_cpu: object) -> None:
        raise KeyError("from the hook")

    machine.watch(0x10000, hook)
    with pytest.raises(KeyError, match="from the hook"):
        machine.step(0, 100)


@pytest.mark.parametrize("kind", ["invalid", "budget"])
def test_invalid_instruction_and_budget_fault(arch, kind) -> None:
    if kind == "invalid":
        bad = {"x86_64": "ud2", "arm": "udf #3", "ppc32": ".long 0"}[arch.name]
        with pytest.raises(GuestFault, match="invalid instruction"):
            run_snippet(arch, f"{SET[arch.name][0].format(v=1)}; {bad}")
    else:
        spin = {"x86_64": "l: jmp l", "arm": "l: b l", "ppc32": "l: b l"}[arch.name]
        with pytest.raises(GuestFault, match="budget of 5000 exhausted") as info:
            run_snippet(arch, spin, max_instructions=5000, quantum=1000)
        assert info.value.instructions == 5000


def test_unhandled_trap_faults(arch) -> None:
    m = Machine(arch)
    m.load_code(arch.nop(arch.insn_align) + arch.syscall_insn, SNIPPET_BASE)
    m.on_trap = lambda cpu, trap: UNHANDLED
    with pytest.raises(GuestFault, match="unhandled syscall trap"):
        m.run(max_instructions=100)


# -- ELF loading ---------------------------------------------------------

ELF_ASM = {
    "x86_64": "_start: mov eax, dword ptr [answer]\n syscall\n",
    "arm": "_start: ldr r0, =answer\n ldr r0, [r0]\n svc #0\n .ltorg\n",
    "ppc32": "_start: lis 4, answer@ha\n lwz 3, answer@l(4)\n sc\n",
}


@pytest.fixture(scope="module")
def tiny_elves(tmp_path_factory) -> dict:
    """A two-section static ELF per arch, linked by the pinned zig toolchain."""
    from arches import ARCHES
    out = {}
    for name, arch in ARCHES.items():
        d = tmp_path_factory.mktemp(name)
        src = d / "t.S"
        src.write_text(("\t.intel_syntax noprefix\n" if name == "x86_64" else "")
                       + "\t.text\n\t.globl _start\n" + ELF_ASM[name]
                       + "\t.data\n\t.globl answer\nanswer: .long 0x2a\n")
        lds = d / "t.lds"
        lds.write_text("ENTRY(_start)\nSECTIONS { . = 0x400000; .text : { *(.text) }\n"
                       "  . = ALIGN(0x1000); .data : { *(.data) } }\n")
        elf = d / "t.elf"
        subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", arch.cc_target,
                        "-nostdlib", "-static", "-fno-pic", f"-Wl,-T,{lds}",
                        str(src), "-o", str(elf)],
                       check=True, capture_output=True)
        out[name] = elf
    return out


def test_load_elf_segments_symbols_sections(arch, tiny_elves) -> None:
    m = Machine(arch)
    image = m.load_elf(str(tiny_elves[arch.name]))
    assert image.entry == image.symbols["_start"] == 0x400000
    assert {".text", ".data"} <= set(image.sections)
    data = image.sections[".data"]
    assert data.addr == image.symbols["answer"]
    assert m.read_word(data.addr, 4) == 0x2a
    assert not any(name.startswith("$") for name in image.symbols)   # ARM mapping symbols
    m.cpus[0].pc = image.entry
    m.on_trap = lambda cpu, trap: cpu.halt()
    m.run(max_instructions=100)
    assert m.cpus[0].reg(arch.ret) & 0xFFFFFFFF == 0x2a


def test_load_elf_refuses_other_arch_and_garbage(arch, tiny_elves, tmp_path) -> None:
    other = next(n for n in tiny_elves if n != arch.name)
    with pytest.raises(ConfigError, match="ELF is for"):
        Machine(arch).load_elf(str(tiny_elves[other]))
    junk = tmp_path / "junk"
    junk.write_bytes(b"not an elf at all")
    with pytest.raises(ConfigError, match="not a valid ELF"):
        Machine(arch).load_elf(str(junk))


def test_trap_handlers_are_offered_the_trap_in_order(arch) -> None:
    m = Machine(arch)
    m.load_code(arch.syscall_insn + arch.syscall_insn, SNIPPET_BASE)
    calls = []

    def first(cpu, trap):
        calls.append("first")
        if trap.address == SNIPPET_BASE:
            return None
        return UNHANDLED

    def fallback(cpu, trap):
        calls.append("fallback")
        cpu.halt()

    m.on_trap = fallback
    m.add_trap_handler(first, TrapPriority.GUEST)
    m.run(max_instructions=10)
    assert calls == ["first", "first", "fallback"]


def test_trap_handlers_run_by_priority_not_insertion(arch) -> None:
    """Text-poke breakpoints first, then kprobes, then the guest, whatever the order added."""
    m = Machine(arch)
    m.load_code(arch.syscall_insn, SNIPPET_BASE)
    calls = []

    def handler(name):
        def on_trap(cpu, trap):
            calls.append(name)
            if name == "guest":
                cpu.halt()
                return None
            return UNHANDLED
        return on_trap

    for name, priority in (("guest", TrapPriority.GUEST), ("kprobes", TrapPriority.KPROBES),
                           ("text_poke", TrapPriority.TEXT_POKE)):
        m.add_trap_handler(handler(name), priority)
    m.run(max_instructions=10)
    assert calls == ["text_poke", "kprobes", "guest"]
    with pytest.raises(TypeError, match="TrapPriority"):
        m.add_trap_handler(handler("x"), 0)


def test_write_text_needs_the_text_mutex(arch) -> None:
    m = Machine(arch)
    m.load_code(arch.syscall_insn, SNIPPET_BASE)
    with pytest.raises(LockNotHeld, match="without holding text_mutex"):
        m.write_text(SNIPPET_BASE, b"\0")
    assert m.read(SNIPPET_BASE, len(arch.syscall_insn)) == arch.syscall_insn
    assert m.stale(0) == []
    with m.text_mutex:
        m.write_text(SNIPPET_BASE, b"\0")
    assert m.read(SNIPPET_BASE, 1) == b"\0" and m.stale(0) == [(SNIPPET_BASE, SNIPPET_BASE + 1)]


@pytest.mark.parametrize("call, error, message", [
    (lambda a: Machine(None), TypeError, "arch must be"),
    (lambda a: Machine(a, cpus="2"), TypeError, "cpus must be an int"),
    (lambda a: Machine(a).sync_cpu(99), ConfigError, "CPU 99 out of range"),
    (lambda a: Machine(a).step(-1, 1), ConfigError, "CPU -1 out of range"),
    (lambda a: Machine(a).map(-4096, 4096), ConfigError, "outside the"),
    (lambda a: Machine(a).map(0x10000, 4096, "rwz"), ConfigError, "permissions"),
    (lambda a: Machine(a).write_word(SPIN_BASE_FOR_TEST, 1 << 40, 4), ValueError, "does not fit"),
    (lambda a: Machine(a).read(SPIN_BASE_FOR_TEST, -1), ValueError, "must not be negative"),
    (lambda a: Machine(a).read(SPIN_BASE_FOR_TEST + 0x800, 0x1000), ConfigError, "unmapped"),
])
def test_machine_api_errors_are_one_line(arch, call, error, message) -> None:
    with pytest.raises(error, match=message) as err:
        call(arch)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("inside", [False, True])
def test_unwatch_takes_effect_from_the_next_slice(arch, inside: bool) -> None:
    """A watch fires on every pass until removed, even from its own callback;
    removal is deferred to the next slice, which then runs without it."""
    nop = arch.nop(arch.insn_align)
    m = Machine(arch, 1)
    m.load_code(nop * 8, 0x10000)
    hits: list[int] = []

    def seen(cpu) -> None:
        hits.append(cpu.instructions)
        if inside:
            m.unwatch(watch)
    watch = m.watch(0x10000 + 2 * len(nop), seen)
    for _ in range(2):
        m.cpus[0].pc = 0x10000
        m.step(0, 4)
    assert len(hits) == (1 if inside else 2)
    if not inside:
        m.unwatch(watch)
    m.cpus[0].pc = 0x10000
    m.step(0, 4)
    assert len(hits) == (1 if inside else 2) and not m._unwatched


# Store the low word of argument register 1 at the address in argument register 0.
STORE = {"x86_64": "mov dword ptr [rdi], esi", "arm": "str r1, [r0]", "ppc32": "stw 4, 0(3)"}
PAGE_A, PAGE_B, DATA_PAGE = 0x10000, 0x11000, 0x20000


def two_pages(arch) -> Machine:
    """Page A sets the return register to 1 and traps; page B stores a word and traps."""
    m = Machine(arch, 1)
    m.map(PAGE_A, 0x2000, "rwx")
    m.map(DATA_PAGE, 0x1000, "rx")
    m.write(PAGE_A, assemble(arch, SET[arch.name][0].format(v=1), PAGE_A) + arch.syscall_insn)
    m.write(PAGE_B, assemble(arch, STORE[arch.name], PAGE_B) + arch.syscall_insn)
    m.on_trap = lambda cpu, trap: cpu.yield_turn()
    return m


def run_at(m: Machine, pc: int) -> None:
    m.cpus[0].pc = pc
    m.step(0, 2)


def test_a_guest_store_to_translated_code_is_seen_at_once(arch) -> None:
    """QEMU's self-modifying-code check still works under kisim's TLB fill
    (docs/unicorn.md): page B's store over page A's translated instruction
    is what A runs next."""
    m = two_pages(arch)
    cpu = m.cpus[0]
    run_at(m, PAGE_A)
    assert cpu.reg(arch.ret) == 1
    new = assemble(arch, SET[arch.name][0].format(v=2), PAGE_A)[:4]
    cpu.set_reg(arch.args[0], PAGE_A)
    cpu.set_reg(arch.args[1], int.from_bytes(new, arch.endian))
    run_at(m, PAGE_B)
    run_at(m, PAGE_A)
    assert cpu.reg(arch.ret) == 2


@pytest.mark.parametrize("what", ["store to a read-only region", "fetch from a data region"])
def test_region_permissions_hold_under_the_tlb_fill(arch, what: str) -> None:
    m = two_pages(arch)
    cpu = m.cpus[0]
    if what.startswith("store"):
        cpu.set_reg(arch.args[0], DATA_PAGE)
        pc, reason = PAGE_B, "write to protected memory"
    else:
        m.map(0x30000, 0x1000, "rw")
        pc, reason = 0x30000, "instruction fetch from non-executable memory"
    with pytest.raises(GuestFault, match=reason):
        run_at(m, pc)


# RAM offsets (docs/unicorn.md, "RAM offsets"). After the one-page spin region,
# a 2-page code region and a 4-page data region, mapped in growing sizes: in a
# plain Unicorn 2.1.4 both get the same RAM offsets, so DATA_ALIAS + x stands
# for CODE_ALIAS + x in QEMU's self-modifying-code checks.
CODE_ALIAS, DATA_ALIAS, STORES = 0x40000, 0x50000, 8


def aliasing_stores(arch) -> tuple[bytes, int]:
    """STORES stores, then a trap; and the store address whose RAM offset, in a
    plain engine, is that of the last store instruction."""
    text = assemble(arch, "; ".join([STORE[arch.name]] * STORES), CODE_ALIAS)
    return text + arch.syscall_insn, DATA_ALIAS + (len(text) - 1) // 4 * 4


def test_every_region_has_ram_offsets_of_its_own(arch) -> None:
    """Stores through a memory hook to a data address that a plain Unicorn
    files under the running code's RAM offsets: each instruction still runs,
    and counts, once (on x86, QEMU's precise self-modifying-code check would
    restart each store; ARM and PowerPC only retranslate)."""
    m = Machine(arch, 1)
    m.map(CODE_ALIAS, 0x2000, "rwx")
    m.map(DATA_ALIAS, 0x4000, "rwx")
    code, target = aliasing_stores(arch)
    m.write(CODE_ALIAS, code)
    cpu = m.cpus[0]
    stores: list[int] = []
    cpu.uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, lambda _uc, _t, addr, *_: stores.append(addr))
    executed = m.count_executions(range(CODE_ALIAS, CODE_ALIAS + len(code)))
    m.on_trap = lambda cpu, trap: cpu.yield_turn()
    cpu.set_reg(arch.args[0], target)
    cpu.pc = CODE_ALIAS
    m.step(0, STORES + 1)
    assert stores == [target] * STORES
    assert executed() == STORES + 1 == cpu.instructions


def test_a_store_to_another_region_leaves_a_stale_translation_stale(arch) -> None:
    """Text the host rewrote without a sync runs as translated before
    (docs/unicorn.md, "Translation cache"), even after a store to a data
    address that a plain Unicorn files under that text's RAM offsets (there,
    the store would drop the translation and the CPU would see the new text)."""
    m = Machine(arch, 1)
    m.map(CODE_ALIAS, 0x2000, "rwx")
    m.map(DATA_ALIAS, 0x4000, "rwx")
    victim, cpu = CODE_ALIAS + 0x1000, m.cpus[0]
    m.write(CODE_ALIAS, assemble(arch, STORE[arch.name], CODE_ALIAS) + arch.syscall_insn)
    m.write(victim, assemble(arch, SET[arch.name][0].format(v=1), victim) + arch.syscall_insn)
    m.on_trap = lambda cpu, trap: cpu.yield_turn()
    run_at(m, victim)
    m.write(victim, assemble(arch, SET[arch.name][0].format(v=2), victim))
    cpu.set_reg(arch.args[0], DATA_ALIAS + 0x1000)
    run_at(m, CODE_ALIAS)
    run_at(m, victim)
    assert cpu.reg(arch.ret) == 1


@pytest.mark.parametrize("memory_hook", [False, True])
def test_a_plain_engine_restarts_stores_filed_under_the_running_code(memory_hook) -> None:
    """The negative control of the test above, on the layout it uses: in a
    plain Unicorn 2.1.4 under kisim's TLB fill the x86 stores restart (the
    first store to the page even without a memory hook, every store with
    one); :func:`sim.native.new_engine`'s engine runs each once."""
    arch = ARCHES["x86_64"]
    code, target = aliasing_stores(arch)
    runs = {}
    for engine in (new_engine, lambda mode: unicorn.Uc(*mode)):
        uc = engine(arch.uc_mode)
        use_virtual_tlb(uc)
        uc.mem_map(SPIN_BASE_FOR_TEST, 0x1000, unicorn.UC_PROT_READ | unicorn.UC_PROT_EXEC)
        uc.mem_map(CODE_ALIAS, 0x2000, unicorn.UC_PROT_ALL)
        uc.mem_map(DATA_ALIAS, 0x4000, unicorn.UC_PROT_ALL)
        uc.mem_write(CODE_ALIAS, code)
        uc.reg_write(arch.uc_regs[arch.args[0]], target)
        seen: Counter[int] = Counter()
        uc.hook_add(unicorn.UC_HOOK_CODE, lambda _uc, addr, _size, _d: seen.update([addr]))
        if memory_hook:
            uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, lambda *_: None)
        uc.emu_start(CODE_ALIAS, CODE_ALIAS + len(code) - len(arch.syscall_insn))
        runs[engine] = sorted(seen.values())
    fresh, plain = runs.values()
    assert fresh == [1] * STORES
    assert plain == ([2] * STORES if memory_hook else [1] * (STORES - 1) + [2])


def test_registers_in_one_batch_equal_one_at_a_time(arch) -> None:
    """Cpu.regs / Cpu.set_regs (one uc_reg_*_batch call each, the kprobe trap
    frame's path) read and write what reg / set_reg do, register for register."""
    cpu = Machine(arch, 1).cpus[0]
    names = tuple(arch.args) + (arch.sp,)
    values = [(0x1111 * (i + 1)) & ((1 << arch.bits) - 1) for i in range(len(names))]
    cpu.set_regs(names, values)
    assert [cpu.reg(n) for n in names] == values
    assert cpu.regs(names) == values
    cpu.set_reg(names[0], 0x42)
    assert cpu.regs(names)[0] == 0x42
    top = (1 << arch.bits) - 1                     # the widest word a frame holds
    cpu.set_regs(names[:1], [top])
    assert cpu.reg(names[0]) == top


# A loop of 3 instructions run {n} times, then one more: (text, loop body length in insns).
COUNTED = {"x86_64": "mov rcx, {n}; l: add rax, 1; dec rcx; jnz l; nop",
           "arm": "mov r1, #{n}; l: add r0, r0, #1; subs r1, r1, #1; bne l; nop",
           "ppc32": "li 4, {n}; mtctr 4; l: addi 3, 3, 1; addi 5, 5, 1; bdnz l; nop"}


@pytest.mark.parametrize("cpus", [1, 2])
def test_count_executions_equals_watching_each_address(arch, cpus) -> None:
    """Machine.count_executions (one host hook over the addresses' span) counts what a
    watch on each address counts, on every CPU, whatever the turns; an address never
    run counts 0, and the run's instruction count is unchanged."""
    text = COUNTED[arch.name].format(n=37)
    plain = load_snippet(arch, text, cpus, quantum=5)
    plain.machine.run()
    run = load_snippet(arch, text, cpus, quantum=5)
    insns = disassemble(arch, run.code, run.base)
    loop_addr, last = insns[-3].address, insns[-1].address   # in the loop; after it
    watched = {loop_addr: 0, last: 0}

    def bump(addr):
        def hook(_cpu):
            watched[addr] += 1
        return hook
    for addr in watched:
        run.machine.watch(addr, bump(addr))
    both = run.machine.count_executions([loop_addr, last, loop_addr])
    alone = run.machine.count_executions([last])
    never = run.machine.count_executions([run.end + 64])
    run.machine.run()
    assert watched == {loop_addr: 37 * cpus, last: cpus}
    assert both() == 38 * cpus and alone() == cpus and never() == 0
    assert run.machine.count_executions([])() == 0
    assert [c.instructions for c in run.machine.cpus] == \
        [c.instructions for c in plain.machine.cpus]
    with pytest.raises(ConfigError, match="outside"):
        run.machine.count_executions([1 << arch.bits])


def _loop_run(arch, quantum: int, seed: int | None, turn_end: str, timing: bool) -> tuple:
    run = load_snippet(arch, loop_text(arch, 25), cpus=2, quantum=quantum, seed=seed)
    run.machine.turn_end = turn_end
    if timing:
        run.machine.timing = TimingModel(run.machine)
        assert all(cpu._counter_owner is run.machine.timing for cpu in run.machine.cpus)
    run.machine.run()
    rows = [{k: row[k] for k in ("instructions", "pc", "events", "halted", "registers")}
            for row in run.per_cpu()]
    return rows, [(t.cpu, t.address, t.kind) for t in run.traps]


@pytest.mark.parametrize("turn_end", ["counter", "spin"])
@pytest.mark.parametrize("quantum,seed", [(1, None), (3, None), (50, 7)])
def test_the_timing_models_count_ends_turns_as_unicorns_does(arch, quantum, seed,
                                                             turn_end) -> None:
    """The timing model's hook counts its CPU's slices in place of Unicorn's count
    (Cpu.count_with): the same instructions retire in the same turns, with the same
    traps, as counted by Unicorn, the counting loop's included (counted, not modeled).
    A hook that counts and never stops the slice fails both: the counter's turns at
    once, the counting loop's once a CPU parked there has spun to the run's limit."""
    assert _loop_run(arch, quantum, seed, turn_end, True) \
        == _loop_run(arch, quantum, seed, turn_end, False)


def test_the_timing_model_stops_a_slice_at_its_budget(arch) -> None:
    """A slice on the model's count retires its budget and no more: the next
    instruction is counted, stopped and not run (uc.c hook_count_cb)."""
    run = load_snippet(arch, "; ".join([SET[arch.name][0].format(v=1)] * 40), cpus=1)
    run.machine.timing = TimingModel(run.machine)
    cpu = run.machine.cpus[0]
    assert cpu._run_slice(7) == 7 and cpu.instructions == 7
    assert cpu.pc == run.base + 7 * len(assemble(arch, SET[arch.name][0].format(v=1),
                                                 run.base))
    assert run.machine.timing.stats(0).counts["instructions"] == 7


def test_a_cpu_is_counted_by_one_model(arch) -> None:
    """A second timing model on the same CPUs would count every instruction twice."""
    m = Machine(arch, timing=True)
    with pytest.raises(ConfigError, match="CPU 0 is counted already"):
        TimingModel(m)
