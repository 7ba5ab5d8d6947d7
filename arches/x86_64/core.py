"""Reference core for x86: Intel Pentium 4 (NetBurst, Northwood), 3 GHz.

Why this core: Desnoyers' immediate-values measurements (Documentation/
immediate.txt of the LTTng patch queue) and his Linux Kernel Markers
microbenchmark (LTTV tests/markers/markers-microbench-0.2.txt) were both
taken on a 3 GHz Pentium 4, so the model's x86 figures are compared with
numbers measured on this core. Cache geometry is Northwood's (CPUID model
2). Every figure names its source; modelling assumptions say so.
"""
from __future__ import annotations

from arches.base import CacheLevel, Cost, Predictor, Range, ReferenceCore

#: The range of an assumption no published figure bounds.
_HALVED = ("no published figure bounds it: halved and doubled (kisim's range for an "
           "unbounded assumption)")

_OPT_MANUAL = ("Intel, IA-32 Intel Architecture Optimization Reference Manual (order 248966), "
               "Table 1-1 'Pentium 4 and Intel Xeon Processor Cache Parameters'")

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
        CacheLevel("L2", size=512 * 1024, line=64, ways=8, latency=7, holds="u", shared=False,
                   source=_OPT_MANUAL + ", model 2 (Northwood): 512 KB, 8-way, 64-byte lines in "
                          "128-byte sectors (a miss fetches both halves; not modelled), 7 clocks, "
                          "write-back; one L2 per processor package"),
    ),
    memory=Cost(248,
                "measured: Cachemem memory latency 248 clocks (= 83 ns) for a Pentium 4 3.0 GHz "
                "on i875P, 800 MHz FSB, dual-channel DDR400 (X-bit labs, 'Pentium 4 with 800MHz "
                "bus', p.5, xbitlabs.com/articles/cpu/display/p4-800_5.html, best i875 row; the "
                "table does not print its unit, read as CPU clocks). Cross-check: Intel's "
                "optimization manual ch.1 gives ~12 core clocks to the bus and back plus 6-12 "
                "bus clocks (15 core clocks each at 200 MHz) = 102-192 clocks before DRAM "
                "timings"),
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
    serialize=Cost(572,
                   "measured: Linus Torvalds, LKML 'Re: Locking comment on shrink_caches()', 26 Sep "
                   "2001 (Message-ID Pine.LNX.4.33.0109261003480.8327-200000@penguin.transmeta.com): "
                   "on his (first-generation) P4, rdtsc-bracketed cpuid 652 cycles vs 80 for the "
                   "empty rdtsc pair, so cpuid = 572 cycles; used for every serializing "
                   "instruction (cpuid, mov to CR, iret outside an exception return)"),
    cache_op=Cost(2,
                  "ASSUMPTION, no published figure found: clflush beyond the write-back/"
                  "invalidate it causes is costed as one L1 tag probe (the 2-clock L1D hit); "
                  "Agner Fog's tables for P4 would be the source but were not retrievable",
                  ranges={"cycles": Range(1, 4, _HALVED)}),
    coherence="MESI",
)
