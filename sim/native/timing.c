// SPDX-License-Identifier: MIT
/*
 * The timing model: an out-of-order core over per-CPU caches with MESI
 * coherence, TLBs and a branch predictor, fed the instructions and memory
 * accesses Unicorn reports. Cycles are modeled, not measured
 * (docs/timing.md).
 *
 * Each CPU's Unicorn calls the code hook (on_insn()) for every instruction it
 * executes. Its data loads and stores come from the arch's decoder, their
 * addresses computed from the registers before the instruction runs, where
 * the decoder describes them (Decoder.accesses); elsewhere Unicorn calls
 * kisim_timing_mem() for each, which costs every guest access QEMU's fast
 * path. Both give the same stream (tests/test_timing.py). The core
 * (settle()) turns each instruction's latencies into its retirement time;
 * the advance of that time, less the cycle per instruction the clock
 * already counts, goes into the CPU's event_cycles (sim/native's
 * CpuState, the double the clock reads), whichever clock path serves it.
 * The counters (struct kt_stats) are the breakdown of those cycles.
 *
 * Caches. Every level is set-associative with true LRU, write-back and
 * write-allocate, and non-inclusive: a miss fills every level it missed.
 * Their semantics are those of pycachesim (RRZE-HPC), which the tests use
 * as an oracle: a line is made most recent by a load or a store from the
 * core, not by a write-back from the level above; a write-back that misses
 * allocates, loading the line from below.
 *
 * Coherence (MESI). The states are kept implicitly: a line present and
 * dirty in a CPU's private levels is Modified (no other CPU holds it), a
 * clean line is Exclusive or Shared depending on whether another CPU
 * holds it. A store to a line that is not Modified invalidates every other
 * CPU's copies; a miss in every private level snoops the other CPUs'
 * private levels and takes a Modified line from its owner (a
 * cache-to-cache transfer, which leaves both copies clean). Shared levels
 * are one instance for every CPU and need no snooping.
 *
 * Instruction caches. Where the arch keeps them coherent with stores (x86),
 * a store invalidates the line in every instruction cache and a fetch miss
 * snoops the data caches. Elsewhere (ARM, PowerPC) they are not: only the
 * guest's cache maintenance (icbi, ICIMVAU) or the machine's sync of a CPU
 * after text patching (kisim_timing_inval_i) invalidates them, at the same
 * point where the machine lets that CPU see the new text.
 *
 * Branch prediction. 2-bit counters indexed by the branch address XORed
 * with global history (gshare; bimodal with no history bits), a
 * set-associative BTB of targets and a return stack. A branch is resolved
 * at the next instruction the CPU executes, whenever that is; a mispredict
 * holds the front end until the branch completes, plus the refill.
 *
 * TLBs. Set-associative with LRU, one per side; a miss walks the page
 * tables Linux would use (translate()), each step a load through the data
 * caches.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "kisim.h"

#define KT_MAX_LEVELS	4
#define KT_MEMORY	KT_MAX_LEVELS		/* "served by memory" */
#define KT_TRANSFER	(KT_MAX_LEVELS + 1)	/* "served by another CPU's cache" */
#define KT_MAX_RAS	64
#define KT_DECODE_SLOTS	(1u << 14)
#define KT_HOLDS_I	1u
#define KT_HOLDS_D	2u
#define KT_MAX_RESOURCES 8
#define KT_MAX_UNITS	4
#define KT_MAX_WINDOW	256		/* reorder buffer, store buffer, miss buffers */
#define KT_REGS		64		/* struct kisim_decoded's register masks */
#define KT_FORWARD	64		/* stores remembered for store-to-load forwarding */
#define KT_MAX_TLB	512		/* entries of one TLB */
#define KT_MAX_SMALL	64		/* address ranges mapped with small pages */
/*
 * Cycles of issue bookings kept per resource, and how far an issue looks
 * ahead for a free unit. Bookings live from the dispatch of the youngest
 * instruction to the furthest one the window has made: up to a ROB of
 * instructions each holding a unit that is not pipelined (126 x 190 cycles
 * of locked adds on the P4) or waiting on a dependent miss. A calendar
 * shorter than that overwrites live bookings, and a busy unit is then
 * found free (256 cycles gave a 64-cycle divider one divide per 40).
 */
#define KT_CALENDAR	(1 << 16)
#define KT_SEARCH	(1 << 15)
/*
 * Of those, the cycles from the last dispatch on are also booked in a ring
 * small enough for the host's caches: nearly every issue falls there, and
 * the calendar, 1 MiB per resource, is read only for the few bookings made
 * further ahead.
 */
#define KT_NEAR		(1 << 10)
#define KT_FETCHED	(1u << 16)	/* bits of the filter of lines ever fetched */

enum { KT_FETCH = 0, KT_LOAD = 1, KT_STORE = 2 };

typedef int (*reg_fn)(void *uc, int regid, void *value);
typedef int (*decode_fn)(const uint8_t *code, uint32_t size, uint64_t addr, uint64_t mode,
			 struct kisim_decoded *out);
typedef int (*condition_fn)(uint8_t cond, uint64_t mode);
typedef int (*stop_fn)(void *uc);

/* ---- configuration, filled by sim/timing.py from the ReferenceCore ---- */

struct kt_level_config {
	uint32_t sets;
	uint32_t ways;
	uint32_t line_shift;
	uint32_t holds;			/* KT_HOLDS_I | KT_HOLDS_D */
	uint32_t shared;
	uint32_t pad;
	double latency;
};

/* One instruction class on the reference core (ReferenceCore.latencies). */
struct kt_class {
	double latency;			/* issue to result (a load's: plus its access) */
	double occupancy;		/* cycles it holds its unit: 1 / throughput */
	uint32_t resource;		/* index into kt_core.units */
	uint32_t pad;
};

/* The out-of-order core (ReferenceCore.window and .resources). */
struct kt_core {
	double dispatch;		/* instructions dispatched per cycle */
	double retire;			/* instructions retired per cycle */
	double insn_cost;		/* what the machine's clock charges per instruction */
	double writeback;		/* a base written back: Window.writeback */
	uint32_t rob;			/* reorder buffer (completion queue) entries */
	uint32_t store_buffer;		/* retired stores waiting to be written */
	uint32_t miss_buffers;		/* outstanding L1 data misses */
	uint32_t resources;
	uint32_t split_uops;		/* count micro-operations (Window.split_uops) */
	uint32_t units[KT_MAX_RESOURCES];
	struct kt_class cls[KISIM_CLASSES];
};

/* One step of a page walk: the entry of `addr` is at base + offset + ((addr >> shift) & mask) * size. */
struct kt_walk_step {
	uint64_t offset;
	uint64_t mask;
	uint32_t shift;
	uint32_t size;
};

/* The TLBs and the page tables Linux would use (ReferenceCore.tlbs, Arch.page_mapping). */
struct kt_tlb_config {
	uint32_t sets[2];		/* instruction, data; 0: no TLB */
	uint32_t ways[2];
	uint32_t small_shift;		/* log2 of the small page (4 KiB) */
	uint32_t large_shift;		/* of the page elsewhere (x86 4 MiB, ARM 1 MiB section) */
	uint32_t small_steps;		/* walk steps of a small page */
	uint32_t large_steps;		/* of a large one; 0: never misses (PowerPC BATs) */
	uint64_t base;			/* where the modeled page tables are, for the caches */
	struct kt_walk_step step[2];
};

struct kt_config {
	uint32_t cpus;
	uint32_t levels;
	struct kt_level_config level[KT_MAX_LEVELS];
	double memory;			/* latency of a miss in every level */
	double transfer;		/* a Modified line from another CPU */
	double mispredict;
	double serialize;
	double cache_op;
	uint32_t counters;		/* 2-bit counters (a power of two) */
	uint32_t history_bits;
	uint32_t btb_sets;
	uint32_t btb_ways;
	uint32_t ras_depth;
	uint32_t pc_shift;		/* log2 of the instruction alignment */
	uint32_t icache_coherent;
	int32_t mode_reg;		/* Unicorn id of Decoder.mode_reg, -1: none */
	int32_t regs[32];		/* Unicorn ids of Decoder.regs */
	uint64_t modeled_end;		/* instructions at or above (the machine's counting
					 * loop) are counted, not modeled */
	uint64_t address_mask;		/* the arch's address width */
	uint32_t decoded_accesses;	/* data accesses from the decoder, not Unicorn's hooks */
	uint32_t pad;
	struct kt_core core;
	struct kt_tlb_config tlb;
	uint64_t record_capacity;	/* accesses recorded for the oracle; 0: off */
};

/* ---- state ---- */

/*
 * One way of a cache set: 16 bytes, so that a set's lookup reads as few
 * host cache lines as it can (a 4-way set is one).
 */
struct kt_way {
	uint64_t line;			/* address >> line_shift */
	uint64_t state;			/* LRU stamp (the access tick of its last use) << 2,
					 * | KT_DIRTY | KT_VALID */
};

#define KT_VALID	1ull
#define KT_DIRTY	2ull

static inline uint64_t stamp_of(const struct kt_way *w)
{
	return w->state >> 2;
}

struct kt_cache {
	struct kt_way *way;		/* sets * ways */
	uint64_t tick;
};

/* One CPU's counters: the breakdown of its stall cycles (sim/timing.py's Stats). */
struct kt_stats {
	uint64_t hit[KT_MAX_LEVELS];	/* lookups that hit, loads, stores and fetches */
	uint64_t miss[KT_MAX_LEVELS];	/* lookups that missed (write-allocate fills included) */
	uint64_t evict[KT_MAX_LEVELS];	/* dirty lines written back out of the level */
	uint64_t memory;		/* accesses served by memory */
	uint64_t fetches;		/* instruction-cache line lookups */
	uint64_t loads;
	uint64_t stores;
	uint64_t transfers;		/* Modified lines taken from another CPU */
	uint64_t invalidations;		/* other CPUs' lines invalidated by this CPU's stores */
	uint64_t branches;		/* control transfers resolved */
	uint64_t mispredicts;		/* wrong direction or target */
	uint64_t serializations;
	uint64_t cache_ops;
	uint64_t instructions;		/* executed outside the spin page */
	uint64_t unmodeled;		/* of them, with data accesses the decoder cannot describe */
	uint64_t undescribed;		/* of them, with registers the decoder does not describe */
	uint64_t barriers;		/* fences and locked read-modify-writes */
	uint64_t overlapped_misses;	/* L1 data misses issued while another was outstanding */
	uint64_t itlb_misses;
	uint64_t dtlb_misses;
	uint64_t walk_loads;		/* page-table entries loaded by the walks */
	double fetch_cycles;		/* stall cycles, by cause, each as if alone (nominal) */
	double data_cycles;
	double transfer_cycles;
	double branch_cycles;
	double serialize_cycles;
	double cache_op_cycles;
	double execute_cycles;		/* latency beyond one cycle of multiplies, divides, ... */
	double barrier_cycles;
	double tlb_cycles;		/* page walks */
	double overlap_cycles;		/* minus what the out-of-order core hid of the above
					 * (computed when the counters are read) */
};

