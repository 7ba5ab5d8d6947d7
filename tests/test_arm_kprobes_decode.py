"""ARM kprobes against the kernel's decoder and handlers (Linux v5.10).

arches/arm/probes_decode.py ports arch/arm/probes/decode-arm.c with the
checkers of arch/arm/probes/kprobes/checkers-*.c; the guest runs the
handlers of actions-arm.c / actions-common.c (asm/kprobes-actions.h).
The decoder tests check what arch_prepare_kprobe accepts, refuses and
writes into the slot; the guest tests run one instruction unprobed and
then probed in the guest kernel (kprobe_handler and its handler for
real) and compare registers, flags and memory, as test-arm.c does.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

import capstone
import pytest
from unicorn import UC_HOOK_CODE

from arches.arm import kprobes as arm_kprobes
from arches.kprobe import KprobeRefused
from kbuild import build
from patcher.errors import PatchError
from probes.kprobes import Kprobe, Kprobes
from sim.guest import Guest

SCRATCH = 0x70000000          # a page of data the instructions load from and store to
SCRATCH_SIZE = 0x1000
_HEADER = Path(arm_kprobes.__file__).parent / "include" / "asm" / "kprobes.h"


def prepare(word: int):
    return arm_kprobes.arch_prepare_kprobe(0x100000, struct.pack("<I", word), 0x200000)


# -- the stack-use rule (checkers-arm.c arm_check_stack, core.c MAX_STACK_SIZE) ---------

@pytest.mark.parametrize("word, text, reason", [
    (0xE50D3110, "str r3, [sp, #-272]", "272 bytes below sp"),
    (0xE52D3110, "str r3, [sp, #-272]!", "272 bytes below sp"),
    (0xE50D3044, "str r3, [sp, #-68]", "68 bytes below sp"),
    (0xE54D3041, "strb r3, [sp, #-65]", "65 bytes below sp"),
    (0xE14D04F4, "strd r0, r1, [sp, #-68]", "68 bytes below sp"),
    (0xE14D34B8, "strh r3, [sp, #-72]", "72 bytes below sp"),
    (0xE78D0001, "str r0, [sp, r1]", "stack use unknown"),
    (0xE781000D, "str r0, [r1, sp]", "stack use unknown"),
    (0xE10D00F2, "strd r0, r1, [sp, -r2]", "stack use unknown"),
    (0xE18D00B1, "strh r0, [sp, r1]", "stack use unknown"),
])
def test_stack_stores_beyond_the_kernels_limit_are_refused(word: int, text: str,
                                                            reason: str) -> None:
    """The kernel refuses these: they would overwrite the handler's own frame."""
    with pytest.raises(KprobeRefused, match=reason):
        prepare(word)


@pytest.mark.parametrize("word, text, space", [
    (0xE50D3040, "str r3, [sp, #-64]", 64),
    (0xE52DE004, "push {lr} (str lr, [sp, #-4]!)", 4),
    (0xE92D4FF0, "push {r4-r11, lr}", 36),
    (0xE92DFFFF, "stmdb sp!, {r0-r15}", 64),
    (0xE90D0003, "stmdb sp, {r0, r1}", 8),
    (0xE80D0007, "stmda sp, {r0-r2}", 8),
    (0xE58D3110, "str r3, [sp, #272]", 0),
    (0xE51D3110, "ldr r3, [sp, #-272]", 0),
    (0xE7810002, "str r0, [r1, r2]", 0),
])
def test_stack_stores_within_the_limit_are_accepted(word: int, text: str, space: int) -> None:
    """Negative controls: at most MAX_STACK_SIZE (64) bytes, above sp, or not a store."""
    assert prepare(word).ainsn[3] == space


# -- "uses PC" from the encoding, the handler each form gets -------------------------------

def test_capstone_misses_pc_in_stmdb_with_pc() -> None:
    """Why the decoder reads bits: Capstone's access list has no PC for this encoding."""
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_ARM)
    md.detail = True
    insn = next(md.disasm(struct.pack("<I", 0xE9208002), 0))    # stmdb r0!, {r1, pc}
    read, written = insn.regs_access()
    from capstone import arm_const
    assert arm_const.ARM_REG_PC not in read + written
    assert prepare(0xE9208002).kind == "simulate_stm1_pc"


