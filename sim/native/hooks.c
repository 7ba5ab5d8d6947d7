// SPDX-License-Identifier: MIT
/*
 * kisim's hooks in host code: clock reads served without Python, the TLB
 * fill that keeps guest stores on QEMU's fast path, and execution counts.
 *
 * Every system-call trap of a CPU enters Unicorn's hook here first. A
 * trace clock read (the HC_CLOCK hypercall, kernel/ring_buffer.c's
 * trace_clock_read()) is served in place, with exactly the arithmetic of
 * the Python path it stands for (sim/clock.py, sim/machine.py's
 * Cpu.charge and clock_ns_at, sim/event.py's cycles_to_ns); any other
 * trap, or a read this code cannot serve, goes to the Python hook
 * (`forward_intr`, `forward_insn`), which handles it as if this file did
 * not exist.
 *
 * The structures are shared with sim/native/__init__.py (ctypes); change
 * both together. They hold the state of record: the Python side reads and
 * writes the same fields between and during slices.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kisim.h"

struct uc_tlb_entry {			/* Unicorn 2.1.4's unicorn.h */
	uint64_t paddr;
	int perms;
};

typedef int (*reg_fn)(void *uc, int regid, void *value);
typedef void (*intr_fn)(void *uc, uint32_t intno, void *user_data);
typedef void (*insn_fn)(void *uc, void *user_data);

struct kisim_clock {			/* sim/clock.py's ModeledClock */
	uint64_t last_ns;
	uint64_t offset[KISIM_MAX_CPUS];
	uint64_t hypercall;		/* HC_CLOCK's number */
};

struct kisim_cpu {			/* sim/machine.py's Cpu */
	uint64_t instructions;		/* retired before the running slice */
	double event_cycles;
	uint64_t served;		/* reads served here, not yet folded by Python */
	uint64_t armed;			/* serve reads in this slice */
	uint64_t *counter;		/* Unicorn's emu_counter (sim/uccount.py) */
	struct kisim_clock *clock;
	struct kisim_memory *memory;
	reg_fn reg_read;
	reg_fn reg_write;
	void *forward_intr;		/* the Python hooks */
	void *forward_insn;
	double insn_cost;
	double trap_cost;
	double clock_read_cost;
	double clock_hz;
	uint64_t mask;			/* the registers' width */
	int64_t syscall_intno;		/* interrupt of the system-call trap, -1: an insn hook */
	int32_t arg0, arg1, ret;
	uint32_t index;
	uint32_t big_endian;
	int32_t pc;			/* Unicorn ids of the PC */
	int32_t isa_reg;		/* and of Arch.isa_state's register, -1: none */
	uint64_t isa_mask;
	uint64_t isa_bits;
	uint32_t pad;
};

/* Python's float floor division (CPython's _float_div_mod), for cycles_to_ns. */
static double py_floordiv(double vx, double wx)
{
	double mod = fmod(vx, wx);
	double div = (vx - mod) / wx;
	double floordiv;

	if (mod) {
		if ((wx < 0) != (mod < 0))
			div -= 1.0;
	}
	if (div) {
		floordiv = floor(div);
		if (div - floordiv > 0.5)
			floordiv += 1.0;
	} else {
		floordiv = copysign(0.0, vx / wx);
	}
	return floordiv;
}

static uint8_t *host_address(const struct kisim_memory *m, uint64_t addr, uint64_t len)
{
	for (uint64_t i = 0; i < m->count; i++) {
		const struct kisim_region *r = &m->region[i];

		if (r->base <= addr && addr - r->base <= r->size - len)
			return r->host + (addr - r->base);
	}
	return 0;
}

/* ModeledClock._stamp: forward-only across CPUs. */
static uint64_t stamp(struct kisim_clock *clk, uint32_t index, uint64_t ns)
{
	uint64_t now = ns + clk->offset[index];

	if (now <= clk->last_ns) {
		clk->offset[index] += clk->last_ns + 1 - now;
		now = clk->last_ns + 1;
	}
	clk->last_ns = now;
	return now;
}

/*
 * The HC_CLOCK hypercall, if this is one: charge, read, store, return 0.
 * Unicorn has already moved the PC past the system call, which is where
 * the guest goes on (the Python side arms this only for such a vector).
 */
