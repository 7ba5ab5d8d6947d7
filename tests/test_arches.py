"""Encodings equal the kernel's (docs/encodings.md), checked through Keystone and Capstone."""
from __future__ import annotations

import pytest

from arches import ARCHES, NAMES, EncodingError, TrapKind, UnknownArch, get_arch
from sim.asm import assemble, disassemble

# The kernel's spelling of each encoding, from the sources named in each arch
# module, and the assembly text that produces it.
KERNEL_ASM = {
    "x86_64": {"breakpoint": "int3", "syscall": "syscall", "spin": "inc rax"},
    "arm": {"breakpoint": "udf #0x18", "syscall": "svc #0", "spin": "add r0, r0, #1",
            "nop": "mov r0, r0"},
    "ppc32": {"breakpoint": "tw 31, 0, 0", "syscall": "sc", "spin": "addi 3, 3, 1",
              "nop": "ori 0, 0, 0"},
}

# arch/x86/include/asm/nops.h, BYTES_NOP1..BYTES_NOP8 (P6 nops).
X86_KERNEL_NOPS = {
    1: [0x90], 2: [0x66, 0x90], 3: [0x0f, 0x1f, 0x00], 4: [0x0f, 0x1f, 0x40, 0x00],
    5: [0x0f, 0x1f, 0x44, 0x00, 0x00], 6: [0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00],
    7: [0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00],
    8: [0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
}


def test_registry_lists_the_three_arches() -> None:
    assert set(NAMES) == {"x86_64", "arm", "ppc32"}
    assert all(get_arch(n) is ARCHES[n] for n in NAMES)


def test_unknown_arch_names_the_valid_ones() -> None:
    with pytest.raises(UnknownArch, match="known: arm, ppc32, x86_64"):
        get_arch("mips")


def test_nops_decode_as_single_nops(arch) -> None:
    for size, nop in arch.nops.items():
        insns = disassemble(arch, nop)
        assert len(insns) == 1 and len(insns[0].bytes) == size == len(nop)
        assert insns[0].mnemonic == "nop" or (arch.name == "arm" and insns[0].text == "mov r0, r0")
    if "nop" in KERNEL_ASM[arch.name]:
        assert assemble(arch, KERNEL_ASM[arch.name]["nop"]) == arch.nop(arch.insn_align)


def test_x86_nops_are_the_kernels() -> None:
    x86 = ARCHES["x86_64"]
    assert {size: list(nop) for size, nop in x86.nops.items()} == X86_KERNEL_NOPS


def test_arm_accepts_the_hint_nop_too() -> None:
    arm = ARCHES["arm"]
    assert arm.is_nop(assemble(arm, "nop")) and arm.is_nop(assemble(arm, "mov r0, r0"))


@pytest.mark.parametrize("what", ["breakpoint", "syscall", "spin"])
def test_encodings_round_trip_keystone(arch, what) -> None:
    expected = {"breakpoint": arch.kprobe_breakpoint(arch.nop(arch.insn_align)),
                "syscall": arch.syscall_insn,
                "spin": arch.spin.code[:len(arch.spin.code) - (2 if arch.name == "x86_64" else 4)]}
    assert assemble(arch, KERNEL_ASM[arch.name][what]) == expected[what]


@pytest.mark.parametrize("src,dst", [(0x100000, 0x100000), (0x100000, 0x1F0000),
                                     (0x200000, 0x100004), (0x1000, 0x1000 + 0x1000000)])
def test_jump_and_call_round_trip(arch, src, dst) -> None:
    for encode, mnemonic in ((arch.encode_jump, {"jmp", "b"}), (arch.encode_call, {"call", "bl"})):
        code = encode(src, dst)
        (insn,) = disassemble(arch, code, src)
        assert insn.mnemonic in mnemonic
        assert int(insn.op_str.lstrip("#"), 16) == dst
        spelled = f"{insn.mnemonic} {'#' if arch.name == 'arm' else ''}{dst:#x}"
        if arch.name != "x86_64":     # Keystone picks rel8 on x86 when it can
            assert assemble(arch, spelled, src) == code


def test_branch_reach_is_enforced(arch) -> None:
    lo, hi = arch.branch_reach
    src = 0x4000_0000
    near = src + (hi // 2) // 4 * 4
    (insn,) = disassemble(arch, arch.encode_jump(src, near), src)
    assert int(insn.op_str.lstrip("#"), 16) == near
    with pytest.raises(EncodingError, match="out of range"):
        arch.encode_jump(src, src + hi + 0x1000)
    with pytest.raises(EncodingError, match="out of range"):
        arch.encode_call(src, src + lo - 0x1000)


@pytest.mark.parametrize("name", [n for n in NAMES if ARCHES[n].insn_align > 1])
def test_misaligned_branch_is_refused(name) -> None:
    arch = ARCHES[name]
    with pytest.raises(EncodingError, match="aligned"):
        arch.encode_jump(0x1000, 0x1002)


def test_arm_breakpoint_copies_the_condition() -> None:
    arm = ARCHES["arm"]
    moveq = assemble(arm, "moveq r0, r1")
    assert arm.kprobe_breakpoint(moveq) == (0x07F001F8).to_bytes(4, "little")
    assert arm.kprobe_breakpoint(assemble(arm, "movne r0, r1")) == (0x17F001F8).to_bytes(4, "little")
    assert arm.kprobe_breakpoint(assemble(arm, "mov r0, r1")) == (0xE7F001F8).to_bytes(4, "little")


def test_trap_vectors_cover_every_kind(arch) -> None:
    kinds = {v.kind for v in arch.traps.values()} | {v.kind for v in arch.insn_traps.values()}
    assert {TrapKind.BREAKPOINT, TrapKind.SYSCALL} <= kinds
    assert arch.undefined.kind is TrapKind.UNDEFINED


def test_every_cost_cites_a_source(arch) -> None:
    assert {"insn", "trap", "ipi", "icache_flush"} <= set(arch.costs)
    for name, cost in arch.costs.items():
        assert cost.cycles >= 0 and len(cost.source) > 20, name


# -- the typed hooks and declared facts generic code reads ------------------------

# The immediate-value load of 0 on each arch (the __imv site): its text, the
# immediate's size and its offset in the instruction (aligned to its size,
# so that enabling it is one atomic store).
IMV_LOAD = {"x86_64": ("mov eax, 0", 4, 1), "arm": ("mov r3, #0", 1, 0),
            "ppc32": ("li 3, 0", 2, 2)}
NOT_IMV = {"x86_64": "mov eax, 1", "arm": "mov r3, r4", "ppc32": "addi 3, 4, 0"}


def test_imv_hook_accepts_the_kernels_immediate_load_of_zero(arch) -> None:
    text, size, offset = IMV_LOAD[arch.name]
    at = 0x1000 - offset % size                # the immediate size-aligned
    insn = assemble(arch, text, at)
    imv = at + offset
    assert arch.ops.imv_load_of_zero(insn, at, imv, size)
    # negative controls: wrong immediate location, wrong size, another instruction
    assert not arch.ops.imv_load_of_zero(insn, at, imv + 1, size)
    assert not arch.ops.imv_load_of_zero(insn, at, imv, size * 2 + 1)
    assert not arch.ops.imv_load_of_zero(assemble(arch, NOT_IMV[arch.name], at), at, imv, size)


@pytest.mark.parametrize("name", ["demo_setup", "demo_body", "bench_kernel", "bench_alu",
                                  "checker_count", "checker_skip", "checker_body"])
def test_every_arch_declares_the_snippets_generic_code_assembles(arch, name) -> None:
    text = arch.snippet(name, n=100, nlo=100, nhi=0, data=0x200000, dlo=0, dhi=0x20)
    if name == "demo_body":
        text = f"l: {text}"
    assert assemble(arch, text, 0x10000)


def test_unknown_snippet_and_bad_pad_are_encoding_errors(arch) -> None:
    with pytest.raises(EncodingError, match="no assembly snippet 'nope'"):
        arch.snippet("nope")
    bp = arch.kprobe_breakpoint(arch.site_nop)
    padded = arch.pad(bp, arch.site_len)
    assert len(padded) == arch.site_len and padded.startswith(bp)
    assert sum(len(i.bytes) for i in disassemble(arch, padded)) == arch.site_len
    with pytest.raises(EncodingError):
        arch.pad(bp, len(bp) - 1)


def test_elf_machine_and_mcount_facts_are_declared_once_per_arch() -> None:
    machines = [a.elf_machine for a in ARCHES.values()]
    assert len(set(machines)) == len(machines)
    assert {a.name: a.mcount_reloc_offset for a in ARCHES.values()} == \
        {"x86_64": 1, "arm": 0, "ppc32": 0}            # e8 rel32 vs bl
    assert ARCHES["arm"].mcount_prologue["__gnu_mcount_nc"]


def test_poke_breakpoint_is_what_the_protocol_plants(arch) -> None:
    """Only a protocol that rewrites a site in several stores plants a temporary
    breakpoint; it is the arch's kprobe breakpoint (x86 int3)."""
    if arch.poke_breakpoint:
        assert arch.poke_breakpoint == arch.kprobe_breakpoint(arch.site_nop)
        assert arch.insn_align == 1
    else:
        assert arch.site_len == arch.insn_align == 4
