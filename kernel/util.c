// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers of mm/util.c (v5.10) that library code calls: string copies
 * in kmalloc()ed memory, and a task's command line.
 */
#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

char *kstrdup(const char *s, gfp_t gfp)
{
	size_t len;
	char *buf;

	if (!s)
		return NULL;
	len = strlen(s) + 1;
	buf = kmalloc(len, gfp);
	if (buf)
		memcpy(buf, s, len);
	return buf;
}
EXPORT_SYMBOL(kstrdup);

void *memdup_user_nul(const void __user *src, size_t len)
{
	char *p = kmalloc(len + 1, GFP_KERNEL);

	if (!p)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(p, src, len)) {
		kfree(p);
		return ERR_PTR(-EFAULT);
	}
	p[len] = '\0';
	return p;
}
EXPORT_SYMBOL(memdup_user_nul);

/*
 * The first buflen bytes of the task's argument strings, read from its
 * user memory; 0 for a task without an mm, as v5.10 gives for a kernel
 * thread. Every kisim task is a kernel thread (there is no user space).
 */
int get_cmdline(struct task_struct *task, char *buffer, int buflen)
{
	(void)task;
	(void)buffer;
	(void)buflen;
	return 0;
}
