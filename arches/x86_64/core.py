"""Reference core for x86: Intel Pentium 4 (NetBurst, Northwood), 3 GHz.

Why this core: Desnoyers' immediate-values measurements (Documentation/
immediate.txt of the LTTng patch queue) and his Linux Kernel Markers
microbenchmark (LTTV tests/markers/markers-microbench-0.2.txt) were both
taken on a 3 GHz Pentium 4, so the model's x86 figures are compared with
numbers measured on this core. Cache geometry is Northwood's (CPUID model
2). Every figure names its source; modelling assumptions say so.
"""
from __future__ import annotations

from arches.base import (CacheLevel, Cost, Latency, PageTables, Predictor, Range,
                         ReferenceCore, Resource, Tlb, WalkStep, Window)

#: The range of an assumption no published figure bounds.
_HALVED = ("no published figure bounds it: halved and doubled (kisim's range for an "
           "unbounded assumption)")

_OPT_MANUAL = ("Intel, IA-32 Intel Architecture Optimization Reference Manual (order 248966), "
               "Table 1-1 'Pentium 4 and Intel Xeon Processor Cache Parameters'")

_SDM1 = ("Intel 64 and IA-32 Architectures Software Developer's Manual vol. 1, sec. 2.2.2 "
         "'The Intel NetBurst Microarchitecture'")
_ITJ = ("Hinton et al., 'The Microarchitecture of the Pentium 4 Processor', Intel Technology "
        "Journal Q1 2001")
_GCC = ("GCC's pentium4_cost (gcc/config/i386/x86-tune-costs.h; compiler cost units taken from "
        "Intel's latency tables, not measurements)")
_INSTLAT = ("measured: InstLatX86 (AIDA64/Everest 2.4.257) on a Pentium 4 2.80 GHz, CPUID "
            "family 0F model 2 stepping 9 (Northwood), InstLatx64 repository, "
            "GenuineIntel/GenuineIntel0000F29_P4_Northwood_InstLatX86.txt; 'L' is latency, 'T' "
            "the reciprocal throughput of independent copies, in core clocks")
_MEMLAT = ("measured: MemLatX86 on the same Northwood (InstLatx64 repository, "
           "GenuineIntel/GenuineIntel0000F29_P4_Northwood_MemLatX86.txt)")

#: The window and the issue resources of NetBurst, one decoded x86 instruction per entry.
_WINDOW = Window(
    dispatch=3, retire=3, rob=126, store_buffer=24, miss_buffers=8, writeback=0.5,
    split_uops=True,
    source="dispatch and retire 3 uops per cycle: " + _ITJ + " (the trace cache delivers and "
           "the allocator renames 3 uops per clock; retirement 3 uops per clock); ROB 126 "
           "entries and 24 store buffers: " + _SDM1 + " ('up to 126 instructions in flight ... "
           "48 loads and 24 stores'). Uops by port (Intel, IA-32 Intel Architecture "
           "Optimization Reference Manual, order 248966, ch. 1 'Execution Core Detail': "
           "port 0 runs ALU and store-data uops, port 2 loads, port 3 store addresses): a "
           "load is a uop, a store two (address, data), the operation one, so mov r,m is 1, "
           "mov m,r 2, add r,m 2, add m,r and a locked add 4. The stack pointer of push, pop, "
           "call and ret is moved by a uop of its own (Shanley, 'The Unabridged Pentium 4', "
           "'Advanced Stack Management': before the Pentium M's stack engine, 'an additional "
           "uop' per stack instruction), so push is 3, pop 2, call 4, ret 3; an ALU uop, "
           "ready 0.5 after esp (writeback: the double-speed ALU's latency, " + _INSTLAT
           + ": ADD r32 L 0.5), not after the load: POP r32 runs at T 1.00 though each pop's "
           "load takes 2 (MOV r32, [m32] L 2.0). MODELLING ASSUMPTIONS: a microcoded "
           "instruction (a string move, cpuid) counts as its memory and operation uops, its "
           "cost coming from its class; 8 outstanding L1 data misses (plausible "
           "range 4-8: not found in the Intel text retrieved)",
    ranges={"miss_buffers": Range(4, 8, "outstanding L1 data misses: not found in the Intel "
                                        "text retrieved; half to all of the 8 modelled")})