@pytest.mark.parametrize("word, text, handler, slot", [
    (0xE1A0E00F, "mov lr, pc", "emulate_rd12rn16rm0rs8_rwflags", 0xE1A00003),
    (0xE28F0008, "add r0, pc, #8", "emulate_rd12rn16rm0rs8_rwflags", 0xE2820008),
    (0xE08FF000, "add pc, pc, r0", "emulate_rd12rn16rm0rs8_rwflags", 0xE0820003),
    (0xE1DF00B4, "ldrh r0, [pc, #4]", "emulate_ldr", 0xE1D200B4),
    (0xE5DF0004, "ldrb r0, [pc, #4]", "emulate_ldr", 0xE5D20004),
    (0xE79F0001, "ldr r0, [pc, r1]", "emulate_ldr", 0xE7920003),
    (0xE59F0010, "ldr r0, [pc, #16]", "emulate_ldr", 0xE5920010),
    (0xE58FE000, "str lr, [pc]", "emulate_str", 0xE5820000),
    (0xE1CF00D8, "ldrd r0, r1, [pc, #8]", "emulate_ldrdstrd", 0xE1C200D8),
    (0xE9208002, "stmdb r0!, {r1, pc}", "simulate_stm1_pc", None),
    (0xE8908002, "ldm r0, {r1, pc}", "simulate_ldm1_pc", None),
    (0xE8BD8010, "pop {r4, pc}", "emulate_ldm_r3_15", 0xE8BA1002),
    (0xE8BD8001, "pop {r0, pc}", "simulate_ldm1_pc", None),
    (0xE92D4010, "push {r4, lr}", "emulate_generic_r2_14_noflags", 0xE92B1004),
    (0xE8A0000E, "stmia r0!, {r1-r3}", "emulate_generic_r0_12_noflags", 0xE8A0000E),
    (0xF5D0F000, "pld [r0]", "probes_simulate_nop", None),
    (0xF7D0F001, "pld [r0, r1]", "probes_simulate_nop", None),
    (0xE320F000, "nop", "probes_simulate_nop", None),
    (0xE1A0C00D, "mov ip, sp", "simulate_mov_ipsp", None),
    (0xE10F0000, "mrs r0, apsr", "simulate_mrs", None),
    (0xEB000010, "bl", "simulate_bbl", None),
    (0xE12FFF13, "bx r3", "simulate_blx2bx", None),
    (0x10810002, "addne r0, r1, r2", "emulate_rd12rn16rm0rs8_rwflags", 0xE0820003),
    (0xE0010392, "mul r1, r2, r3", "emulate_rd16rn12rm0rs8_rwflags_nopc", 0xE0020193),
])
def test_pc_forms_are_simulated_or_emulated_as_the_kernel_does(word: int, text: str,
                                                                handler: str,
                                                                slot: int | None) -> None:
    """The handler of kprobes_arm_actions and the renamed slot word (Rd->r0, Rs->r1,
    Rn->r2, Rm->r3; cond AL), or no slot for a simulated instruction."""
    prepared = prepare(word)
    assert prepared.kind == handler
    words = struct.unpack("<2I", prepared.slot)
    if slot is None:
        assert prepared.ainsn[0] == 0 and words == (0, 0)
    else:
        assert prepared.ainsn[0] == 0x200000 and words == (slot, 0xE1A0F00E)


@pytest.mark.parametrize("word, text, reason", [
    (0xE5BF0004, "ldr r0, [pc, #4]!", "PC with writeback"),
    (0xE16F0F1F, "clz r0, pc", "may not be PC"),
    (0xE00F0291, "mul pc, r1, r2", "may not be PC"),
    (0xE5DFF000, "ldrb pc, [pc]", "LDRB/STRB pc"),
    (0xE1CFE0D0, "ldrd lr, pc, [pc]", "LDRD/STRD of lr, pc"),
    (0xE4B10004, "ldrt r0, [r1], #4", "unprivileged"),
    (0xE0F100B4, "ldrht r0, [r1], #4", "unprivileged"),
    (0xE14F0000, "mrs r0, spsr", "MRS spsr"),
    (0xE1B0F00E, "movs pc, lr", "<op>S PC"),
    (0xE1900F9F, "ldrex r0, [r0]", "LDREX"),
    (0xE1010092, "swp r0, r2, [r1]", "SWP"),
    (0xF1080080, "cpsie i", "CPS"),
    (0xEE070F15, "mcr p15", "coprocessor"),
    (0xE8D00003, "ldm r0, {r0, r1}^", "^"),
    (0xE3200010, "hint #16", "hints"),
])
def test_forms_the_kernel_rejects_are_refused_with_its_reason(word: int, text: str,
                                                              reason: str | None) -> None:
    with pytest.raises(KprobeRefused) as err:
        prepare(word)
    if reason:
        assert reason in str(err.value)


def test_pc_without_writeback_is_accepted_as_the_kernel_does() -> None:
    """REGS(NOPCWB, ANY, ...): only writeback forbids PC as Rn; Rt may be PC for STR."""
    assert prepare(0xE58FF000).kind == "emulate_str"           # str pc, [pc]
    assert prepare(0xE5CF0000).kind == "emulate_str"           # strb r0, [pc]


