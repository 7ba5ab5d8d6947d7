// SPDX-License-Identifier: GPL-2.0
/*
 * vsnprintf, printk (console output through HC_WRITE) and panic
 * (HC_PANIC). Of lib/vsprintf.c's pointer extensions, %px and the
 * bitmaps' %*pb and %*pbl. Numbers are converted without 64-bit division, which
 * 32-bit guests would need a libgcc for.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <kisim/hypercall.h>

struct outbuf {
	char *buf;
	size_t size, len;
};

static void put(struct outbuf *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/* n /= 10, returning the remainder: shift-and-subtract long division. */
static unsigned int div10(u64 *n)
{
	u64 q = 0, r = 0;
	int i;

	if (*n >> 32 == 0) {
		u32 v = (u32)*n;

		*n = v / 10;
		return v % 10;
	}
	for (i = 63; i >= 0; i--) {
		r = (r << 1) | ((*n >> i) & 1);
		if (r >= 10) {
			r -= 10;
			q |= (u64)1 << i;
		}
	}
	*n = q;
	return (unsigned int)r;
}

static void put_number(struct outbuf *o, u64 v, bool neg, unsigned int base,
		       bool upper, int width, char pad, bool left)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, len;

	do {
		if (base == 10)
			tmp[n++] = digits[div10(&v)];
		else {
			tmp[n++] = digits[v & (base - 1)];
			v >>= base == 16 ? 4 : 3;
		}
	} while (v);
	len = n + neg;
	if (neg && pad == '0')
		put(o, '-');
	if (!left)
		for (; len < width; width--)
			put(o, pad);
	if (neg && pad != '0')
		put(o, '-');
	while (n)
		put(o, tmp[--n]);
	if (left)
		for (; len < width; width--)
			put(o, ' ');
}

/* At most prec characters of s (all when prec < 0), "(null)" for NULL, padded to width. */
static void put_string(struct outbuf *o, const char *s, int prec, int width, bool left)
{
	int len = 0;

	if (!s)
		s = "(null)";
	while (s[len] && (prec < 0 || len < prec))
		len++;
	if (!left)
		for (; len < width; width--)
			put(o, ' ');
	for (int i = 0; s[i] && (prec < 0 || i < prec); i++)
		put(o, s[i]);
	if (left)
		for (; len < width; width--)
			put(o, ' ');
}

/*
 * %*pb (lib/vsprintf.c bitmap_string, v5.10): nbits bits as hex, most
 * significant first, in comma-separated groups of 32 bits, each zero-padded
 * to its digits (8, but the first group only as many as its bits need);
 * nothing for nbits <= 0.
 */
static void put_bitmap_hex(struct outbuf *o, const unsigned long *bitmap, int nbits)
{
	int bits = nbits > 0 ? nbits % 32 : 0;
	int i;

	if (nbits > 0 && bits == 0)
		bits = 32;
	for (i = nbits > 0 ? ALIGN(nbits, 32) - 32 : -1; i >= 0; i -= 32) {
		u32 group = bitmap[i / BITS_PER_LONG] >> (i % BITS_PER_LONG);

		if (i != ALIGN(nbits, 32) - 32)
			put(o, ',');
		put_number(o, group & (u32)((1ULL << bits) - 1), false, 16, false,
			   DIV_ROUND_UP(bits, 4), '0', false);
		bits = 32;
	}
}

/*
 * %*pbl (lib/vsprintf.c bitmap_list_string, v5.10): the set bits below
 * nbits as a comma-separated list of decimal numbers and first-last ranges
 * of consecutive ones, e.g. "0-3,8,10-11".
 */
