"""Reference core for ARM: ARM Cortex-A9 MPCore with a PL310 (L2C-310) L2, 1.2 GHz.

Why this core: it is the most widely measured ARMv7-A SMP core of the
v5.10 era, and 7-cpu.com publishes a full latency table for one concrete
chip, the Samsung Exynos 4210 (dual Cortex-A9 at 1200 MHz, shared 1 MB L2),
so caches, memory and clock come from one machine. Predictor sizes are the
Cortex-A9 TRM's. Every figure names its source; modelling assumptions say so.
"""
from __future__ import annotations

from arches.base import (CacheLevel, Cost, Latency, PageTables, Predictor, Range,
                         ReferenceCore, Resource, Tlb, WalkStep, Window)

#: The range of an assumption no published figure bounds.
_HALVED = ("no published figure bounds it: halved and doubled (kisim's range for an "
           "unbounded assumption)")

_SEVEN_CPU = ("7-cpu.com 'ARM Cortex-A9' (https://7-cpu.com/cpu/Cortex-A9.html), Samsung Exynos "
              "4210, dual Cortex-A9 at 1200 MHz")
_TRM = "ARM Cortex-A9 Technical Reference Manual (DDI 0388)"

_LLVM = ("LLVM's Cortex-A9 scheduling model, llvm/lib/Target/ARM/ARMScheduleA9.td "
         "(CortexA9Model and its SchedWriteRes)")

_WINDOW = Window(
    dispatch=2, retire=2, rob=56, store_buffer=4, miss_buffers=4, writeback=1,
    source=_TRM + " sec. 2.1: dual instruction decode, 'out-of-order multi-issue with "
           "speculation'; " + _LLVM + ": IssueWidth 2, MicroOpBufferSize 56 ('based on the "
           "available renamed registers': " + _TRM + " sec. 2.1.1 maps 32 architectural onto 56 "
           "physical registers). A base written back (LDR/STR with writeback or post-index, "
           "LDM/STM with !, PUSH, POP) is the AGU's, one cycle after its sources: " + _LLVM
           + ", A9WriteAdr on A9UnitAGU of the default latency 1, 'only relevant for users of "
           "an updated address' (llvm-mca-19 runs a chain of post-indexed LDRs through their "
           "base at one per cycle); the TRM's tables B-2 and B-3 give only the loaded "
           "registers' latencies. MODELLING ASSUMPTIONS: retire 2 per cycle (range 2-4), the "
           "window is the 56 renamed registers (range 32-56: the true ROB size is not "
           "published), a 4-entry store buffer (range 4-8) and 4 outstanding L1 data "
           "linefills (range 2-4)",
    ranges={"retire": Range(2, 4, "retirement width is not published: from the 2-wide "
                                  "dispatch to twice it"),
            "rob": Range(32, 56, "the true ROB size is not published: from the 32 "
                                 "architectural to the 56 physical registers"),
            "store_buffer": Range(4, 8, "the A9's store buffer depth is not published: "
                                        "from the 4 modelled to twice it"),
            "miss_buffers": Range(2, 4, "outstanding linefills: 2 to the 4 modelled (the "
                                        "TRM's count was not retrieved)")})
#: A DMB's own cost (and SWP's, costed as one).
_BARRIER = Range(4, 40, "no A9 barrier cycle count is published: from an L1 hit (4) to "
                        "under twice an L2 hit (23)")
