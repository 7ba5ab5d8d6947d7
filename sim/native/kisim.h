/* SPDX-License-Identifier: MIT */
/*
 * What kisim's host C shares with sim/native/__init__.py (ctypes): the
 * guest memory map. Change both together; the layout is checked when the
 * library loads.
 */
#ifndef KISIM_H
#define KISIM_H

#include <stdbool.h>
#include <stdint.h>

#define KISIM_MAX_CPUS		8
#define KISIM_MAX_REGIONS	64

/* From Unicorn 2.1.4's unicorn.h: uc_mem_type and uc_prot. */
#define UC_MEM_WRITE		17
#define UC_PROT_READ		1
#define UC_PROT_WRITE		2
#define UC_PROT_EXEC		4

struct kisim_region {			/* guest [base, base + size) is host[0, size) */
	uint64_t base;
	uint64_t size;
	uint8_t *host;
};

struct kisim_memory {
	uint64_t count;
	struct kisim_region region[KISIM_MAX_REGIONS];
};

/*
 * A slice's instruction count, kept by a code hook of kisim's as Unicorn's
 * own count is (uc.c hook_count_cb, its emu_counter and emu_count;
 * sim/uccount.py's Count): the timing model's, and bench_timing's floor.
 */
struct kisim_slice_count {
	uint64_t value;
	uint64_t budget;
};

/* Count an instruction before it runs: whether the slice stops before it (past the budget). */
static inline bool kisim_count_stops(struct kisim_slice_count *c)
{
	return ++c->value > c->budget;
}

#endif
