#include "guest.h"
#include "patching.h"

/*
 * patch_text() by hand: the word through the alias under stop_machine(), then
 * a flush: my_patch with the kernel's flush_icache_range(); my_patch_no_dsb
 * with v7_coherent_kern_range minus the dsb between the D-cache clean and the
 * I-cache invalidate (unsafe).
 */
static void flush_no_dsb(unsigned long start, unsigned long end)
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
	void (*flush)(unsigned long start, unsigned long end);
};

static int patch_fn(void *data)
{
	struct patch *p = data;

	*(volatile u32 *)text_alias(p->addr) = p->insn;
	p->flush((unsigned long)p->addr, (unsigned long)p->addr + 4);
	return 0;
}

/*
 * An optprobe's detour (out of line: no CPU runs it before a site branches
 * there) is written whole first, through the alias, and flushed, as
 * arch_patch_batch() does; stop_machine() patches the live sites.
 */
static void write_out_of_line(const struct pc_site *site,
			      void (*flush)(unsigned long start, unsigned long end))
{
	volatile u8 *dst = text_alias((void *)site->addr);
	u32 i;

	for (i = 0; i < site->len; i++)
		dst[i] = site->insn[i];
	flush(site->addr, site->addr + site->len);
}

static void patch_all(const struct pc_site *sites, int nr,
		      void (*flush)(unsigned long start, unsigned long end))
{
	int i;

	for (i = 0; i < nr; i++)
		if (sites[i].out_of_line)
			write_out_of_line(&sites[i], flush);
	for (i = 0; i < nr; i++) {
		const u8 *b = sites[i].insn;
		struct patch p = { (void *)sites[i].addr,
				   b[0] | b[1] << 8 | b[2] << 16 | (u32)b[3] << 24, flush };

		if (!sites[i].out_of_line)
			stop_machine(patch_fn, &p, NULL);
	}
}

void my_patch(const struct pc_site *sites, int nr)
{
	patch_all(sites, nr, flush_icache_range);
}

void my_patch_no_dsb(const struct pc_site *sites, int nr)
{
	patch_all(sites, nr, flush_no_dsb);
}

/* my_patch, then an isb on every CPU by IPI (safe). */
static void do_isb(void *info)
{
	__asm__ __volatile__("isb" : : : "memory");
}

void my_patch_isb_ipi(const struct pc_site *sites, int nr)
{
	patch_all(sites, nr, flush_icache_range);
	on_each_cpu(do_isb, NULL, 1);
}

/* A protocol name that is no function. */
int not_a_function;
