#include "guest.h"
#include "patching.h"

/* Stores each site straight to the text address, not through the alias. */
void my_direct(const struct pc_site *sites, int nr)
{
	int i;
	u32 j;

	for (i = 0; i < nr; i++)
		for (j = 0; j < sites[i].len; j++)
			((volatile u8 *)sites[i].addr)[j] = sites[i].insn[j];
	text_poke_sync();
}
