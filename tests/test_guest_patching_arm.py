"""ARM (A32) guest patching (arches/arm/guest_patching.py, arches/arm/patching.c):
the encodings the checker classifies, the GICD_SGIR decoding, the IRQ entry
on a real CPU, the guest's builds, and one stop_machine() patch end to end."""
from __future__ import annotations

import ctypes
import struct
from pathlib import Path

import pytest
import unicorn

from arches import get_arch
from arches.arm import guest_patching as gp
from arches.base import FetchSync, GuestPatching
from kbuild.image import default_cache_dir
from patchcheck.guest_image import build_guest
from sim.asm import assemble, disassemble
from sim.elf import read_elf
from sim.machine import Machine

REPO = Path(__file__).resolve().parents[1]
ARM = get_arch("arm")
PATCHING_C = REPO / "arches/arm/patching.c"
PC_TEXT_BASE = 0x10000
PC_TEXT_ALIAS = 0x80000
THREAD_SIZE = 8192
PAGE = 4096


#: The A32 words of the instructions these tests decode, assembled once by Keystone
#: (sim.asm.assemble at 0x10000) and kept here: fetch_sync reads encoding bits, and
#: each word is checked to be the instruction named (Capstone, test_words_are_the_text).
WORDS = {
    "isb": 0xF57FF06F,
    "isb sy": 0xF57FF06F,
    "rfeia sp!": 0xF8BD0A00,
    "rfedb r0": 0xF9100A00,
    "rfeib r3!": 0xF9B30A00,
    "rfeda sp": 0xF81D0A00,
    "subs pc, lr, #4": 0xE25EF004,
    "subs pc, lr, #0": 0xE25EF000,
    "movs pc, lr": 0xE1B0F00E,
    "movseq pc, lr": 0x01B0F00E,
    "adds pc, lr, r0": 0xE09EF000,
    "ldm sp!, {r0-r3, pc}^": 0xE8FD800F,
    "ldmib r0, {pc}^": 0xE9D08000,
    "mcr p15, 0, r0, c7, c5, 4": 0xEE070F95,
    "mcr p15, 0, r0, c7, c5, 1": 0xEE070F35,
    "mcrne p15, 0, r0, c7, c5, 1": 0x1E070F35,
    "mcr p15, 0, r5, c7, c5, 1": 0xEE075F35,
    "mcrne p15, 0, r5, c7, c5, 1": 0x1E075F35,
    "mcr p15, 0, r12, c7, c5, 1": 0xEE07CF35,
    "mcrne p15, 0, r12, c7, c5, 1": 0x1E07CF35,
    "mcr p15, 0, sp, c7, c5, 1": 0xEE07DF35,
    "mcrne p15, 0, sp, c7, c5, 1": 0x1E07DF35,
    "mcr p15, 0, lr, c7, c5, 1": 0xEE07EF35,
    "mcrne p15, 0, lr, c7, c5, 1": 0x1E07EF35,
    "mcr p15, 0, r0, c7, c5, 0": 0xEE070F15,
    "mcr p15, 0, r3, c7, c1, 0": 0xEE073F11,
    "mcr p15, 0, r0, c7, c11, 1": 0xEE070F3B,
    "mcr p15, 0, r12, c7, c11, 1": 0xEE07CF3B,
    "strex r0, r1, [r2]": 0xE1820F91,
    "strexb r3, r4, [r5]": 0xE1C53F94,
    "strexh r0, r1, [r2]": 0xE1E20F91,
    "strexd r0, r2, r3, [r4]": 0xE1A40F92,
    "strexne r0, r1, [r2]": 0x11820F91,
    "str r0, [r1]": 0xE5810000,
    "ldrex r0, [r1]": 0xE1910F9F,
    "stm r0, {r1, r2}": 0xE8800006,
    "nop": 0xE320F000,
    "mov r0, r0": 0xE1A00000,
    "dsb ish": 0xF57FF04B,
    "dsb ishst": 0xF57FF04A,
    "dmb ish": 0xF57FF05B,
    "dmb ishst": 0xF57FF05A,
    "wfe": 0xE320F002,
    "wfi": 0xE320F003,
    "yield": 0xE320F001,
    "mcr p15, 0, r0, c7, c1, 6": 0xEE070FD1,
    "mcr p15, 0, r0, c7, c5, 6": 0xEE070FD5,
    "mcr p15, 0, r0, c7, c10, 5": 0xEE070FBA,
    "mrc p15, 0, r0, c7, c5, 1": 0xEE170F35,
    "mcr p15, 1, r0, c7, c5, 1": 0xEE270F35,
    "sub pc, lr, #4": 0xE24EF004,
    "cmp pc, lr": 0xE15F000E,
    "mov pc, lr": 0xE1A0F00E,
    "bx lr": 0xE12FFF1E,
    "ldm sp!, {r0, pc}": 0xE8BD8001,
    "srsdb sp!, #0x13": 0xF96D0513,
    "cpsid i": 0xF10C0080,
    "b .": 0xEAFFFFFE,
    "bl .": 0xEBFFFFFE,
    "add r5, r5, #2": 0xE2855002,
}


