/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What is module-wide in spindle.ko (main.c, ctl.c, debugfs.c), and how its
 * objects and locks fit together.  Each object has its own header:
 * group.h, peer.h (conn.h: its connections), subgroup.h, region.h; xmit.h
 * is the transport under the predicate pass.
 *
 * Objects and their lifetimes:
 *
 *   spindle_group	one per SPINDLE_CTL_UP; on the global list until
 *			torn down.  Owns the PD, the CQ, the listener, the
 *			peers, the predicate kthread and the memory regions.
 *   spindle_peer	one per other member: its rdma_cm id and RC QP, the
 *			MRs it writes into or we write from, the keys it gave.
 *   spindle_subgroup	one per subgroup this node is in: the protocol
 *			engine (kmod/proto/engine.c), its consumers and
 *			/dev/spindleN.
 *			Reference counted: open files outlive the group.
 *   spindle_region	page-aligned vmalloc_user memory, DMA-mapped for the
 *			group's device.  Reference counted: mmaps outlive it.
 *
 * Locks, outermost first:
 *   spindle_groups_lock (mutex)	the group list; control operations
 *   sub->cons_lock (spinlock)		the consumer list, open files, what
 *					was handed; consumers' callbacks run
 *					under it and may send
 *   sub->lock (spinlock, BHs off)	the engine's producer state; senders
 *					take it from process or softirq context
 *   group->peer_lock (spinlock, IRQs off) peer state changes from the CM
 * sub->g is read under RCU (spindle_sub_kick() may run anywhere): the group
 * is freed a grace period after every subgroup let go of it.
 * The predicate kthread is the only one that polls the CQ, runs the
 * engine's predicates and posts writes.  It posts after dropping every
 * lock, except in the baseline (SPINDLE_GROUP_BASELINE, Derecho's way,
 * kept for comparison), which posts each step's writes under sub->lock.
 */
#ifndef SPINDLE_INTERNAL_H
#define SPINDLE_INTERNAL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include <linux/spindle.h>

struct spindle_group;

#define SPINDLE_PROTO_VERSION	1
#define SPINDLE_CM_MAGIC	0x53504e44	/* "SPND" */
#define SPINDLE_MAX_MINORS	256

/* debugfs.c */
void spindle_debugfs_init(void);
void spindle_debugfs_exit(void);
void spindle_debugfs_add(struct spindle_group *g);
void spindle_debugfs_del(struct spindle_group *g);

/* main.c */
struct spindle_ibdev {
	struct list_head node;		/* on spindle_devices */
	struct ib_device *ibdev;
};

extern struct mutex spindle_devices_lock;
extern struct list_head spindle_devices;
unsigned int spindle_nr_devices(void);
bool spindle_device_present(struct ib_device *ibdev);

/*
 * Copy a size-versioned ioctl argument (first field: __u32 size) in from
 * userspace: see the rules at the top of uapi/linux/spindle.h.
 */
int spindle_copy_arg(void *dst, size_t ksize, size_t min_size,
		     const void __user *uarg);

/* ctl.c */
long spindle_ctl_up(void __user *uarg);
long spindle_ctl_down(void __user *uarg);
long spindle_ctl_group_info(void __user *uarg);

#endif /* SPINDLE_INTERNAL_H */
