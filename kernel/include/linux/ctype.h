/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Character classes of include/linux/ctype.h (v5.10) for ASCII, computed
 * rather than looked up in lib/ctype.c's _ctype[] table (the same answers
 * for 0..127; Latin-1 bytes 128..255 are not letters here).
 */
#ifndef _LINUX_CTYPE_H
#define _LINUX_CTYPE_H

#include <linux/compiler.h>

static inline int isdigit(int c)	{ return '0' <= c && c <= '9'; }
static inline int isupper(int c)	{ return 'A' <= c && c <= 'Z'; }
static inline int islower(int c)	{ return 'a' <= c && c <= 'z'; }
static inline int isalpha(int c)	{ return isupper(c) || islower(c); }
static inline int isalnum(int c)	{ return isalpha(c) || isdigit(c); }
static inline int isxdigit(int c)	{ return isdigit(c) || ('a' <= (c | 0x20) && (c | 0x20) <= 'f'); }
static inline int iscntrl(int c)	{ return (0 <= c && c < 0x20) || c == 0x7f; }
static inline int isspace(int c)	{ return c == ' ' || (0x09 <= c && c <= 0x0d); }
static inline int isprint(int c)	{ return 0x20 <= c && c < 0x7f; }
static inline int isgraph(int c)	{ return 0x20 < c && c < 0x7f; }
static inline int ispunct(int c)	{ return isgraph(c) && !isalnum(c); }
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
