/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Formatting and quoting strings (include/linux/string_helpers.h, v5.10);
 * the definitions are lib/string_helpers.c's, which a module brings
 * (tests/linux_lib/string_helpers). The flag values are v5.10's.
 */
#ifndef _LINUX_STRING_HELPERS_H
#define _LINUX_STRING_HELPERS_H

#include <linux/string.h>
#include <linux/types.h>

struct file;
struct task_struct;

/* A size to 3 significant figures in powers of 1000 ("kB") or of 1024 ("KiB"). */
enum string_size_units {
	STRING_UNITS_10,
	STRING_UNITS_2,
};

void string_get_size(u64 size, u64 blk_size, enum string_size_units units,
		     char *buf, int len);

/* The escapes string_unescape() turns back into their bytes. */
#define UNESCAPE_SPACE		0x01	/* \f \n \r \t \v */
#define UNESCAPE_OCTAL		0x02	/* \NNN, 1 to 3 digits */
#define UNESCAPE_HEX		0x04	/* \xHH, 1 or 2 digits */
#define UNESCAPE_SPECIAL	0x08	/* \" \\ \a \e */
#define UNESCAPE_ANY		\
	(UNESCAPE_SPACE | UNESCAPE_OCTAL | UNESCAPE_HEX | UNESCAPE_SPECIAL)

/* Into dst of size bytes (0: no limit), NUL-terminated; the bytes written. */
int string_unescape(char *src, char *dst, size_t size, unsigned int flags);

static inline int string_unescape_inplace(char *buf, unsigned int flags)
{
	return string_unescape(buf, buf, 0, flags);
}

static inline int string_unescape_any(char *src, char *dst, size_t size)
{
	return string_unescape(src, dst, size, UNESCAPE_ANY);
}

static inline int string_unescape_any_inplace(char *buf)
{
	return string_unescape_any(buf, buf, 0);
}

/* The classes string_escape_mem() escapes (ESCAPE_NP: only unprintable bytes). */
#define ESCAPE_SPACE		0x01	/* \f \n \r \t \v */
#define ESCAPE_SPECIAL		0x02	/* \\ \a \e */
#define ESCAPE_NULL		0x04	/* \0 */
#define ESCAPE_OCTAL		0x08	/* \NNN, any byte */
#define ESCAPE_ANY		\
	(ESCAPE_SPACE | ESCAPE_OCTAL | ESCAPE_SPECIAL | ESCAPE_NULL)
#define ESCAPE_NP		0x10
#define ESCAPE_ANY_NP		(ESCAPE_ANY | ESCAPE_NP)
#define ESCAPE_HEX		0x20	/* \xHH, any byte */

/*
 * isz bytes of src escaped into dst, at most osz bytes written and no NUL;
 * the length the whole output needs. With only a non-empty string, just
 * the bytes in it are escaped.
 */
int string_escape_mem(const char *src, size_t isz, char *dst, size_t osz,
		      unsigned int flags, const char *only);
/* Bytes outside printable ASCII, '"' and '\\' as \xHH. */
int string_escape_mem_ascii(const char *src, size_t isz, char *dst, size_t osz);

static inline int string_escape_mem_any_np(const char *src, size_t isz, char *dst,
					   size_t osz, const char *only)
{
	return string_escape_mem(src, isz, dst, osz, ESCAPE_ANY_NP, only);
}

static inline int string_escape_str(const char *src, char *dst, size_t sz,
				    unsigned int flags, const char *only)
{
	return string_escape_mem(src, strlen(src), dst, sz, flags, only);
}

static inline int string_escape_str_any_np(const char *src, char *dst, size_t sz,
					   const char *only)
{
	return string_escape_str(src, dst, sz, ESCAPE_ANY_NP, only);
}

/* kmalloc()ed copies safe to print between double quotes (\xHH escapes). */
char *kstrdup_quotable(const char *src, gfp_t gfp);
char *kstrdup_quotable_cmdline(struct task_struct *task, gfp_t gfp);
char *kstrdup_quotable_file(struct file *file, gfp_t gfp);

/* kfree() the first n strings of array, then array; nothing for NULL. */
void kfree_strarray(char **array, size_t n);

#endif
