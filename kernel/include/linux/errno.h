/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error numbers (include/uapi/asm-generic/errno-base.h and errno.h, the
 * same on x86, ARM and PowerPC for these). The host maps its refusals to
 * them (probes/kprobes.py parses the lines below: one per line).
 */
#ifndef _LINUX_ERRNO_H
#define _LINUX_ERRNO_H

#define EPERM		1
#define ENOENT		2
#define EIO		5
#define E2BIG		7
#define EAGAIN		11
#define ENOMEM		12
#define EFAULT		14
#define EBUSY		16
#define EEXIST		17
#define ENODEV		19
#define EINVAL		22
#define ENOSPC		28
#define ERANGE		34
#define ENAMETOOLONG	36
#define ENOSYS		38
#define EOVERFLOW	75
#define EILSEQ		84
#define EOPNOTSUPP	95

#endif
