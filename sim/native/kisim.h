/* SPDX-License-Identifier: MIT */
/*
 * What kisim's host C shares with sim/native/__init__.py (ctypes): the
 * guest memory map. Change both together; the layout is checked when the
 * library loads.
 */
#ifndef KISIM_H
#define KISIM_H

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

#endif
