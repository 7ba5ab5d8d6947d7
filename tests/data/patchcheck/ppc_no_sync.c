#include "guest.h"

/* __patch_instruction() without the sync between dcbst and icbi */
void my_patch(const struct pc_site *sites, int nr)
{
	int i;
	u32 off;

	for (i = 0; i < nr; i++)
		for (off = 0; off + 4 <= sites[i].len; off += 4) {
			const u8 *b = &sites[i].insn[off];
			u32 *addr = (u32 *)(sites[i].addr + off);
			u32 *alias = text_alias(addr);
			u32 insn = (u32)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
			unsigned long flags;

			local_irq_save(flags);
			__asm__ __volatile__("stw %0, 0(%1)" : : "r" (insn), "b" (alias) : "memory");
			__asm__ __volatile__("dcbst 0, %0\n\ticbi 0, %1\n\tsync\n\tisync"
					     : : "r" (alias), "r" (addr) : "memory");
			local_irq_restore(flags);
		}
}