def _word(text: str) -> bytes:
    return struct.pack("<I", WORDS[text])


#: Capstone's spellings of what Keystone was given (aliases and preferred forms).
CAPSTONE_NAMES = {"ldm": ("pop", "ldm"), "mov": ("mov", "nop"), "mcr": ("mcr", "isb", "dmb")}


@pytest.mark.parametrize("text", sorted(WORDS))
def test_words_are_the_text(text):
    (insn,) = disassemble(ARM, _word(text), 0x10000)
    want = text.split()[0]
    assert insn.mnemonic in CAPSTONE_NAMES.get(want, (want,)), (text, insn.text)


# -- the capability as the registry sees it ---------------------------------

def test_registered_on_a32_and_thumb2():
    assert "guest_patching" in ARM.capabilities
    assert isinstance(ARM.ops, GuestPatching)
    thumb2 = ARM.variants["THUMB2_KERNEL"].ops
    assert isinstance(thumb2, gp.Thumb2GuestPatching)
    assert thumb2.PATCHING_C == ARM.ops.PATCHING_C, "one C file, compiled for either"
    assert thumb2.GUEST_ABLATIONS == {**ARM.ops.GUEST_ABLATIONS,
                                      "halfwords apart": "PC_ABLATE_HALFWORDS_APART"}
    assert "#ifdef PC_ABLATE_HALFWORDS_APART" in PATCHING_C.read_text()
    assert ARM.ops.PATCHING_C == "arches/arm/patching.c"
    assert (REPO / ARM.ops.PATCHING_C).is_file()
    assert ARM.ops.IRQ_ENTRY == "__irq_entry"
    assert ARM.ops.BREAKPOINT_ENTRY is None
    assert ARM.ops.IRQ_BASE % PAGE == 0
    assert ARM.ops.GUEST_ABLATIONS == {"stop_machine": "PC_ABLATE_NO_STOP_MACHINE",
                                       "flush": "PC_ABLATE_NO_FLUSH",
                                       "isb": "PC_ABLATE_NO_ISB",
                                       "dsb after clean": "PC_ABLATE_NO_DSB_CLEAN"}
    for macro in ARM.ops.GUEST_ABLATIONS.values():
        assert f"#ifdef {macro}" in PATCHING_C.read_text()


# -- fetch_sync -----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "isb", "isb sy", "rfeia sp!", "rfedb r0", "rfeib r3!", "rfeda sp",
    "subs pc, lr, #4", "subs pc, lr, #0", "movs pc, lr", "movseq pc, lr",
    "adds pc, lr, r0", "ldm sp!, {r0-r3, pc}^", "ldmib r0, {pc}^",
    "mcr p15, 0, r0, c7, c5, 4"])
def test_fetch_sync_serialize(text):
    assert ARM.ops.fetch_sync(_word(text)) == FetchSync("serialize")