_RESOURCES = (
    Resource("alu", 2, "the two double-speed integer ALUs on ports 0 and 1 ('Rapid Execution "
                       "Engine', " + _ITJ + ")"),
    Resource("complex", 1, "the slow integer unit (shifts, rotates) on port 1, " + _ITJ
             + "; MODELLING ASSUMPTION: adc and sbb, whose unit the sources do not give, "
             "run here too (range 1: its one unit)"),
    Resource("mul", 1, "MODELLING ASSUMPTION: integer multiplies run on the FP/MMX multiplier "
                       "of port 1 (" + _ITJ + " block diagram), one unit (range 1)"),
    Resource("div", 1, "one divider, not pipelined: a divide issues when the last one is done "
                       "(" + _INSTLAT + ": DIV r32 L 57, T 57)"),
    Resource("load", 1, "port 2, the load AGU: one load per cycle (" + _ITJ + ")"),
    Resource("store", 1, "port 3, the store AGU: one store address per cycle (" + _ITJ + ")"),
)
_LATENCIES = (
    Latency("alu", 0.5, 0.5, "alu",
            "add/sub/logic/mov on a double-speed ALU (" + _ITJ + "): ADD r32, r32 L 0.5, "
            "T 0.34 (the trace cache's 3 uops per clock; one ALU takes one per half clock), "
            + _INSTLAT),
    Latency("shift", 4, 1, "complex",
            "SHL/SHR/SAR r32, imm8: L 4, T 1.00, " + _INSTLAT,
            ranges={"latency": Range(4, 6, "measured: 4 by an immediate, 6 by cl; the class "
                                           "does not tell them apart (" + _INSTLAT + ")"),
                    "occupancy": Range(1, 6, "measured: 1 for a shift by an immediate, 4 for "
                                             "a rotate, 6 by cl (" + _INSTLAT + ")")}),
    Latency("mul", 14, 4.5, "mul",
            "IMUL r32, r32, imm8: L 14, T 4.50 (IMUL r32, r32: L 15, T 4.25), " + _INSTLAT
            + "; " + _GCC + " gives 15",
            ranges={"latency": Range(14, 15, "measured by form: 14 with an immediate, 15 "
                                             "without (" + _INSTLAT + ")"),
                    "occupancy": Range(4.25, 4.5, "measured by form (" + _INSTLAT + ")",
                                       "real")}),
    Latency("div", 57, 57, "div",
            "DIV r32 of a 32-bit dividend (edx zero, as a 32-bit modulo is): L 57, T 57, "
            + _INSTLAT + "; not pipelined. " + _GCC + " gives 56",
            ranges={"latency": Range(57, 59, "measured by dividend: 57 for 32 to 48 bits, 59 "
                                             "for a full 64-bit edx:eax (" + _INSTLAT + ")"),
                    "occupancy": Range(54, 57, "measured by dividend: 57, or 54 for a zero "
                                               "one (" + _INSTLAT + "; a dividend that fits "
                                               "16 bits takes 26, which no 32-bit random "
                                               "value does)")}),
    Latency("load", 0, 1, "load",
            "a load's latency is its access's (L1D 2 clocks, " + _OPT_MANUAL + "); one per "
            "cycle on port 2"),
    Latency("store", 1, 1, "store",
            "a store executes in one cycle and writes from the store buffer after it retires, "
            "one L1 write per cycle (port 3, " + _ITJ + ")"),
    Latency("branch", 0.5, 0.5, "alu", "branches execute on the fast ALU of port 0 (" + _ITJ
            + "); latency as an ALU op: MODELLING ASSUMPTION (range 0.5-1)",
            ranges={"latency": Range(0.5, 1, "a double-speed ALU op (0.5) to a full cycle",
                                     "real")}),
    Latency("fence", 100, None, "store",
            "mfence beyond its drain of the loads and the store buffer: MFENCE L 100, T 100 "
            "with nothing to drain, " + _INSTLAT),
    Latency("lfence", 40, None, "load",
            "lfence waits for every older instruction (Intel SDM vol. 3 sec. 8.2.5); its own "
            "cost beyond that: LFENCE L 40, T 40, " + _INSTLAT),
    Latency("sfence", 39, None, "store",
            "sfence orders the store buffer, which this model drains in order anyway; its own "
            "cost: SFENCE L 39, T 39, " + _INSTLAT),
    Latency("atomic", 124, None, "store",
            "a locked read-modify-write beyond the drain every locked operation waits for "
            "(Intel SDM vol. 3 sec. 8.1.2): LOCK ADD [m32], r32 L 124.1, T 124.3 (XCHG r32, "
            "[m32] L 125.0), " + _INSTLAT + ", back to back, so with nothing to drain"),
    Latency("system", 52, None, "complex",
            "POPFD T 52 (PUSHFD + POPFD L 66), " + _INSTLAT + ": popf, the class's "
            "instruction on the paths kisim measures (ftrace's and the optprobe detour's "
            "flag restores). RDTSC (T 80) and the moves from special registers, which the "
            "source does not measure, are costed as popf: MODELLING ASSUMPTION (range 4-80)",
            ranges={"latency": Range(4, 80, "the class's other members: rdtsc is measured "
                                            "at 80, special register moves are not: from "
                                            "a slow-unit op (4) to rdtsc's 80")}),
    Latency("select", 6, 2, "alu",
            "CMOVNZ r32, r32: L 6.1, T 1.00, " + _INSTLAT + ". MODELLING ASSUMPTION: its "
            "unit; it takes one of the two ALUs for 2 cycles, so one issues per cycle",
            ranges={"occupancy": Range(1, 2, "the unit is not in the source: one of the two "
                                             "ALUs for 1 cycle (two per cycle) to 2 (the "
                                             "measured one per cycle)", "real")}),
    Latency("carry", 7, 7, "complex",
            "ADC r32, r32 and SBB r32, r32: L 7.0, T 7.00 (not pipelined), " + _INSTLAT
            + "; one unit for 7 cycles gives the measured T (which unit: the resource's "
            "source)"),
)

