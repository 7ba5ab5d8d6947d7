"""Reference core for 32-bit PowerPC: Freescale MPC7447A (e600 class, "G4"), 1.0 GHz.

Why this core: the MPC7447A/7448 are the last and best-documented 32-bit
desktop/embedded PowerPC cores of the v5.10 era's ppc32 targets (PowerMac/
PowerBook G4, MPC86xx-class boards); Freescale's MPC7450 family manual and
the MPC7455/7447A hardware specifications give caches, load latencies and
predictor sizes. Fewer measured system figures exist than for the other two
reference cores; the derived values say what they are derived from.
"""
from __future__ import annotations

from arches.base import (CacheLevel, Cost, Latency, PageTables, Predictor, Range,
                         ReferenceCore, Resource, Tlb, WalkStep, Window)

#: The range of an assumption no published figure bounds.
_HALVED = ("no published figure bounds it: halved and doubled (kisim's range for an "
           "unbounded assumption)")

_HWSPEC = ("Freescale MPC7455 RISC Microprocessor Hardware Specifications Rev. 4.1, Table 1 "
           "'Microarchitecture Comparison' (MPC7450 family column)")
_UM = "Freescale MPC7450 RISC Microprocessor Family Reference Manual (MPC7450UM)"

_HS7447A = "Freescale MPC7447A RISC Microprocessor Hardware Specifications Rev. 5, sec. 2 Features"
_AN2203 = ("Freescale AN2203, 'MPC7450 RISC Microprocessor Family Software Optimization Guide', "
           "sec. 2.3.3")
_LLVM = ("LLVM's G4+ itineraries, llvm/lib/Target/PowerPC/PPCScheduleG4Plus.td (cycles per "
         "instruction class)")

_WINDOW = Window(
    dispatch=3, retire=3, rob=16, store_buffer=5, miss_buffers=5, writeback=1,
    source=_HS7447A + ": dispatch of up to three instructions per clock, a 16-entry completion "
           "queue, retirement of up to three per clock (" + _AN2203 + ".9); " + _HWSPEC
           + ": five outstanding L1 data load misses. An update form's rA (lwzu, stwu, ...) "
           "takes a GPR rename of its own (AN2203, 'Dispatch Considerations': an lwzu 'needs "
           "two GPR rename registers'). MODELLING ASSUMPTIONS: a 5-entry store queue (range "
           "3-8; the MPC7450 manual's queue depths were not retrieved); rA updated one cycle "
           "after its sources (range 1-3: when the update is ready was not found; from the "
           "address's own cycle to the 3-cycle load)",
    ranges={"store_buffer": Range(3, 8, "the MPC7450 manual's store queue depth was not "
                                        "retrieved: 3 to 8 entries"),
            "writeback": Range(1, 3, "when an update form's rA is ready was not found: from "
                                     "the address's own cycle to the 3-cycle load")})