_RESOURCES = (
    Resource("alu", 2, "two integer pipes, ALU/MUL and ALU (" + _TRM + " sec. 2.1 figure; "
                       + _LLVM + ": A9UnitALU x2)"),
    Resource("mul", 1, "the multiplier of pipe 0 (" + _LLVM + ": A9UnitMul)"),
    Resource("ls", 1, "one load/store unit with its AGU (" + _LLVM + ": A9UnitLS, A9UnitAGU)"),
    Resource("branch", 1, _LLVM + ": A9UnitB"),
    Resource("system", 1, "MODELLING ASSUMPTION: CP15 and CPSR moves, barriers and DIV's "
                          "library call one at a time (range 1)"),
)
_LATENCIES = (
    Latency("alu", 1, 1, "alu", _LLVM + ": ALU 1 cycle, two per cycle (RThroughput 0.5)"),
    Latency("shift", 2, 1, "alu", _LLVM + ": WriteALUsi, an operand shifted by an immediate, "
                                  "2 cycles (by a register, A9WriteALUsr, 3: range 2-3)",
            ranges={"latency": Range(2, 3, "by an immediate (2) or by a register (3), "
                                           + _LLVM)}),
    Latency("mul", 4, 2, "mul", _LLVM + ": A9WriteM MUL/MLA 4 cycles, the multiplier busy 2"),
    Latency("div", 40, None, "system",
            "MODELLING ASSUMPTION: the Cortex-A9 has no divide instruction (" + _LLVM
            + " rejects SDIV/UDIV for cortex-a9); the guest, built for ARMv7 with the divide "
            "extension, uses SDIV/UDIV, costed as the __aeabi_idiv call an A9 kernel makes "
            "(range 20-100 cycles, depending on the operands)",
            ranges={"latency": Range(20, 100, "__aeabi_idiv's run time depends on the "
                                              "operands' magnitudes")}),
    Latency("load", 0, 1, "ls", "a load's latency is its access's (L1D 4 cycles, 7-cpu.com; "
                                + _LLVM + " has 3 to an ALU consumer); one per cycle"),
    Latency("store", 1, 1, "ls", _LLVM + ": A9WriteS, a store issues in one cycle"),
    Latency("branch", 1, 1, "branch", _LLVM + ": A9UnitB, one branch per cycle"),
    Latency("fence", 10, None, "system",
            "DMB beyond waiting for the older accesses and the store buffer: MODELLING "
            "ASSUMPTION 10 cycles (range 4-40; no A9 cycle count published, " + _TRM + ")",
            ranges={"latency": _BARRIER}),
    Latency("lfence", 10, None, "system", "not an ARM class (decode.c gives it no instruction); "
            "as DMB to make the table whole"),
    Latency("sfence", 10, None, "system", "not an ARM class (decode.c gives it no instruction); "
            "as DMB to make the table whole"),
    Latency("atomic", 10, None, "ls",
            "SWP locks the bus: costed as a DMB around the access (MODELLING ASSUMPTION, "
            "range 4-40)",
            ranges={"latency": _BARRIER}),
    Latency("system", 2, None, "system",
            "MRS, MSR, MCR, MRC: MODELLING ASSUMPTION 2 cycles (range 1-20; " + _LLVM
            + " gives no CP15 latency)",
            ranges={"latency": Range(1, 20, "no A9 figure for CP15 and CPSR moves, nor an "
                                            "LLVM latency: one cycle to 20")}),
    Latency("select", 1, 1, "alu", "not an ARM class (decode.c gives it no instruction: a "
            "conditional move is a mov with a condition, an ALU op); as the ALU"),
    Latency("carry", 1, 1, "alu", "not an ARM class (decode.c classes adc, sbc and rsc as "
            "ALU ops, as " + _LLVM + " does: WriteALU); as the ALU"),
)

_MAIN_TLB = (_TRM + " sec. 6.2: a main TLB of 4 lockable fully associative entries and a 2-way "
             "array of 2x32 to 2x256 entries, behind 32-entry micro-TLBs. MODELLING "
             "ASSUMPTION: 2x64 (128 entries, 2-way; the Exynos 4210's configuration is not "
             "published: range 64-512), one per side (the main TLB is unified), a micro-TLB "
             "miss that hits it free (range 0-few cycles)")
#: The main TLB's array, a build option of the A9: 2x32 to 2x256 entries.
_MAIN_TLB_SIZE = {"entries": Range(64, 512, "the A9's main-TLB array is built with 2x32 to "
                                            "2x256 entries (" + _TRM + " sec. 6.2)", "pow2")}
_TLBS = (Tlb("ITLB", 128, 2, "i", _MAIN_TLB, _MAIN_TLB_SIZE),
         Tlb("DTLB", 128, 2, "d", _MAIN_TLB, _MAIN_TLB_SIZE))
_PAGE_TABLES = PageTables(
    small=4096, large=1 << 20,
    steps=(WalkStep(20, 4096, 4, 0), WalkStep(12, 1 << 20, 4, 16384)),
    small_steps=2, large_steps=1,
    source="ARMv7 short-descriptor translation (ARM DDI 0406C B3.5): a first-level table of "
           "4096 4-byte entries indexed by address bits 31:20, a 1 MiB section resolved there, "
           "a 4 KiB page by a second-level entry indexed by bits 19:12. Linux maps lowmem and "
           "the kernel image with sections where aligned (arch/arm/mm/mmu.c, alloc_init_pmd, "
           "__map_init_section) and modules in 4 KiB vmalloc pages (arch/arm/kernel/module.c, "
           "module_alloc). The walk loads its entries through the data caches (cacheable "
           "walks per TTBR0's IRGN: MODELLING ASSUMPTION)")

