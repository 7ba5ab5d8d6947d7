/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Devices, as far as managed resources go (include/linux/device.h and
 * drivers/base/devres.c, v5.10). A device keeps a list of release actions,
 * added by devm_*() calls; devres_release_all() runs them, the last added
 * first, when the device lets go of its resources (in v5.10 when its
 * driver is unbound or probing fails). kisim has no driver core: a struct
 * device here is the devres list and its lock, and whoever owns the device
 * calls devres_release_all() (declared in drivers/base/base.h in v5.10).
 */
#ifndef _LINUX_DEVICE_H
#define _LINUX_DEVICE_H

#include <linux/list.h>
#include <linux/spinlock.h>

struct device {
	spinlock_t devres_lock;
	struct list_head devres_head;
};

void device_initialize(struct device *dev);

/* Run action(data) at release; 0, or -ENOMEM if it could not be recorded. */
int devm_add_action(struct device *dev, void (*action)(void *), void *data);

/* As devm_add_action(), but on failure runs action(data) at once. */
static inline int devm_add_action_or_reset(struct device *dev, void (*action)(void *),
					   void *data)
{
	int ret = devm_add_action(dev, action, data);

	if (ret)
		action(data);
	return ret;
}

/* Run and forget every action, newest first; how many ran. */
int devres_release_all(struct device *dev);

#endif