_RESOURCES = (
    Resource("iu1", 3, _HS7447A + ": three simple integer units IU1a/b/c"),
    Resource("iu2", 1, _HS7447A + ": one complex integer unit IU2 (multiply, divide, CR "
                       "logic, special registers)"),
    Resource("lsu", 1, _HS7447A + ": one load/store unit"),
    Resource("bpu", 1, _HS7447A + ": the branch processing unit"),
)
_LATENCIES = (
    Latency("alu", 1, 1, "iu1", _HWSPEC + ": simple integer ('SFX') latency-throughput 1-1"),
    Latency("shift", 1, 1, "iu1", _HWSPEC + ": shifts are simple integer 1-1 (" + _LLVM
            + " gives 2: range 1-2)",
            ranges={"latency": Range(1, 2, "the hardware specification's 1 and LLVM's 2")}),
    Latency("mul", 4, 2, "iu2", _HWSPEC + ": mullw 32x32 latency-throughput 4-2"),
    Latency("div", 23, 23, "iu2", _LLVM + ": IIC_IntDivW 23; not pipelined: MODELLING "
            "ASSUMPTION (range: pipelined after 1 cycle up to 23)",
            ranges={"occupancy": Range(1, 23, "whether IU2 pipelines divw is not in the "
                                              "sources retrieved: fully (1) to not at all "
                                              "(23)")}),
    Latency("load", 0, 1, "lsu", "a load's latency is its access's (L1D 3 cycles, " + _HWSPEC
            + ": integer load 3-1)"),
    Latency("store", 1, 1, "lsu", _HWSPEC + ": the LSU takes one access per cycle"),
    Latency("branch", 1, 1, "bpu", _HS7447A + ": branches resolve in the BPU (folded ones cost "
            "nothing: not modelled, range 0-1)",
            ranges={"latency": Range(0, 1, "a folded branch costs nothing, a resolved one a "
                                           "cycle")}),
    Latency("fence", 35, 35, "lsu", _LLVM + ": sync (IIC_LdStSync) 35 cycles of the LSU; "
            "Linux's lwsync is sync on this core (arch/powerpc/include/asm/synch.h)"),
    Latency("lfence", 35, 35, "lsu", "not a PowerPC class (decode.c gives it no instruction); "
            "as sync to make the table whole"),
    Latency("sfence", 2, None, "lsu", "eieio orders stores, which this model writes in order "
            "anyway; its own cost: MODELLING ASSUMPTION 2 cycles (range 1-35)",
            ranges={"latency": Range(1, 35, "no eieio cycle count found: one cycle up to "
                                            "sync's 35")}),
    Latency("atomic", 35, 35, "lsu", "not a PowerPC class (lwarx/stwcx. are a load and a "
            "store: decode.c gives the class no instruction); as sync to make the table "
            "whole"),
    Latency("system", 2, 1, "iu2", _LLVM + ": CR logic, mtcrf, mfcr, mtspr 2 cycles on IU2 "
            "(mfspr 4, mftb 5: range 2-5)",
            ranges={"latency": Range(2, 5, "the class mixes CR logic and mtspr (2), mfspr "
                                           "(4) and mftb (5), " + _LLVM)}),
    Latency("select", 1, 1, "iu1", "not a PowerPC class (the e600 has no isel; decode.c gives "
            "it no instruction); as a simple integer op"),
    Latency("carry", 1, 1, "iu1", "not a PowerPC class (decode.c classes adde, subfe, addze and "
            "addme with the simple integer ops, whose class this is); as the ALU"),
)

_TLBS = (
    Tlb("ITLB", 128, 2, "i", _HWSPEC + ": instruction TLB 128 entries, 2-way"),
    Tlb("DTLB", 128, 2, "d", _HWSPEC + ": data TLB 128 entries, 2-way"),
)
_PAGE_TABLES = PageTables(
    small=4096, large=256 << 20,
    steps=(WalkStep(12, 1024, 64, 0),),
    small_steps=1, large_steps=0,
    source="Linux on the 7447A maps lowmem and the kernel image with BATs, blocks of up to "
           "256 MiB that never miss (arch/powerpc/mm/book3s32/mmu.c, __mmu_mapin_ram; "
           "MMU_FTR_USE_HIGH_BATS gives the 7447A 8 pairs, arch/powerpc/kernel/cputable.c), and "
           "modules in 4 KiB pages of the hashed page table (MMU_FTR_HPTE_TABLE). A TLB miss "
           "there is the hardware table search, which reads the primary 64-byte PTE group "
           "(8 entries of 8 bytes, the PowerPC OEA) of a table of at least 64 KiB, 1024 "
           "groups (MMU_init_hw). MODELLING ASSUMPTIONS: the group is indexed by the page "
           "number alone (the OEA hash XORs the VSID in), and the primary group always holds "
           "the entry (no secondary search, no hash_page fault)")

