/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The string functions of lib/string.c (v5.10) that kisim's kernel defines
 * (kernel/lib.c). Each is weak there, as the __HAVE_ARCH_* choice between
 * an arch's and lib/string.c's: a module may define its own (a module that
 * brings lib/string.c does) and the whole image uses it (docs/modules.md).
 */
#ifndef _LINUX_STRING_H
#define _LINUX_STRING_H

#include <linux/types.h>
#include <linux/err.h>		/* memdup_user_nul() returns ERR_PTR()s */

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *s, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
ssize_t strscpy(char *dst, const char *src, size_t size);
/* The first c in s (its NUL when c is 0), or NULL. */
char *strchr(const char *s, int c);
/* The first c in the first count characters of s, else where s or count ends. */
char *strnchrnul(const char *s, size_t count, int c);

/* mm/util.c (kernel/util.c): copies in kmalloc()ed memory. */
char *kstrdup(const char *s, gfp_t gfp);
/* len bytes of user memory and a NUL; ERR_PTR(-ENOMEM or -EFAULT) on failure. */
void *memdup_user_nul(const void __user *src, size_t len);

#endif