CORE = ReferenceCore(
    name="ARM Cortex-A9 MPCore + PL310 L2 (Samsung Exynos 4210) 1.2 GHz",
    clock=Cost(1_200_000_000, _SEVEN_CPU + ": the chip whose latencies are used below"),
    caches=(
        CacheLevel("L1I", size=32 * 1024, line=32, ways=4, latency=4, holds="i", shared=False,
                   source=_SEVEN_CPU + ": L1I 32 KB 4-way; " + _TRM + " ch.7: 4-way, 32-byte "
                          "lines, VIPT. Hit latency: ASSUMPTION, taken equal to the 4-cycle L1D "
                          "figure (no instruction-side latency is published)",
                   ranges={"latency": Range(2, 8, _HALVED)}),
        CacheLevel("L1D", size=32 * 1024, line=32, ways=4, latency=4, holds="d", shared=False,
                   source=_SEVEN_CPU + ": L1D 32 KB 4-way 32 B/line PIPT, latency 4 cycles "
                          "including the micro-TLB; " + _TRM + " ch.7 confirms 4-way 32-byte lines"),
        CacheLevel("L2", size=1024 * 1024, line=32, ways=8, latency=23, holds="u", shared=True,
                   source=_SEVEN_CPU + ": L2 1 MB, 32 B/line, 23 cycles (4 + 19), one L2 shared "
                          "by both cores; associativity printed as '?' there: 8 ways is the "
                          "PL310's standard configuration (L2C-310: up to 8 ways, 16 as an "
                          "option; Microchip SAMA5D2 datasheet L2 cache controller section), an "
                          "ASSUMPTION for the Exynos part",
                   ranges={"ways": Range(8, 16, "the PL310 takes 8 ways, or 16 as an option "
                                                "(the L2C-310 configurations)", "pow2")}),
    ),
    memory=Cost(169,
                "measured: " + _SEVEN_CPU + ": RAM latency '37 cycles + 110 ns' (the 37 cycles "
                "include L2 and both TLB-miss steps); 110 ns x 1.2 GHz = 132 cycles, "
                "37 + 132 = 169 cycles"),
    transfer=Cost(23,
                  "DERIVED, not measured: the Cortex-A9 MPCore Snoop Control Unit returns a line "
                  "held in the other core's L1 directly to the requester instead of going to L2 "
                  "(ARM DDI 0407 Cortex-A9 MPCore TRM, SCU; Intel/Altera Cyclone V HPS TRM "
                  "'Implementation Details' of the SCU); costed as an L2 hit (23 cycles) since "
                  "no published A9 core-to-core latency was found"),
    predictor=Predictor(
        counters=4096, history_bits=10, btb_entries=512, btb_ways=2, return_stack=8,
        mispredict=8,
        source=_TRM + ", 'About the L1 instruction side memory system': 2-way BTAC of 512 "
               "entries, GHB of 4096 2-bit predictors, return stack of eight 32-bit entries "
               "(same in 7-cpu.com's table). History length: not published for A9; 10 bits is an "
               "ASSUMPTION borrowed from the Cortex-A8's GHB indexing (10-bit global history XOR "
               "address, as described in Stallings, Computer Organization and Architecture, "
               "Cortex-A8 section). Mispredict 8: NOT found in ARM's A9 text; ASSUMPTION equal "
               "to the commonly quoted 8-stage A9 integer pipeline, following ARM's own rule "
               "for the Cortex-A8 (DDI 0344 ch.16.4.1: penalty = integer pipeline length, 13)",
        ranges={"history_bits": Range(0, 12, "unpublished for A9: from a bimodal table (0) "
                                             "to history as wide as the 12-bit GHB index"),
                "mispredict": Range(8, 13, "from the A9's 8-stage integer pipeline to the "
                                           "A8's 13-cycle penalty (ARM's rule for the A8)")}),
    exception=Cost(121,
                   "measured: sel4bench 'Hardware null_syscall' on a Sabre Lite (i.MX6Q, quad "
                   "Cortex-A9 at 1 GHz): mean 121 cycles, stddev 0, for a system call (svc "
                   "entry + exception return) with a minimal kernel path; reported in "
                   "seL4/seL4 pull request #322 (2021-03-22). Cycle count, so clock-independent"),
    serialize=Cost(8,
                   "DERIVED: ISB/DSB flush the pipeline and refetch; costed as one refill of the "
                   "integer pipeline, the same 8 cycles as a mispredict (see predictor source); "
                   "no A9 cycle count for ISB/DSB published in the TRM text retrieved"),
    cache_op=Cost(4,
                  "ASSUMPTION, no published figure: a CP15 c7 clean/invalidate by MVA, beyond the "
                  "write-back it causes, costs one L1 tag lookup (the 4-cycle L1 hit); the "
                  "Inner-Shareable broadcast of the by-MVA ops is not costed separately",
                  ranges={"cycles": Range(2, 8, _HALVED)}),
    coherence="MESI",
    window=_WINDOW,
    resources=_RESOURCES,
    latencies=_LATENCIES,
    tlbs=_TLBS,
    page_tables=_PAGE_TABLES,
)
