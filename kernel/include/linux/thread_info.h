/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/thread_info.h (v5.10): the arch's thread_info, which is
 * kisim's kernel stack layout (kisim/thread_info.h).
 */
#ifndef _LINUX_THREAD_INFO_H
#define _LINUX_THREAD_INFO_H

#include <kisim/thread_info.h>

#endif