@pytest.mark.parametrize("word", [0xF57FF060, 0xF57FF06F, 0xF57FF06A])
def test_fetch_sync_isb_any_option(word):
    assert ARM.ops.fetch_sync(struct.pack("<I", word)) == FetchSync("serialize")


@pytest.mark.parametrize("word, mnemonic", [(0xE160006E, "eret"), (0x0160006E, "ereteq"),
                                             (0xF8BD0A00, "rfeia")])
def test_fetch_sync_raw_words(word, mnemonic):
    """Words Keystone will not assemble (eret needs the Virtualization
    Extensions), read by Capstone for a cross-check."""
    code = struct.pack("<I", word)
    (insn,) = disassemble(ARM, code)
    assert insn.mnemonic == mnemonic
    assert ARM.ops.fetch_sync(code) == FetchSync("serialize")


@pytest.mark.parametrize("rt", ["r0", "r5", "r12", "sp", "lr"])
@pytest.mark.parametrize("cond", ["", "ne"])
def test_fetch_sync_icimvau(rt, cond):
    code = _word(f"mcr{cond} p15, 0, {rt}, c7, c5, 1")
    assert ARM.ops.fetch_sync(code) == FetchSync("invalidate", (rt,))
    assert rt in ARM.uc_regs
    # Capstone reads the same instruction
    (insn,) = disassemble(ARM, code)
    assert "c7, c5, #1" in insn.op_str.replace("c7, c5, 1", "c7, c5, #1")


@pytest.mark.parametrize("text", ["mcr p15, 0, r0, c7, c5, 0", "mcr p15, 0, r3, c7, c1, 0"])
def test_fetch_sync_whole_icache(text):
    assert ARM.ops.fetch_sync(_word(text)) == FetchSync("invalidate", ())


@pytest.mark.parametrize("rt", ["r0", "r12"])
def test_fetch_sync_clean(rt):
    assert ARM.ops.fetch_sync(_word(f"mcr p15, 0, {rt}, c7, c11, 1")) == FetchSync("clean", (rt,))


@pytest.mark.parametrize("text", ["strex r0, r1, [r2]", "strexb r3, r4, [r5]",
                                  "strexh r0, r1, [r2]", "strexd r0, r2, r3, [r4]",
                                  "strexne r0, r1, [r2]"])
def test_atomic_store(text):
    assert ARM.ops.atomic_store(_word(text))


@pytest.mark.parametrize("text", ["str r0, [r1]", "ldrex r0, [r1]", "stm r0, {r1, r2}"])
def test_not_atomic_store(text):
    assert not ARM.ops.atomic_store(_word(text))


@pytest.mark.parametrize("text", [
    "nop", "mov r0, r0", "dmb ish", "dmb ishst", "wfe", "wfi", "yield",
    "mcr p15, 0, r0, c7, c1, 6",            # BPIALLIS
    "mcr p15, 0, r0, c7, c5, 6",            # BPIALL
    "mcr p15, 0, r0, c7, c10, 5",           # CP15DMB
    "mrc p15, 0, r0, c7, c5, 1",            # an mrc of the same registers
    "mcr p15, 1, r0, c7, c5, 1",            # another opc1
    "sub pc, lr, #4",                       # no S: a branch, not an exception return
    "cmp pc, lr", "mov pc, lr", "bx lr", "ldm sp!, {r0, pc}", "srsdb sp!, #0x13",
    "cpsid i", "b .", "bl ."])
def test_fetch_sync_none(text):
    assert ARM.ops.fetch_sync(_word(text)) is None


@pytest.mark.parametrize("text", ["dsb ish", "dsb ishst"])
def test_fetch_sync_dsb_is_a_barrier(text):
    """A dsb completes the cache maintenance before it (ARMv7 ARM B2.2.9)."""
    assert ARM.ops.fetch_sync(_word(text)) == FetchSync("barrier")


def test_fetch_sync_short_code():
    assert ARM.ops.fetch_sync(b"\x6f\xf0") is None
    assert ARM.ops.fetch_sync(b"") is None