_CPUID = ("CPUID leaf 2 of a Northwood (family 0F model 2): descriptors 0x50 and 0x5B, as Linux "
          "decodes them (arch/x86/kernel/cpu/intel.c, intel_tlb_table)")
#: The TLBs' associativity, which the CPUID descriptors do not give.
_TLB_WAYS = {"ways": Range(4, 64, "CPUID leaf 2 gives no associativity for these TLBs: "
                                  "4 ways to fully associative", "pow2")}
_TLBS = (
    Tlb("ITLB", 64, 64, "i", _CPUID + ": 64 entries for 4 KiB and 4 MiB pages. Fully "
        "associative: MODELLING ASSUMPTION (the descriptor does not say; range 4-way to full)",
        _TLB_WAYS),
    Tlb("DTLB", 64, 64, "d", _CPUID + ": 64 entries for 4 KiB and 4 MiB pages; no second-level "
        "TLB. Fully associative: MODELLING ASSUMPTION (range 4-way to full)", _TLB_WAYS),
)
_PAGE_TABLES = PageTables(
    small=4096, large=4 << 20,
    steps=(WalkStep(22, 1024, 4, 0), WalkStep(12, 1 << 20, 4, 4096)),
    small_steps=2, large_steps=1,
    source="i386 paging without PAE (Intel SDM vol. 3 ch. 4): a page directory of 1024 "
           "4-byte entries indexed by address bits 31:22, then a page table indexed by bits "
           "21:12; a 4 MiB (PSE) page stops at the directory. Linux maps the kernel image and "
           "lowmem with 4 MiB pages when the CPU has PSE (arch/x86/mm/init_32.c, "
           "kernel_physical_mapping_init) and modules in 4 KiB vmalloc pages "
           "(arch/x86/kernel/module.c, module_alloc). The walk loads its entries through the "
           "data caches (the P4 caches page-table entries like data: MODELLING ASSUMPTION, "
           "not verified); the tables sit apart from the guest's data")

