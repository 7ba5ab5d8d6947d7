#include "guest.h"
#include "patching.h"

/*
 * A text_poke_bp() variant (v5.10 text_poke_bp_batch() with the tails written
 * in reverse order) that claims its int3s through bp_desc: my_poke_bp; with an
 * extra text_poke_sync() before the first int3 and after each step (safe):
 * my_poke_bp_extra_syncs. With PUBLISH_LATE, bp_desc is published after the
 * int3s: unsafe.
 */
static struct text_poke_loc vec[16];

static void extra_sync(int extra)
{
	if (extra)
		text_poke_sync();
}

static const struct pc_site *live[16];

/*
 * An optprobe's detour (out of line: no CPU runs it before a site jumps
 * there) is written whole first, with text_poke(), as arch_patch_batch()
 * does; the protocol runs on the live sites.
 */
static int write_out_of_line(const struct pc_site *sites, int nr)
{
	int i, n = 0;

	for (i = 0; i < nr; i++) {
		if (sites[i].out_of_line)
			text_poke((void *)sites[i].addr, sites[i].insn, sites[i].len);
		else
			live[n++] = &sites[i];
	}
	return n;
}

static void poke_bp(const struct pc_site *all, int nr_all, int extra)
{
	int nr = write_out_of_line(all, nr_all);
	struct bp_patching_desc desc = { .vec = vec, .nr_entries = nr, .refs = 1 };
	unsigned char int3 = 0xcc;
	int i;

	for (i = 0; i < nr; i++)
		text_poke_loc_init(&vec[i], live[i]);
	extra_sync(extra);
#ifndef PUBLISH_LATE
	__atomic_store_n(&bp_desc, &desc, __ATOMIC_RELEASE);
#endif
	for (i = 0; i < nr; i++)
		text_poke((void *)live[i]->addr, &int3, 1);
#ifdef PUBLISH_LATE
	__atomic_store_n(&bp_desc, &desc, __ATOMIC_RELEASE);
#endif
	text_poke_sync();
	extra_sync(extra);
	for (i = nr - 1; i >= 0; i--)
		text_poke((void *)live[i]->addr + 1, &live[i]->insn[1], live[i]->len - 1);
	text_poke_sync();
	extra_sync(extra);
	for (i = 0; i < nr; i++)
		text_poke((void *)live[i]->addr, live[i]->insn, 1);
	text_poke_sync();
	extra_sync(extra);
	WRITE_ONCE(bp_desc, NULL);
	if (__atomic_sub_fetch(&desc.refs, 1, __ATOMIC_SEQ_CST))
		while (__atomic_load_n(&desc.refs, __ATOMIC_ACQUIRE))
			cpu_relax();
}

void my_poke_bp(const struct pc_site *sites, int nr)
{
	poke_bp(sites, nr, 0);
}

void my_poke_bp_extra_syncs(const struct pc_site *sites, int nr)
{
	poke_bp(sites, nr, 1);
}
