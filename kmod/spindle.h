/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Spindle internal declarations shared by the files of spindle.ko.
 */
#ifndef SPINDLE_INTERNAL_H
#define SPINDLE_INTERNAL_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

/* One RDMA device the module has seen through its ib_client. */
struct spindle_ibdev {
	struct list_head node;		/* on spindle_devices */
	struct ib_device *ibdev;
};

/* main.c */
extern struct mutex spindle_devices_lock;
extern struct list_head spindle_devices;
unsigned int spindle_nr_devices(void);

/*
 * Copy a size-versioned ioctl argument (first field: __u32 size) in from
 * userspace: see the rules at the top of uapi/linux/spindle.h.
 */
int spindle_copy_arg(void *dst, size_t ksize, size_t min_size,
		     const void __user *uarg);

#endif /* SPINDLE_INTERNAL_H */