# -- GICD_SGIR ------------------------------------------------------------------

SGIR = 0xF00


@pytest.mark.parametrize("value, sender, cpus, targets", [
    (1 << 17 | 3, 0, 4, (1,)),                     # the list: CPU 1
    (0b1010 << 16 | 3, 0, 4, (1, 3)),
    (0b1111_0000 << 16 | 3, 0, 4, ()),             # CPUs past the machine's
    (0b1 << 16 | 3, 0, 2, (0,)),                   # the list may name the sender
    (0, 0, 4, ()),                                 # an empty list
    (1 << 24 | 3, 2, 4, (0, 1, 3)),                # all but the sender
    (2 << 24 | 3, 2, 4, (2,)),                     # the sender only
    (3 << 24 | 0xFF << 16 | 3, 0, 4, ()),          # reserved filter
    (0xF << 16 | 7, 1, 4, (0, 1, 2, 3)),           # any SGI number interrupts
])
def test_ipi_targets(value, sender, cpus, targets):
    assert ARM.ops.ipi_targets(SGIR, value, sender, cpus, bytes(PAGE)) == targets


@pytest.mark.parametrize("offset", [0, 4, 0xEFC, 0xF04, 0xF10])
def test_ipi_targets_other_registers(offset):
    assert ARM.ops.ipi_targets(offset, 1 << 17 | 3, 0, 4, bytes(PAGE)) == ()


def test_ipi_targets_what_the_guest_sends():
    # patching.c arch_send_call_function_ipi_mask(mask): mask << 16 | IPI_CALL_FUNC
    for cpu in range(4):
        assert ARM.ops.ipi_targets(SGIR, (1 << cpu) << 16 | gp.IPI_CALL_FUNC, 0, 4,
                                   bytes(PAGE)) == (cpu,)
    assert ARM.ops.ipi_targets(SGIR, 0b1110 << 16 | gp.IPI_CALL_FUNC, 0, 4,
                               bytes(PAGE)) == (1, 2, 3)


# -- the guest image -----------------------------------------------------------

@pytest.fixture(scope="module")
def guest() -> Path:
    return build_guest(ARM, (PATCHING_C,), (), default_cache_dir())


@pytest.mark.parametrize("macro", sorted(gp.GUEST_ABLATIONS.values()))
def test_ablations_build_and_differ(guest, macro):
    ablated = build_guest(ARM, (PATCHING_C,), (macro,), default_cache_dir())
    assert ablated.is_file() and ablated != guest
    text = _text_of(ablated)
    reference = _text_of(guest)
    assert text != reference


def _text_of(path: Path) -> bytes:
    return b"".join(seg.data for seg in read_elf(str(path)).segments)


def _function(image, name: str) -> list:
    """The instructions from symbol ``name`` to the next symbol."""
    start = image.symbols[name]
    end = min(a for a in image.symbols.values() if a > start)
    for seg in image.segments:
        if seg.vaddr <= start < seg.vaddr + len(seg.data):
            code = seg.data[start - seg.vaddr:end - seg.vaddr]
            return disassemble(ARM, code, start)
    raise AssertionError(f"{name} is in no loaded segment")


def test_guest_symbols_and_code(guest):
    image = read_elf(str(guest))
    for name in ("pc_patch", "pc_done", "pc_sites", "pc_stacks", "pc_nr_cpus",
                 gp.IRQ_ENTRY, gp.IRQ_ENTRY_SPSR, gp.IRQ_STACKS, "v7_coherent_kern_range"):
        assert name in image.symbols, name
    assert image.symbols[gp.IRQ_STACKS] % 8 == 0
    # the fixup stub falls into the entry
    spsr_stub = _function(image, gp.IRQ_ENTRY_SPSR)
    assert spsr_stub[-1].address + 4 == image.symbols[gp.IRQ_ENTRY]
    entry = _function(image, gp.IRQ_ENTRY)
    kinds = [ARM.ops.fetch_sync(i.bytes) for i in entry]
    assert FetchSync("serialize") in kinds                      # rfeia
    flush = _function(image, "v7_coherent_kern_range")
    syncs = [ARM.ops.fetch_sync(i.bytes) for i in flush]
    assert FetchSync("invalidate", ("r12",)) in syncs
    assert syncs.count(FetchSync("serialize")) == 1              # the final isb
    relax = _function(image, "cpu_relax")
    assert [i.text for i in relax][:1] == ["dmb ish"]        # smp_mb(), ARM_ERRATA_754327


