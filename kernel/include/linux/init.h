/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Section markers of include/linux/init.h (v5.10). kisim never frees init
 * memory, so __init and __exit code stays where the compiler puts it.
 */
#ifndef _LINUX_INIT_H
#define _LINUX_INIT_H

#include <linux/types.h>

#define __init
#define __exit
#define __initdata
#define __exitdata
#define __initconst

typedef int (*initcall_t)(void);
typedef void (*exitcall_t)(void);

#endif
