#include "guest.h"
#include "patching.h"

/* Each word of each site through the kernel's patch_instruction(). */
void my_patch(const struct pc_site *sites, int nr)
{
	int i;
	u32 off;

	for (i = 0; i < nr; i++)
		for (off = 0; off + 4 <= sites[i].len; off += 4) {
			const u8 *b = &sites[i].insn[off];

			patch_instruction((u32 *)(sites[i].addr + off),
					  (u32)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]);
		}
}