static int serve_clock(void *uc, struct kisim_cpu *c)
{
	uint64_t nr = 0, where = 0, zero = 0, ns;
	uint8_t *dst;
	double cycles;

	if (!c->armed)
		return 0;
	if (c->reg_read(uc, c->arg0, &nr) || (nr & c->mask) != c->clock->hypercall)
		return 0;
	if (c->reg_read(uc, c->arg1, &where))
		return 0;
	dst = host_address(c->memory, where & c->mask, 8);
	if (!dst || c->reg_write(uc, c->ret, &zero))
		return 0;			/* Python reports the bad address */
	/* Cpu._dispatch charges a trap; the clock's handler takes it back. */
	c->event_cycles += c->trap_cost;
	c->event_cycles += c->trap_cost * -1;
	c->event_cycles += c->clock_read_cost;
	cycles = (double)(c->instructions + *c->counter) * c->insn_cost + c->event_cycles;
	ns = stamp(c->clock, c->index, (uint64_t)py_floordiv(cycles * 1e9, c->clock_hz));
	for (int i = 0; i < 8; i++)
		dst[c->big_endian ? 7 - i : i] = (uint8_t)(ns >> (8 * i));
	c->served++;
	return 1;
}

void kisim_intr_hook(void *uc, uint32_t intno, void *user_data)
{
	struct kisim_cpu *c = user_data;

	if ((int64_t)intno == c->syscall_intno && serve_clock(uc, c))
		return;
	((intr_fn)c->forward_intr)(uc, intno, 0);
}

void kisim_syscall_hook(void *uc, void *user_data)
{
	struct kisim_cpu *c = user_data;

	if (serve_clock(uc, c))
		return;
	((insn_fn)c->forward_insn)(uc, 0);
}

/*
 * Unicorn's UC_HOOK_TLB_FILL under UC_TLB_VIRTUAL: every kisim guest runs
 * with its MMU off, so a virtual address is its physical address. A
 * store's entry is read-write, any other access's read-execute: QEMU sends
 * every store through its slow self-modifying-code check (notdirty) when
 * the page's entry also allows execution, which the CPU TLB's entries
 * always did (docs/unicorn.md). The regions' own permissions (mem_map's)
 * are still enforced by Unicorn, and a store to translated code still
 * invalidates it.
 */
bool kisim_tlb_fill(void *uc, uint64_t vaddr, int type, struct uc_tlb_entry *e, void *user_data)
{
	(void)uc;
	(void)user_data;
	e->paddr = vaddr;
	e->perms = type == UC_MEM_WRITE ? UC_PROT_READ | UC_PROT_WRITE : UC_PROT_READ | UC_PROT_EXEC;
	return true;
}

/*
 * Where the CPU goes on, for emu_start at each slice (sim/machine.py): its PC,
 * with Arch.isa_state's bits where its register selects them (ARM Thumb).
 * One call from Python for both registers: at a quantum of 1,000
 * instructions, a second ctypes call per slice is a measurable share of a
 * count-only run.
 */
uint64_t kisim_resume_pc(void *uc, const struct kisim_cpu *c)
{
	uint64_t pc = 0, state = 0;

	c->reg_read(uc, c->pc, &pc);
	pc &= c->mask;
	if (c->isa_reg >= 0 && !c->reg_read(uc, c->isa_reg, &state) && state & c->isa_mask)
		pc |= c->isa_bits;
	return pc;
}

/*
 * Machine.count_executions: executions of any instruction of a sorted set of
 * addresses, by one code hook over the set's span. The passes kisim compare
 * counts cost neither a Python call each nor a hook per address (Unicorn
 * walks every code hook's bounds at every instruction once one exists).
 */
struct kisim_count {
	uint64_t n;
	const uint64_t *addr;		/* sorted, without repeats */
	uint64_t count;
};

void kisim_count_hook(void *uc, uint64_t address, uint32_t size, void *user_data)
{
	struct kisim_count *c = user_data;
	uint64_t lo = 0, hi = c->n;

	(void)uc;
	(void)size;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (c->addr[mid] < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->n && c->addr[lo] == address)
		c->count++;
}

/*
 * A code hook that only counts, as the timing model's hook does before it
 * models anything (kisim_count_stops(), kisim.h) and as Unicorn's
 * own count does: the floor under the model's hook, which replaces
 * Unicorn's count as the one hook on every instruction
 * (benchmarks/bench_timing.py --callgrind, its "counting hook" mode).
 */
struct kisim_counting {
	struct kisim_slice_count count;
	int (*stop)(void *uc);		/* uc_emu_stop */
};

void kisim_counting_hook(void *uc, uint64_t address, uint32_t size, void *user_data)
{
	struct kisim_counting *c = user_data;

	(void)address;
	(void)size;
	if (kisim_count_stops(&c->count))
		c->stop(uc);
}

/* The structures' sizes and the offset of each one's last field, checked by
 * sim/native/__init__.py against its ctypes declarations when it loads. */
void kisim_layout(uint64_t out[8])
{
	out[0] = sizeof(struct kisim_memory);
	out[1] = offsetof(struct kisim_memory, region);
	out[2] = sizeof(struct kisim_clock);
	out[3] = offsetof(struct kisim_clock, hypercall);
	out[4] = sizeof(struct kisim_cpu);
	out[5] = offsetof(struct kisim_cpu, pad);
	out[6] = sizeof(struct kisim_count);
	out[7] = offsetof(struct kisim_count, count);
}
