#include "guest.h"
#include "patching.h"

/*
 * Thumb-2 routines (kisim patchcheck --arch arm --set THUMB2_KERNEL=y --guest
 * --module thumb2_routines.c --guest-protocol NAME).
 *
 * t2_patch_text: the kernel's patch_text() for each site, with the Thumb
 * opcode it takes (asm/opcodes.h: a 32-bit instruction's first halfword in
 * bits 31:16). t2_halves_no_stop_machine (unsafe): the two halfwords stored
 * through the alias and flushed, with the other CPUs running.
 */
static u16 half(const u8 *p)
{
	return p[0] | p[1] << 8;
}

void t2_patch_text(const struct pc_site *sites, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		const u8 *b = sites[i].insn;
		u32 insn = sites[i].len == 2 ? half(b) : (u32)half(b) << 16 | half(b + 2);

		patch_text((void *)sites[i].addr, insn);
	}
}

void t2_halves_no_stop_machine(const struct pc_site *sites, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		volatile u16 *p = text_alias((void *)sites[i].addr);
		u32 h;

		for (h = 0; h < sites[i].len / 2; h++)
			p[h] = half(&sites[i].insn[2 * h]);
		flush_icache_range(sites[i].addr, sites[i].addr + sites[i].len);
	}
}
