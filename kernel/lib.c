// SPDX-License-Identifier: GPL-2.0
/*
 * String functions with the semantics of lib/string.c (v5.10). The compiler
 * may emit calls to memcpy/memset for struct copies and zeroing, so they
 * must exist; no_builtin keeps it from turning their own loops back into
 * calls to themselves. Each is __weak, as lib/string.c's are under
 * __HAVE_ARCH_*: a module may bring its own (lib/string.c, an optimized
 * memcpy) and the whole image then uses it (docs/modules.md).
 */
#include <linux/kernel.h>
#include <linux/errno.h>

#define __nobuiltin(fn)	__attribute__((no_builtin(fn)))

__weak __nobuiltin("memcpy") void *memcpy(void *dst, const void *src, size_t n)
{
	u8 *d = dst;
	const u8 *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

__weak __nobuiltin("memmove") void *memmove(void *dst, const void *src, size_t n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

__weak __nobuiltin("memset") void *memset(void *dst, int c, size_t n)
{
	u8 *d = dst;

	while (n--)
		*d++ = (u8)c;
	return dst;
}

__weak int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

__weak size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* strcmp, strncmp: -1, 0 or 1 (lib/string.c), comparing unsigned chars. */
__weak int strcmp(const char *a, const char *b)
{
	unsigned char c1, c2;

	while (1) {
		c1 = *a++;
		c2 = *b++;
		if (c1 != c2)
			return c1 < c2 ? -1 : 1;
		if (!c1)
			break;
	}
	return 0;
}

__weak int strncmp(const char *a, const char *b, size_t n)
{
	unsigned char c1, c2;

	while (n) {
		c1 = *a++;
		c2 = *b++;
		if (c1 != c2)
			return c1 < c2 ? -1 : 1;
		if (!c1)
			break;
		n--;
	}
	return 0;
}

/*
 * strscpy (lib/string.c): copy a C string into a buffer of size bytes,
 * always NUL-terminated when size > 0. Returns the number of characters
 * copied, or -E2BIG when size is 0, exceeds INT_MAX, or src was truncated.
 */
__weak ssize_t strscpy(char *dst, const char *src, size_t size)
{
	size_t n = 0;

	if (size == 0 || WARN_ON_ONCE(size > INT_MAX))
		return -E2BIG;
	while (n < size) {
		dst[n] = src[n];
		if (!dst[n])
			return n;
		n++;
	}
	dst[n - 1] = '\0';
	return -E2BIG;
}

__weak char *strchr(const char *s, int c)
{
	for (; *s != (char)c; s++)
		if (!*s)
			return NULL;
	return (char *)s;
}

__weak char *strnchrnul(const char *s, size_t count, int c)
{
	while (count-- && *s && *s != (char)c)
		s++;
	return (char *)s;
}
