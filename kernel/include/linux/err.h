/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error values in pointers (include/linux/err.h, v5.10): the top
 * MAX_ERRNO addresses are never valid, so a pointer there carries -errno.
 */
#ifndef _LINUX_ERR_H
#define _LINUX_ERR_H

#include <linux/compiler.h>
#include <linux/types.h>

#define MAX_ERRNO	4095

#define IS_ERR_VALUE(x)	unlikely((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)

static inline void * __must_check ERR_PTR(long error)
{
	return (void *)error;
}

static inline long __must_check PTR_ERR(__force const void *ptr)
{
	return (long)ptr;
}

static inline bool __must_check IS_ERR(__force const void *ptr)
{
	return IS_ERR_VALUE((unsigned long)ptr);
}

static inline bool __must_check IS_ERR_OR_NULL(__force const void *ptr)
{
	return unlikely(!ptr) || IS_ERR_VALUE((unsigned long)ptr);
}

/* An error pointer as another pointer type. */
static inline void * __must_check ERR_CAST(__force const void *ptr)
{
	return (void *)ptr;
}

/* The error of ptr, or 0 when it is a valid pointer. */
static inline int __must_check PTR_ERR_OR_ZERO(__force const void *ptr)
{
	return IS_ERR(ptr) ? PTR_ERR(ptr) : 0;
}

#endif