def test_no_isb_ablation_drops_only_the_isb():
    image = read_elf(str(build_guest(ARM, (PATCHING_C,), ("PC_ABLATE_NO_ISB",),
                                     default_cache_dir())))
    flush = _function(image, "v7_coherent_kern_range")
    syncs = [ARM.ops.fetch_sync(i.bytes) for i in flush]
    assert FetchSync("serialize") not in syncs
    assert FetchSync("invalidate", ("r12",)) in syncs


# -- the IRQ entry on a real CPU --------------------------------------------------

class GuestCpu:
    """The GuestCpu protocol over a sim.machine CPU."""

    def __init__(self, machine: Machine, index: int, symbols) -> None:
        self.machine, self.index, self._symbols = machine, index, symbols
        self._cpu = machine.cpus[index]

    def reg(self, name: str) -> int:
        if name == "spsr":
            return self._cpu.uc.reg_read(unicorn.arm_const.UC_ARM_REG_SPSR)
        return self._cpu.reg(name)

    def set_reg(self, name: str, value: int) -> None:
        if name == "spsr":          # not in ARCH.uc_regs: Unicorn's own constant
            self._cpu.uc.reg_write(unicorn.arm_const.UC_ARM_REG_SPSR, value)
            return
        self._cpu.set_reg(name, value)

    def read_word(self, addr: int) -> int:
        return self.machine.read_word(addr, 4)

    def write_word(self, addr: int, value: int) -> None:
        self.machine.write_word(addr, value, 4)

    def symbol(self, name: str) -> int:
        return self._symbols[name]


def _spsr(cpu) -> int:
    return cpu.uc.reg_read(unicorn.arm_const.UC_ARM_REG_SPSR)


@pytest.fixture
def loaded(guest):
    machine = Machine(ARM, 2)
    image = machine.load_elf(str(guest))
    cpus = [GuestCpu(machine, i, image.symbols) for i in range(2)]
    stacks = image.symbols["pc_stacks"]
    for i, cpu in enumerate(cpus):
        machine.write_word(stacks + i * THREAD_SIZE, i, 4)          # thread_info.cpu
        cpu.set_reg("sp", stacks + (i + 1) * THREAD_SIZE - 16)
    machine.write_word(image.symbols["pc_nr_cpus"], 2, 4)
    machine.write_word(image.symbols["pc_online"], 0b11)
    return machine, image, cpus


def test_cpu_setup(loaded):
    machine, image, cpus = loaded
    for cpu in cpus:
        svc_sp = cpu.reg("sp")
        ARM.ops.cpu_setup(cpu)
        cpsr = cpu.reg("cpsr")
        assert cpsr & 0x1F == 0x13 and not cpsr & 0x20
        assert ARM.ops.irq_enabled(cpu)
        assert cpu.reg("sp") == svc_sp                          # SVC's own sp, untouched
        cpu.set_reg("cpsr", (cpsr & ~0x1F) | 0x12)              # look at IRQ mode's
        assert cpu.reg("sp") == image.symbols["irq_stacks"] + cpu.index * gp.IRQ_STACK_BYTES
        cpu.set_reg("cpsr", cpsr)
        assert cpu.reg("sp") == svc_sp


def test_irq_enabled_reads_cpsr_i(loaded):
    _machine, _image, (cpu, _) = loaded
    cpsr = cpu.reg("cpsr")
    cpu.set_reg("cpsr", cpsr | 0x80)
    assert not ARM.ops.irq_enabled(cpu)
    cpu.set_reg("cpsr", cpsr & ~0x80)
    assert ARM.ops.irq_enabled(cpu)


