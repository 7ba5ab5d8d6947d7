#include "guest.h"

/* v7_coherent_kern_range without the dsb between the D-cache clean and the I-cache invalidate */
static void my_flush(unsigned long start, unsigned long end)
{
	unsigned long a;

	for (a = start & ~31UL; a < end; a += 32)
		__asm__ __volatile__("mcr p15, 0, %0, c7, c11, 1" : : "r" (a) : "memory");
	for (a = start & ~31UL; a < end; a += 32)
		__asm__ __volatile__("mcr p15, 0, %0, c7, c5, 1" : : "r" (a) : "memory");
	__asm__ __volatile__("mcr p15, 0, %0, c7, c1, 6\n\tdsb ishst\n\tisb" : : "r" (0) : "memory");
}

struct patch {
	void *addr;
	u32 insn;
};

static int patch_fn(void *data)
{
	struct patch *p = data;
	unsigned long flags;

	local_irq_save(flags);
	*(volatile u32 *)text_alias(p->addr) = p->insn;
	local_irq_restore(flags);
	my_flush((unsigned long)p->addr, (unsigned long)p->addr + 4);
	return 0;
}

void my_patch(const struct pc_site *sites, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		const u8 *b = sites[i].insn;
		struct patch p = { (void *)sites[i].addr,
				   b[0] | b[1] << 8 | b[2] << 16 | (u32)b[3] << 24 };

		stop_machine(patch_fn, &p, NULL);
	}
}
