// SPDX-License-Identifier: GPL-2.0
/*
 * Managed resources (drivers/base/devres.c, v5.10), the actions only: each
 * devm_add_action() is a node on the device's list; devres_release_all()
 * takes the list under the lock and runs the nodes newest first.
 */
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/slab.h>

struct devres_action {
	struct list_head entry;
	void (*action)(void *);
	void *data;
};

void device_initialize(struct device *dev)
{
	spin_lock_init(&dev->devres_lock);
	INIT_LIST_HEAD(&dev->devres_head);
}
EXPORT_SYMBOL_GPL(device_initialize);

int devm_add_action(struct device *dev, void (*action)(void *), void *data)
{
	struct devres_action *dr = kmalloc(sizeof(*dr), GFP_KERNEL);

	if (!dr)
		return -ENOMEM;
	dr->action = action;
	dr->data = data;
	spin_lock(&dev->devres_lock);
	list_add_tail(&dr->entry, &dev->devres_head);
	spin_unlock(&dev->devres_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(devm_add_action);

int devres_release_all(struct device *dev)
{
	LIST_HEAD(todo);
	int n = 0;

	spin_lock(&dev->devres_lock);
	list_splice_init(&dev->devres_head, &todo);
	spin_unlock(&dev->devres_lock);
	while (!list_empty(&todo)) {
		struct devres_action *dr = list_last_entry(&todo, struct devres_action, entry);

		list_del(&dr->entry);
		dr->action(dr->data);
		kfree(dr);
		n++;
	}
	return n;
}