CORE = ReferenceCore(
    name="Freescale MPC7447A (e600 / G4) 1.0 GHz",
    clock=Cost(1_000_000_000,
               "1000 MHz: the MC7447AHX1000NB speed grade (Freescale MPC7447AECS01AD Rev. 3, "
               "Table 1 part numbers and CPU frequencies; Apple shipped 1.25-1.5 GHz parts)"),
    caches=(
        CacheLevel("L1I", size=32 * 1024, line=32, ways=8, latency=3, holds="i", shared=False,
                   source=_HWSPEC + ": L1 I 32 KB 8-way; MPC7457 data sheet Features: 32-byte "
                          "(8-word) blocks, PLRU. Hit latency: ASSUMPTION, taken equal to the "
                          "3-cycle aligned integer load",
                   ranges={"latency": Range(2, 6, _HALVED)}),
        CacheLevel("L1D", size=32 * 1024, line=32, ways=8, latency=3, holds="d", shared=False,
                   source=_HWSPEC + ": L1 D 32 KB 8-way, aligned integer load latency-throughput "
                          "3-1; MPC7457 data sheet Features: 32-byte blocks, MESI with duplicate "
                          "snoop tags"),
        CacheLevel("L2", size=512 * 1024, line=64, ways=8, latency=9, holds="u", shared=False,
                   source="MPC7450 family product brief (MPC7450TS): 512 KB on-chip L2 for the "
                          "MPC7447/7447A; " + _UM + " L2 chapter: 8-way, 64-byte lines of two "
                          "32-byte sectors (sectoring not modelled); " + _HWSPEC + ": L1 miss / "
                          "L2 hit 9 cycles data, 13 instruction (9 used for both)"),
    ),
    memory=Cost(119,
                "ASSUMPTION (no measured MPC7447A/7448 DRAM latency found): 9 cycles to miss "
                "the L2 plus 110 ns of DRAM time, the figure 7-cpu.com measured for the ARM "
                "reference's DDR-class memory behind its L2 (Exynos 4210), at 1.0 GHz = 110 "
                "cycles; 9 + 110 = 119. The 7447A's MPX/60x bus (133-167 MHz in Apple systems) "
                "would, if anything, make it slower",
                ranges={"cycles": Range(119, 238, "the borrowed DRAM time as a floor, doubled: "
                                                  "the slower MPX/60x bus can only add to it")}),
    transfer=Cost(119,
                  "DERIVED, not measured: on the G4's MPX bus one CPU can hand a line to "
                  "another without going through memory (Low End Mac, 'CPUs: PowerPC G4', on "
                  "the MPC7400's MPX bus; intervention, " + _UM + " bus chapter, not re-read), "
                  "but that is still a full address + data bus tenure, so it is costed as a memory read "
                  "(119 above); no published 7447A/7448 cache-to-cache latency found"),
    predictor=Predictor(
        counters=2048, history_bits=0, btb_entries=128, btb_ways=4, return_stack=8,
        mispredict=6,
        source=_HWSPEC + ": BTIC 128 entries 4-way (32 sets; used as the BTB, it supplies "
               "the first instructions at a taken target), BHT 2K entries of 2-bit counters, "
               "link stack depth 8, minimum misprediction penalty 6 cycles (MPC7400: 4). The BHT "
               "is indexed by branch address with no global-history component, hence "
               "history_bits = 0 (bimodal)"),
    exception=Cost(340,
                   "measured on the nearest 32-bit PowerPC core found, NOT on e600: Christophe "
                   "Leroy, linuxppc/issues #291 (comment of 2020-03-06): Linux null_syscall "
                   "1021 ns on an MPC8321 (e300c2) at 333 MHz = 340 cycles for sc + the kernel's "
                   "syscall entry/exit + rfi. Upper bound: it includes Linux's entry/exit code, "
                   "which the simulator also runs; no MPC7450-family exception cycle count is "
                   "given in " + _UM),
    serialize=Cost(7,
                   "DERIVED: isync (refetch-serialized) and sync (execution-serialized) wait for "
                   "completion and restart fetch; costed as one refill of the integer pipeline, "
                   "whose depth the MPC7455 hardware specification gives as seven stages "
                   "('seven-stage pipeline control'), one more than the 6-cycle minimum "
                   "mispredict"),
    cache_op=Cost(3,
                  "ASSUMPTION, no published figure: dcbst/dcbf/icbi beyond the write-back or "
                  "invalidate they cause cost one L1 tag lookup (the 3-cycle L1 hit); their "
                  "address-only MPX bus broadcast is not costed separately",
                  ranges={"cycles": Range(1, 6, _HALVED)}),
    coherence="MESI",
    window=_WINDOW,
    resources=_RESOURCES,
    latencies=_LATENCIES,
    tlbs=_TLBS,
    page_tables=_PAGE_TABLES,
)
