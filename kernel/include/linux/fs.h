/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What library code names of include/linux/fs.h (v5.10). kisim's guest has
 * no VFS: struct file is never defined, so no file exists to name, and
 * file_path() cannot be reached with one; it is here so that code which
 * names it (lib/string_helpers.c's kstrdup_quotable_file) compiles, and it
 * says so if it is ever called, failing as d_path() does for a name that
 * cannot be made.
 */
#ifndef _LINUX_FS_H
#define _LINUX_FS_H

#include <linux/bug.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/limits.h>

struct file;

/* The file's path name, written at the end of buf; an ERR_PTR on failure. */
static inline char *file_path(struct file *file, char *buf, int buflen)
{
	(void)buf;
	(void)buflen;
	WARN_ONCE(1, "file_path(%px): kisim has no VFS", file);
	return ERR_PTR(-ENAMETOOLONG);
}

#endif