static void put_bitmap_list(struct outbuf *o, const unsigned long *bitmap, int nbits)
{
	unsigned long size = nbits > 0 ? nbits : 0;
	unsigned long first = find_first_bit(bitmap, size), last;

	while (first < size) {
		last = find_next_zero_bit(bitmap, size, first + 1) - 1;
		put_number(o, first, false, 10, false, 0, ' ', false);
		if (last > first) {
			put(o, '-');
			put_number(o, last, false, 10, false, 0, ' ', false);
		}
		first = find_next_bit(bitmap, size, last + 1);
		if (first < size)
			put(o, ',');
	}
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct outbuf o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		int width = 0, longs = 0, prec = -1;
		bool left = false, alt = false;
		char pad = ' ';
		u64 uv;
		s64 sv;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				left = true;
			else if (*fmt == '0')
				pad = '0';
			else if (*fmt == '#')
				alt = true;
			else if (*fmt != '+' && *fmt != ' ')
				break;
		}
		if (*fmt == '*') {	/* the width is the next argument; negative: left-justified */
			width = va_arg(ap, int);
			if (width < 0) {
				width = -width;
				left = true;
			}
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		if (*fmt == '.') {
			prec = 0;
			while (*++fmt >= '0' && *fmt <= '9')
				prec = prec * 10 + (*fmt - '0');
		}
		while (*fmt == 'l' || *fmt == 'z' || *fmt == 'h') {
			if (*fmt == 'l' || (*fmt == 'z' && sizeof(size_t) == sizeof(long)))
				longs++;
			fmt++;
		}
		switch (*fmt) {
		case 'd': case 'i':
			sv = longs >= 2 ? va_arg(ap, long long) :
			     longs ? va_arg(ap, long) : va_arg(ap, int);
			put_number(&o, sv < 0 ? -(u64)sv : (u64)sv, sv < 0, 10, false,
				   width, pad, left);
			break;
		case 'u': case 'x': case 'X': case 'o':
			uv = longs >= 2 ? va_arg(ap, unsigned long long) :
			     longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);
			if (alt && *fmt != 'u' && uv) {
				put(&o, '0');
				if (*fmt != 'o')
					put(&o, *fmt);
			}
			put_number(&o, uv, false, *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16,
				   *fmt == 'X', width, pad, left);
			break;
		case 'p':
			if (fmt[1] == 'b') {	/* %*pb, %*pbl: a bitmap of width bits */
				const unsigned long *bitmap = va_arg(ap, const unsigned long *);

				fmt += fmt[2] == 'l' ? 2 : 1;
				if (!bitmap)
					put_string(&o, "(null)", -1, width, left);
				else if (*fmt == 'l')
					put_bitmap_list(&o, bitmap, width);
				else
					put_bitmap_hex(&o, bitmap, width);
				break;
			}
			if (fmt[1] == 'x') {	/* %px: the raw address, as many digits as a pointer has */
				fmt++;
				put_number(&o, (unsigned long)va_arg(ap, void *), false, 16, false,
					   2 * sizeof(void *), '0', false);
				break;
			}
			put(&o, '0');
			put(&o, 'x');
			put_number(&o, (unsigned long)va_arg(ap, void *), false, 16, false,
				   width, pad, left);
			break;
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 's':
			put_string(&o, va_arg(ap, const char *), prec, width, left);
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			put(&o, '%');
			if (!*fmt)
				goto out;
			put(&o, *fmt);
		}
	}
out:
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* vsnprintf's count capped to what went into buf: at most size - 1, 0 for size 0. */
int vscnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, size, fmt, ap);

	if ((size_t)n < size)
		return n;
	return size ? size - 1 : 0;
}

int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vscnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int printk(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	/* printk_get_level(): the console shows the text, not the level prefix. */
	if (fmt[0] == KERN_SOH[0] && fmt[1])
		fmt += 2;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	hypercall2(HC_WRITE, (unsigned long)buf, n);
	return n;
}

static char panic_buf[256];

notrace __noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(panic_buf, sizeof(panic_buf), fmt, ap);
	va_end(ap);
	for (;;)
		hypercall1(HC_PANIC, (unsigned long)panic_buf);
}
NOTRACE_SYMBOL(panic);
NOKPROBE_SYMBOL(panic);