@pytest.fixture(params=["spsr_fixup", "spsr_register"])
def spsr_path(request, monkeypatch) -> bool:
    """Both ways irq_enter sets SPSR_irq: the register, when the CPU has it
    by name, or the guest's __irq_entry_spsr."""
    writable = request.param == "spsr_register"
    monkeypatch.setattr(gp, "_spsr_writable", lambda: writable)
    return writable


def test_irq_enter_as_the_hardware(loaded, spsr_path):
    machine, image, cpus = loaded
    cpu = cpus[1]
    ARM.ops.cpu_setup(cpu)
    svc_sp, svc_lr = cpu.reg("sp"), 0x1234
    cpu.set_reg("lr", svc_lr)
    cpu.set_reg("cpsr", cpu.reg("cpsr") | 0xF0000000)         # flags to carry over
    before = cpu.reg("cpsr")
    entry = image.symbols[gp.IRQ_ENTRY]
    goes_on = ARM.ops.irq_enter(cpu, entry, 0x10008)
    cpsr = cpu.reg("cpsr")
    assert cpsr & 0x1F == 0x12 and cpsr & 0x80 and cpsr & 0x100 and not cpsr & 0x20
    assert cpu.reg("lr") == 0x1000C                            # LR_irq = PC + 4
    if spsr_path:
        assert goes_on == entry and _spsr(machine.cpus[1]) == before
    else:
        assert goes_on == image.symbols[gp.IRQ_ENTRY_SPSR]
        irq_sp = cpu.reg("sp")
        assert cpu.read_word(irq_sp + gp.IRQ_STACK_SPSR) == before
    # SVC mode's banked registers are the interrupted code's
    cpu.set_reg("cpsr", (cpsr & ~0x1F) | 0x13)
    assert cpu.reg("sp") == svc_sp and cpu.reg("lr") == svc_lr


# -- end to end: CPU 0 patch_text()s while CPU 1 runs the text ------------------

LOOP = "l: add r5, r5, #1; b l"


