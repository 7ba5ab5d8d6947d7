"""32-bit PowerPC's guest_patching capability (arches/ppc32/guest_patching.py,
arches/ppc32/patching.c): the encodings the checker watches, the MPIC IPI
dispatch register, and the external-interrupt entry on a real Unicorn.

Unicorn 2.1.4 gives the host no SRR0/SRR1, so irq_enter() leaves the
interrupted PC and MSR in pc_irq_srr[cpu] and pc_irq_entry loads them with
mtsrr0/mtsrr1; the end-to-end tests check that the stub's rfi comes back
with every register as it was (XER's SO/OV/CA, which the host cannot read,
through the guest's own mfxer), and that a real stop_machine() between two
CPUs runs through the IPI and the entry.
"""
from __future__ import annotations

from pathlib import Path

import capstone
import pytest
import unicorn

from arches import get_arch
from arches.base import FetchSync
from patchcheck.guest_image import build_guest
from sim.asm import assemble
from sim.machine import Machine

REPO = Path(__file__).resolve().parent.parent
ARCH = get_arch("ppc32")
HOOKS = ARCH.ops
PATCHING_C = REPO / "arches/ppc32/patching.c"
THREAD_SIZE = 8192
TEXT_BASE, TEXT_ALIAS, PAGE = 0x10000, 0x80000, 4096
MSR_EE = 0x8000
XER_SO_OV_CA = 0xE0000000


def word(text: str) -> bytes:
    return assemble(ARCH, text)


# -- fetch_sync ---------------------------------------------------------------------

@pytest.mark.parametrize("text, raw, want", [
    ("isync", 0x4C00012C, FetchSync("serialize")),
    ("rfi", 0x4C000064, FetchSync("serialize")),
    ("icbi 0, 3", 0x7C001FAC, FetchSync("invalidate", (None, "r3"))),
    ("icbi 4, 9", 0x7C044FAC, FetchSync("invalidate", ("r4", "r9"))),
    ("icbi 31, 0", 0x7C1F07AC, FetchSync("invalidate", ("r31", "r0"))),
    ("or 1, 1, 1", 0x7C210B78, None),
    ("or 2, 2, 2", 0x7C421378, None),        # HMT_medium: no spin hint
    ("sync", 0x7C0004AC, FetchSync("barrier")),
    ("lwsync", 0x7C2004AC, None),
    ("eieio", 0x7C0006AC, None),
    ("dcbst 0, 3", 0x7C00186C, FetchSync("clean", (None, "r3"))),
    ("dcbst 4, 9", 0x7C04486C, FetchSync("clean", ("r4", "r9"))),
    ("mtmsr 3", 0x7C600124, None),             # execution-, not context-synchronizing
    ("sc", 0x44000002, None),                  # kisim's hypercall
    ("nop", 0x60000000, None),
    ("b .+8", 0x48000008, None),
])
def test_fetch_sync(text, raw, want):
    code = word(text)
    assert code == raw.to_bytes(4, "big")
    assert HOOKS.fetch_sync(code) == want
    assert HOOKS.fetch_sync(code + b"\0" * 4) == want      # reads the first word only
    insn = next(capstone.Cs(*ARCH.cs_mode).disasm(code, 0))
    if want is not None and want.kind == "invalidate":
        assert insn.mnemonic == "icbi"
        ops = [op.strip() for op in insn.op_str.split(",")]
        assert ops[-1] == want.regs[1]
        assert (ops[0] in ("0", "r0")) == (want.regs[0] is None)
    elif want is not None and want.kind == "serialize":
        assert insn.mnemonic in ("isync", "rfi")


def test_fetch_sync_names_are_registers():
    for ra in range(32):
        for rb in (0, 7, 31):
            got = HOOKS.fetch_sync((0x7C0007AC | ra << 16 | rb << 11).to_bytes(4, "big"))
            assert got.kind == "invalidate"
            assert all(r is None or r in ARCH.uc_regs for r in got.regs)
            assert (got.regs[0] is None) == (ra == 0)


