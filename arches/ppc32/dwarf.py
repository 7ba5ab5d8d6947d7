"""DWARF register numbers for 32-bit PowerPC, by the Unicorn register names of this package.

System V ABI PowerPC Processor Supplement (1995), "DWARF Register Number
Mapping": 0-31 are r0-r31; special-purpose register n is 100 + n, so the
link register (SPR 8) is 108 and the count register (SPR 9) 109.
"""
DWARF_REGS: dict[int, str] = {**{n: f"r{n}" for n in range(32)}, 108: "lr", 109: "ctr"}
