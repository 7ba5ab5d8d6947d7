/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BUG() and WARN() (include/asm-generic/bug.h, include/linux/bug.h, v5.10).
 * WARN reports and goes on; the value of the condition is the value of the
 * expression. BUG panics (kisim has no oops to kill just the task).
 */
#ifndef _LINUX_BUG_H
#define _LINUX_BUG_H

#include <linux/kconfig.h>
#include <linux/printk.h>

__noreturn void panic(const char *fmt, ...) __printf(1, 2);

#define WARN(cond, fmt, ...)						\
	({								\
		int __ret_warn_on = !!(cond);				\
		if (unlikely(__ret_warn_on))				\
			printk(KERN_WARNING "WARNING: %s:%d: " fmt "\n",	\
			       __FILE__, __LINE__, ##__VA_ARGS__);	\
		unlikely(__ret_warn_on);				\
	})
#define WARN_ON(cond)	WARN(cond, "%s", #cond)

/* Once per call site: a static flag in .data.once (v5.10 WARN_ONCE). */
#define WARN_ONCE(cond, fmt, ...)					\
	({								\
		static bool __section(".data.once") __warned;		\
		int __ret_warn_once = !!(cond);				\
									\
		if (unlikely(__ret_warn_once && !__warned)) {		\
			__warned = true;				\
			WARN(1, fmt, ##__VA_ARGS__);			\
		}							\
		unlikely(__ret_warn_once);				\
	})
#define WARN_ON_ONCE(cond)	WARN_ONCE(cond, "%s", #cond)

#define BUG()	panic("BUG at %s:%d", __FILE__, __LINE__)

#define BUG_ON(cond)							\
	do {								\
		if (unlikely(cond))					\
			panic("BUG at %s:%d: %s", __FILE__, __LINE__, #cond); \
	} while (0)

/*
 * CHECK_DATA_CORRUPTION(condition, fmt, ...) (include/linux/bug.h, v5.10):
 * the condition's truth, and when true a warning with the message, or a
 * panic with CONFIG_BUG_ON_DATA_CORRUPTION. lib/list_debug.c's checks.
 */
static inline __must_check bool check_data_corruption(bool v) { return v; }
#define CHECK_DATA_CORRUPTION(condition, fmt, ...)			\
	check_data_corruption(({					\
		bool __corrupt = unlikely(condition);			\
		if (__corrupt) {					\
			if (IS_ENABLED(CONFIG_BUG_ON_DATA_CORRUPTION)) { \
				pr_err(fmt, ##__VA_ARGS__);		\
				BUG();					\
			} else {					\
				WARN(1, fmt, ##__VA_ARGS__);		\
			}						\
		}							\
		__corrupt;						\
	}))

/* include/linux/build_bug.h */
#define BUILD_BUG_ON_ZERO(e)	((int)(sizeof(struct { int:(-!!(e)); })))
#define BUILD_BUG()		BUILD_BUG_ON(1)

#endif
