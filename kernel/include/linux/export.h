/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/export.h (v5.10). Modules are linked into the image, so
 * every global symbol is already visible to every other: exporting records
 * nothing (there is no __ksymtab to fill).
 */
#ifndef _LINUX_EXPORT_H
#define _LINUX_EXPORT_H

#define THIS_MODULE		((struct module *)0)
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#define EXPORT_SYMBOL_NS(sym, ns)
#define EXPORT_SYMBOL_NS_GPL(sym, ns)
#define EXPORT_UNUSED_SYMBOL(sym)
#define EXPORT_UNUSED_SYMBOL_GPL(sym)

#endif
