// SPDX-License-Identifier: GPL-2.0
/*
 * Spindle: totally ordered atomic multicast over RDMA.
 *
 * Module entry points: the ib_client that tracks RDMA devices and the
 * control device, /dev/spindle_ctl.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <rdma/ib_verbs.h>

#include <linux/spindle.h>
#include "spindle.h"
#include "group.h"
#include "subgroup.h"

/* the RDMA devices the ib_client has seen */
DEFINE_MUTEX(spindle_devices_lock);
LIST_HEAD(spindle_devices);

unsigned int spindle_nr_devices(void)
{
	struct spindle_ibdev *d;
	unsigned int n = 0;

	mutex_lock(&spindle_devices_lock);
	list_for_each_entry(d, &spindle_devices, node)
		n++;
	mutex_unlock(&spindle_devices_lock);
	return n;
}

/**
 * spindle_device_present - is @ibdev still one the ib_client has?
 * @ibdev: an RDMA device
 *
 * A group is only brought up on a device that is not being removed: the
 * ib_client takes it off the list before it tears down the groups on it.
 * Return: whether it is on the list.
 */
bool spindle_device_present(struct ib_device *ibdev)
{
	struct spindle_ibdev *d;
	bool found = false;

	mutex_lock(&spindle_devices_lock);
	list_for_each_entry(d, &spindle_devices, node)
		found |= d->ibdev == ibdev;
	mutex_unlock(&spindle_devices_lock);
	return found;
}

static int spindle_ib_add(struct ib_device *ibdev)
{
	struct spindle_ibdev *d;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->ibdev = ibdev;
	mutex_lock(&spindle_devices_lock);
	list_add_tail(&d->node, &spindle_devices);
	mutex_unlock(&spindle_devices_lock);
	pr_info("bound to RDMA device %s\n", dev_name(&ibdev->dev));
	return 0;
}

static void spindle_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct spindle_ibdev *d, *tmp;

	/* off the list first: no group comes up on it from now on */
	mutex_lock(&spindle_devices_lock);
	list_for_each_entry_safe(d, tmp, &spindle_devices, node) {
		if (d->ibdev != ibdev)
			continue;
		list_del(&d->node);
		kfree(d);
	}
	mutex_unlock(&spindle_devices_lock);
	/* then the groups on it: the RDMA core waits for their ids */
	spindle_group_remove_device(ibdev);
	pr_info("released RDMA device %s\n", dev_name(&ibdev->dev));
}

static struct ib_client spindle_ib_client = {
	.name = "spindle",
	.add = spindle_ib_add,
	.remove = spindle_ib_remove,
};

int spindle_copy_arg(void *dst, size_t ksize, size_t min_size,
		     const void __user *uarg)
{
	u32 usize;
	int ret;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size) {
		pr_debug("ioctl argument of %u bytes, need at least %zu\n",
			 usize, min_size);
		return -EINVAL;
	}
	/* zero-fills a short copy, -E2BIG on a non-zero tail */
	ret = copy_struct_from_user(dst, ksize, uarg, usize);
	if (ret)
		return ret;
	*(u32 *)dst = ksize;
	return 0;
}

static long spindle_ctl_version(void __user *uarg)
{
	struct spindle_ctl_version v;
	int ret;

	ret = spindle_copy_arg(&v, sizeof(v), sizeof(v), uarg);
	if (ret)
		return ret;
	if (v.reserved || v.abi_version || v.rdma_devices)
		return -EINVAL;
	v.abi_version = SPINDLE_ABI_VERSION;
	v.rdma_devices = spindle_nr_devices();
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long spindle_ctl_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;

	switch (cmd) {
	case SPINDLE_CTL_VERSION:
		return spindle_ctl_version(uarg);
	case SPINDLE_CTL_UP:
		return spindle_ctl_up(uarg);
	case SPINDLE_CTL_DOWN:
		return spindle_ctl_down(uarg);
	case SPINDLE_CTL_GROUP_INFO:
		return spindle_ctl_group_info(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations spindle_ctl_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = spindle_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice spindle_ctl_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "spindle_ctl",
	.fops = &spindle_ctl_fops,
	.mode = 0600,
};

static int __init spindle_init(void)
{
	int ret;

	ret = spindle_subdev_init();
	if (ret) {
		pr_err("cannot register subgroup devices: %d\n", ret);
		return ret;
	}
	spindle_debugfs_init();
	ret = ib_register_client(&spindle_ib_client);
	if (ret) {
		pr_err("ib_register_client failed: %d\n", ret);
		goto subdev;
	}
	ret = misc_register(&spindle_ctl_dev);
	if (ret) {
		pr_err("cannot register /dev/%s: %d\n", spindle_ctl_dev.name, ret);
		goto client;
	}
	pr_info("loaded, ABI %d\n", SPINDLE_ABI_VERSION);
	return 0;
client:
	ib_unregister_client(&spindle_ib_client);
subdev:
	spindle_debugfs_exit();
	spindle_subdev_exit();
	return ret;
}

static void __exit spindle_exit(void)
{
	misc_deregister(&spindle_ctl_dev);
	/* open /dev/spindleN files pin the module, so none is open here */
	spindle_group_down_all(1000);
	ib_unregister_client(&spindle_ib_client);
	spindle_debugfs_exit();
	spindle_subdev_exit();
	pr_info("unloaded\n");
}

module_init(spindle_init);
module_exit(spindle_exit);

MODULE_AUTHOR("The Spindle developers");
MODULE_DESCRIPTION("Spindle: totally ordered atomic multicast over RDMA");
MODULE_LICENSE("GPL");