/*
 * The instruction whose timing is settled when the next one arrives: what
 * begin() takes from its decoding, then what it did (its accesses, its
 * fetch), which settling clears (`rare` to `extra`; an address is read
 * only where its count says there is one).
 */
struct kt_pending {
	uint64_t reads, writes;
	uint32_t updates, update_reads;	/* a base written back (struct kisim_decoded's) */
	uint32_t cls;
	uint32_t address_reads;		/* the registers of its data addresses */
	uint32_t valid;
	uint32_t rare;			/* fetch, walk or extra is not 0 */
	uint32_t loads, stores, missed;
	double load;			/* the latency of its slowest load */
	double store;			/* the cycles its stores take to write */
	double fetch;			/* front-end stall of its fetch */
	double walk;			/* its data accesses' page walks */
	double extra;			/* cache maintenance */
	uint64_t load_addr;		/* its first load, for store-to-load forwarding */
	uint64_t store_addr;		/* its first store */
};

/* Settled: nothing pending, and what it did cleared for the next one. */
static inline void clear_pending(struct kt_pending *p)
{
	p->valid = 0;
	memset(&p->rare, 0, offsetof(struct kt_pending, load_addr)
	       - offsetof(struct kt_pending, rare));
}

/* The out-of-order window of one CPU: times in modeled cycles of its own timeline. */
struct kt_window {
	double dispatched;		/* the last instruction's dispatch */
	double retired;			/* its retirement */
	double front_end;		/* the next dispatch no earlier: refill, fetch, drain */
	double mem_fence;		/* younger accesses issue no earlier */
	double exec_fence;		/* younger instructions issue no earlier (lfence) */
	double mem_done;		/* the latest completion of an access */
	double done;			/* the latest completion of any instruction */
	double drained;			/* the store buffer is empty */
	double branch_done;		/* the last branch's completion (its resolution) */
	double charged;			/* what the clock was charged beyond the instructions */
	double reg[KT_REGS];		/* when each register's value is ready */
	int64_t now;			/* the last dispatch's cycle: nothing earlier is booked */
	int64_t far_last[KT_MAX_RESOURCES];	/* the last cycle booked in the calendar */
	int64_t booked_last[KT_MAX_RESOURCES];	/* the last cycle anything was booked in */
	int64_t full_from[KT_MAX_RESOURCES];	/* [from, to): a run of cycles with no unit */
	int64_t full_to[KT_MAX_RESOURCES];	/* free, as issue_later() last booked them */
	struct kt_booking {		/* unit-cycles booked in one cycle of one resource */
		int64_t cycle;		/* + 1: zeroed books nothing */
		double used;
	} near[KT_MAX_RESOURCES][KT_NEAR], booked[KT_MAX_RESOURCES][KT_CALENDAR];
	double rob[KT_MAX_WINDOW];	/* retirement of the last `rob` entries, a ring */
	double sb[KT_MAX_WINDOW];	/* drain of the last `store_buffer` stores */
	double mshr[KT_MAX_WINDOW];	/* completion of the last `miss_buffers` misses */
	uint64_t fwd_addr[KT_FORWARD];
	double fwd_ready[KT_FORWARD];
	uint32_t rob_pos, sb_pos, mshr_pos, pad;
};

struct kt_btb_entry {
	uint64_t pc;
	uint64_t target;
	uint64_t stamp;
	uint64_t valid;
};

struct kt_decode_slot {
	uint64_t addr;			/* address + 1; 0: empty */
	uint64_t head;			/* the instruction's first bytes (up to 8) */
	const uint8_t *code;		/* where they are, if eight bytes of its region are
					 * there (regions are never unmapped); else NULL */
	uint16_t size;			/* (a larger one never matches: decoded again) */
	uint16_t counted;		/* begin() counts it: see counted() */
	uint32_t address_reads;		/* address_reads() */
	struct kisim_decoded d;
};

/* Two host cache lines: a slot of 136 bytes cost 4 host instructions per guest one. The
 * first holds all an instruction without accesses reads (the register masks of decode.h),
 * where the slots start on a line (kt_machine.decoded: calloc() gives 16 bytes past one). */
_Static_assert(sizeof(struct kt_decode_slot) == 128, "a decode slot is 128 bytes");
_Static_assert(offsetof(struct kt_decode_slot, d.at) == 64, "the masks end the first line");

struct kt_record {
	uint64_t pc;			/* the instruction that made it */
	uint64_t addr;
	uint32_t size;
	uint16_t cpu;
	uint16_t op;			/* KT_FETCH, KT_LOAD, KT_STORE */
};

struct kt_machine;

struct kt_cpu {
	struct kt_machine *m;
	struct kisim_slice_count count;	/* the running slice's (kisim.h) */
	double *event_cycles;		/* the CPU's CpuState.event_cycles */
	void *uc;
	uint32_t index;
	uint32_t pending;		/* kind of the branch awaiting its outcome */
	uint64_t pc;			/* the instruction executing */
	uint64_t pending_pc;
	uint64_t pending_next;		/* its fall-through address */
	uint64_t fetch_at;		/* the first byte of the last I-line fetched */
	uint64_t fetch_room;		/* its bytes (0: none fetched since the last reset) */
	struct kisim_decoded maintain;	/* a cache-maintenance instruction executing */
	uint64_t maintain_next;		/* its next instruction's address */
	uint64_t history;
	uint8_t *counters;
	struct kt_btb_entry *btb;
	uint64_t btb_tick;
	uint64_t ras[KT_MAX_RAS];
	uint32_t ras_top;
	uint32_t ras_count;
	const struct kisim_region *region;	/* the last region fetched from */
	struct kt_pending p;
	struct kt_window w;
	struct kt_btb_entry *tlb[2];	/* pc: the page tag, stamp: LRU (the BTB's shape) */
	uint64_t tlb_tick;
	uint64_t tlb_last[2];		/* the page each side last hit, + 1: its entry is the
					 * most recent already */
	uint64_t tlb_last_mask[2];
	struct kt_way *d_last;		/* the L1 D way of the CPU's last data line: its set's
					 * most recent way, while it still holds that line */
	struct kt_stats stats;
};

struct kt_machine {
	struct kt_config cfg;
	reg_fn reg_read;
	decode_fn decode;
	condition_fn condition;
	stop_fn stop;			/* uc_emu_stop */
	struct kisim_memory *memory;
	struct kt_cache *cache[KT_MAX_LEVELS][KISIM_MAX_CPUS];	/* shared: one, at [k][0] */
	uint32_t path[2][KT_MAX_LEVELS];	/* level indices of the I and D sides */
	uint32_t path_len[2];
	uint32_t private_len[2];		/* leading private levels of each side */
	struct kt_cpu cpu[KISIM_MAX_CPUS];
	struct kt_decode_slot *decoded;		/* KT_DECODE_SLOTS, from a host cache line */
	void *decoded_block;			/* their allocation, for free() */
	uint64_t small[KT_MAX_SMALL][2];	/* [begin, end) ranges of small pages, sorted */
	uint32_t special[KISIM_CLASSES];	/* KT_S_*: what settle() does beyond the common
						 * path for each class, from the core's table */
	double dispatch_step;			/* 1 / the core's widths */
	double retire_step;
	uint32_t smalls;
	bool d_memo;				/* the L1 D is one CPU's alone (d_last) */
	/* A bit set for each line any instruction cache has loaded (hashed by
	 * its number, never cleared): a store to a line whose bit is clear
	 * needs no search of the instruction caches. */
	uint64_t fetched[KT_FETCHED / 64];
	struct kt_record *record;
	uint64_t recorded;
	uint64_t record_dropped;
};

/*
 * What settle() does for a class beyond the common path (kt_machine.special):
 *
 *   SERIALIZE  dispatches into an empty window; nothing younger before it completes;
 *   FENCE      mfence, dmb, sync or a locked RMW: waits for every access and the
 *              store buffer, and younger accesses wait for it;
 *   LFENCE     waits for every older instruction, and every younger one for it;
 *   BARRIER    any of the barriers (is_barrier()): orders after the last fence;
 *   EXECUTE    its latency beyond one cycle is counted (execute_cycles).
 */
enum {
	KT_S_SERIALIZE = 1,
	KT_S_FENCE = 2,
	KT_S_LFENCE = 4,
	KT_S_BARRIER = 8,
	KT_S_EXECUTE = 16,
};

/* ---- one cache ---- */

static inline struct kt_cache *instance(struct kt_machine *m, uint32_t k, uint32_t cpu)
{
	return m->cache[k][m->cfg.level[k].shared ? 0 : cpu];
}

static inline uint64_t line_of(const struct kt_machine *m, uint32_t k, uint64_t addr)
{
	return addr >> m->cfg.level[k].line_shift;
}

static inline struct kt_way *lookup(struct kt_machine *m, uint32_t k, struct kt_cache *c, uint64_t line)
{
	const struct kt_level_config *l = &m->cfg.level[k];
	struct kt_way *set = &c->way[(line & (l->sets - 1)) * l->ways];

	for (uint32_t w = 0; w < l->ways; w++)
		if (set[w].line == line && set[w].state & KT_VALID)
			return &set[w];
	return NULL;
}

/* The way a new line replaces: an invalid one, else the least recently used. */
static struct kt_way *victim(struct kt_machine *m, uint32_t k, struct kt_cache *c, uint64_t line)
{
	const struct kt_level_config *l = &m->cfg.level[k];
	struct kt_way *set = &c->way[(line & (l->sets - 1)) * l->ways], *v = &set[0];

	for (uint32_t w = 0; w < l->ways; w++) {
		if (!(set[w].state & KT_VALID))
			return &set[w];
		if (stamp_of(&set[w]) < stamp_of(v))
			v = &set[w];
	}
	return v;
}