def test_fetch_sync_short_code():
    assert HOOKS.fetch_sync(b"\x4c\x00") is None


# -- the MPIC IPI dispatch register ----------------------------------------------------

def test_ipi_targets():
    page = bytes(PAGE)
    assert HOOKS.ipi_targets(0x40, 1 << 1, 0, 2, page) == (1,)
    assert HOOKS.ipi_targets(0x40, 0b1110, 0, 4, page) == (1, 2, 3)
    assert HOOKS.ipi_targets(0x40, 0b1110, 0, 2, page) == (1,)        # only CPUs that exist
    assert HOOKS.ipi_targets(0x40, 0, 0, 4, page) == ()
    for other in (0x0, 0x44, 0x50, 0x60, 0x70, 0x80, 0xB0, 0x1040):
        assert HOOKS.ipi_targets(other, 0b10, 0, 2, page) == ()


def test_unicorn_reports_the_stwbrx_register_value():
    """What the checker's write hook sees for out_le32(): the source register
    (the value the little-endian MPIC reads), while memory holds it reversed."""
    m = Machine(ARCH, 1)
    m.map(HOOKS.IRQ_BASE, PAGE, "rw")
    code = word("lis 3, 0x1234; ori 3, 3, 0x5678; stwbrx 3, 0, 4; stw 3, 4(4); b .")
    m.load_code(code, 0x20000)
    m.cpus[0].set_reg("r4", HOOKS.IRQ_BASE + 0x40)
    seen = []
    m.cpus[0].uc.hook_add(unicorn.UC_HOOK_MEM_WRITE,
                          lambda uc, acc, addr, size, value, ud: seen.append((addr, value)),
                          None, HOOKS.IRQ_BASE, HOOKS.IRQ_BASE + PAGE - 1)
    m.step(0, 4)
    assert seen == [(HOOKS.IRQ_BASE + 0x40, 0x12345678), (HOOKS.IRQ_BASE + 0x44, 0x12345678)]
    assert m.read(HOOKS.IRQ_BASE + 0x40, 8) == bytes.fromhex("78563412" "12345678")


# -- the guest image -----------------------------------------------------------------

@pytest.fixture(scope="module")
def elf() -> Path:
    return build_guest(ARCH, (PATCHING_C,))


def functions(path: Path) -> dict[str, list[tuple[int, str, str]]]:
    """Each function of the image's text, disassembled."""
    from sim.elf import read_elf
    image = read_elf(path)
    md = capstone.Cs(*ARCH.cs_mode)
    text = image.sections[".text"]
    out = {}
    for start, size, name in image.functions:
        data = text.data[start - text.addr:start - text.addr + size]
        out[name] = [(a, mn, ops) for a, _, mn, ops in md.disasm_lite(data, start)]
    return out


def test_constants():
    assert (REPO / HOOKS.PATCHING_C).is_file()
    assert HOOKS.BREAKPOINT_ENTRY is None
    assert HOOKS.IRQ_BASE % PAGE == 0
    assert not HOOKS.IRQ_BASE <= TEXT_BASE < HOOKS.IRQ_BASE + PAGE
    assert set(HOOKS.GUEST_ABLATIONS) == {"icbi", "isync", "dcbst", "sync after dcbst",
                                          "sync after icbi"}
    assert "guest_patching" in ARCH.capabilities


def patch_sequence(path: Path) -> list[str]:
    """The mnemonics of the first patch_instruction() in arch_patch_batch, from
    the alias store to the isync (or where it would be)."""
    insns = functions(path)["arch_patch_batch"]
    store = next(i for i, (_, mn, _) in enumerate(insns) if mn == "stw" and "0(" in insns[i][2]
                 and any(m == "mtmsr" for _, m, _ in insns[:i]))
    end = next(i for i in range(store, len(insns)) if insns[i][1] == "mtmsr")
    return [mn for _, mn, _ in insns[store:end] if mn in ("stw", "dcbst", "sync", "icbi", "isync")]


