/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What arches/x86_64/patching.c offers a user's routine (kisim patchcheck
 * --guest --module FILE.c --guest-protocol NAME; #include "patching.h"),
 * as v5.10 arch/x86/kernel/alternative.c and asm/text-patching.h have it:
 *
 *  - text_poke() stores through the page's writable alias, text_poke_sync()
 *    runs sync_core() on every CPU and waits;
 *  - a text_poke_bp() variant claims its int3s by publishing a descriptor in
 *    bp_desc (refs 1) before the first int3 and clearing it after the last
 *    sync: poke_int3_handler() then emulates each entry's instruction, which
 *    text_poke_loc_init() fills from a site; text_poke_bp_batch() is v5.10's.
 */
#ifndef _PC_X86_PATCHING_H
#define _PC_X86_PATCHING_H

typedef int s32;

#define POKE_MAX_OPCODE_SIZE	5

struct text_poke_loc {
	s32 rel_addr;		/* addr := _stext + rel_addr */
	s32 rel32;
	u8 opcode;
	u8 text[POKE_MAX_OPCODE_SIZE];
	u8 old;
};

struct bp_patching_desc {
	struct text_poke_loc *vec;
	int nr_entries;
	int refs;		/* atomic_t */
};

extern struct bp_patching_desc *bp_desc;

void text_poke(void *addr, const void *opcode, size_t len);
void text_poke_sync(void);
void text_poke_loc_init(struct text_poke_loc *tp, const struct pc_site *site);
void text_poke_bp_batch(struct text_poke_loc *tp, unsigned int nr_entries);

#endif /* _PC_X86_PATCHING_H */
