/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR BSD-2-Clause */
/*
 * Spindle: totally ordered atomic multicast over RDMA.
 *
 * Userspace ABI.  Two kinds of device:
 *   /dev/spindle_ctl	control: bring groups up and down, read their state.
 *			Every operation needs CAP_NET_ADMIN.
 *   /dev/spindleN	one per subgroup this node belongs to (see below).
 *
 * Every ioctl argument starts with __u32 size, the size of the structure the
 * caller was built with.  The kernel accepts a smaller size down to the
 * first version of the structure (missing fields read as zero), rejects a
 * larger size whose extra bytes are not all zero (E2BIG), and fails with
 * EINVAL on any reserved field or flag bit that is not zero.
 */
#ifndef _UAPI_LINUX_SPINDLE_H
#define _UAPI_LINUX_SPINDLE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define SPINDLE_ABI_VERSION	1
#define SPINDLE_CTL_DEVICE	"/dev/spindle_ctl"

#define SPINDLE_IOC_MAGIC	0xD5

/**
 * struct spindle_ctl_version - SPINDLE_CTL_VERSION
 * @size: sizeof(struct spindle_ctl_version)
 * @abi_version: out: SPINDLE_ABI_VERSION of the running module
 * @rdma_devices: out: RDMA devices the module is bound to now
 * @reserved: must be zero
 */
struct spindle_ctl_version {
	__u32 size;
	__u32 abi_version;
	__u32 rdma_devices;
	__u32 reserved;
};

#define SPINDLE_CTL_VERSION	_IOWR(SPINDLE_IOC_MAGIC, 0x00, struct spindle_ctl_version)

#endif /* _UAPI_LINUX_SPINDLE_H */
