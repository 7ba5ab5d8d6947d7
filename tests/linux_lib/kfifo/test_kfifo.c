// SPDX-License-Identifier: GPL-2.0
/*
 * kisim's test of Linux's lib/kfifo.c (kfifo.c beside it, reached through
 * <linux/kfifo.h>'s macros): a DEFINE_KFIFO of 16 ints filled past full,
 * peeked and partly emptied; a 100-byte kfifo_alloc (128) fed size
 * pseudo-random bytes in pieces of 1..29 while pieces of 1..23 are taken
 * out, then drained; kfifo_init of 100 bytes (64) and kfifo_alloc of 1
 * (-EINVAL); a record fifo (1-byte lengths) filled with records of 1..20
 * bytes until one does not fit, read back cut to 5 bytes each;
 * kfifo_from_user/kfifo_to_user; and kfifo_dma_in_prepare across the end
 * of the ring (two scatterlist entries). Returns every count, length and
 * byte seen, mixed (FNV-1a).
 */
#include <linux/kfifo.h>
#include <linux/module.h>
#include <kisim/testdata.h>
#include <linux/slab.h>

static DEFINE_KFIFO(ints, int, 16);
static u8 data[4096], out[4096], spare[100];

static u32 mix_bytes(u32 h, const u8 *p, unsigned int n)
{
	while (n--)
		h = fnv_mix(h, *p++);
	return h;
}

u32 test_kfifo_run(u32 size)
{
	u32 i, h = FNV_BASIS, fed = 0, taken = 0, n;
	struct kfifo_rec_ptr_1 rec;
	struct scatterlist sg[2];
	struct kfifo f, g, bad;
	unsigned int copied;
	int val;

	if (size < 64 || size > sizeof(data))
		return 0;
	xorshift_bytes(data, size);

	INIT_KFIFO(ints);
	for (i = 0; i < 20; i++)
		h = fnv_mix(h, kfifo_put(&ints, (int)(data[i] * 1000 + i)));
	h = fnv_mix(h, kfifo_len(&ints));
	h = fnv_mix(h, kfifo_is_full(&ints));
	h = fnv_mix(h, kfifo_peek(&ints, &val));
	h = fnv_mix(h, val);
	for (i = 0; i < 5; i++) {
		h = fnv_mix(h, kfifo_get(&ints, &val));
		h = fnv_mix(h, val);
	}
	h = fnv_mix(h, kfifo_avail(&ints));

	h = fnv_mix(h, kfifo_alloc(&f, 100, GFP_KERNEL));
	h = fnv_mix(h, kfifo_size(&f));
	for (i = 0; fed < size; i++) {
		n = kfifo_in(&f, data + fed, min(i % 29 + 1, size - fed));
		fed += n;
		h = fnv_mix(h, n);
		n = kfifo_out(&f, out + taken, i % 23 + 1);
		taken += n;
		h = fnv_mix(h, n);
	}
	h = fnv_mix(h, kfifo_peek_len(&f));
	taken += kfifo_out(&f, out + taken, sizeof(out) - taken);
	h = fnv_mix(h, taken);
	h = mix_bytes(h, out, taken);

	h = fnv_mix(h, kfifo_init(&g, spare, sizeof(spare)));
	h = fnv_mix(h, kfifo_size(&g));
	h = fnv_mix(h, kfifo_alloc(&bad, 1, GFP_KERNEL));

	h = fnv_mix(h, kfifo_alloc(&rec, 64, GFP_KERNEL));
	for (i = 0; (n = kfifo_in(&rec, data + i, i % 20 + 1)); i++)
		h = fnv_mix(h, n);
	h = fnv_mix(h, kfifo_avail(&rec));
	h = fnv_mix(h, kfifo_peek_len(&rec));
	while ((n = kfifo_out(&rec, out, 5))) {
		h = fnv_mix(h, n);
		h = mix_bytes(h, out, n);
	}

	kfifo_reset(&f);
	h = fnv_mix(h, kfifo_from_user(&f, (const void __user *)data, 50, &copied));
	h = fnv_mix(h, copied);
	h = fnv_mix(h, kfifo_to_user(&f, (void __user *)out, 30, &copied));
	h = fnv_mix(h, copied);
	h = mix_bytes(h, out, copied);

	kfifo_reset(&f);
	h = fnv_mix(h, kfifo_in(&f, data, 120));
	h = fnv_mix(h, kfifo_out(&f, out, 120));
	sg_init_table(sg, 2);
	n = kfifo_dma_in_prepare(&f, sg, 2, 20);
	h = fnv_mix(h, n);
	h = fnv_mix(h, sg[0].length);
	h = fnv_mix(h, sg[1].length);
	h = fnv_mix(h, sg_virt(&sg[0]) == f.kfifo.data + 120);
	h = fnv_mix(h, sg_virt(&sg[1]) == f.kfifo.data);
	kfifo_dma_in_finish(&f, 20);
	h = fnv_mix(h, kfifo_len(&f));

	kfifo_free(&f);
	kfifo_free(&rec);
	return h;
}