def test_builds_reference(elf):
    assert patch_sequence(elf) == ["stw", "dcbst", "sync", "icbi", "sync", "isync"]
    fns = functions(elf)
    assert [mn for _, mn, _ in fns["smp_mb"]].count("sync") == 1
    assert "eieio" in [mn for _, mn, _ in fns["smp_wmb"]]
    assert not {mn for _, mn, _ in fns["cpu_relax"]} - {"stwu", "stw", "mr", "lwz", "addi",
                                                           "blr"}       # barrier(): a frame only
    ipi = [mn for _, mn, _ in fns["arch_send_call_function_ipi_mask"]]
    assert "stwbrx" in ipi
    entry = [mn for _, mn, _ in fns[HOOKS.IRQ_ENTRY]]
    assert entry[-1] == "rfi" and "bl" in entry


@pytest.mark.parametrize("row, gone", [("icbi", "icbi"), ("isync", "isync"), ("dcbst", "dcbst")])
def test_builds_ablations(elf, row, gone):
    path = build_guest(ARCH, (PATCHING_C,), (HOOKS.GUEST_ABLATIONS[row],))
    assert path != elf
    want = [mn for mn in ["stw", "dcbst", "sync", "icbi", "sync", "isync"] if mn != gone]
    assert patch_sequence(path) == want
    batch = [mn for _, mn, _ in functions(path)["arch_patch_batch"]]
    assert gone not in batch


# -- the interrupt entry on Unicorn ------------------------------------------------------

class View:
    """The GuestCpu the hooks see (patchcheck.guest's adapter, for the tests)."""

    def __init__(self, machine: Machine, index: int, symbols) -> None:
        self.machine, self.index, self.symbols = machine, index, symbols
        self.uc = machine.cpus[index].uc

    def reg(self, name: str) -> int:
        return self.machine.cpus[self.index].reg(name)

    def set_reg(self, name: str, value: int) -> None:
        self.machine.cpus[self.index].set_reg(name, value)

    def read_word(self, addr: int) -> int:
        return self.machine.read_word(addr)

    def write_word(self, addr: int, value: int) -> None:
        self.machine.write_word(addr, value)

    def symbol(self, name: str) -> int:
        return self.symbols[name]


def guest_machine(elf: Path, cpus: int = 2) -> tuple[Machine, dict, list[View]]:
    m = Machine(ARCH, cpus)
    image = m.load_elf(str(elf))
    syms = image.symbols
    m.map(TEXT_BASE, PAGE, "rwx")
    m.map(TEXT_ALIAS, PAGE, "rw")
    m.map(HOOKS.IRQ_BASE, PAGE, "rw")
    m.write_word(syms["pc_nr_cpus"], cpus)
    m.write_word(syms["pc_online"], (1 << cpus) - 1)
    for i in range(cpus):
        base = syms["pc_stacks"] + THREAD_SIZE * i
        m.write_word(base, i)                                  # thread_info.cpu
        m.cpus[i].set_reg("r1", base + THREAD_SIZE - 64)
    return m, syms, [View(m, i, syms) for i in range(cpus)]


REGS = [f"r{i}" for i in range(32)] + ["cr", "ctr", "lr", "xer", "msr"]

# XER's SO/OV/CA and CR set by the guest (the host cannot reach SO/OV/CA), then a loop.
PROLOGUE = """
    lis 0, 0xe000
    ori 0, 0, 0x45
    mtxer 0
    lis 0, 0x1234
    ori 0, 0, 0x5678
    mtcrf 0xff, 0
    lis 0, 0x0bad
    ori 0, 0, 0xcafe
loop:
    b loop
check:
    mfxer 0
    mfcr 3
    b check
"""


