"""x86-64's side of the patch checker's guest (``kisim patchcheck --guest``).

The guest C is ``arches/x86_64/patching.c`` (v5.10 arch/x86/kernel/alternative.c).
Here is the hardware it runs on, as the checker plays it:

- **The IPI** is a write of the local APIC's ICR (xAPIC, memory-mapped at
  0xFEE00000; Intel SDM vol. 3A §10.6.1 "Interrupt Command Register"): the
  destination is ICR2's bits 31:24 in physical mode, or the shorthand in
  ICR bits 19:18 (self, all, all but self).
- **Interrupt entry** through a 64-bit interrupt gate (SDM vol. 3A
  §6.14.2): the stack aligned to 16 bytes, SS, RSP, RFLAGS, CS and RIP
  pushed, IF and TF cleared. The guest returns with IRETQ, which needs
  real selectors: ``cpu_setup`` loads a GDT of the guest's (``gdt_page``).
- **What synchronizes fetch**: x86 keeps instruction fetch coherent with
  stores, and a CPU that executes a serializing instruction (SDM vol. 3A
  §8.3: IRET, CPUID, MOV to a control register, SERIALIZE among them)
  refetches; v5.10 ``sync_core()`` is an IRETQ to the next instruction.
"""
from __future__ import annotations

from unicorn import x86_const

from arches.base import FetchSync, GuestCpu, GuestPatching

PATCHING_C = "arches/x86_64/patching.c"
IRQ_BASE = 0xFEE00000                 # the local APIC (apicdef.h APIC_DEFAULT_PHYS_BASE)
IRQ_ENTRY = "asm_sysvec_call_function"
BREAKPOINT_ENTRY = "asm_exc_int3"     # do_int3 -> poke_int3_handler
GUEST_ABLATIONS = {
    "text_poke_sync after int3": "PC_ABLATE_NO_SYNC_AFTER_INT3",
    "IPI": "PC_ABLATE_NO_IPI",
    "int3 before tail": "PC_ABLATE_TAIL_FIRST",
    "bp_desc before int3": "PC_ABLATE_LATE_DESC",     # published after the int3s
    "text_poke_sync waits": "PC_ABLATE_NO_WAIT",      # on_each_cpu(..., 0)
    "refs wait": "PC_ABLATE_NO_REFS_WAIT",            # bp_desc dropped with a handler in it
}
#: The refs wait guards a poke_int3_handler() that entered after the last
#: text_poke_sync(): the int3 handler runs with interrupts masked, so a completed
#: sync has excluded every earlier one. Only an int3 that stays after the last sync
#: (an armed kprobe's) is hit then; on jump and call sites the wait is redundant.
GUEST_ABLATION_SITES = {"refs wait": ("kprobe",)}

APIC_ICR, APIC_ICR2 = 0x300, 0x310
SHORTHAND_SHIFT = 18                  # ICR bits 19:18: 0 none, 1 self, 2 all, 3 all but self
IF, TF = 0x200, 0x100
KERNEL_CS, KERNEL_DS = 0x08, 0x10     # gdt_page[1], gdt_page[2]
GDT_ENTRIES = 3

_SERIALIZING = (b"\x48\xcf", b"\xcf", b"\x0f\xa2", b"\x0f\x01\xe8", b"\x0f\x22")


def ipi_targets(offset: int, value: int, sender: int, cpus: int,
                page: bytes) -> tuple[int, ...]:
    """A write of the ICR's low half sends; ICR2 (written before) names the CPU."""
    if offset != APIC_ICR:
        return ()
    shorthand = (value >> SHORTHAND_SHIFT) & 3
    if shorthand == 0:
        dest = page[APIC_ICR2 + 3]
        return (dest,) if dest < cpus else ()
    every = range(cpus)
    return {1: (sender,), 2: tuple(every),
            3: tuple(c for c in every if c != sender)}[shorthand]


def irq_enabled(cpu: GuestCpu) -> bool:
    return bool(cpu.reg("rflags") & IF)


def irq_enter(cpu: GuestCpu, entry: int, pc: int) -> int:
    """Push the interrupt frame on the 16-byte aligned stack; clear IF and TF."""
    top = cpu.reg("rsp") & ~15
    frame = (pc, cpu.uc.reg_read(x86_const.UC_X86_REG_CS), cpu.reg("rflags"),
             cpu.reg("rsp"), cpu.uc.reg_read(x86_const.UC_X86_REG_SS))
    for i, word in enumerate(frame):
        cpu.write_word(top - 40 + 8 * i, word)
    cpu.set_reg("rsp", top - 40)
    cpu.set_reg("rflags", cpu.reg("rflags") & ~(IF | TF))
    return entry


def cpu_setup(cpu: GuestCpu) -> None:
    """Load the guest's GDT and its selectors, and enable interrupts."""
    cpu.uc.reg_write(x86_const.UC_X86_REG_GDTR,
                     (0, cpu.symbol("gdt_page"), 8 * GDT_ENTRIES - 1, 0))
    cpu.uc.reg_write(x86_const.UC_X86_REG_CS, KERNEL_CS)
    cpu.uc.reg_write(x86_const.UC_X86_REG_SS, KERNEL_DS)
    cpu.set_reg("rflags", cpu.reg("rflags") | IF)


def fetch_sync(code: bytes) -> FetchSync | None:
    """IRET(Q), CPUID, SERIALIZE and MOV to CRn serialize."""
    if code.startswith(_SERIALIZING):
        return FetchSync("serialize")
    return None


_PREFIXES = frozenset(b"\x26\x2e\x36\x3e\x64\x65\x66\x67\xf2\xf3")
LOCK, XCHG = 0xF0, (0x86, 0x87)


def atomic_store(code: bytes) -> bool:
    """A LOCK-prefixed instruction, or XCHG with a memory operand (locked by
    itself, SDM vol. 3A §8.1.2.1)."""
    i = 0
    while i < len(code) and code[i] in _PREFIXES | {LOCK}:
        if code[i] == LOCK:
            return True
        i += 1
    if i < len(code) and 0x40 <= code[i] <= 0x4F:          # REX
        i += 1
    return i + 1 < len(code) and code[i] in XCHG and code[i + 1] >> 6 != 3


class X86GuestPatching(GuestPatching, names=globals()):
    """arch/x86/kernel/alternative.c, in guest C."""