def test_guest_handler_numbers_match_the_host() -> None:
    """asm/kprobes.h KPROBE_ARM_<HANDLER> numbers are the host's HANDLERS order."""
    defines = dict(re.findall(r"#define KPROBE_ARM_([A-Z0-9_]+)\s+(\d+)\n", _HEADER.read_text()))
    assert [defines[h.upper()] for h in arm_kprobes.HANDLERS] == [
        str(i) for i in range(len(arm_kprobes.HANDLERS))]


# -- in the guest: probed == unprobed -------------------------------------------------

@pytest.fixture(scope="module")
def arm_build():
    return build("arm")


def run_to(g, cpu, end: int) -> None:
    """Run ``cpu`` until it reaches ``end`` (stopped there by a code hook)."""
    def stop(uc, address, size, data) -> None:
        cpu.halt()
        uc.emu_stop()
    cpu.uc.hook_add(UC_HOOK_CODE, stop, begin=end, end=end)
    g.machine.run(max_instructions=100_000)
    assert cpu.pc == end


def run_one(arm_build, words: list[int], regs: dict[str, int], probe: int | None,
            memory: bytes = b"") -> tuple[dict[str, int], bytes, int]:
    """Run ``words`` from a scratch text area in a fresh guest (registers from
    ``regs``, the scratch page from ``memory``) until the terminator after them;
    with a kprobe (empty pre_handler) on word ``probe``. The guest's own
    kprobe_handler and arm_singlestep run on its boot stack.

    Returns the registers (r0-r14, flags), the scratch page and the hit count.
    """
    g = Guest(arm_build, workload="kmalloc", size=1)
    k = Kprobes(g)
    base = g.image.symbols["kmalloc"]       # overwritten: this guest never runs it
    code = b"".join(struct.pack("<I", w) for w in words) + struct.pack("<I", 0xE320F000)
    end = base + 4 * len(words)
    with g.machine.text_mutex:
        g.machine.write_text(base, code)
    g.machine.map(SCRATCH, SCRATCH_SIZE, "rw")
    g.machine.write(SCRATCH, memory.ljust(SCRATCH_SIZE, b"\0"))
    kp = None
    if probe is not None:
        kp = k.register_kprobe(Kprobe(addr=base + 4 * probe,
                                      pre_handler="kprobe_empty_pre_handler"))
    cpu = g.machine.cpus[0]
    stack = g.image.symbols["init_stacks"]
    g.machine.write_word(stack, 0)                          # thread_info.cpu
    for name, value in {"sp": stack + 8192 - 512, **regs}.items():
        cpu.set_reg(name, value)
    cpu.pc = base

    run_to(g, cpu, end)
    out = {f"r{i}": cpu.reg(f"r{i}") for i in range(13)}
    out.update(sp=cpu.reg("sp"), lr=cpu.reg("lr"), flags=cpu.reg("cpsr") & 0xF80F0000)
    return out, g.machine.read(SCRATCH, SCRATCH_SIZE), kp.hits if kp else 0


#: (text, words, probed word index, registers, scratch memory). Addresses of
#: the code come from the guest, so PC-relative values differ per build but
#: not between the probed and the unprobed run.
GUEST_CASES = [
    ("mov lr, pc", [0xE1A0E00F], 0, {}),
    ("add r0, pc, #8", [0xE28F0008], 0, {}),
    ("adds r0, pc, r1 (flags)", [0xE09F0001], 0, {"r1": 0xFFFFFFF0}),
    ("ldrh r0, [pc, #4]", [0xE1DF00B4, 0xE320F000, 0xBEEF1234], 0, {}),
    ("ldrb r0, [pc, r1]", [0xE7DF0001, 0xE320F000, 0x44332211], 0, {"r1": 6}),
    ("ldr r0, [pc, r1]", [0xE79F0001, 0xE320F000, 0x44332211], 0, {"r1": 4}),
    ("str pc, [r0]", [0xE580F000], 0, {"r0": SCRATCH}),
    ("stmdb r0!, {r1, pc}", [0xE9208002], 0, {"r0": SCRATCH + 64, "r1": 0x11111111}),
    ("stmia r0, {r1, r2, pc}", [0xE8808006], 0, {"r0": SCRATCH, "r1": 1, "r2": 2}),
    ("pld [r0]", [0xF5D0F000], 0, {"r0": SCRATCH}),
    ("push {r4, lr}", [0xE92D4010], 0, {"r4": 0x44, "lr": 0x1E}),
    ("str r3, [sp, #-64]", [0xE50D3040], 0, {"r3": 0x33}),
    ("mul r1, r2, r3", [0xE0010392], 0, {"r2": 7, "r3": 6}),
    ("umull r0, r1, r2, r3", [0xE0810392], 0, {"r2": 0xFFFFFFFF, "r3": 3}),
    ("ldrd r2, r3, [r0, #8]!", [0xE1E020D8], 0, {"r0": SCRATCH}),
    ("mrs r0, apsr after cmp", [0xE3510000, 0xE10F0000], 1, {"r1": 0}),
]