/* ---- a hierarchy: one side (I or D) of one CPU ---- */

static inline uint32_t side_load(struct kt_machine *m, uint32_t cpu, uint32_t side,
				 uint32_t depth, uint64_t addr, struct kt_way **held);

/* A dirty line written back into the level at `depth` of the side (pycachesim's store). */
static void side_writeback(struct kt_machine *m, uint32_t cpu, uint32_t side, uint32_t depth,
			   uint64_t addr)
{
	struct kt_way *w;
	uint32_t k;

	if (depth >= m->path_len[side])
		return;				/* into memory */
	k = m->path[side][depth];
	w = lookup(m, k, instance(m, k, cpu), line_of(m, k, addr));
	if (!w)
		side_load(m, cpu, side, depth, addr, &w);
	w->state |= KT_DIRTY;
}

static bool snoop_modified(struct kt_machine *m, uint32_t cpu, uint32_t side, uint64_t addr);

/* side_load() where the level at `depth` (of the path) misses. */
static __attribute__((noinline)) uint32_t side_miss(struct kt_machine *m, uint32_t cpu,
						    uint32_t side, uint32_t depth, uint64_t addr,
						    struct kt_way **held)
{
	struct kt_stats *s = &m->cpu[cpu].stats;
	uint32_t k = m->path[side][depth], served;
	struct kt_cache *c = instance(m, k, cpu);
	uint64_t line = line_of(m, k, addr);
	struct kt_way *w;

	s->miss[k]++;
	if (depth + 1 == m->private_len[side] && snoop_modified(m, cpu, side, addr))
		served = KT_TRANSFER;
	else
		served = side_load(m, cpu, side, depth + 1, addr, NULL);
	w = victim(m, k, c, line);
	if ((w->state & (KT_VALID | KT_DIRTY)) == (KT_VALID | KT_DIRTY)) {
		uint64_t old = w->line << m->cfg.level[k].line_shift;

		s->evict[k]++;
		w->state &= ~KT_VALID;
		side_writeback(m, cpu, side, depth + 1, old);
	}
	*w = (struct kt_way){ .line = line, .state = ++c->tick << 2 | KT_VALID };
	if (held)
		*held = w;
	return served;
}

/*
 * Look the line of `addr` up from `depth` down; fill each level that
 * missed. Returns the level index that served it, KT_MEMORY or KT_TRANSFER,
 * and, if `held` is not NULL, the way that holds the line at `depth` now.
 * A hit, the common case, is inline.
 */
static inline uint32_t side_load(struct kt_machine *m, uint32_t cpu, uint32_t side,
				 uint32_t depth, uint64_t addr, struct kt_way **held)
{
	uint32_t k;
	struct kt_cache *c;
	struct kt_way *w;

	if (depth >= m->path_len[side]) {
		m->cpu[cpu].stats.memory++;
		return KT_MEMORY;
	}
	k = m->path[side][depth];
	c = instance(m, k, cpu);
	w = lookup(m, k, c, line_of(m, k, addr));
	if (!w)
		return side_miss(m, cpu, side, depth, addr, held);
	m->cpu[cpu].stats.hit[k]++;
	w->state = ++c->tick << 2 | (w->state & (KT_DIRTY | KT_VALID));
	if (held)
		*held = w;
	return k;
}

/* ---- coherence ---- */

/* Other CPUs' private levels of the side, any of which may hold `addr`'s line. */
#define for_each_private(m, side, d, i, k)						\
	for (d = 0; d < (m)->cfg.cpus; d++)						\
		for (i = 0; i < (m)->private_len[side] && ((k = (m)->path[side][i]), 1); i++)

/*
 * A miss in every private level of `cpu`: a Modified copy in another CPU's
 * private levels is sent over (its copy becomes clean, the data written
 * back to the first shared level). Fetches snoop only where the
 * instruction cache is coherent.
 */
static bool snoop_modified(struct kt_machine *m, uint32_t cpu, uint32_t side, uint64_t addr)
{
	uint32_t d, i, k;
	bool found = false;

	if (side == 0 && !m->cfg.icache_coherent)
		return false;
	for_each_private(m, 1, d, i, k) {
		struct kt_way *w;

		if (d == cpu)
			continue;
		w = lookup(m, k, instance(m, k, d), line_of(m, k, addr));
		if (w && w->state & KT_DIRTY) {
			w->state &= ~KT_DIRTY;
			found = true;
		}
	}
	if (found) {
		m->cpu[cpu].stats.transfers++;
		side_writeback(m, cpu, 1, m->private_len[1], addr);
	}
	return found;
}

static bool drop_line(struct kt_machine *m, uint32_t k, uint32_t cpu, uint64_t addr)
{
	struct kt_way *w = lookup(m, k, instance(m, k, cpu), line_of(m, k, addr));

	if (w)
		w->state &= ~KT_VALID;
	return w != NULL;
}

static inline uint64_t *fetched_word(struct kt_machine *m, uint64_t addr, uint64_t *bit)
{
	uint64_t line = line_of(m, m->path[0][0], addr) & (KT_FETCHED - 1);

	*bit = 1ull << (line & 63);
	return &m->fetched[line / 64];
}

/* Invalidate `addr` in every instruction cache (private level 0 of the I side). */
static void inval_i_everywhere(struct kt_machine *m, uint64_t addr)
{
	uint64_t bit;

	if (!(*fetched_word(m, addr, &bit) & bit))
		return;			/* never loaded into one */
	for (uint32_t d = 0; d < m->cfg.cpus; d++)
		drop_line(m, m->path[0][0], d, addr);
}

/* A store by `cpu` to a line it does not hold Modified: every other copy goes. */
static void invalidate_others(struct kt_machine *m, uint32_t cpu, uint64_t addr)
{
	uint32_t d, i, k, dropped = 0;

	for_each_private(m, 1, d, i, k)
		if (d != cpu && drop_line(m, k, d, addr))
			dropped++;
	m->cpu[cpu].stats.invalidations += dropped;
}

/* ---- accesses ---- */

static void record(struct kt_cpu *t, uint32_t op, uint64_t addr, uint32_t size)
{
	struct kt_machine *m = t->m;

	if (!m->record)
		return;
	if (m->recorded == m->cfg.record_capacity) {
		m->record_dropped++;
		return;
	}
	m->record[m->recorded++] = (struct kt_record){ t->pc, addr, size, (uint16_t)t->index,
						       (uint16_t)op };
}

static double latency(const struct kt_machine *m, uint32_t served)
{
	if (served == KT_MEMORY)
		return m->cfg.memory;
	if (served == KT_TRANSFER)
		return m->cfg.transfer;
	return m->cfg.level[served].latency;
}

/*
 * One line of a data access; returns the level that served it. The stall
 * counters take its cost as if it stalled an in-order pipeline alone (an
 * L1 hit's latency beyond one cycle, a store hit nothing): the
 * out-of-order core's overlap_cycles says how much of that it hid.
 *
 * The line of the CPU's last data access needs no lookup while its L1 way
 * still holds it (t->d_last): nothing but this CPU's data accesses touches
 * its L1 D (m->d_memo), so that way is its set's most recent, and a hit
 * leaves the set's LRU order as it is.
 */
static uint32_t data_line(struct kt_cpu *t, uint64_t addr, bool store)
{
	struct kt_machine *m = t->m;
	uint32_t l1 = m->path[1][0], served;
	struct kt_way *w = t->d_last;
	double stall;

	if (w && w->line == line_of(m, l1, addr) && w->state & KT_VALID) {
		t->stats.hit[l1]++;
		served = l1;
	} else {
		served = side_load(m, t->index, 1, 0, addr, &w);
		if (m->d_memo)
			t->d_last = w;
	}
	stall = served == l1 ? (store ? 0 : m->cfg.level[l1].latency - 1) : latency(m, served);
	if (served == KT_TRANSFER)
		t->stats.transfer_cycles += stall;
	else
		t->stats.data_cycles += stall;
	if (!store)
		return served;
	if (!(w->state & KT_DIRTY)) {
		invalidate_others(m, t->index, addr);
		w->state |= KT_DIRTY;
	}
	if (m->cfg.icache_coherent)
		inval_i_everywhere(m, addr);
	return served;
}

/* ---- TLBs and page walks ---- */

