"""DWARF register numbers for 32-bit ARM, by the Unicorn register names of this package.

"DWARF for the ARM Architecture" (ARM IHI 0040), core registers: 0-15 are
r0-r15, with 13 sp, 14 lr and 15 pc.
"""
DWARF_REGS: dict[int, str] = {**{n: f"r{n}" for n in range(13)}, 13: "sp", 14: "lr", 15: "pc"}
