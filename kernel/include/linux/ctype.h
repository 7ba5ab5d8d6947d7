/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Character classes of include/linux/ctype.h (v5.10), computed from the
 * ranges of lib/ctype.c's _ctype[] table rather than looked up: ASCII, and
 * ISO 8859-1 above 0xa0 (letters 0xc0..0xff but for the signs 0xd7 and
 * 0xf7, punctuation 0xa1..0xbf, the no-break space 0xa0 a space and
 * printable); 0x80..0x9f are in no class. As in v5.10 every class but
 * isdigit() looks at the argument as an unsigned char, so a negative char
 * is its Latin-1 byte.
 */
#ifndef _LINUX_CTYPE_H
#define _LINUX_CTYPE_H

#include <linux/compiler.h>

static inline int isdigit(int c)	{ return '0' <= c && c <= '9'; }

static inline int isupper(int c)
{
	unsigned char b = c;

	return ('A' <= b && b <= 'Z') || (0xc0 <= b && b <= 0xde && b != 0xd7);
}

static inline int islower(int c)
{
	unsigned char b = c;

	return ('a' <= b && b <= 'z') || (0xdf <= b && b != 0xf7);
}

static inline int isalpha(int c)	{ return isupper(c) || islower(c); }
static inline int isalnum(int c)	{ return isalpha(c) || isdigit((unsigned char)c); }

static inline int isxdigit(int c)
{
	unsigned char b = c;

	return isdigit(b) || ('a' <= (b | 0x20) && (b | 0x20) <= 'f');
}

static inline int iscntrl(int c)	{ return (unsigned char)c < 0x20 || (unsigned char)c == 0x7f; }

static inline int isspace(int c)
{
	unsigned char b = c;

	return b == ' ' || (0x09 <= b && b <= 0x0d) || b == 0xa0;
}

static inline int ispunct(int c)
{
	unsigned char b = c;

	if (b < 0x80)
		return 0x20 < b && b < 0x7f && !isalnum(b);
	return (0xa1 <= b && b <= 0xbf) || b == 0xd7 || b == 0xf7;
}

/* isgraph: letters, digits, punctuation; isprint: those and the spaces ' ', 0xa0. */
static inline int isgraph(int c)	{ return ispunct(c) || isalnum(c); }
static inline int isprint(int c)	{ return isgraph(c) || (unsigned char)c == ' ' || (unsigned char)c == 0xa0; }
static inline int isodigit(int c)	{ return '0' <= c && c <= '7'; }
#define isascii(c)	(((unsigned char)(c)) <= 0x7f)
#define toascii(c)	(((unsigned char)(c)) & 0x7f)

static inline unsigned char __tolower(unsigned char c)	{ return isupper(c) ? c - 'A' + 'a' : c; }
static inline unsigned char __toupper(unsigned char c)	{ return islower(c) ? c - 'a' + 'A' : c; }
#define tolower(c)	__tolower(c)
#define toupper(c)	__toupper(c)

/* Fast tolower() for a letter: sets the lowercase bit (v5.10 _tolower). */
static inline char _tolower(const char c)
{
	return c | 0x20;
}

#endif
