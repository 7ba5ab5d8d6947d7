// SPDX-License-Identifier: GPL-2.0
/*
 * Flip a static key while other CPUs run. Built into a kernel with
 * CONFIG_PATCHING_IN_GUEST, every flip is the kernel's own patching code
 * (x86 text_poke_bp(), ARM patch_text() under stop_machine(), PowerPC
 * patch_instruction()) on the CPU running this workload, and every IPI it
 * sends is taken by another CPU in the kernel's interrupt entry:
 *
 *   kisim boot --arch x86_64 --cpus 4 --quantum 1000 --set PATCHING_IN_GUEST=y \
 *       --module examples/flip_key.c --workload flip_key:run --size 20 --expect 0x14
 *
 * ends with "patching: ... 40 calls; IPIs taken per CPU: 0, 120, 120, 120":
 * each flip is one text_poke_bp() with its three text_poke_sync() rounds
 * (one stop_machine() on ARM, no IPI at all on PowerPC). The small quantum
 * lets the other CPUs come online before the workload is over. The
 * checksum is the number of times the branch was taken: size.
 */
#include <linux/module.h>
#include <linux/jump_label.h>

static DEFINE_STATIC_KEY_FALSE(flip_key);

static noinline unsigned long branch(void)
{
	if (static_branch_unlikely(&flip_key))
		return 1;
	return 0;
}

unsigned long run(unsigned long size)
{
	unsigned long i, taken = 0;

	for (i = 0; i < size; i++) {
		static_branch_enable(&flip_key);
		taken += branch();
		static_branch_disable(&flip_key);
		taken += branch();
	}
	return taken;
}
