// SPDX-License-Identifier: GPL-2.0
/* The hex digit tables and hex_to_bin() of lib/hexdump.c (v5.10). */
#include <linux/kernel.h>

const char hex_asc[] = "0123456789abcdef";
EXPORT_SYMBOL(hex_asc);
const char hex_asc_upper[] = "0123456789ABCDEF";
EXPORT_SYMBOL(hex_asc_upper);

int hex_to_bin(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch |= 0x20;		/* a letter's lower case; no other character becomes a-f */
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}
EXPORT_SYMBOL(hex_to_bin);
