/* SPDX-License-Identifier: GPL-2.0 */
/* include/linux/poison.h (v5.10): non-NULL pointers that fault if a deleted entry is used. */
#ifndef _LINUX_POISON_H
#define _LINUX_POISON_H

#define POISON_POINTER_DELTA 0
#define LIST_POISON1  ((void *) 0x100 + POISON_POINTER_DELTA)
#define LIST_POISON2  ((void *) 0x122 + POISON_POINTER_DELTA)

#endif