/* The first range of small pages ending after `addr` (m->smalls if none). */
static uint32_t small_after(const struct kt_machine *m, uint64_t addr)
{
	uint32_t lo = 0, hi = m->smalls;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (m->small[mid][1] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether a small page maps `addr`; whether any does in [begin, end). */
static bool small_page(const struct kt_machine *m, uint64_t addr)
{
	uint32_t i = small_after(m, addr);

	return i < m->smalls && m->small[i][0] <= addr;
}

static bool small_within(const struct kt_machine *m, uint64_t begin, uint64_t end)
{
	uint32_t i = small_after(m, begin);

	return i < m->smalls && m->small[i][0] < end;
}

/*
 * Translate `addr` on `side` (0: instruction, 1: data) of `t`, on another
 * page than the side used last (translate()): a TLB hit costs nothing
 * beyond the access; a miss walks the page tables, each step a dependent
 * load of its entry through the data side of the caches (recorded like any
 * load, so the oracle replays it). Returns the walk's cycles.
 */
static __attribute__((noinline)) double look_up_page(struct kt_cpu *t, uint32_t side,
							uint64_t addr)
{
	struct kt_machine *m = t->m;
	const struct kt_tlb_config *c = &m->cfg.tlb;
	bool small;
	uint32_t shift, steps;
	uint64_t tag;
	struct kt_btb_entry *set, *v;
	double cycles = 0;

	small = small_page(m, addr);
	shift = small ? c->small_shift : c->large_shift;
	steps = small ? c->small_steps : c->large_steps;
	tag = (addr >> shift) << 1 | small;
	t->tlb_last_mask[side] = ~((1ull << shift) - 1);
	t->tlb_last[side] = (addr & t->tlb_last_mask[side]) + 1;
	if (!small && small_within(m, addr & t->tlb_last_mask[side],
				   (addr & t->tlb_last_mask[side]) + (1ull << shift)))
		t->tlb_last[side] = 0;	/* small pages inside: look each access up */
	if (!steps)
		return 0;
	set = &t->tlb[side][((addr >> shift) & (c->sets[side] - 1)) * c->ways[side]];
	v = &set[0];
	for (uint32_t w = 0; w < c->ways[side]; w++) {
		if (set[w].valid && set[w].pc == tag) {
			set[w].stamp = ++t->tlb_tick;
			return 0;
		}
		if (!set[w].valid || (v->valid && set[w].stamp < v->stamp))
			v = &set[w];
	}
	*v = (struct kt_btb_entry){ .pc = tag, .stamp = ++t->tlb_tick, .valid = 1 };
	if (side)
		t->stats.dtlb_misses++;
	else
		t->stats.itlb_misses++;
	for (uint32_t i = 0; i < steps; i++) {
		const struct kt_walk_step *s = &c->step[i];
		uint64_t entry = (c->base + s->offset + ((addr >> s->shift) & s->mask) * s->size)
				 & m->cfg.address_mask;

		record(t, KT_LOAD, entry, s->size);
		t->stats.walk_loads++;
		cycles += latency(m, side_load(m, t->index, 1, 0, entry, NULL));
	}
	t->stats.tlb_cycles += cycles;
	return cycles;
}

/*
 * The page each side used last needs no lookup: the common case, inline.
 * A walk's cycles go to the pending instruction's `stall` (its fetch or its walk).
 */
static inline void translate(struct kt_cpu *t, uint32_t side, uint64_t addr, double *stall)
{
	double cycles;

	if (!t->m->cfg.tlb.sets[side] || (addr & t->tlb_last_mask[side]) + 1 == t->tlb_last[side])
		return;
	cycles = look_up_page(t, side, addr);
	if (cycles) {
		*stall += cycles;
		t->p.rare = 1;
	}
}

static inline void charge(struct kt_cpu *t, double cycles)
{
	*t->event_cycles += cycles;
}

/*
 * A load or store of `size` bytes at `addr`: each line it touches through
 * the D side, made now (caches change in program order); the pending
 * instruction keeps its latency for the core. A load's latency is that of
 * its slowest line; a store's lines are written one after the other once
 * it retires, an L1 hit taking the store class's occupancy.
 */
static void data_access(struct kt_cpu *t, bool store, uint64_t addr, uint32_t size)
{
	struct kt_machine *m = t->m;
	uint32_t l1 = m->path[1][0], shift = m->cfg.level[l1].line_shift;
	struct kt_pending *p = &t->p;

	translate(t, 1, addr, &p->walk);
	record(t, store ? KT_STORE : KT_LOAD, addr, size);
	if (store) {
		t->stats.stores++;
		if (!p->stores++)
			p->store_addr = addr;
	} else {
		t->stats.loads++;
		if (!p->loads++)
			p->load_addr = addr;
	}
	for (uint64_t a = addr >> shift; a <= (addr + (uint64_t)size - 1) >> shift; a++) {
		uint32_t served = data_line(t, a << shift, store);
		double cycles = latency(m, served);

		if (store) {
			p->store += served == l1 ? m->cfg.core.cls[KISIM_C_STORE].occupancy : cycles;
			continue;
		}
		p->missed |= served != l1;
		if (cycles > p->load)
			p->load = cycles;
	}
}

/* Unicorn's memory hook, where the arch's decoder does not describe the accesses. */
void kisim_timing_mem(void *uc, int type, uint64_t addr, int size, int64_t value, void *user)
{
	struct kt_cpu *t = user;

	(void)uc;
	(void)value;
	if (t->maintain.kind)
		return;		/* QEMU's probe of the line (PowerPC dcbf, icbi): not an access */
	data_access(t, type == UC_MEM_WRITE, addr, (uint32_t)size);
}

/* Instruction fetch of lines [first, last]: each new one through the I side. */
static __attribute__((noinline)) void fetch_lines(struct kt_cpu *t, uint64_t first,
						  uint64_t last)
{
	struct kt_machine *m = t->m;
	uint32_t l1 = m->path[0][0], shift = m->cfg.level[l1].line_shift;

	for (uint64_t line = first; line <= last; line++) {
		uint32_t served;
		uint64_t bit, *word;
		double stall;

		if (line << shift == t->fetch_at && t->fetch_room)
			continue;
		t->fetch_at = line << shift;
		t->fetch_room = 1ull << shift;
		t->stats.fetches++;
		translate(t, 0, line << shift, &t->p.fetch);
		record(t, KT_FETCH, line << shift, 1u << shift);
		served = side_load(m, t->index, 0, 0, line << shift, NULL);
		word = fetched_word(m, line << shift, &bit);
		*word |= bit;
		if (served == l1)
			continue;
		stall = latency(m, served);
		if (served == KT_TRANSFER)
			t->stats.transfer_cycles += stall;
		else
			t->stats.fetch_cycles += stall;
		t->p.fetch += stall;
		t->p.rare = 1;
	}
}

/* Instruction fetch of [addr, addr + size): inline while it stays in the last line. */
static inline void fetch(struct kt_cpu *t, uint64_t addr, uint32_t size)
{
	uint64_t offset = addr - t->fetch_at;

	if (offset >= t->fetch_room || offset + size > t->fetch_room) {
		uint32_t shift = t->m->cfg.level[t->m->path[0][0]].line_shift;

		fetch_lines(t, addr >> shift, (addr + size - 1) >> shift);
	}
}

/* ---- cache maintenance ---- */

/* Every copy of `addr`'s line on the D side (all CPUs, all levels): write back, drop. */
static void maintain_d(struct kt_machine *m, uint32_t cpu, uint64_t addr, bool clean, bool drop)
{
	for (uint32_t k = 0; k < m->cfg.levels; k++) {
		uint32_t n = m->cfg.level[k].shared ? 1 : m->cfg.cpus;

		if (!(m->cfg.level[k].holds & KT_HOLDS_D))
			continue;
		for (uint32_t d = 0; d < n; d++) {
			struct kt_way *w = lookup(m, k, m->cache[k][d], line_of(m, k, addr));

			if (!w)
				continue;
			if (w->state & KT_DIRTY && clean) {
				m->cpu[cpu].stats.evict[k]++;
				w->state &= ~KT_DIRTY;
			}
			if (drop)
				w->state &= ~KT_VALID;
		}
	}
}

static uint64_t operand(struct kt_cpu *t, int reg, uint64_t next_pc)
{
	uint64_t value = 0;

	if (reg == KISIM_REG_NONE)
		return 0;
	if (reg == KISIM_REG_NEXT_PC)
		return next_pc;
	if (reg < 0 || reg >= 32 || t->m->reg_read(t->uc, t->m->cfg.regs[reg], &value))
		return 0;
	return value;
}

/* An index register's value shifted right as `a` says (by 1..32), in the arch's width. */
static uint64_t shifted(const struct kt_machine *m, const struct kisim_address *a, uint64_t x)
{
	uint64_t mask = m->cfg.address_mask, sign = (mask >> 1) + 1;

	x &= mask;
	switch (a->shift_type) {
	case KISIM_LSR:
		return x >> a->shift;
	case KISIM_ASR:
		return (uint64_t)((int64_t)(x & sign ? x | ~mask : x) >> a->shift);
	default:
		return x;
	}
}

/* The address `a` names, with the registers as they are now (before the instruction). */
static inline __attribute__((always_inline)) uint64_t
effective(struct kt_cpu *t, const struct kisim_address *a, uint64_t next_pc)
{
	uint64_t index = shifted(t->m, a, operand(t, a->index, next_pc));

	return (operand(t, a->base, next_pc) + index * (uint64_t)(int64_t)a->scale
		+ (uint64_t)a->disp) & t->m->cfg.address_mask;
}

static void cache_op(struct kt_cpu *t, const struct kisim_decoded *d, uint64_t next_pc)
{
	struct kt_machine *m = t->m;
	uint64_t addr = effective(t, &d->at, next_pc);

	t->stats.cache_ops++;
	t->stats.cache_op_cycles += m->cfg.cache_op;
	t->p.extra += m->cfg.cache_op;
	t->p.rare = 1;
	switch (d->cacheop) {
	case KISIM_OP_FLUSH_D:
		maintain_d(m, t->index, addr, true, true);
		if (m->cfg.icache_coherent)
			inval_i_everywhere(m, addr);
		break;
	case KISIM_OP_CLEAN_D:
		maintain_d(m, t->index, addr, true, false);
		break;
	case KISIM_OP_INVAL_D:
		maintain_d(m, t->index, addr, false, true);
		break;
	case KISIM_OP_INVAL_I:
		inval_i_everywhere(m, addr);
		break;
	case KISIM_OP_INVAL_I_ALL:
		for (uint32_t d = 0; d < m->cfg.cpus; d++) {
			const struct kt_level_config *l = &m->cfg.level[m->path[0][0]];
			struct kt_cache *c = instance(m, m->path[0][0], d);

			for (uint64_t w = 0; w < (uint64_t)l->sets * l->ways; w++)
				c->way[w].state &= ~KT_VALID;
		}
		break;
	}
	t->fetch_room = 0;
}

/* ---- branch prediction ---- */

static struct kt_btb_entry *btb_find(struct kt_cpu *t, uint64_t pc, bool insert)
{
	const struct kt_config *cfg = &t->m->cfg;
	struct kt_btb_entry *set = &t->btb[((pc >> cfg->pc_shift) & (cfg->btb_sets - 1))
					   * cfg->btb_ways], *v = &set[0];

	for (uint32_t w = 0; w < cfg->btb_ways; w++)
		if (set[w].valid && set[w].pc == pc)
			return &set[w];
	if (!insert)
		return NULL;
	for (uint32_t w = 0; w < cfg->btb_ways; w++) {
		if (!set[w].valid) {
			v = &set[w];
			break;
		}
		if (set[w].stamp < v->stamp)
			v = &set[w];
	}
	*v = (struct kt_btb_entry){ .pc = pc, .valid = 1 };
	return v;
}

/* The BTB's prediction for a taken branch: right if it held `target`; learn it. */
static bool btb_predict(struct kt_cpu *t, uint64_t pc, uint64_t target)
{
	struct kt_btb_entry *e = btb_find(t, pc, false);
	bool right = e && e->target == target;

	if (!e)
		e = btb_find(t, pc, true);
	e->target = target;
	e->stamp = ++t->btb_tick;
	return right;
}

/* The direction the counters predict; they and the history learn `taken`. */
static bool direction(struct kt_cpu *t, uint64_t pc, bool taken)
{
	const struct kt_config *cfg = &t->m->cfg;
	uint64_t hmask = cfg->history_bits ? (1ull << cfg->history_bits) - 1 : 0;
	uint8_t *ctr = &t->counters[((pc >> cfg->pc_shift) ^ (t->history & hmask))
				    & (cfg->counters - 1)];
	bool right = (*ctr >= 2) == taken;

	if (taken && *ctr < 3)
		(*ctr)++;
	else if (!taken && *ctr > 0)
		(*ctr)--;
	t->history = (t->history << 1) | taken;
	return right;
}

static void ras_push(struct kt_cpu *t, uint64_t ret)
{
	t->ras_top = (t->ras_top + 1) % t->m->cfg.ras_depth;
	t->ras[t->ras_top] = ret;
	if (t->ras_count < t->m->cfg.ras_depth)
		t->ras_count++;
}

static bool ras_pop(struct kt_cpu *t, uint64_t target)
{
	bool right;

	if (!t->ras_count)
		return false;
	right = t->ras[t->ras_top] == target;
	t->ras_top = (t->ras_top + t->m->cfg.ras_depth - 1) % t->m->cfg.ras_depth;
	t->ras_count--;
	return right;
}

/* The branch at pending_pc went to `target`: was it predicted? */
static void resolve(struct kt_cpu *t, uint64_t target)
{
	uint64_t pc = t->pending_pc;
	bool taken = target != t->pending_next, right = true;

	switch (t->pending) {
	case KISIM_COND:
		right = direction(t, pc, taken) && (!taken || btb_predict(t, pc, target));
		break;
	case KISIM_COND_RET:
		right = direction(t, pc, taken) && (!taken || ras_pop(t, target));
		break;
	case KISIM_JUMP:
	case KISIM_JUMP_IND:
		right = btb_predict(t, pc, target);
		break;
	case KISIM_CALL:
	case KISIM_CALL_IND:
		right = btb_predict(t, pc, target);
		ras_push(t, t->pending_next);
		break;
	case KISIM_RET:
		right = ras_pop(t, target);
		break;
	}
	t->pending = KISIM_PLAIN;
	t->stats.branches++;
	if (!right) {		/* the front end refills once the branch has resolved */
		struct kt_window *w = &t->w;
		double refill = w->branch_done + t->m->cfg.mispredict;

		t->stats.mispredicts++;
		t->stats.branch_cycles += t->m->cfg.mispredict;
		if (refill > w->front_end)
			w->front_end = refill;
	}
}

/* ---- decoding, cached per address and checked against the bytes ---- */

static const uint8_t *text_at(struct kt_cpu *t, uint64_t addr, uint32_t size, uint64_t *left)
{
	const struct kisim_region *r = t->region;

	if (!(r && r->base <= addr && addr - r->base <= r->size - size)) {
		for (r = t->m->memory->region; r < t->m->memory->region + t->m->memory->count; r++)
			if (r->base <= addr && addr - r->base <= r->size - size)
				break;
		if (r == t->m->memory->region + t->m->memory->count)
			return NULL;
		t->region = r;
	}
	*left = r->size - (addr - r->base);
	return r->host + (addr - r->base);
}

/*
 * The instruction's first bytes, which decide its kind (prefixes, opcode,
 * ModRM/SIB; the whole word on ARM and PowerPC): a slot whose bytes
 * differ is decoded again, so patched text is seen at once. `left` bytes
 * of the region follow `code`: where eight do, one load and a mask.
 */
static inline uint64_t head_of(const uint8_t *code, uint32_t size, uint64_t left)
{
	uint64_t head = 0;

	if (left >= 8) {
		memcpy(&head, code, 8);
		return size >= 8 ? head : head & ((1ull << (8 * size)) - 1);
	}
	for (uint32_t i = 0; i < size && i < 8; i++)
		head |= (uint64_t)code[i] << (8 * i);
	return head;
}

static bool is_barrier(uint32_t cls)
{
	return cls == KISIM_C_FENCE || cls == KISIM_C_LFENCE || cls == KISIM_C_SFENCE
	       || cls == KISIM_C_ATOMIC;
}

/* Whether begin() counts the instruction: undescribed, a barrier or serializing. */
static bool counted(const struct kisim_decoded *d)
{
	return !d->described || is_barrier(d->cls) || d->kind == KISIM_SERIALIZE;
}

/* The arch's decoding of `code`, an unknown class taken as ALU; what it cannot decode, plain. */
static void decode(const struct kt_machine *m, const uint8_t *code, uint32_t size,
		   uint64_t addr, uint64_t mode, struct kisim_decoded *d)
{
	*d = (struct kisim_decoded){ .at = KISIM_NO_ADDRESS };
	if (m->decode(code, size, addr, mode, d))
		*d = (struct kisim_decoded){ .at = KISIM_NO_ADDRESS };
	if (d->cls >= KISIM_CLASSES)
		d->cls = KISIM_C_ALU;
}

/* The general registers an instruction's data addresses are computed from. */
static uint32_t address_reads(const struct kisim_decoded *d)
{
	uint32_t mask = 0;

	for (uint32_t a = 0; a < d->accesses; a++) {
		const struct kisim_address *at = &d->access[a].at;

		if (at->base >= 0)
			mask |= (uint32_t)KISIM_R(at->base);
		if (at->index >= 0)
			mask |= (uint32_t)KISIM_R(at->index);
	}
	return mask;
}

/*
 * The instruction at `addr`, decoded once per slot. A slot that has its
 * bytes' host address compares them there; only a miss looks the region
 * up (text_at()).
 */
static inline __attribute__((always_inline)) const struct kt_decode_slot *
decoded(struct kt_cpu *t, uint64_t addr, uint32_t size)
{
	static const struct kt_decode_slot plain = { .d.at = KISIM_NO_ADDRESS, .counted = 1 };
	struct kt_machine *m = t->m;
	uint64_t slot = addr >> m->cfg.pc_shift;	/* neighbours in neighbouring slots */
	struct kt_decode_slot *s = &m->decoded[(slot ^ (slot >> 14)) & (KT_DECODE_SLOTS - 1)];
	uint64_t mode = 0, head, left;
	const uint8_t *code;

	if (s->addr == addr + 1 && s->size == size && s->code
	    && head_of(s->code, size, 8) == s->head)
		return s;
	code = text_at(t, addr, size, &left);
	if (!code)
		return &plain;
	head = head_of(code, size, left);
	if (s->addr == addr + 1 && s->size == size && s->head == head)
		return s;
	if (m->cfg.mode_reg >= 0)
		m->reg_read(t->uc, m->cfg.mode_reg, &mode);
	s->addr = addr + 1;
	s->size = size;
	s->head = head;
	s->code = left >= 8 ? code : NULL;
	decode(m, code, size, addr, mode, &s->d);
	s->counted = counted(&s->d);
	s->address_reads = address_reads(&s->d);
	return s;
}

/*
 * The data accesses the decoder describes, made as the instruction executes
 * (Decoder.accesses): the registers are read before it runs, so a base it
 * updates counts with its old value, as the address does.
 */
static inline __attribute__((always_inline)) void
decoded_accesses(struct kt_cpu *t, const struct kisim_decoded *d, uint64_t next_pc)
{
	struct kt_machine *m = t->m;

	if (d->unmodeled)
		t->stats.unmodeled++;
	if (!d->accesses)
		return;
	if (d->cond && m->condition && !m->condition(d->cond, operand(t, d->cond_reg, next_pc)))
		return;
	for (uint32_t i = 0; i < d->accesses; i++) {
		const struct kisim_access *a = &d->access[i];
		uint64_t addr = effective(t, &a->at, next_pc);

		for (uint32_t n = 0; n < a->count; n++)
			data_access(t, a->op == KISIM_STORE,
				    (addr + (uint64_t)n * a->size) & m->cfg.address_mask, a->size);
	}
}

/* ---- the out-of-order core ---- */

static inline double later(double a, double b)
{
	return a > b ? a : b;
}

/* The stall counters' sum: the cycles each cause would cost an in-order pipeline alone. */
static double nominal(const struct kt_stats *s)
{
	return s->fetch_cycles + s->data_cycles + s->transfer_cycles + s->branch_cycles
	       + s->serialize_cycles + s->cache_op_cycles + s->execute_cycles + s->barrier_cycles
	       + s->tlb_cycles;
}

/* `b`'s bookings, which are `cycle`'s if it holds that cycle, else none. */
static inline double *booked_in(struct kt_booking *b, int64_t cycle)
{
	uint64_t used, keep = -(uint64_t)(b->cycle == cycle + 1);

	/* A mask, not a branch: the cycle comes at the end of the instruction's
	 * dependency chain, and the host cannot predict whether another
	 * instruction booked it already. Clearing the bits of the (non-negative)
	 * double gives +0. */
	memcpy(&used, &b->used, sizeof(used));
	used &= keep;
	memcpy(&b->used, &used, sizeof(used));
	b->cycle = cycle + 1;
	return &b->used;
}

/*
 * The unit-cycles booked so far in `cycle` (>= w->now) of `resource`.
 * A cycle within KT_NEAR of the last dispatch is kept in the ring, one
 * further ahead in the calendar; once dispatch comes within KT_NEAR of a
 * cycle, it stays there (dispatch only advances), and the ring takes over
 * whatever the calendar booked in it while it was far.
 */
static inline double *booking(struct kt_window *w, uint32_t resource, int64_t cycle)
{
	struct kt_booking *b = &w->near[resource][(uint64_t)cycle & (KT_NEAR - 1)];

	if (cycle - w->now >= KT_NEAR) {
		if (cycle > w->far_last[resource])
			w->far_last[resource] = cycle;
		return booked_in(&w->booked[resource][(uint64_t)cycle & (KT_CALENDAR - 1)], cycle);
	}
	if (cycle <= w->far_last[resource] && b->cycle != cycle + 1) {
		*b = (struct kt_booking){ .cycle = cycle + 1, .used = *booked_in(
				&w->booked[resource][(uint64_t)cycle & (KT_CALENDAR - 1)], cycle) };
		return &b->used;
	}
	return booked_in(b, cycle);
}

/*
 * Whether booking() of every cycle in [first, end) of `resource` is its
 * ring slot alone: all of them within KT_NEAR of dispatch, and after the
 * last cycle the calendar booked (booking() then copies nothing from it).
 */
static inline bool near_only(const struct kt_window *w, uint32_t resource, int64_t first,
			     int64_t end)
{
	return end - w->now <= KT_NEAR && first > w->far_last[resource];
}

/* The unit-cycles booked in `cycle`, where near_only(): booking()'s value, nothing written. */
static inline double near_used(const struct kt_window *w, uint32_t resource, int64_t cycle)
{
	const struct kt_booking *b = &w->near[resource][(uint64_t)cycle & (KT_NEAR - 1)];

	return b->cycle == cycle + 1 ? b->used : 0;
}

/* Something was booked in `cycle`: no cycle after booked_last holds a booking. */
static inline void booked_through(struct kt_window *w, uint32_t resource, int64_t cycle)
{
	if (cycle > w->booked_last[resource])
		w->booked_last[resource] = cycle;
}

/*
 * The cycle after the run of full cycles that `cycle` is in, or `cycle`
 * itself. A cycle with no unit free has room for no share, and bookings
 * only add, so a search can skip the run: booking() of its cycles, all in
 * the ring, would only read them.
 */
static inline int64_t past_full(const struct kt_window *w, uint32_t resource, int64_t cycle)
{
	if (cycle >= w->full_from[resource] && cycle < w->full_to[resource]
	    && near_only(w, resource, cycle, w->full_to[resource]))
		return w->full_to[resource];
	return cycle;
}

/* issue_later() left [from, to) with no unit free: the run, or its growth. */
static inline void note_full(struct kt_window *w, uint32_t resource, int64_t from, int64_t to)
{
	if (from != w->full_to[resource])
		w->full_from[resource] = from;
	w->full_to[resource] = to;
}

/* The share of one unit that `busy` cycles take in the k-th cycle they span. */
static inline double share_of(double busy, int64_t k)
{
	return busy - (double)k > 1 ? 1 : busy - (double)k;
}

/*
 * The first of the `span` cycles from `cycle` that has no room for its
 * share of `busy`, or -1 if all have. A cycle without room for a share
 * has none for a whole unit either (every share but the last is one), so
 * no window that holds it fits: the search resumes after it.
 */
static int64_t span_full(struct kt_window *w, uint32_t resource, int64_t cycle, int64_t span,
			 double busy, double units)
{
	int64_t past = past_full(w, resource, cycle);

	if (past > cycle)
		return past - 1;
	if (near_only(w, resource, cycle, cycle + span)) {
		/* after the last cycle booked, every cycle has room */
		for (int64_t k = 0; k < span && cycle + k <= w->booked_last[resource]; k++)
			if (near_used(w, resource, cycle + k) + share_of(busy, k) > units + 1e-9)
				return cycle + k;
		return -1;
	}
	for (int64_t k = 0; k < span; k++)
		if (*booking(w, resource, cycle + k) + share_of(busy, k) > units + 1e-9)
			return cycle + k;
	return -1;
}

/* issue_on() when the first cycle has no room: the first cycle from there on that has. */
static __attribute__((noinline)) double issue_later(struct kt_window *w, const struct kt_core *c,
						    uint32_t resource, double ready, double busy)
{
	double units = c->units[resource], at = ready;
	int64_t first = (int64_t)ready, span = busy > 1 ? (int64_t)(busy + 0.999999) : 1;

	/* within one cycle: the first cycle with room is booked as it is found */
	for (int64_t cycle = first; span == 1 && cycle < first + KT_SEARCH; cycle++) {
		int64_t past = busy > 1e-6 ? past_full(w, resource, cycle) : cycle;
		double *used;

		if (past > cycle) {
			cycle = past - 1;
			continue;
		}
		used = booking(w, resource, cycle);
		if (*used + busy <= units + 1e-9) {
			*used += busy;
			booked_through(w, resource, cycle);
			if (*used >= units)
				note_full(w, resource, cycle, cycle + 1);
			return cycle == first ? ready : (double)cycle;
		}
	}
	for (int64_t cycle = first, full; span > 1 && cycle < first + KT_SEARCH; cycle = full + 1) {
		full = span_full(w, resource, cycle, span, busy, units);
		if (full < 0) {
			at = cycle == first ? ready : (double)cycle;
			break;
		}
	}
	if (near_only(w, resource, (int64_t)at, (int64_t)at + span)) {
		for (int64_t k = 0, cycle = (int64_t)at; k < span; k++, cycle++) {
			struct kt_booking *b = &w->near[resource][(uint64_t)cycle & (KT_NEAR - 1)];

			if (b->cycle != cycle + 1)
				*b = (struct kt_booking){ .cycle = cycle + 1 };
			b->used += share_of(busy, k);
		}
		/* of one unit, every cycle but the last took a whole one */
		if (units <= 1)
			note_full(w, resource, (int64_t)at, (int64_t)at + span - 1);
	} else {
		for (int64_t k = 0; k < span; k++)
			*booking(w, resource, (int64_t)at + k) += share_of(busy, k);
	}
	booked_through(w, resource, (int64_t)at + span - 1);
	return at;
}

/*
 * The earliest time from `ready` at which `resource` has a unit for
 * `busy` cycles (a share of one unit in each cycle it spans, `busy` < 1
 * being a fraction of one cycle, as the P4's double-speed ALUs); it is
 * booked then. Bookings are by cycle, so an instruction that waited long
 * for its operands does not hold a unit against younger ones meanwhile.
 * The common case, a unit free for one cycle at once, is inline.
 */
static inline __attribute__((always_inline)) double issue_on(struct kt_window *w,
							      const struct kt_core *c,
							      uint32_t resource, double ready,
							      double busy)
{
	int64_t cycle = (int64_t)ready;
	double *used;

	if (busy > 1)
		return issue_later(w, c, resource, ready, busy);
	if (cycle > w->booked_last[resource] && near_only(w, resource, cycle, cycle + 1)) {
		/* nothing booked there yet: a unit is free, whatever its slot held */
		w->near[resource][(uint64_t)cycle & (KT_NEAR - 1)] =
			(struct kt_booking){ .cycle = cycle + 1, .used = busy };
		w->booked_last[resource] = cycle;
		return ready;
	}
	used = booking(w, resource, cycle);
	if (*used + busy > c->units[resource] + 1e-9)
		return issue_later(w, c, resource, ready, busy);
	*used += busy;
	booked_through(w, resource, cycle);
	return ready;
}

static inline uint32_t forward_slot(uint64_t addr)
{
	return (uint32_t)(addr >> 3) & (KT_FORWARD - 1);
}

/*
 * The entries the pending instruction takes in dispatch, the reorder buffer
 * and retirement on a core that splits instructions by port (NetBurst,
 * IA-32 optimization manual 248966 ch. 1: loads on port 2, store addresses
 * on port 3, store data with the ALU operations on port 0): a
 * micro-operation for its load, two for its store, one for the operation
 * itself, which an instruction that only moves memory has not, and one for
 * a base it writes back (the stack pointer of push, pop, call and ret:
 * Shanley, The Unabridged Pentium 4, "Advanced Stack Management").
 * Other cores take one entry per instruction.
 */
static inline bool has_operation(const struct kt_pending *p)
{
	return p->cls != KISIM_C_LOAD && p->cls != KISIM_C_STORE;
}

static inline uint32_t entries(const struct kt_pending *p)
{
	uint32_t n = has_operation(p) + !!p->loads + 2 * !!p->stores + !!p->updates;

	return n ? n : 1;
}

/* The youngest of the `n` reorder-buffer entries an instruction takes: it waits for that one. */
static inline uint32_t later_entry(const struct kt_window *w, const struct kt_core *c, uint32_t n)
{
	uint32_t last = w->rob_pos + n - 1;

	return last < c->rob ? last : last - c->rob;
}

/*
 * The pending instruction, now that its accesses and its outcome are
 * known, goes through the window (after Sniper's ROB core,
 * snipersim common/performance_model/performance_models/rob_performance_model/):
 *
 *   dispatch  in order, `dispatch` entries per cycle (one per
 *             instruction, or its micro-operations: entries()), once the front end
 *             has it (a fetch miss, a mispredict's refill, a serializing
 *             instruction's drain delay it), its reorder-buffer entries
 *             are free (the entry `rob` older has retired) and, for a
 *             store, a store-buffer entry;
 *   issue     once its source registers are ready (a load also once a
 *             store to its address has executed), on the first free unit
 *             of its class's resource; an L1 miss also needs a free miss
 *             buffer, so up to `miss_buffers` misses overlap. Split into
 *             micro-operations, a load-op's load needs only the registers
 *             of its address;
 *   complete  issue + the class's latency + the slowest load's (split, no
 *             earlier than the class's latency after its other operands); a base
 *             it writes back, `writeback` after the registers that base
 *             is computed from (at dispatch at the earliest);
 *   retire    in order, `retire` entries per cycle, once complete. Stores write
 *             from the store buffer after they retire, one after the other.
 *
 * Barriers: a fence or locked RMW issues once every older access has
 * completed and the store buffer has drained, and younger accesses wait
 * for it; an lfence makes every younger instruction wait; a store fence
 * only orders the store buffer, which drains in order anyway. A
 * serializing instruction dispatches into an empty window, and nothing
 * younger dispatches before it completes. The CPU's clock is charged the
 * retirement's advance less the instruction cost its clock already counts.
 */
static inline __attribute__((always_inline)) void window_step(struct kt_cpu *t, bool split,
							       uint32_t special)
{
	const struct kt_core *c = &t->m->cfg.core;
	struct kt_pending *p = &t->p;
	struct kt_window *w = &t->w;
	const struct kt_class *k = &c->cls[p->cls];
	bool memory = (p->loads | p->stores) != 0;
	uint32_t n = split ? entries(p) : 1;
	uint64_t reads = p->reads, operands = 0;
	double at, ready, issue, done, retire, lat = k->latency, step;

	/* dispatch (later() is a maximum: exact in any order) */
	at = later(w->dispatched + t->m->dispatch_step * n, w->front_end);
	if (p->rare && p->fetch)
		at = later(at, later(w->front_end, w->dispatched) + p->fetch);
	at = later(at, w->rob[n == 1 ? w->rob_pos : later_entry(w, c, n)]);
	if (p->stores)
		at = later(at, w->sb[w->sb_pos]);
	if (special & KT_S_SERIALIZE)
		at = later(at, later(w->retired, w->drained));
	/* issue */
	w->now = (int64_t)at;
	ready = later(at, w->exec_fence);
	if (split && p->loads && has_operation(p)) {
		operands = reads & ~(uint64_t)p->address_reads;	/* the operation's, */
		reads &= p->address_reads;			/* the load's */
	}
	for (uint64_t r = reads; r; r &= r - 1)
		ready = later(ready, w->reg[__builtin_ctzll(r)]);
	if (memory || (special & KT_S_BARRIER))
		ready = later(ready, w->mem_fence);
	if (special & KT_S_FENCE)
		ready = later(ready, later(w->mem_done, w->drained));
	else if (special & KT_S_LFENCE)
		ready = later(ready, w->done);
	if (p->loads && w->fwd_addr[forward_slot(p->load_addr)] == p->load_addr + 1)
		ready = later(ready, w->fwd_ready[forward_slot(p->load_addr)]);
	issue = issue_on(w, c, k->resource, ready, k->occupancy);
	if (p->loads && p->missed && c->miss_buffers) {
		if (w->mshr[w->mshr_pos] > issue)
			issue = w->mshr[w->mshr_pos];
		else if (w->mem_done > issue)
			t->stats.overlapped_misses++;
		w->mshr[w->mshr_pos] = issue + p->load;
		if (++w->mshr_pos == c->miss_buffers)
			w->mshr_pos = 0;
	}
	if (p->loads)
		lat += p->load;
	done = issue + lat;
	if (p->rare && p->extra + p->walk > 0)	/* both >= 0, and + 0 changes nothing */
		done = done + p->extra + p->walk;
	if (operands) {			/* the operation once its load and its operands are in */
		double in = 0;

		for (uint64_t r = operands; r; r &= r - 1)
			in = later(in, w->reg[__builtin_ctzll(r)]);
		done = later(done, in + k->latency);
	}
	/* what younger instructions wait for: its results once it completes, a base it
	 * writes back once the address generation has it (read before the results are
	 * written; the results' loop is in both branches because the common case, no
	 * base, then costs nothing: one loop for both costs 0.6 % of the model) */
	if (p->updates) {
		double base = later(at, w->exec_fence);

		for (uint64_t r = p->update_reads; r; r &= r - 1)
			base = later(base, w->reg[__builtin_ctzll(r)]);
		base += c->writeback;
		for (uint64_t r = p->writes; r; r &= r - 1)
			w->reg[__builtin_ctzll(r)] = done;
		for (uint64_t r = p->updates; r; r &= r - 1)
			w->reg[__builtin_ctzll(r)] = base;
	} else {
		for (uint64_t r = p->writes; r; r &= r - 1)
			w->reg[__builtin_ctzll(r)] = done;
	}
	if (p->stores) {
		w->fwd_addr[forward_slot(p->store_addr)] = p->store_addr + 1;
		w->fwd_ready[forward_slot(p->store_addr)] = done;
	}
	if (memory)
		w->mem_done = later(w->mem_done, done);
	w->done = later(w->done, done);
	if (p->cls == KISIM_C_BRANCH)
		w->branch_done = done;
	else if (special & KT_S_FENCE)
		w->mem_fence = done;
	else if (special & KT_S_LFENCE)
		w->exec_fence = done;
	else if (special & KT_S_SERIALIZE)
		w->front_end = later(w->front_end, done);
	/* retire; a store then writes from the store buffer (a locked one at once) */
	retire = later(done, w->retired + t->m->retire_step * n);
	if (p->stores) {
		w->drained = later(w->drained, p->cls == KISIM_C_ATOMIC ? done : retire) + p->store;
		w->sb[w->sb_pos] = w->drained;
		if (++w->sb_pos == c->store_buffer)
			w->sb_pos = 0;
	}
	do {				/* each of its entries */
		w->rob[w->rob_pos] = retire;
		if (++w->rob_pos == c->rob)
			w->rob_pos = 0;
	} while (--n);
	/* the clock: the retirement's advance; the counters: what overlap hid */
	step = retire - w->retired - c->insn_cost;
	if (special & KT_S_EXECUTE)	/* else it adds 0: a chain of adds through memory for nothing */
		t->stats.execute_cycles += k->latency - 1;
	else if (special & KT_S_BARRIER)
		t->stats.barrier_cycles += k->latency;
	w->charged += step;
	w->dispatched = at;
	w->retired = retire;
	charge(t, step);
	clear_pending(p);
}

/*
 * window_step() for the pending instruction, built apart for the classes
 * with nothing special (m->special[] 0, most instructions), which then
 * test none of the special cases.
 */
static inline __attribute__((always_inline)) void step(struct kt_cpu *t, bool split)
{
	uint32_t special = t->m->special[t->p.cls];

	if (special)
		window_step(t, split, special);
	else
		window_step(t, split, 0);
}

/* step() specialized both ways: one entry per instruction pays nothing for splitting. */
static inline __attribute__((always_inline)) void settle(struct kt_cpu *t)
{
	if (t->m->cfg.core.split_uops)
		step(t, true);
	else
		step(t, false);
}

/* The instruction that now executes (decode()'s) becomes the pending one. */
static inline void begin(struct kt_cpu *t, const struct kisim_decoded *d, bool count,
			 uint32_t address)
{
	t->p.valid = 1;
	t->p.address_reads = address;
	t->p.cls = d->cls;
	t->p.reads = d->reads;
	t->p.writes = d->writes;
	t->p.updates = d->updates;
	t->p.update_reads = d->update_reads;
	if (!count)
		return;
	if (!d->described)
		t->stats.undescribed++;
	if (is_barrier(d->cls))
		t->stats.barriers++;
	if (d->kind == KISIM_SERIALIZE) {
		t->stats.serializations++;
		t->stats.serialize_cycles += t->m->cfg.serialize;
	}
}

/*
 * The code hook, on every instruction of the CPU. It counts the slice's
 * instructions itself (kisim_count_stops()), so that it is the CPU's only code
 * hook and Unicorn calls it straight from the translated block rather than
 * through its list of hooks (helper_uc_tracecode), which it does whenever
 * a second hook, its own counter included, exists.
 *
 * A cache-maintenance instruction takes effect once it has executed, at the
 * next instruction of its CPU, so that whatever Unicorn reports it doing
 * in between (QEMU probes the line of a PowerPC dcbf with a load) is not
 * taken for an access that refills the line.
 *
 * It comes in two builds, for cores that split instructions by port and
 * for those that do not (window_step()'s `split`), so that neither tests
 * which it is on every instruction: kisim_timing_hook() gives the
 * machine's.
 */
static inline __attribute__((always_inline)) void on_insn(void *uc, uint64_t addr,
							  uint32_t size, struct kt_cpu *t,
							  bool split)
{
	const struct kt_decode_slot *s;
	const struct kisim_decoded *d;

	if (kisim_count_stops(&t->count)) {
		t->m->stop(uc);
		return;
	}
	if (addr >= t->m->cfg.modeled_end)
		return;
	if (t->maintain.kind) {
		t->maintain.kind = KISIM_PLAIN;
		cache_op(t, &t->maintain, t->maintain_next);
	}
	if (t->p.valid)
		step(t, split);
	if (t->pending)
		resolve(t, addr);
	t->stats.instructions++;
	t->pc = addr;
	fetch(t, addr, size);
	s = decoded(t, addr, size);
	d = &s->d;
	begin(t, d, s->counted, s->address_reads);
	if (d->kind >= KISIM_COND && d->kind <= KISIM_COND_RET) {	/* a branch */
		t->pending = d->kind;
		t->pending_pc = addr;
		t->pending_next = addr + size;
	} else if (d->kind == KISIM_CACHEOP) {
		t->maintain = *d;
		t->maintain_next = addr + size;
	}
	if (t->m->cfg.decoded_accesses)
		decoded_accesses(t, d, addr + size);
}

static void insn_split(void *uc, uint64_t addr, uint32_t size, void *user)
{
	on_insn(uc, addr, size, user, true);
}

static void insn_whole(void *uc, uint64_t addr, uint32_t size, void *user)
{
	on_insn(uc, addr, size, user, false);
}

/* The code hook for `m`'s CPUs (on_insn() for its core). */
void *kisim_timing_hook(const struct kt_machine *m)
{
	return (void *)(m->cfg.core.split_uops ? insn_split : insn_whole);
}

/* ---- the machine's side: set up, text written, CPUs synced ---- */

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

void kisim_timing_free(struct kt_machine *m)
{
	if (!m)
		return;
	for (uint32_t k = 0; k < KT_MAX_LEVELS; k++)
		for (uint32_t c = 0; c < KISIM_MAX_CPUS; c++)
			if (m->cache[k][c]) {
				free(m->cache[k][c]->way);
				free(m->cache[k][c]);
			}
	for (uint32_t c = 0; c < KISIM_MAX_CPUS; c++) {
		free(m->cpu[c].counters);
		free(m->cpu[c].btb);
		free(m->cpu[c].tlb[0]);
		free(m->cpu[c].tlb[1]);
	}
	free(m->decoded_block);
	free(m->record);
	free(m);
}

static bool core_ok(const struct kt_core *c)
{
	if (!(c->dispatch > 0) || !(c->retire > 0) || !(c->writeback >= 0)
	    || !c->rob || c->rob > KT_MAX_WINDOW
	    || !c->store_buffer || c->store_buffer > KT_MAX_WINDOW || c->miss_buffers > KT_MAX_WINDOW
	    || !c->resources || c->resources > KT_MAX_RESOURCES)
		return false;
	for (uint32_t r = 0; r < c->resources; r++)
		if (!c->units[r] || c->units[r] > KT_MAX_UNITS)
			return false;
	for (uint32_t k = 0; k < KISIM_CLASSES; k++)
		if (c->cls[k].resource >= c->resources || !(c->cls[k].latency >= 0)
		    || !(c->cls[k].occupancy >= 0))
			return false;
	return true;
}

static bool tlb_ok(const struct kt_tlb_config *t)
{
	for (uint32_t side = 0; side < 2; side++)
		if (t->sets[side] && (!pow2(t->sets[side]) || !t->ways[side]
				      || (uint64_t)t->sets[side] * t->ways[side] > KT_MAX_TLB))
			return false;
	return t->small_steps <= 2 && t->large_steps <= t->small_steps && t->small_shift < 40
	       && t->large_shift < 40;
}

static bool config_ok(const struct kt_config *cfg)
{
	if (!cfg->cpus || cfg->cpus > KISIM_MAX_CPUS || cfg->levels < 2
	    || cfg->levels > KT_MAX_LEVELS || !pow2(cfg->counters) || !pow2(cfg->btb_sets)
	    || !cfg->btb_ways || !cfg->ras_depth || cfg->ras_depth > KT_MAX_RAS
	    || cfg->history_bits > 63 || !core_ok(&cfg->core) || !tlb_ok(&cfg->tlb))
		return false;
	for (uint32_t k = 0; k < cfg->levels; k++) {
		const struct kt_level_config *l = &cfg->level[k];

		if (!pow2(l->sets) || !l->ways || l->line_shift > 16 || !l->holds)
			return false;
	}
	return true;
}

/* A machine's model, or NULL if `cfg` is inconsistent or memory runs out. */
struct kt_machine *kisim_timing_new(const struct kt_config *cfg, struct kisim_memory *memory,
				     void *reg_read, void *decode, void *condition, void *stop)
{
	struct kt_machine *m;

	if (!config_ok(cfg))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cfg = *cfg;
	for (uint32_t k = 0; k < KISIM_CLASSES; k++)
		m->special[k] = (k == KISIM_C_SERIALIZE ? KT_S_SERIALIZE : 0)
				| (k == KISIM_C_FENCE || k == KISIM_C_ATOMIC ? KT_S_FENCE : 0)
				| (k == KISIM_C_LFENCE ? KT_S_LFENCE : 0)
				| (is_barrier(k) ? KT_S_BARRIER : 0)
				| ((k <= KISIM_C_DIV || k == KISIM_C_SYSTEM || k == KISIM_C_SELECT
				    || k == KISIM_C_CARRY)
				   && cfg->core.cls[k].latency > 1 ? KT_S_EXECUTE : 0);
	m->dispatch_step = 1 / cfg->core.dispatch;
	m->retire_step = 1 / cfg->core.retire;
	m->memory = memory;
	m->reg_read = (reg_fn)reg_read;
	m->decode = (decode_fn)decode;
	m->condition = (condition_fn)condition;
	m->stop = (stop_fn)stop;
	for (uint32_t k = 0; k < cfg->levels; k++) {
		const struct kt_level_config *l = &cfg->level[k];
		uint32_t n = l->shared ? 1 : cfg->cpus;

		for (uint32_t side = 0; side < 2; side++) {
			if (!(l->holds & (side ? KT_HOLDS_D : KT_HOLDS_I)))
				continue;
			m->path[side][m->path_len[side]++] = k;
			if (!l->shared && m->private_len[side] + 1 == m->path_len[side])
				m->private_len[side]++;
		}
		for (uint32_t c = 0; c < n; c++) {
			m->cache[k][c] = calloc(1, sizeof(struct kt_cache));
			if (!m->cache[k][c])
				goto fail;
			m->cache[k][c]->way = calloc((size_t)l->sets * l->ways, sizeof(struct kt_way));
			if (!m->cache[k][c]->way)
				goto fail;
		}
	}
	if (!m->path_len[0] || !m->path_len[1] || !m->private_len[0] || !m->private_len[1])
		goto fail;
	m->d_memo = m->path[0][0] != m->path[1][0];	/* not a unified L1 */
	/* one slot more, to start on a line; calloc()'s pages stay untouched until used */
	m->decoded_block = calloc(KT_DECODE_SLOTS + 1, sizeof(*m->decoded));
	if (!m->decoded_block)
		goto fail;
	m->decoded = (void *)(((uintptr_t)m->decoded_block + 63) & ~(uintptr_t)63);
	if (cfg->record_capacity) {
		m->record = calloc(cfg->record_capacity, sizeof(*m->record));
		if (!m->record)
			goto fail;
	}
	for (uint32_t c = 0; c < cfg->cpus; c++) {
		struct kt_cpu *t = &m->cpu[c];

		t->m = m;
		t->index = c;
		t->counters = calloc(cfg->counters, 1);
		t->btb = calloc((size_t)cfg->btb_sets * cfg->btb_ways, sizeof(*t->btb));
		if (!t->counters || !t->btb)
			goto fail;
		for (uint32_t side = 0; side < 2; side++) {
			t->tlb[side] = calloc((size_t)cfg->tlb.sets[side] * cfg->tlb.ways[side] + 1,
					      sizeof(*t->tlb[side]));
			if (!t->tlb[side])
				goto fail;
		}
		memset(t->counters, 1, cfg->counters);	/* weakly not taken */
	}
	return m;
fail:
	kisim_timing_free(m);
	return NULL;
}

/* CPU `index`'s hook argument, bound to its Unicorn and its event_cycles. */
struct kt_cpu *kisim_timing_cpu(struct kt_machine *m, uint32_t index, void *uc,
				double *event_cycles)
{
	struct kt_cpu *t = &m->cpu[index];

	t->uc = uc;
	t->event_cycles = event_cycles;
	return t;
}

/* CPU `index`'s count of the running slice: sim/machine.py sets its budget. */
struct kisim_slice_count *kisim_timing_count(struct kt_machine *m, uint32_t index)
{
	return &m->cpu[index].count;
}

/*
 * The host wrote text at [begin, end) (sim/machine.py write_text): the
 * data copies go everywhere; instruction lines too where the arch keeps
 * the instruction caches coherent. Elsewhere they stay until the CPU is
 * synced (kisim_timing_inval_i).
 */
void kisim_timing_text_written(struct kt_machine *m, uint64_t begin, uint64_t end)
{
	uint32_t shift = m->cfg.level[m->path[1][0]].line_shift;

	for (uint64_t a = begin >> shift; a <= (end - 1) >> shift && begin < end; a++) {
		maintain_d(m, 0, a << shift, false, true);
		if (m->cfg.icache_coherent)
			inval_i_everywhere(m, a << shift);
	}
	for (uint32_t c = 0; c < m->cfg.cpus; c++)
		m->cpu[c].fetch_room = 0;
}

/* CPU `cpu` invalidates its instruction lines over [begin, end) (an icache flush). */
void kisim_timing_inval_i(struct kt_machine *m, uint32_t cpu, uint64_t begin, uint64_t end)
{
	uint32_t k = m->path[0][0], shift = m->cfg.level[k].line_shift;

	for (uint64_t a = begin >> shift; a <= (end - 1) >> shift && begin < end; a++)
		drop_line(m, k, cpu, a << shift);
	m->cpu[cpu].fetch_room = 0;
}

/*
 * Linux maps [begin, end) with small pages (a module's vmalloc'd memory):
 * 0, or -1 if the table of ranges is full or the range is empty.
 */
int kisim_timing_small_pages(struct kt_machine *m, uint64_t begin, uint64_t end)
{
	uint32_t i;

	if (begin >= end || m->smalls == KT_MAX_SMALL)
		return -1;
	for (i = m->smalls; i > 0 && m->small[i - 1][0] > begin; i--) {
		m->small[i][0] = m->small[i - 1][0];
		m->small[i][1] = m->small[i - 1][1];
	}
	m->small[i][0] = begin;
	m->small[i][1] = end;
	m->smalls++;
	return 0;
}

/* CPU `cpu`'s counters, overlap_cycles brought up to date: charged less the causes' sum. */
struct kt_stats *kisim_timing_stats(struct kt_machine *m, uint32_t cpu)
{
	struct kt_cpu *t = &m->cpu[cpu];

	t->stats.overlap_cycles = t->w.charged - nominal(&t->stats);
	return &t->stats;
}

/* The accesses recorded so far (for the oracle), their count and the dropped. */
struct kt_record *kisim_timing_recorded(struct kt_machine *m, uint64_t out[2])
{
	out[0] = m->recorded;
	out[1] = m->record_dropped;
	return m->record;
}

/*
 * The core alone over a straight-line block (the llvm-mca oracle's
 * question): `insns` instructions of `insn_size` bytes at `code` (guest
 * address `addr`), run `iterations` times, every load an L1 hit and
 * nothing fetched, predicted or translated. Returns the cycles per
 * iteration of the second half of the run (the window warm), or -1.
 */
double kisim_timing_block(struct kt_machine *m, const uint8_t *code, uint32_t insns,
			  uint32_t insn_size, uint64_t addr, uint32_t iterations)
{
	double l1 = m->cfg.level[m->path[1][0]].latency, half = 0, scratch = 0, out;
	struct kt_cpu *t = calloc(1, sizeof(*t));

	if (!t || !insns || !insn_size || iterations < 2) {
		free(t);
		return -1;
	}
	t->m = m;
	t->event_cycles = &scratch;
	for (uint32_t it = 0; it < iterations; it++) {
		if (it == iterations / 2)
			half = t->w.retired;
		for (uint32_t i = 0; i < insns; i++) {
			struct kisim_decoded d;

			decode(m, code + (size_t)i * insn_size, insn_size,
			       addr + (uint64_t)i * insn_size, 0, &d);
			begin(t, &d, counted(&d), address_reads(&d));
			for (uint32_t a = 0; a < d.accesses; a++) {
				/* addresses unknown: loads and stores never alias, as in
				 * llvm-mca (-noalias), so no store forwards to a load */
				t->p.load_addr = 1;
				t->p.store_addr = 3;
				if (d.access[a].op == KISIM_LOAD) {
					t->p.loads++;
					t->p.load = l1;
				} else {
					t->p.stores++;
					t->p.store += m->cfg.core.cls[KISIM_C_STORE].occupancy;
				}
			}
			settle(t);
		}
	}
	out = (t->w.retired - half) / (iterations - iterations / 2);
	free(t);
	return out;
}

/* Whether `cpu`'s level `k` holds `addr`'s line, and dirty (tests): 0, 1 clean, 2 dirty. */
int kisim_timing_holds(struct kt_machine *m, uint32_t k, uint32_t cpu, uint64_t addr)
{
	struct kt_way *w;

	if (k >= m->cfg.levels || cpu >= m->cfg.cpus)
		return -1;
	w = lookup(m, k, instance(m, k, cpu), line_of(m, k, addr));
	return w ? 1 + (int)((w->state & KT_DIRTY) >> 1) : 0;
}

void kisim_timing_layout(uint64_t out[4])
{
	out[0] = sizeof(struct kt_config);
	out[1] = offsetof(struct kt_config, record_capacity);
	out[2] = sizeof(struct kt_stats);
	out[3] = offsetof(struct kt_stats, overlap_cycles);
}