@pytest.mark.parametrize("text, words, probe, regs", GUEST_CASES,
                         ids=[case[0] for case in GUEST_CASES])
def test_probed_equals_unprobed_in_the_guest(arm_build, text: str, words: list[int],
                                             probe: int, regs: dict[str, int]) -> None:
    memory = bytes(range(256)) * 4
    plain, plain_mem, _ = run_one(arm_build, words, regs, None, memory)
    probed, probed_mem, hits = run_one(arm_build, words, regs, probe, memory)
    assert hits == 1
    assert probed == plain
    assert probed_mem == plain_mem


def test_ldm_with_pc_branches_as_unprobed(arm_build) -> None:
    """ldm r0, {r1, pc}: PC from memory (simulate_ldm1_pc)."""
    g_plain = None
    words = [0xE8908002, 0xE3A02001, 0xE3A03002]     # ldm; mov r2, #1; mov r3, #2
    base = Guest(arm_build, workload="kmalloc", size=1).image.symbols["kmalloc"]
    target = base + 8                                  # skips "mov r2, #1"
    memory = struct.pack("<2I", 0x5A5A5A5A, target)
    plain, _, _ = run_one(arm_build, words, {"r0": SCRATCH}, None, memory)
    probed, _, hits = run_one(arm_build, words, {"r0": SCRATCH}, 0, memory)
    assert g_plain is None and hits == 1
    assert probed == plain and plain["r1"] == 0x5A5A5A5A and plain["r2"] == 0
    assert plain["r3"] == 2


def test_stmdb_with_pc_stores_the_probed_address(arm_build) -> None:
    """The stored PC is the probed instruction's address + 8, not the slot's."""
    probed, memory, hits = run_one(arm_build, [0xE9208002], {"r0": SCRATCH + 64}, 0)
    base = Guest(arm_build, workload="kmalloc", size=1).image.symbols["kmalloc"]
    assert hits == 1 and probed["r0"] == SCRATCH + 56
    assert struct.unpack_from("<2I", memory, 56) == (probed["r1"], base + 8)


def test_far_stack_store_is_refused_in_the_guest(arm_build) -> None:
    """register_kprobe on str r3, [sp, #-272] gives EINVAL, as arch_prepare_kprobe does."""
    with pytest.raises(PatchError, match="MAX_STACK_SIZE") as err:
        run_one(arm_build, [0xE50D3110], {"r3": 1}, 0)
    assert err.value.errno == "EINVAL"


def test_every_mov_lr_pc_site_of_the_kernel_runs_probed(arm_build) -> None:
    """``mov lr, pc`` (an indirect call's return address) in kisim's own ARM
    kernel: accepted as the kernel accepts it (emulate_rd12rn16rm0rs8_rwflags),
    and under a probe every site runs as often as unprobed, with the same
    checksum. Blacklisted functions (NOKPROBE_SYMBOL) stay refused."""
    def sites(g: Guest) -> list[int]:
        found = []
        for start, size, _ in g.image.functions:
            code = g.machine.read(start, size)
            found += [start + off for off in range(0, size - 3, 4)
                      if code[off:off + 4] == struct.pack("<I", 0xE1A0E00F)]
        return found

    plain = Guest(arm_build, workload="hackbench", size=5)
    counts = dict.fromkeys(sites(plain), 0)

    def count(uc, address, size, data) -> None:
        counts[address] += 1
    for addr in counts:
        plain.machine.cpus[0].uc.hook_add(UC_HOOK_CODE, count, begin=addr, end=addr)
    assert plain.run().ok

    g = Guest(arm_build, workload="hackbench", size=5)
    k = Kprobes(g)
    probes = {}
    for addr in sites(g):
        try:
            probes[addr] = k.register_kprobe(Kprobe(addr=addr,
                                                    pre_handler="kprobe_empty_pre_handler"))
        except PatchError as err:
            assert "NOKPROBE" in err.message or "blacklist" in err.message, err.message
    assert len(probes) >= 9 and all(k.kind(kp) == "emulate_rd12rn16rm0rs8_rwflags"
                                    for kp in probes.values())
    assert g.run().ok
    assert {a: kp.hits for a, kp in probes.items()} == {a: counts[a] for a in probes}
    assert sum(kp.hits for kp in probes.values()) > 0, probes
