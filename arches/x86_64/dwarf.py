"""DWARF register numbers for x86-64, by the Unicorn register names of this package.

System V AMD64 psABI, figure "DWARF Register Number Mapping": 0 rax,
1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the
return address (rip).
"""
DWARF_REGS: dict[int, str] = {
    0: "rax", 1: "rdx", 2: "rcx", 3: "rbx", 4: "rsi", 5: "rdi", 6: "rbp", 7: "rsp",
    **{n: f"r{n}" for n in range(8, 16)}, 16: "rip",
}