@pytest.mark.parametrize("macro", [None, "PC_ABLATE_NO_STOP_MACHINE"])
def test_patch_text_end_to_end(macro, spsr_path):
    path = build_guest(ARM, (PATCHING_C,), (macro,) if macro else (), default_cache_dir())
    machine = Machine(ARM, 2)
    image = machine.load_elf(str(path))
    sym = image.symbols
    # the text page and its alias: one buffer, two mappings (patch_map())
    machine.map(PC_TEXT_BASE, PAGE, "rwx")
    region = machine.memory.find(PC_TEXT_BASE, 4)
    for cpu in machine.cpus:
        cpu.uc.mem_map_ptr(PC_TEXT_ALIAS, PAGE, unicorn.UC_PROT_READ | unicorn.UC_PROT_WRITE,
                           ctypes.addressof(region.buf))
    machine.map(gp.IRQ_BASE, PAGE, "rw")
    loop = assemble(ARM, LOOP, PC_TEXT_BASE)
    machine.write(PC_TEXT_BASE, loop)
    new = _word("add r5, r5, #2")
    machine.write(sym["pc_sites"], struct.pack("<III16s", PC_TEXT_BASE, 4, 0, new))
    machine.write_word(sym["pc_nr_cpus"], 2, 4)
    machine.write_word(sym["pc_online"], 0b11)

    cpus = [GuestCpu(machine, i, sym) for i in range(2)]
    for i, cpu in enumerate(cpus):
        machine.write_word(sym["pc_stacks"] + i * THREAD_SIZE, i, 4)
        cpu.set_reg("sp", sym["pc_stacks"] + (i + 1) * THREAD_SIZE)
        ARM.ops.cpu_setup(cpu)
    svc_sp = sym["pc_stacks"] + 2 * THREAD_SIZE - 4      # not 8-byte aligned
    cpus[1].set_reg("sp", svc_sp)
    sentinels = {r: 0x5EED0000 + n for n, r in enumerate(
        ("r0", "r1", "r2", "r3", "r4", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr"))}
    for reg, value in sentinels.items():
        cpus[1].set_reg(reg, value)
    cpus[1].set_reg("cpsr", cpus[1].reg("cpsr") & 0x0FFFFFFF | 0xA0000000)  # N and C
    cpus[0].set_reg("r0", 1)
    cpus[0].set_reg("lr", sym["pc_done"])
    machine.cpus[0].pc = sym["pc_patch"]
    machine.cpus[1].pc = PC_TEXT_BASE

    pending: list[set[int]] = [set(), set()]
    seen: list[list[tuple[int, FetchSync, tuple[int, ...]]]] = [[], []]
    done = []

    def on_store(uc, _access, addr, _size, value, sender):
        for target in ARM.ops.ipi_targets(addr - gp.IRQ_BASE, value, sender, 2, bytes(PAGE)):
            pending[target].add(sender)

    def on_code(uc, addr, size, index):
        if index == 0 and addr == sym["pc_done"]:
            done.append(addr)
            machine.cpus[0].stop_before()
            return
        kind = ARM.ops.fetch_sync(bytes(uc.mem_read(addr, 4)))
        if kind is not None:
            regs = tuple(uc.reg_read(ARM.uc_regs[r]) for r in kind.regs)
            seen[index].append((addr, kind, regs))

    for i, cpu in enumerate(machine.cpus):
        cpu.uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, on_store, i, gp.IRQ_BASE,
                        gp.IRQ_BASE + PAGE - 1)
        cpu.uc.hook_add(unicorn.UC_HOOK_CODE, on_code, i)

    irqs = 0
    for _round in range(20000):
        for i, cpu in enumerate(cpus):
            if i == 0 and done:
                continue
            if pending[i] and ARM.ops.irq_enabled(cpu):
                pending[i].clear()
                pc = machine.cpus[i].pc
                machine.cpus[i].pc = ARM.ops.irq_enter(cpu, sym[gp.IRQ_ENTRY], pc)
                irqs += 1
            machine.step(i, 7)
        if done:
            break
    assert done, "CPU 0 never reached pc_done"
    assert machine.read(PC_TEXT_BASE, 4) == new
    assert machine.read(PC_TEXT_BASE + 4, 4) == loop[4:]
    # CPU 0 flushed the site's line and synchronized its own fetch
    kinds0 = [(k, r) for _a, k, r in seen[0]]
    assert (FetchSync("invalidate", ("r12",)), (PC_TEXT_BASE,)) in kinds0
    assert (FetchSync("serialize"), ()) in kinds0
    cpu1 = machine.cpus[1]
    # let CPU 1 finish whatever it was doing and come back to its loop
    for _ in range(2000):
        if cpu1.pc in (PC_TEXT_BASE, PC_TEXT_BASE + 4):
            break
        machine.step(1, 1)
    assert cpu1.pc in (PC_TEXT_BASE, PC_TEXT_BASE + 4)
    assert ARM.ops.irq_enabled(cpus[1]) and cpu1.reg("cpsr") & 0x1F == 0x13
    assert cpu1.reg("sp") == svc_sp
    # the interrupted code's registers and flags, as it left them
    assert {r: cpu1.reg(r) for r in sentinels} == sentinels
    assert cpu1.reg("cpsr") >> 28 == 0xA
    assert cpu1.reg("r5") > 0
    if macro is None:
        # stop_machine(): CPU 1 took the IPI, spun in multi_cpu_stop() and left
        # through the exception return
        assert irqs == 1
        kinds1 = [k for _a, k, _r in seen[1]]
        assert kinds1[-1] == FetchSync("serialize")              # rfeia
        assert machine.read_word(sym["pc_stacks"] + THREAD_SIZE, 4) == 1
    else:
        assert irqs == 0
        assert not [k for _a, k, _r in seen[1]]