def test_irq_enter_and_cpu_setup(elf):
    m, syms, views = guest_machine(elf)
    cpu = views[1]
    msr = cpu.reg("msr")
    HOOKS.cpu_setup(cpu)
    assert cpu.reg("msr") == msr | MSR_EE and HOOKS.irq_enabled(cpu)
    assert not HOOKS.irq_enabled(views[0])
    entry = syms[HOOKS.IRQ_ENTRY]
    assert HOOKS.irq_enter(cpu, entry, 0x10008) == entry
    assert not HOOKS.irq_enabled(cpu)
    assert cpu.reg("msr") == msr & ~MSR_EE
    save = syms["pc_irq_srr"] + 8 * 1
    assert m.read_word(save) == 0x10008 and m.read_word(save + 4) == msr | MSR_EE
    assert m.read_word(syms["pc_irq_srr"]) == 0                # CPU 0's untouched


def test_entry_stub_returns_with_every_register(elf):
    m, syms, views = guest_machine(elf)
    code = assemble(ARCH, PROLOGUE, TEXT_BASE)
    m.write(TEXT_BASE, code)
    loop, check = TEXT_BASE + 8 * 4, TEXT_BASE + 9 * 4
    c = m.cpus[1]
    sp = c.reg("r1")
    for i in range(2, 32):
        c.set_reg(f"r{i}", 0x01010101 * i & 0xFFFFFFFF)
    c.set_reg("ctr", 0xC7C7C7C7)
    c.set_reg("lr", 0x1A1A1A1C)
    c.pc = TEXT_BASE
    HOOKS.cpu_setup(views[1])
    m.step(1, 8)
    assert c.pc == loop
    before = {r: c.reg(r) for r in REGS}
    assert before["r1"] == sp and before["cr"] == 0x12345678 and before["msr"] & MSR_EE
    entry = syms[HOOKS.IRQ_ENTRY]
    c.pc = HOOKS.irq_enter(views[1], entry, loop)
    seen = set()
    for _ in range(2000):
        m.step(1, 1)
        seen.add(c.pc)
        if c.pc == loop:
            break
    assert c.pc == loop
    handler = syms["generic_smp_call_function_interrupt"]
    assert handler in seen
    assert {r: c.reg(r) for r in REGS} == before
    # below r1: the frame, 16-byte aligned, its back chain the interrupted r1
    frame = (sp - 192) & ~15
    assert m.read_word(frame) == sp
    # XER's SO/OV/CA, which only the guest sees
    c.pc = check
    m.step(1, 2)
    assert c.reg("r0") == 0xE0000045 and c.reg("r3") == 0x12345678


def test_stop_machine_through_the_ipi(elf):
    """CPU 0 runs stop_machine(); CPU 1 spins in the loop until the host takes the
    MPIC store as an IPI and enters it; both finish, CPU 1 back in its loop."""
    m, syms, views = guest_machine(elf)
    m.write(TEXT_BASE, assemble(ARCH, "loop: addi 5, 5, 1; b loop; done: b done", TEXT_BASE))
    done = TEXT_BASE + 8
    pending = [False, False]

    def on_irq_store(uc, access, addr, size, value, sender):
        for target in HOOKS.ipi_targets(addr - HOOKS.IRQ_BASE, value & 0xFFFFFFFF, sender,
                                        2, m.read(HOOKS.IRQ_BASE, PAGE)):
            pending[target] = True

    for c in m.cpus:
        c.uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, on_irq_store, c.index,
                      HOOKS.IRQ_BASE, HOOKS.IRQ_BASE + PAGE - 1)
        HOOKS.cpu_setup(views[c.index])
    c0, c1 = m.cpus
    # stop_machine(smp_mb, NULL, NULL): fn is any function; it returns to ``done``
    c0.pc = syms["stop_machine"]
    c0.set_reg("r3", syms["smp_mb"])
    c0.set_reg("r4", 0)
    c0.set_reg("r5", 0)
    c0.set_reg("lr", done)
    c1.pc = TEXT_BASE
    c1.set_reg("r5", 0)
    r1_before = c1.reg("r1")
    entered = 0
    for _ in range(20000):
        m.step(0, 3)
        if pending[1] and HOOKS.irq_enabled(views[1]):
            pending[1] = False
            entered += 1
            c1.pc = HOOKS.irq_enter(views[1], syms[HOOKS.IRQ_ENTRY], c1.pc)
        m.step(1, 3)
        if c0.pc == done and c1.pc in (TEXT_BASE, TEXT_BASE + 4) and entered:
            break
    assert c0.pc == done
    assert entered == 1 and not pending[0]
    assert c1.pc in (TEXT_BASE, TEXT_BASE + 4) and c1.reg("r1") == r1_before
    assert HOOKS.irq_enabled(views[0]) and HOOKS.irq_enabled(views[1])


