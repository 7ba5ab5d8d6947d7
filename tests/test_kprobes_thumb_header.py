"""The Thumb-2 kernel's kprobe handlers (arches/arm/include/asm/kprobes-actions-thumb.h).

The header ports v5.10 actions-thumb.c with the Thumb single-step hooks of
decode-thumb.c and core.c; the host writes ``p->ainsn.handler`` as the
position of the decoder's choice in ``THUMB_HANDLERS``
(arches/arm/probes_decode_thumb.py), so the header's ``KPROBE_THUMB_<NAME>``
numbers must be those positions. The guest tests run a few instructions
from a scratch text area of a Thumb-2 kernel, once unprobed and once with a
kprobe on one of them (the guest's kprobe_handler and thumb_singlestep for
real), and compare r0-r12, sp, lr, the flags, ITSTATE, the T bit and a
scratch page, as test-thumb.c does; between them the cases reach every
handler of the header.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

import capstone
import keystone
import pytest

from arches.arm import probes_decode_thumb
from arches.arm.probes_decode_thumb import THUMB_HANDLERS
from kbuild import build
from probes.kprobes import Kprobe, Kprobes
from sim.guest import Guest
from test_arm_kprobes_decode import run_to

HEADER = (Path(probes_decode_thumb.__file__).parent / "include" / "asm"
          / "kprobes-actions-thumb.h")


def test_handler_numbers_are_the_hosts() -> None:
    """KPROBE_THUMB_<NAME> is the position of <name> in THUMB_HANDLERS, for every
    name, and the header numbers nothing else that way."""
    defines = re.findall(r"^#define\s+KPROBE_THUMB_([A-Z0-9_]+)\s+(\d+)\s*$",
                         HEADER.read_text(), re.MULTILINE)
    numbered = dict(defines)
    assert len(numbered) == len(defines), "a handler is defined twice"
    assert numbered == {name.upper(): str(i) for i, name in enumerate(THUMB_HANDLERS)}


# -- in the guest: probed == unprobed -------------------------------------------------

SCRATCH = 0x70000000          # a page the instructions load from and store to
SCRATCH_SIZE = 0x1000
ARM_STUB = 0x100              # an A32 routine this far in (word-aligned): r2 = 7, bx lr
MEMORY = bytes(range(256)) * 4
#: The probed instruction follows "P:"; the run stops at "end:"; data may follow.
DATA = ("end: nop; nop; nop; nop; .word 0x11223344; .word 0x8899aabb; .word 0xcafef00d; "
        ".word 0x01020304")
_KS = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_THUMB)
_KS_ARM = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_ARM)
_CS = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB)
_BRANCH_TARGET = re.compile(r"\b(?:b|bl|b\.w|beq|beq\.w|bne\.w|cbz r\d,|cbnz r\d,|adr r\d,)"
                            r"\s+([a-z]\w*)")

#: (handler, text, registers, scratch page or None, hits). Register values
#: "END" and "ARM" stand for the address of "end:" (with the Thumb bit) and
#: of the A32 routine; b"END!" in the page for the former.
CASES = [
    ("probes_simulate_nop", "P: pld [r0]", {"r0": SCRATCH}, None, 1),
    ("probes_simulate_nop", "P: pli [r0, #-4]", {"r0": SCRATCH}, None, 1),
    ("probes_emulate_none", "P: sev", {}, None, 1),
    ("t16_simulate_add_sp_imm", "P: sub sp, #8", {}, None, 1),
    ("t16_simulate_add_sp_imm", "P: add sp, #8", {}, None, 1),
    ("t16_simulate_cbz", "P: cbz r0, lab; movs r1, #1; lab: nop", {"r0": 0}, None, 1),
    ("t16_simulate_cbz", "P: cbz r0, lab; movs r1, #1; lab: nop", {"r0": 1}, None, 1),
    ("t16_simulate_cbz", "P: cbnz r0, lab; movs r1, #1; lab: nop", {"r0": 1}, None, 1),
    ("t16_emulate_loregs_rwflags", "P: ldmia r0!, {r1, r2}", {"r0": SCRATCH + 8}, None, 1),
    ("t16_emulate_loregs_rwflags", "P: stmia r0!, {r1, r2}",
     {"r0": SCRATCH + 8, "r1": 1, "r2": 2}, None, 1),
    ("t16_emulate_loregs_rwflags", "P: uxtb r0, r1", {"r1": 0x1FF}, None, 1),
    ("t16_emulate_loregs_noitrwflags", "P: adds r0, r1, r2",
     {"r1": 0xFFFFFFFF, "r2": 1}, None, 1),
    # in an IT block a 16-bit ADD sets no flags; the slot's copy, run outside one, does
    ("t16_emulate_loregs_noitrwflags",
     "cmp r0, #0; itt eq; P: addeq r1, r1, #1; addeq r2, r2, #1", {"r0": 0}, None, 1),
    ("t16_emulate_loregs_noitrwflags",
     "cmp r0, #0; ittt ne; P: addne r1, r1, #1; addne.w r2, r2, #1; cmpne r1, r2",
     {"r0": 1, "r1": 0xFFFFFFFF}, None, 1),
    ("t16_emulate_loregs_noitrwflags",
     "cmp r0, #0; itete eq; moveq r1, #1; movne r1, #2; P: moveq r2, #1; movne r2, #2",
     {"r0": 0}, None, 1),
    # ITSTATE advanced right: the third ADD is still in the block (no flags)
    ("t16_emulate_loregs_noitrwflags",
     "cmp r0, #0; ittt ne; P: addne r1, #1; addne r2, #1; addne r3, #1",
     {"r0": 1, "r3": 0xFFFFFFFF}, None, 1),
    ("t16_emulate_loregs_noitrwflags",
     "cmp r0, #0; itet ne; P: addne r1, #1; addeq r2, #1; addne r3, #1",
     {"r0": 1, "r3": 0xFFFFFFFF}, None, 1),
    # a condition that fails in the IT block: no hit, the block goes on
    ("t16_emulate_loregs_noitrwflags",
     "cmp r0, #0; itete eq; moveq r1, #1; P: movne r1, #2; moveq r2, #1; movne r2, #2",
     {"r0": 0}, None, 0),
    ("t16_emulate_push", "P: push {r0, r1, lr}", {"r0": 5, "r1": 6, "lr": 0x1234}, None, 1),
    ("t16_emulate_push", "P: push {lr}", {"lr": 0x1234}, None, 1),
    ("t16_emulate_pop_nopc", "P: pop {r0, r1}", {}, None, 1),
    ("t16_emulate_pop_nopc", "P: pop {r0}", {}, None, 1),
    ("t16_emulate_pop_pc", "push {r4, r5}; P: pop {r4, pc}; movs r2, #1",
     {"r4": 9, "r5": "END"}, None, 1),
    ("t16_emulate_pop_pc", "push {r5}; P: pop {pc}; movs r2, #1", {"r5": "END"}, None, 1),
    ("t16_emulate_pop_pc", "push {r4, r5}; P: pop {r4, pc}; movs r2, #1",
     {"r4": 9, "r5": "ARM", "lr": "END"}, None, 1),
    ("t16_simulate_it", "cmp r0, #0; P: ite eq; moveq r1, #1; movne r1, #2", {"r0": 0}, None, 1),
    ("t16_simulate_it", "cmp r0, #0; P: ite eq; moveq r1, #1; movne r1, #2", {"r0": 1}, None, 1),
    ("t16_simulate_it", "cmp r0, #0; P: itete ne; addne r1, #1; addeq r2, #1; addne r3, #1; "
     "addeq r4, #1", {"r0": 1, "r4": 0xFFFFFFFF}, None, 1),
    ("t16_simulate_bxblx", "P: bx r1; movs r2, #1", {"r1": "END"}, None, 1),
    ("t16_simulate_bxblx", "P: blx r1; movs r2, #1", {"r1": "END"}, None, 1),
    ("t16_simulate_bxblx", "P: bx r1; movs r2, #1", {"r1": "ARM", "lr": "END"}, None, 1),
    ("t16_simulate_bxblx", "P: blx r1; b end; movs r2, #1", {"r1": "ARM"}, None, 1),
    ("t16_emulate_hiregs", "P: add r0, pc", {"r0": 0x10}, None, 1),
    ("t16_emulate_hiregs", "P: mov r12, pc", {}, None, 1),
    ("t16_emulate_hiregs", "P: cmp r8, r9", {"r8": 3, "r9": 5}, None, 1),
    ("t16_emulate_hiregs", "P: add sp, r1; sub sp, r1", {"r1": 16}, None, 1),
    ("t16_emulate_hiregs", "P: mov pc, r1; movs r2, #1", {"r1": "END"}, None, 1),
    ("t16_emulate_hiregs", "P: add pc, r1; movs r2, #1; movs r2, #2", {"r1": 2}, None, 1),
    ("t16_simulate_ldr_literal", "P: ldr r0, [pc, #4]", {}, None, 1),
    ("t16_simulate_ldr_literal", "nop; P: ldr r0, [pc, #4]", {}, None, 1),
    ("t16_simulate_ldrstr_sp_relative", "P: str r0, [sp, #4]; ldr r1, [sp, #4]",
     {"r0": 77}, None, 1),
    ("t16_simulate_ldrstr_sp_relative", "str r1, [sp, #4]; P: ldr r0, [sp, #4]",
     {"r1": 77}, None, 1),
    ("t16_simulate_reladr", "P: adr r0, lab; nop; nop; lab: nop", {}, None, 1),
    ("t16_simulate_reladr", "P: add r0, sp, #8", {}, None, 1),
    ("t16_simulate_cond_branch", "cmp r0, #0; P: beq lab; movs r1, #1; lab: nop",
     {"r0": 0}, None, 1),
    # its own condition fails: thumb_kprobe_skip steps over it, no hit
    ("t16_simulate_cond_branch", "cmp r0, #0; P: beq lab; movs r1, #1; lab: nop",
     {"r0": 1}, None, 0),
    ("t16_simulate_branch", "b fwd; back: movs r1, #3; b end; fwd: P: b back", {}, None, 1),
    ("t32_simulate_table_branch", "P: tbb [pc, r0]; .byte 2; .byte 3; .byte 4; .byte 5; "
     "movs r1, #1; movs r1, #2; movs r1, #3; movs r1, #4", {"r0": 2}, None, 1),
    ("t32_simulate_table_branch", "P: tbh [pc, r0, lsl #1]; .short 4; .short 5; .short 6; "
     ".short 7; movs r1, #1; movs r1, #2; movs r1, #3; movs r1, #4", {"r0": 1}, None, 1),
    ("t32_simulate_table_branch", "P: tbb [r3, r0]; movs r1, #1; movs r1, #2; movs r1, #3",
     {"r0": 2, "r3": SCRATCH}, None, 1),
    ("t32_simulate_mrs", "cmp r1, #0; P: mrs r0, apsr", {"r1": 0}, None, 1),
    ("t32_simulate_cond_branch", "cmp r0, #0; P: beq.w lab; movs r1, #1; lab: nop",
     {"r0": 0}, None, 1),
    ("t32_simulate_cond_branch", "cmp r0, #0; P: beq.w lab; movs r1, #1; lab: nop",
     {"r0": 1}, None, 0),
    ("t32_simulate_cond_branch", "b fwd; back: movs r1, #3; b end; fwd: cmp r0, #0; "
     "P: bne.w back", {"r0": 1}, None, 1),
    ("t32_simulate_branch", "P: b.w lab; movs r1, #1; lab: nop", {}, None, 1),
    ("t32_simulate_branch", "P: bl lab; movs r1, #1; lab: nop", {}, None, 1),
    ("t32_simulate_branch", "cmp r0, #0; it ne; P: blne lab; movs r1, #1; lab: nop",
     {"r0": 1}, None, 1),
    ("t32_simulate_branch", "P: blx ARM; b end; movs r1, #1", {}, None, 1),
    ("t32_simulate_ldr_literal", "P: ldr.w r0, [pc, #8]", {}, None, 1),
    ("t32_simulate_ldr_literal", "nop; P: ldr.w r0, [pc, #8]", {}, None, 1),
    ("t32_simulate_ldr_literal", "P: ldrh.w r0, [pc, #6]", {}, None, 1),
    ("t32_simulate_ldr_literal", "nop; nop; nop; nop; P: ldrsh.w r0, [pc, #-6]", {}, None, 1),
    ("t32_simulate_ldr_literal", "nop; nop; nop; nop; P: ldrsb.w r0, [pc, #-9]", {}, None, 1),
    ("t32_simulate_ldr_literal", "cmp r0, #0; it ne; P: ldrne.w r1, [pc, #8]",
     {"r0": 1}, None, 1),
    ("t32_emulate_ldrdstrd", "P: ldrd r2, r3, [pc, #8]", {}, None, 1),
    ("t32_emulate_ldrdstrd", "nop; P: ldrd r2, r3, [pc, #8]", {}, None, 1),
    ("t32_emulate_ldrdstrd", "P: ldrd r2, r3, [r0, #8]!", {"r0": SCRATCH}, None, 1),
    ("t32_emulate_ldrdstrd", "P: strd r2, r3, [r0], #8",
     {"r0": SCRATCH, "r2": 1, "r3": 2}, None, 1),
    ("t32_emulate_ldrstr", "P: ldr r0, [r1, #4]!", {"r1": SCRATCH}, None, 1),
    ("t32_emulate_ldrstr", "P: str lr, [sp, #-4]!; ldr r0, [sp], #4", {"lr": 0x55}, None, 1),
    ("t32_emulate_ldrstr", "P: ldr.w r0, [r1, r2, lsl #2]",
     {"r1": SCRATCH, "r2": 3}, None, 1),
    ("t32_emulate_ldrstr", "push {r5}; P: ldr pc, [sp], #4; movs r2, #1",
     {"r5": "END"}, None, 1),
    ("t32_emulate_ldrstr", "P: ldr.w pc, [r1]; movs r2, #1", {"r1": SCRATCH}, b"END!", 1),
    ("t32_emulate_rd8rn16rm0_rwflags", "P: adds.w r0, r1, r2",
     {"r1": 0x7FFFFFFF, "r2": 1}, None, 1),
    ("t32_emulate_rd8rn16rm0_rwflags", "P: tst.w r1, #0x80000000",
     {"r1": 0x80000000}, None, 1),
    ("t32_emulate_rd8rn16rm0_rwflags", "P: cmp.w r8, r9", {"r8": 3, "r9": 5}, None, 1),
    ("t32_emulate_rd8rn16rm0_rwflags", "P: add.w sp, sp, r1; sub.w sp, sp, r1",
     {"r1": 8}, None, 1),
    ("t32_emulate_rd8rn16rm0_rwflags", "P: ssat r0, #8, r1", {"r1": 0x1000}, None, 1),
    ("t32_emulate_rd8rn16rm0_rwflags", "P: lsls.w r0, r1, r2",
     {"r1": 0x80000001, "r2": 1}, None, 1),
    ("t32_emulate_rd8rn16rm0_rwflags", "cmp r0, #0; itt ne; addne r1, r1, #1; "
     "P: addne.w r2, r2, #1", {"r0": 1}, None, 1),
    ("t32_emulate_rd8pc16_noflags", "P: addw r0, pc, #5", {}, None, 1),
    ("t32_emulate_rd8pc16_noflags", "nop; P: subw r0, pc, #5", {}, None, 1),
    ("t32_emulate_rd8rn16_noflags", "movw r0, #0x1234; P: movt r0, #0x5678", {}, None, 1),
    ("t32_emulate_rd8rn16_noflags", "P: bfi r0, r1, #4, #8",
     {"r0": 0xFFFFFFFF, "r1": 0}, None, 1),
    ("t32_emulate_rd8rn16_noflags", "P: rev.w r0, r1", {"r1": 0x11223344}, None, 1),
    ("t32_emulate_rdlo12rdhi8rn16rm0_noflags", "P: smull r0, r1, r2, r3",
     {"r2": 0xFFFFFFF0, "r3": 7}, None, 1),
    ("t32_emulate_rdlo12rdhi8rn16rm0_noflags", "P: mla r0, r1, r2, r3",
     {"r1": 3, "r2": 5, "r3": 7}, None, 1),
    ("emulate_generic_r0_12_noflags", "P: ldm.w r0, {r1, r2, r3}", {"r0": SCRATCH}, None, 1),
    ("emulate_generic_r0_12_noflags", "P: ldmia.w r0!, {r4-r11}", {"r0": SCRATCH}, None, 1),
    ("emulate_generic_r2_14_noflags", "P: push.w {r4, lr}", {"r4": 1, "lr": 2}, None, 1),
    ("emulate_ldm_r3_15", "push {r4, r5}; P: pop.w {r4, pc}; movs r2, #1",
     {"r4": 9, "r5": "END"}, None, 1),
    ("simulate_ldm1stm1", "P: stmdb r1!, {r0, lr}", {"r1": SCRATCH + 64, "r0": 3, "lr": 4},
     None, 1),
    ("simulate_ldm1_pc", "P: ldmia.w r1, {r0, pc}; movs r2, #1", {"r1": SCRATCH},
     b"\x01\x02\x03\x04END!", 1),
]


def _assemble(text: str, base: int, stub: int) -> bytes:
    return bytes(_KS.asm(text.replace("ARM", f"#{stub:#x}"), base)[0])


def _offset(text: str, label: str, base: int, stub: int) -> int:
    """Where ``label:`` is in ``text`` assembled at ``base``: its instruction's
    place in the disassembly (only instructions may come before "P:"), or, for
    "end:" after data, the length of what precedes it with the labels it only
    refers to put right after it."""
    prefix = text.split(f"{label}:")[0]
    if label == "P":
        count = sum(1 for s in prefix.split(";") if re.sub(r"^(\s*\w+:)*\s*", "", s))
        addrs = [a for a, *_ in _CS.disasm_lite(_assemble(text, base, stub), base)]
        return addrs[count] - base
    ahead = {t for t in _BRANCH_TARGET.findall(prefix) if f"{t}:" not in prefix}
    filler = "".join(f"; {t}: nop" for t in ahead)
    return len(_assemble(prefix + " nop" + filler, base, stub)) - 2 * (len(ahead) + 1)


@pytest.fixture(scope="module")
def thumb2_build():
    return build("arm", overrides={"THUMB2_KERNEL": "y", "KPROBES": "y"})


def run(kernel, text: str, regs: dict, memory: bytes, probe: bool) -> tuple[dict, bytes, int,
                                                                               str | None]:
    """``text`` from a scratch text area (kmalloc's, never run here) in a fresh
    guest until "end:", in Thumb state; with a kprobe (empty pre_handler) on
    the instruction after "P:" if ``probe``. Returns the registers, the
    scratch page, the hits and the handler the probe got."""
    g = Guest(kernel, workload="kmalloc", size=1)
    kprobes = Kprobes(g)
    # 2 mod 4, whatever kmalloc's own alignment: the cases' PC-relative
    # encodings (adr's 16-bit form, literal loads) assume it
    base = (g.image.symbols["kmalloc"] & ~3) + 2
    stub = (base + ARM_STUB) & ~3
    end = base + _offset(text, "end", base, stub)
    code = _assemble(text, base, stub).ljust(stub - base, b"\0")
    with g.machine.text_mutex:
        g.machine.write_text(base, code + bytes(_KS_ARM.asm("mov r2, #7; bx lr", stub)[0]))
    g.machine.map(SCRATCH, SCRATCH_SIZE, "rw")
    page = memory.replace(b"END!", struct.pack("<I", end | 1))
    g.machine.write(SCRATCH, page.ljust(SCRATCH_SIZE, b"\0"))
    kp = None
    if probe:
        kp = kprobes.register_kprobe(Kprobe(addr=base + _offset(text, "P", base, stub),
                                            pre_handler="kprobe_empty_pre_handler"))
    cpu = g.machine.cpus[0]
    stack = g.image.symbols["init_stacks"]
    g.machine.write_word(stack, 0)                          # thread_info.cpu
    named = {"END": end | 1, "ARM": stub}
    for name, value in {"sp": stack + 8192 - 512, **regs}.items():
        cpu.set_reg(name, named.get(value, value))
    cpu.set_reg("cpsr", cpu.reg("cpsr") & ~0xF80F0000 | 0x20)
    cpu.pc = base | 1

    run_to(g, cpu, end)
    out = {f"r{i}": cpu.reg(f"r{i}") for i in range(13)}
    out.update(sp=cpu.reg("sp"), lr=cpu.reg("lr"),
               cpsr=cpu.reg("cpsr") & 0xF80FFC20)           # flags, GE, ITSTATE, T
    return (out, g.machine.read(SCRATCH, SCRATCH_SIZE), kp.hits if kp else 0,
            kprobes.kind(kp) if kp else None)


def _first_per_handler(cases: list[tuple]) -> list:
    """Each handler's first case in the fast subset; its further cases (a guest
    pair each, 105 in all) in ``make test`` only (the slow marker)."""
    seen: set[str] = set()
    params = []
    for case in cases:
        marks = [pytest.mark.slow] if case[0] in seen else []
        seen.add(case[0])
        params.append(pytest.param(*case, marks=marks, id=f"{case[0]}: {case[1]}"))
    return params


@pytest.mark.parametrize("handler, text, regs, memory, hits", _first_per_handler(CASES))
def test_probed_equals_unprobed_in_the_guest(thumb2_build, handler: str, text: str,
                                             regs: dict, memory: bytes | None,
                                             hits: int) -> None:
    text = f"{text}; {DATA}"
    memory = MEMORY if memory is None else memory
    plain, plain_page, _, _ = run(thumb2_build, text, regs, memory, probe=False)
    probed, probed_page, probe_hits, kind = run(thumb2_build, text, regs, memory, probe=True)
    assert kind == handler
    assert probe_hits == hits
    assert probed == plain
    assert probed_page == plain_page


def test_the_cases_reach_every_handler() -> None:
    assert {case[0] for case in CASES} == set(THUMB_HANDLERS)
