/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/stddef.h (v5.10): offsetof and its relatives. NULL, true
 * and false are <linux/types.h>'s macros in kisim (v5.10 makes true and
 * false an enum here; either is 0/1 of type int).
 */
#ifndef _LINUX_STDDEF_H
#define _LINUX_STDDEF_H

#include <linux/types.h>

#define sizeof_field(TYPE, MEMBER) sizeof((((TYPE *)0)->MEMBER))
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER)	+ sizeof_field(TYPE, MEMBER))

#endif
