/* SPDX-License-Identifier: GPL-2.0 */
/*
 * String to integer conversions (include/linux/kernel.h in v5.10; a header
 * of their own from v5.17, which the 5.10.198 lib/kstrtox.c kept in
 * tests/linux_lib/bitmap includes; linux/kernel.h includes this one, so
 * both work). Each takes the whole string, one trailing newline allowed,
 * with an optional '+' (or '-' for the signed ones); base 0 reads a "0x"
 * prefix as hex and a leading 0 as octal. 0, or -EINVAL for a malformed
 * string, -ERANGE when the value does not fit (the result is then left
 * alone). The definitions are lib/kstrtox.c's, which a module brings.
 */
#ifndef _LINUX_KSTRTOX_H
#define _LINUX_KSTRTOX_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/limits.h>		/* the ranges the conversions check */

int __must_check _kstrtoul(const char *s, unsigned int base, unsigned long *res);
int __must_check _kstrtol(const char *s, unsigned int base, long *res);
int __must_check kstrtoull(const char *s, unsigned int base, unsigned long long *res);
int __must_check kstrtoll(const char *s, unsigned int base, long long *res);
int __must_check kstrtouint(const char *s, unsigned int base, unsigned int *res);
int __must_check kstrtoint(const char *s, unsigned int base, int *res);
int __must_check kstrtou16(const char *s, unsigned int base, u16 *res);
int __must_check kstrtos16(const char *s, unsigned int base, s16 *res);
int __must_check kstrtou8(const char *s, unsigned int base, u8 *res);
int __must_check kstrtos8(const char *s, unsigned int base, s8 *res);
int __must_check kstrtobool(const char *s, bool *res);

/*
 * A long is a long long where they have the same size and alignment (and
 * kisim's u64 is the compiler's, unsigned long where longs have 64 bits: hence the casts).
 */
static inline int __must_check kstrtoul(const char *s, unsigned int base, unsigned long *res)
{
	if (sizeof(unsigned long) == sizeof(unsigned long long) &&
	    __alignof__(unsigned long) == __alignof__(unsigned long long))
		return kstrtoull(s, base, (unsigned long long *)res);
	return _kstrtoul(s, base, res);
}

static inline int __must_check kstrtol(const char *s, unsigned int base, long *res)
{
	if (sizeof(long) == sizeof(long long) && __alignof__(long) == __alignof__(long long))
		return kstrtoll(s, base, (long long *)res);
	return _kstrtol(s, base, res);
}

static inline int __must_check kstrtou64(const char *s, unsigned int base, u64 *res)
{
	return kstrtoull(s, base, (unsigned long long *)res);
}

static inline int __must_check kstrtos64(const char *s, unsigned int base, s64 *res)
{
	return kstrtoll(s, base, (long long *)res);
}

static inline int __must_check kstrtou32(const char *s, unsigned int base, u32 *res)
{
	return kstrtouint(s, base, res);
}

static inline int __must_check kstrtos32(const char *s, unsigned int base, s32 *res)
{
	return kstrtoint(s, base, res);
}

/* The same from at most count bytes of user memory (-EFAULT if unreadable). */
int __must_check kstrtoull_from_user(const char __user *s, size_t count, unsigned int base,
				     unsigned long long *res);
int __must_check kstrtoll_from_user(const char __user *s, size_t count, unsigned int base,
				    long long *res);
int __must_check kstrtoul_from_user(const char __user *s, size_t count, unsigned int base,
				    unsigned long *res);
int __must_check kstrtol_from_user(const char __user *s, size_t count, unsigned int base,
				   long *res);
int __must_check kstrtouint_from_user(const char __user *s, size_t count, unsigned int base,
				      unsigned int *res);
int __must_check kstrtoint_from_user(const char __user *s, size_t count, unsigned int base,
				     int *res);
int __must_check kstrtou16_from_user(const char __user *s, size_t count, unsigned int base,
				     u16 *res);
int __must_check kstrtos16_from_user(const char __user *s, size_t count, unsigned int base,
				     s16 *res);
int __must_check kstrtou8_from_user(const char __user *s, size_t count, unsigned int base,
				    u8 *res);
int __must_check kstrtos8_from_user(const char __user *s, size_t count, unsigned int base,
				    s8 *res);
int __must_check kstrtobool_from_user(const char __user *s, size_t count, bool *res);

#endif
