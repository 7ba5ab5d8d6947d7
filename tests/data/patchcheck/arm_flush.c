#include "guest.h"
#include "patching.h"

/* patch_text() by hand: the word through the alias under stop_machine(), then
 * the kernel's flush_icache_range(). */
struct patch {
	void *addr;
	u32 insn;
};

static int patch_fn(void *data)
{
	struct patch *p = data;

	*(volatile u32 *)text_alias(p->addr) = p->insn;
	flush_icache_range((unsigned long)p->addr, (unsigned long)p->addr + 4);
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

/* A protocol name that is no function. */
int not_a_function;