CORE = ReferenceCore(
    name="Intel Pentium 4 (NetBurst, Northwood) 3.0 GHz",
    clock=Cost(3_000_000_000,
               "3 GHz: the machine of Desnoyers' immediate-values figures ('a 3GHz Pentium 4', "
               "Documentation/immediate.txt in the LTTng patch set) and of his markers "
               "microbenchmark (LTTV tests/markers/markers-microbench-0.2.txt: 'Pentium 4 3GHz')"),
    caches=(
        CacheLevel("L1I", size=16 * 1024, line=64, ways=8, latency=2, holds="i", shared=False,
                   source="MODELLING ASSUMPTION: the P4 has no conventional L1 I-cache but a "
                          "12K-uop, 8-way trace cache (" + _OPT_MANUAL + ", all models); it is "
                          "modelled as a 16 KB 8-way cache of 64-byte x86 lines, latency taken "
                          "equal to the L1D integer hit (2); size and latency are not Intel figures",
                   ranges={"size": Range(8 * 1024, 32 * 1024, "the trace cache's capacity in "
                                         "bytes of x86 code is not published: halved and "
                                         "doubled", "pow2"),
                           "latency": Range(1, 4, _HALVED)}),
        CacheLevel("L1D", size=8 * 1024, line=64, ways=4, latency=2, holds="d", shared=False,
                   source=_OPT_MANUAL + ", CPUID models 0/1/2: 8 KB, 4-way, 64-byte lines, "
                          "2 clocks integer load (9 FP), write-through"),
        CacheLevel("L2", size=512 * 1024, line=64, ways=8, latency=18, holds="u", shared=False,
                   source=_OPT_MANUAL + ", model 2 (Northwood): 512 KB, 8-way, 64-byte lines in "
                          "128-byte sectors (a miss fetches both halves; not modelled), "
                          "write-back; one L2 per processor package. Load to use 18 clocks: "
                          + _MEMLAT + ", random and block-random reads within 16-256 KiB (past "
                          "the L1D, inside the DTLB's reach) take 18-19 clocks. The manual's "
                          "table gives 7, the L2's own access after the L1 miss; a load waits "
                          "the measured 18",
                   ranges={"latency": Range(7, 24, "the manual's 7 to the 24 clocks of "
                                                   "MemLatX86's own 'L2 latency' line "
                                                   "(" + _MEMLAT + ")")}),
    ),
    memory=Cost(248,
                "measured: Cachemem memory latency 248 clocks (= 83 ns) for a Pentium 4 3.0 GHz "
                "on i875P, 800 MHz FSB, dual-channel DDR400 (X-bit labs, 'Pentium 4 with 800MHz "
                "bus', p.5, xbitlabs.com/articles/cpu/display/p4-800_5.html, best i875 row; the "
                "table does not print its unit, read as CPU clocks). Cross-check: Intel's "
                "optimization manual ch.1 gives ~12 core clocks to the bus and back plus 6-12 "
                "bus clocks (15 core clocks each at 200 MHz) = 102-192 clocks before DRAM "
                "timings; " + _MEMLAT + " gives 316 clocks (111 ns) on a board it does not "
                "name"),
    transfer=Cost(248,
                  "DERIVED, not measured: a P4 SMP shares one front-side bus; a read that hits a "
                  "Modified line in another CPU is answered by that CPU's implicit writeback on "
                  "the FSB (HITM), a full bus read transaction, so it is costed as a memory read "
                  "(the 248-clock figure above). No published P4 core-to-core latency found"),
    predictor=Predictor(
        counters=4096, history_bits=12, btb_entries=4096, btb_ways=4, return_stack=16,
        mispredict=24,
        source="BTB 4096 entries (8x the P6's 512; hardwaresecrets.com 'Inside Pentium 4 "
               "Architecture' p.3; Intel markets a '4K branch target buffer'). Intel does not "
               "publish the direction predictor: 4096 2-bit counters indexed by 12 history bits "
               "XOR address and 4-way BTB are MODELLING ASSUMPTIONS. Return stack 16 entries: "
               "the value commonly quoted for NetBurst (Intel optimization manual / Agner Fog); "
               "the Intel text retrieved names the Return Stack without its size, so NOT "
               "re-verified. Mispredict 24: Agner Fog, 'The microarchitecture of Intel, AMD and "
               "VIA CPUs', branch prediction chapter: on P4 recovery from a misprediction is "
               "rarely under 24 clocks (often more, up to ~100 behind long-latency uops)",
        ranges={"history_bits": Range(0, 12, "unpublished: from a bimodal table (0) to "
                                             "history as wide as the 12-bit counter index"),
                "counters": Range(1024, 16384, "unpublished: a quarter to four times the "
                                           "4096 modelled", "pow2"),
                "btb_ways": Range(1, 8, "unpublished: direct-mapped to 8 ways", "pow2")}),
    exception=Cost(1320,
                   "DERIVED FROM A MEASUREMENT: Mike Hayward, LKML 'Intel P6 vs P7 system call "
                   "performance', 9 Dec 2002 (Message-ID 200212090830.gB98USW05593@flux.loup.net), "
                   "same binaries and kernel family (2.4, int $0x80 + iret): a loop of 5 trivial "
                   "system calls ran 233,637.8 loops/s on a Pentium 4 2.0 GHz = 1712 clocks per "
                   "call, 433,741.8 loops/s on a Pentium III 850 MHz = 392 clocks per call. The "
                   "P III's whole per-call time bounds the kernel's own instructions, so the P4 "
                   "spends >= 1712 - 392 = 1320 clocks in the int/iret pair; 1320 is used "
                   "(the guest kernel's entry code is simulated separately)"),
    serialize=Cost(266,
                   "CPUID (EAX = 0) L 266, T 266 (EAX = 1: 262), " + _INSTLAT + "; used for "
                   "every serializing instruction (cpuid, mov to CR, iret outside an exception "
                   "return), which the source does not measure: MODELLING ASSUMPTION (range "
                   "262-572). Cross-check: Linus Torvalds, LKML 'Re: Locking comment on "
                   "shrink_caches()', 26 Sep 2001 (Message-ID "
                   "Pine.LNX.4.33.0109261003480.8327-200000@penguin.transmeta.com), on a "
                   "first-generation P4: rdtsc-bracketed cpuid 652 cycles against 80 for the "
                   "empty pair (InstLatX86's RDTSC: 80), so 572",
                   ranges={"cycles": Range(262, 572, "this Northwood's measured cpuid to the "
                                                     "first-generation P4's 572; the other "
                                                     "serializing instructions are unmeasured")}),
    cache_op=Cost(2,
                  "ASSUMPTION, no published figure found: clflush beyond the write-back/"
                  "invalidate it causes is costed as one L1 tag probe (the 2-clock L1D hit); "
                  "Agner Fog's tables for P4 would be the source but were not retrievable",
                  ranges={"cycles": Range(1, 4, _HALVED)}),
    coherence="MESI",
    window=_WINDOW,
    resources=_RESOURCES,
    latencies=_LATENCIES,
    tlbs=_TLBS,
    page_tables=_PAGE_TABLES,
)
