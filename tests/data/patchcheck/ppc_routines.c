#include "guest.h"
#include "patching.h"

/*
 * Each word of each site: my_patch through the kernel's patch_instruction();
 * my_patch_isync_ipi the same, then an isync on every CPU by IPI (safe);
 * my_patch_no_sync through __patch_instruction() without the sync between
 * dcbst and icbi (unsafe; a test also removes the other sync).
 */
static void do_isync(void *info)
{
	__asm__ __volatile__("isync" : : : "memory");
}

static int patch_no_sync(u32 *addr, u32 insn)
{
	u32 *alias = text_alias(addr);
	unsigned long flags;

	local_irq_save(flags);
	__asm__ __volatile__("stw %0, 0(%1)" : : "r" (insn), "b" (alias) : "memory");
	__asm__ __volatile__("dcbst 0, %0\n\ticbi 0, %1\n\tsync\n\tisync"
			     : : "r" (alias), "r" (addr) : "memory");
	local_irq_restore(flags);
	return 0;
}

static void patch_all(const struct pc_site *sites, int nr, int (*patch)(u32 *addr, u32 insn))
{
	int i;
	u32 off;

	for (i = 0; i < nr; i++)
		for (off = 0; off + 4 <= sites[i].len; off += 4) {
			const u8 *b = &sites[i].insn[off];

			patch((u32 *)(sites[i].addr + off),
			      (u32)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]);
		}
}

void my_patch(const struct pc_site *sites, int nr)
{
	patch_all(sites, nr, patch_instruction);
}

void my_patch_no_sync(const struct pc_site *sites, int nr)
{
	patch_all(sites, nr, patch_no_sync);
}

void my_patch_isync_ipi(const struct pc_site *sites, int nr)
{
	patch_all(sites, nr, patch_instruction);
	on_each_cpu(do_isync, NULL, 1);
}