def test_patch_batch_order_and_events(elf):
    """pc_patch(2): the out-of-line site's word first, each stored through the
    alias, then sync, icbi on the text address (rB holds it), sync and isync."""
    m, syms, views = guest_machine(elf, cpus=1)
    m.write(TEXT_BASE + 0x100, assemble(ARCH, "done: b done", TEXT_BASE + 0x100))
    sites = [(TEXT_BASE + 0x10, 0, "nop"), (TEXT_BASE + 0x40, 1, "li 3, 7")]
    for n, (addr, ool, text) in enumerate(sites):
        at = syms["pc_sites"] + 28 * n               # struct pc_site: 3 words, insn[16]
        m.write(at, addr.to_bytes(4, "big") + (4).to_bytes(4, "big") + ool.to_bytes(4, "big")
                + word(text) + bytes(12))
    stores, events = [], []
    c = m.cpus[0]
    c.uc.hook_add(unicorn.UC_HOOK_MEM_WRITE,
                  lambda uc, acc, addr, size, value, ud: stores.append((addr, value)),
                  None, TEXT_ALIAS, TEXT_ALIAS + PAGE - 1)

    def on_code(uc, addr, size, ud):
        event = HOOKS.fetch_sync(m.read(addr, 4))
        if event is not None:
            regs = tuple(None if r is None else c.reg(r) for r in event.regs)
            events.append((event.kind, sum(r or 0 for r in regs)))
    c.uc.hook_add(unicorn.UC_HOOK_CODE, on_code, None, 0x100000, 0x1FFFFF)
    HOOKS.cpu_setup(views[0])
    c.pc = syms["pc_patch"]
    c.set_reg("r3", 2)
    c.set_reg("lr", TEXT_BASE + 0x100)
    for _ in range(200):
        m.step(0, 1)
        if c.pc == TEXT_BASE + 0x100:
            break
    assert c.pc == TEXT_BASE + 0x100
    assert stores == [(TEXT_ALIAS + 0x40, 0x38600007), (TEXT_ALIAS + 0x10, 0x60000000)]
    assert events == [
        ("clean", TEXT_ALIAS + 0x40), ("barrier", 0), ("invalidate", TEXT_BASE + 0x40),
        ("barrier", 0), ("serialize", 0),
        ("clean", TEXT_ALIAS + 0x10), ("barrier", 0), ("invalidate", TEXT_BASE + 0x10),
        ("barrier", 0), ("serialize", 0)]
    assert HOOKS.irq_enabled(views[0])                 # local_irq_restore()


@pytest.mark.parametrize("text, atomic", [
    ("stwcx. 3, 0, 4", True), ("stw 3, 0(4)", False), ("lwarx 3, 0, 4", False),
    ("stwbrx 3, 0, 4", False)])
def test_atomic_store(text, atomic):
    assert HOOKS.atomic_store(word(text)) is atomic
