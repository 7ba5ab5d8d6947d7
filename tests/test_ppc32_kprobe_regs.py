"""PowerPC kprobes keep XER and MSR exact (arches/ppc32/kprobes.py, asm/kprobes-core.h).

Unicorn 2.1.4 reads and writes XER without SO, OV and CA (QEMU keeps them
in env->so/ov/ca), so kisim's guest trap entry saves XER with mfxer and
its exception return restores it with mtxer, as the kernel's exception
prologue and ret_from_except do. A probed mfmsr is emulated from the saved
MSR (arch/powerpc/lib/sstep.c, MFMSR), never single-stepped with MSR_SE.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

import capstone
import pytest

import arches
from kbuild import build
from probes.kprobes import Kprobe, Kprobes
from sim.guest import Guest

XER_SO, XER_OV, XER_CA = 1 << 31, 1 << 30, 1 << 29
CR0_SO = 1 << 28
MSR_SE = 1 << 10
MSR_MASK = 0x87C0FFFF                 # arch/powerpc/lib/sstep.c, 32-bit
MASK32 = 0xFFFFFFFF


@pytest.fixture(scope="module")
def image():
    return build("ppc32")


def guest(image) -> Guest:
    return Guest(image, cpus=1, workload="kmalloc", size=30)


def find(g: Guest, function: str, want) -> list[tuple[int, str, str]]:
    """(address, mnemonic, operands) of ``function``'s instructions ``want`` accepts,
    each with its successor: ``want(insn, next_insn)``."""
    start, size = next((a, s) for a, s, n in g.image.functions if n == function)
    md = capstone.Cs(*g.arch.cs_mode)
    insns = [(a, m, o) for a, _, m, o in md.disasm_lite(g.machine.read(start, size), start)]
    found = [insn for insn, nxt in zip(insns, insns[1:]) if want(insn, nxt)]
    assert found, f"no such instruction in {function}"
    return found


def subfze(g: Guest) -> tuple[int, str, str]:
    """vsnprintf's ``subfze rD, rA`` (rD = ~rA + CA: the high word of a negation,
    CA from the subfic before it); the kmalloc workload prints 0 once (CA = 1)
    and another number once (CA = 0)."""
    return find(g, "vsnprintf", lambda i, n: i[1] == "subfze")[0]


def operands(text: str) -> list[str]:
    return [op.strip() for op in text.split(",")]


def test_handlers_read_the_carry(image) -> None:
    """regs->xer holds CA as the probed instruction sees it: subfze's result,
    stepped after the pre_handler, agrees with the CA the handler read."""
    g = guest(image)
    addr, _, ops = subfze(g)
    rd, ra = operands(ops)
    seen: list[tuple[int, int]] = []
    after: list[int] = []
    kp = Kprobes(g).register_kprobe(Kprobe(
        addr=addr, pre_handler=lambda kp, r: seen.append((r["xer"], r[ra])),
        post_handler=lambda kp, r: after.append(r[rd])))
    assert g.run().ok and kp.hits == len(seen) == len(after) >= 2
    cas = [bool(xer & XER_CA) for xer, _ in seen]
    assert True in cas and False in cas                 # both values were read
    assert after == [(~a + ca) & MASK32 for (_, a), ca in zip(seen, cas)]


@pytest.mark.parametrize("carry", [0, 1])
def test_handlers_write_the_carry(image, carry: int) -> None:
    """A CA written by a pre_handler is the CA the probed instruction uses
    (the workload's own CA is 1 on one hit and 0 on the other)."""
    g = guest(image)
    addr, _, ops = subfze(g)
    rd, ra = operands(ops)
    inputs: list[int] = []
    after: list[int] = []

    def pre(kp: Kprobe, regs) -> None:
        regs["xer"] = regs["xer"] & ~XER_CA | (XER_CA if carry else 0)
        inputs.append(regs[ra])

    kp = Kprobes(g).register_kprobe(Kprobe(addr=addr, pre_handler=pre,
                                           post_handler=lambda kp, r: after.append(r[rd])))
    assert g.run().ok and kp.hits == len(after) >= 2
    assert after == [(~a + carry) & MASK32 for a in inputs]


def cmp_then_branch(g: Guest) -> tuple[int, int]:
    """kmalloc's first compare into cr0 and the conditional branch that reads
    it (nothing between them writes cr0): (the compare's address, the branch's)."""
    start, size = next((a, s) for a, s, n in g.image.functions if n == "kmalloc")
    md = capstone.Cs(*g.arch.cs_mode)
    insns = [(a, m, o) for a, _, m, o in md.disasm_lite(g.machine.read(start, size), start)]
    first = next(i for i, (_, m, o) in enumerate(insns)
                 if m.startswith("cmp") and not o.startswith("cr"))
    for addr, mnemonic, _ in insns[first + 1:]:
        assert not mnemonic.startswith("cmp") and not mnemonic.endswith("."), mnemonic
        if mnemonic.startswith("b") and mnemonic not in ("b", "bl"):
            return insns[first][0], addr
    raise AssertionError("no branch after the compare")


@pytest.mark.parametrize("probe_compare", [False, True], ids=["unprobed-cmp", "probed-cmp"])
def test_summary_overflow_reaches_the_compare(image, probe_compare: bool) -> None:
    """SO and OV set by a handler stay set in the live XER: the next compare
    (executed, or emulated by emulate_step) copies SO into cr0, and later
    probes read SO and OV back."""
    g = guest(image)
    compare, branch = cmp_then_branch(g)
    k = Kprobes(g)

    def set_so(kp: Kprobe, regs) -> None:
        regs["xer"] |= XER_SO | XER_OV

    entry = g.image.symbols["kmalloc"]
    k.register_kprobe(Kprobe(addr=entry, pre_handler=set_so))
    if probe_compare:
        cmp_kp = k.register_kprobe(Kprobe(addr=compare, pre_handler="kprobe_empty_pre_handler"))
    seen: list[tuple[int, int]] = []
    k.register_kprobe(Kprobe(addr=branch, pre_handler=lambda kp, r: seen.append(
        (r["cr"], r["xer"]))))
    assert g.run().ok and len(seen) > 2
    if probe_compare:
        assert k.kind(cmp_kp) == "emulate_step (boosted)"
    assert all(cr & CR0_SO for cr, _ in seen)
    assert all(xer & (XER_SO | XER_OV) == XER_SO | XER_OV for _, xer in seen)


def test_saved_xer_is_not_written_by_the_host(image) -> None:
    """The host leaves XER to the guest's prologue and exception return."""
    ops = Kprobes(guest(image)).ops
    assert ops.GUEST_SAVED_REGS == ("xer",) and ops.TRAP_ENTRY == "kprobe_exc_entry"
    assert "xer" in ops.PT_REGS and not ops.EXTRA_REGS
    header = (Path(arches.__file__).parent / "ppc32/include/asm/kprobes.h").read_text()
    defines = dict(re.findall(r"#define\s+(\w+)\s+(\d+)\b", header))
    assert int(defines["KPROBE_REGS_ABOVE_SP"]) == ops.STACK_HEADROOM     # kprobe_exc_return
    assert int(defines["PT_XER"]) == ops.PT_REGS.index("xer")             # kprobe_exc_entry


def x_form(rd: int, ra: int, rb: int, xo: int) -> bytes:
    """An opcode-31 X/XO-form instruction (Power ISA Book I §1.6)."""
    return struct.pack(">I", 31 << 26 | rd << 21 | ra << 16 | rb << 11 | xo << 1)


#: Instructions emulate_step now emulates, each writing only r3 (and XER's CA):
#: mfmsr r3; addc r3, r29, r29 (r29: kmalloc's size); lwzx r3, 0, r1 (the back chain).
PATCHED = {"mfmsr": x_form(3, 0, 0, 83), "addc": x_form(3, 29, 29, 10),
           "lwzx": x_form(3, 0, 1, 23)}


def patched_site(g: Guest, insn: bytes) -> int:
    """kmalloc's ``li r3, 0`` before its size check's branch: r3 is dead for
    every size the workload asks (<= 4096), so it may become ``insn``."""
    (addr, _, _), = find(g, "kmalloc", lambda i, n: (i[1], i[2]) == ("li", "r3, 0")
                         and n[1] == "bgt")[:1]
    g.machine.write(addr, insn)
    return addr


def after_patched(image, insn: bytes, probed: bool) -> list[tuple[int, int]]:
    """(r3, XER) after the patched-in ``insn``, read by a probe on the next instruction."""
    g = guest(image)
    site = patched_site(g, insn)
    k = Kprobes(g)
    if probed:
        kp = k.register_kprobe(Kprobe(addr=site, pre_handler="kprobe_empty_pre_handler"))
    seen: list[tuple[int, int]] = []
    k.register_kprobe(Kprobe(addr=site + 4, pre_handler=lambda kp, r: seen.append(
        (r["r3"], r["xer"]))))
    assert g.run().ok and seen
    if probed:
        assert kp.hits == len(seen)
        assert k.kind(kp) == "emulate_step (boosted)"
    return seen


@pytest.mark.parametrize("name", sorted(PATCHED))
def test_emulated_instruction_equals_the_unprobed_one(image, name: str) -> None:
    """emulate_step's result (boosted: no single-step) equals the instruction's own."""
    assert after_patched(image, PATCHED[name], True) == after_patched(image, PATCHED[name], False)


def test_probed_mfmsr_never_shows_the_single_step_bit(image) -> None:
    """sstep.c emulates mfmsr as regs->msr & MSR_MASK (0x440 on today's main)."""
    for value, _ in after_patched(image, PATCHED["mfmsr"], True):
        assert not value & MSR_SE and value == value & MSR_MASK
